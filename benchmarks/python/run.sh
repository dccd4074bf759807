#!/bin/sh
# Python benchmarks: creates benchmarks/python/.venv (gitignored), installs the peers from PyPI,
# then runs bench.py against tether from bindings/python, loading the library named by
# $TETHER_LIBRARY (default: build/lib/libtether.so; run `make build` first).
# Usage: benchmarks/python/run.sh [bench.py options, e.g. --quick --markdown out.md]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PYTHON=${PYTHON:-python3}
VENV="$HERE/.venv"

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
# Installs only when requirements.txt changed since the last install.
STAMP="$VENV/.requirements.installed"
if [ ! -f "$STAMP" ] || ! cmp -s "$HERE/requirements.txt" "$STAMP"; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
    cp "$HERE/requirements.txt" "$STAMP"
fi

: "${TETHER_LIBRARY:=$ROOT/build/lib/libtether.so}"
if [ ! -f "$TETHER_LIBRARY" ]; then
    echo "run.sh: $TETHER_LIBRARY not found: run 'make build' first (or set TETHER_LIBRARY)" >&2
    exit 1
fi
export TETHER_LIBRARY
PYTHONPATH="$ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}" exec "$VENV/bin/python" "$HERE/bench.py" "$@"
