#!/bin/sh
# Regenerates Sources/Tether/hot.order, the order in which gold places the library's hot functions (Package.swift's
# --section-ordering-file), from callgrind profiles of the request and hit bodies, and links the library with it.
# From the repository root, after `make build`:   sh benchmarks/c/hot_order.sh [ITERS]
# It runs `make build` twice: once with the plain order (where gold puts the block), once with the tuned one.
# A function renamed or gone since is just not placed (gold skips unknown names), but any change of the library's code
# moves the tuned lines: rerun this after merging code changes (benchmarks/README.md, rq0order).
set -eu
ITERS=${1:-2000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -I"$ROOT/include" "$ROOT/benchmarks/c/bench.c" -o "$OUT/bench-c-prof" \
    -L"$ROOT/build/lib" -ltether -Wl,-rpath,"$ROOT/build/lib" -pthread -lm
FILES=
# Every shape of bench.c's matrix that runs the library's code per operation, the smallest first (the plain order
# nests them: each body's functions follow the smaller bodies'); the tuning below weighs them alike.
for BODY in ${BODIES:-s1_tether sg_tether ra_tether rq0_tether s3_tether rqv_tether rp_tether rq1_tether}; do
    case "$BODY" in s1*) S=S1 ;; s3*) S=S3 ;; *) S=shapes ;; esac
    valgrind --tool=callgrind --demangle=no --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$OUT/order.$BODY" --toggle-collect="$BODY" \
        "$OUT/bench-c-prof" -s "$S" -b "$BODY" -n "$ITERS" -r 1 >/dev/null 2>"$OUT/order.$BODY.log"
    FILES="$FILES $OUT/order.$BODY"
done
# The profiles' addresses are this library's: keep it (make build replaces the file, never rewrites it).
cp "$(readlink -f "$ROOT/build/lib/libtether.so")" "$OUT/order.profiled.so"
# -r 1: warm-up + one run, 2*ITERS operations.
python3 "$ROOT/benchmarks/c/hot_order.py" $((2 * ITERS)) $FILES > "$ROOT/Sources/Tether/hot.order"
# SwiftPM does not see the file (a linker flag's argument): without its output it links again on make build.
rm -f "$ROOT/.build-release/release/libtether.so"
(cd "$ROOT" && make build >"$OUT/order.build.log" 2>&1) || { tail -20 "$OUT/order.build.log" >&2; exit 1; }
python3 "$ROOT/benchmarks/c/hot_order.py" --tune "$OUT/order.profiled.so" "$(readlink -f "$ROOT/build/lib/libtether.so")" \
    "$ROOT/Sources/Tether/hot.order" $((2 * ITERS)) $FILES > "$OUT/hot.order.tuned"
mv -f "$OUT/hot.order.tuned" "$ROOT/Sources/Tether/hot.order"
rm -f "$ROOT/.build-release/release/libtether.so"
(cd "$ROOT" && make build >"$OUT/order.build.log" 2>&1) || { tail -20 "$OUT/order.build.log" >&2; exit 1; }
wc -l "$ROOT/Sources/Tether/hot.order"
