#!/bin/sh
# Instructions an iteration of benchmarks/c/first_resolve.c (callgrind: the difference of 400 and
# 200 iterations over 200, so set-up and exit cancel). (Plans off too, TETHER_NO_PLANS=1, before branch noplansoff.)
# From the repository root, after `make build`:   sh benchmarks/c/first_resolve.sh
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
${CC:-cc} -std=c11 -O1 -I"$ROOT/include" "$ROOT/benchmarks/c/first_resolve.c" -o "$OUT/first_resolve" \
    -L"$ROOT/build/lib" -ltether -Wl,-rpath,"$ROOT/build/lib"
count() { valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.first" "$@" >/dev/null 2>"$OUT/callgrind.first.log"
          grep -o "Collected : [0-9]*" "$OUT/callgrind.first.log" | awk '{print $3}'; }
for mode in fresh weak; do
    a=$(count "$OUT/first_resolve" 200 "$mode"); b=$(count "$OUT/first_resolve" 400 "$mode")
    echo "$mode: $(( (b - a) / 200 ))"
done
