#!/bin/sh
# Simulated L1 instruction-cache misses per operation of benchmark bodies, for comparing code layouts (hot.order):
# callgrind's cache simulation (32 KB 8-way I1, load-independent), bench-c built against LIBDIR (a copy of build/lib).
# From the repository root:   sh benchmarks/c/icache.sh LIBDIR [BODY...]   (default: every body hot_order.sh profiles)
# Prints per body: instructions, I1 misses and mispredicted indirect branches per operation (-n 2000 -r 1: 4,000 ops).
set -eu
LIBDIR=$(cd "${1:?usage: icache.sh LIBDIR [BODY...]}" && pwd)
shift
[ $# -gt 0 ] || set -- s1_tether s3_tether sg_tether rq0_tether rq1_tether rqv_tether ra_tether rp_tether
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/build/bench/icache.$(echo "$LIBDIR" | tr / _)"
mkdir -p "$OUT"
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -I"$ROOT/include" "$ROOT/benchmarks/c/bench.c" -o "$OUT/bench-c" \
    -L"$LIBDIR" -ltether -Wl,-rpath,"$LIBDIR" -pthread -lm
printf '%-12s %10s %8s %6s\n' body Ir/op I1mr/op Bim/op
for BODY in "$@"; do
    case "$BODY" in s1*) S=S1 ;; s3*) S=S3 ;; *) S=shapes ;; esac
    valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --callgrind-out-file="$OUT/callgrind.$BODY" \
        --toggle-collect="$BODY" "$OUT/bench-c" -s "$S" -b "$BODY" -n 2000 -r 1 >/dev/null 2>"$OUT/callgrind.$BODY.log"
    # events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim; totals: the collected loop's.
    awk -v body="$BODY" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
        /^(summary|totals):/ { printf "%-12s %10.1f %8.1f %6.1f\n", body, $(col["Ir"] + 1) / 4000,
            $(col["I1mr"] + 1) / 4000, $(col["Bim"] + 1) / 4000; exit }' "$OUT/callgrind.$BODY"
done
