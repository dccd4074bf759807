#!/bin/sh
# Regenerates Sources/Tether/hot.order, the order in which gold places the library's hot functions (Package.swift's
# --section-ordering-file), from callgrind profiles of the request and hit bodies. From the repository root, after
# `make build`:   sh benchmarks/c/hot_order.sh [ITERS]   then `make build` again (the order only moves code).
# A function renamed or gone since is just not placed (gold skips unknown names); rerun this after large changes.
set -eu
ITERS=${1:-2000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -I"$ROOT/include" "$ROOT/benchmarks/c/bench.c" -o "$OUT/bench-c-prof" \
    -L"$ROOT/build/lib" -ltether -Wl,-rpath,"$ROOT/build/lib" -pthread -lm
FILES=
# The request bodies first: their code is the largest and the one that missed the cache (benchmarks/README.md, rqfoot).
for BODY in rq1_tether rp_tether s1_tether s3_tether; do
    case "$BODY" in s1*) S=S1 ;; s3*) S=S3 ;; *) S=shapes ;; esac
    valgrind --tool=callgrind --demangle=no --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$OUT/order.$BODY" --toggle-collect="$BODY" \
        "$OUT/bench-c-prof" -s "$S" -b "$BODY" -n "$ITERS" -r 1 >/dev/null 2>"$OUT/order.$BODY.log"
    FILES="$FILES $OUT/order.$BODY"
done
# -r 1: warm-up + one run, 2*ITERS operations.
python3 "$ROOT/benchmarks/c/hot_order.py" $((2 * ITERS)) $FILES > "$ROOT/Sources/Tether/hot.order"
# SwiftPM does not see the file (a linker flag's argument): without its output it links again on the next make build.
rm -f "$ROOT/.build-release/release/libtether.so"
wc -l "$ROOT/Sources/Tether/hot.order"
