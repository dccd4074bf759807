#!/bin/sh
# Instructions per operation of one request_ops.py operation (callgrind: a run of N operations
# minus a run of none, over N). Usage: benchmarks/python/count_ops.sh NAME [N]   (PYTHONPATH picks
# the package, default this tree's; TETHER_LIBRARY the library, default build/lib/libtether.so)
set -eu
NAME=${1:?usage: count_ops.sh NAME [N]}
N=${2:-2000}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-$HERE/.venv/bin/python}
: "${TETHER_LIBRARY:=$ROOT/build/lib/libtether.so}"
: "${PYTHONPATH:=$ROOT/bindings/python}"
export TETHER_LIBRARY PYTHONPATH="$PYTHONPATH:$HERE" PYTHONHASHSEED=0
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PY" "$HERE/request_ops.py" "$NAME" "$1" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
A=$(count 0)
B=$(count "$N")
echo "$NAME: $(( (B - A) / N )) instructions per operation"
