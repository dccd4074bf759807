#!/bin/sh
# The cache lines behind a shape's 2-thread contention (benchmarks/c/shared_lines.c): lines one thread
# writes and the other touches during OPS operations each, after WARM each, with the code writing them.
# Usage (repository root, after `make build`): sh benchmarks/c/shared_lines.sh SHAPE [OPS] [WARM]
# (shapes: S1 S2 S3 S3L S4 SG RC RQ0 RQ1 RQV RA RP, and S2W: S2 with the singleton made by a worker). Under valgrind, whose allocator has no per-thread
# arenas: a heap line it shows may be false sharing of valgrind's placement; a refcount (written by
# swift_retain/swift_release's caller, shown) or a global is the library's. A `SplitCount` stripe (a
# `lock xadd` at a 128-byte multiple: edges to published singletons) shows too, and is not shared
# natively: valgrind runs every thread on one CPU, so both threads take the same CPU's stripe.
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHAPE=${1:-S2}; OPS=${2:-50}; WARM=${3:-1500}
OUT="$ROOT/build/bench"; mkdir -p "$OUT"
${CC:-cc} -std=c11 -O1 -g -I"$ROOT/include" -I"$ROOT/benchmarks/c" "$ROOT/benchmarks/c/shared_lines.c" \
    -o "$OUT/shared_lines" -L"$ROOT/build/lib" -ltether -Wl,-rpath,"$ROOT/build/lib" -pthread -lm
# Valgrind places the program the same way every run: the marker's address from a run without tracing.
valgrind --tool=none "$OUT/shared_lines" "$SHAPE" 1 1 >"$OUT/shared_lines.out" 2>/dev/null
MARKER=$(sed -n 's/^marker //p' "$OUT/shared_lines.out")
LIB=$(readlink -f "$ROOT/build/lib/libtether.so")
BASE=$(grep " $LIB\$" "$OUT/shared_lines.out" | head -1 | sed 's/^map \([0-9a-f]*\)-.*/\1/')
nm -n "$LIB" >"$OUT/shared_lines.nm"
valgrind --tool=lackey --trace-mem=yes --log-fd=9 "$OUT/shared_lines" "$SHAPE" "$OPS" "$WARM" 9>&1 1>/dev/null 2>/dev/null \
    | python3 "$ROOT/benchmarks/c/shared_lines.py" "$MARKER" "$BASE" "$OUT/shared_lines.nm" "$OUT/shared_lines.out"
