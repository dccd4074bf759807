#!/bin/sh
# Instructions per operation of one pieces.py scenario (repeatable, unlike timings on a loaded
# machine): callgrind counts a run of N operations and a run of none; the difference over N.
# Usage: benchmarks/python/count.sh NAME [N]   (NAME as pieces.py prints it; PYTHONPATH picks the
# package, default this tree's; TETHER_LIBRARY the library, default build/lib/libtether.so)
set -eu
NAME=${1:?usage: count.sh NAME [N]}
N=${2:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-$HERE/.venv/bin/python}
: "${TETHER_LIBRARY:=$ROOT/build/lib/libtether.so}"
: "${PYTHONPATH:=$ROOT/bindings/python}"
export TETHER_LIBRARY PYTHONPATH PYTHONHASHSEED=0
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PY" "$HERE/pieces.py" --only "$NAME" --loops "$1" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
A=$(count 0)
B=$(count "$N")
echo "$NAME: $(( (B - A) / N )) instructions per operation"
