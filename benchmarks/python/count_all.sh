#!/bin/sh
# Instructions per operation of every bench.py tether shape from one callgrind run (count_all.py):
# collection only inside deque_init, one dump after each, the no-op loop's cost subtracted. Usage:
#   benchmarks/python/count_all.sh [N]     (default 2000; RQ1 runs N/4)
# PYTHONPATH picks the package, default this tree's; TETHER_LIBRARY the library, default
# build/lib/libtether.so; PYTHON the interpreter, default benchmarks/python/.venv's.
set -eu
N=${1:-2000}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-$HERE/.venv/bin/python}
: "${TETHER_LIBRARY:=$ROOT/build/lib/libtether.so}"
: "${PYTHONPATH:=$ROOT/bindings/python}"
export TETHER_LIBRARY PYTHONPATH="$PYTHONPATH:$HERE" PYTHONHASHSEED=0
OUT=$(mktemp -d)
valgrind --tool=callgrind --collect-atstart=no --toggle-collect=deque_init --dump-after=deque_init \
    --callgrind-out-file="$OUT/cg" "$PY" "$HERE/count_all.py" "$N" > "$OUT/shapes" 2> "$OUT/log"
# the dumps after the shapes' deque_init calls are the last ones, in order (start-up may make others)
SHAPES=$(wc -l < "$OUT/shapes")
for n in $(ls "$OUT" | sed -n 's/^cg\.\([0-9]*\)$/\1/p' | sort -n | tail -n "$SHAPES"); do
    sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$OUT/cg.$n"
done > "$OUT/counts"
paste -d' ' "$OUT/shapes" "$OUT/counts" | awk '
    NR == 1 { per = $3 / $2; next }
    { printf "%s: %d instructions per operation\n", $1, $3 / $2 - per }'
rm -rf "$OUT"
