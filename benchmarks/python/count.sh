#!/bin/sh
# Instructions per operation (repeatable, unlike timings on a loaded machine): callgrind counts a
# run of N operations and a run of none; the difference over N. Usage:
#   benchmarks/python/count.sh NAME [N]         a pieces.py scenario (NAME as pieces.py prints it)
#   benchmarks/python/count.sh --ops NAME [N]   a request_ops.py operation (count_ops.sh)
# PYTHONPATH picks the package, default this tree's; TETHER_LIBRARY the library, default
# build/lib/libtether.so; PYTHON the interpreter, default benchmarks/python/.venv's.
set -eu
OPS=0
if [ "${1:-}" = "--ops" ]; then OPS=1; shift; fi
NAME=${1:?usage: count.sh [--ops] NAME [N]}
if [ $OPS = 1 ]; then N=${2:-2000}; else N=${2:-20000}; fi
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-$HERE/.venv/bin/python}
: "${TETHER_LIBRARY:=$ROOT/build/lib/libtether.so}"
: "${PYTHONPATH:=$ROOT/bindings/python}"
export TETHER_LIBRARY PYTHONPATH="$PYTHONPATH:$HERE" PYTHONHASHSEED=0
count() {
    if [ $OPS = 1 ]; then set -- "$HERE/request_ops.py" "$NAME" "$1"
    else set -- "$HERE/pieces.py" --only "$NAME" --loops "$1"; fi
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PY" "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
A=$(count 0)
B=$(count "$N")
echo "$NAME: $(( (B - A) / N )) instructions per operation"
