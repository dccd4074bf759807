#!/bin/sh
# Registration cost at 10 / 1,000 / 100,000 registrations in repeatable units: instructions
# and simulated cache misses per registration (callgrind --cache-sim), for Tether and for the
# hand-written C baseline of bench.c (the same mallocs + insert into a growing hash table).
# Timed rows of this workload swing with the VM's memory hierarchy; these counts do not.
# From the repository root, after `make build`:   sh benchmarks/c/regscale.sh
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
# The simulated last level is sized as this machine's per-core L2 (1 MiB here): callgrind models
# two levels, and what leaves L2 is where a registration's time grows with the container's size.
L2=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || echo 0)
[ "${L2:-0}" -gt 0 ] || L2=1048576
CACHES="--LL=$L2,8,64"
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -I"$ROOT/include" "$ROOT/benchmarks/c/bench.c" -o "$OUT/bench-c-prof" \
    -L"$ROOT/build/lib" -ltether -Wl,-rpath,"$ROOT/build/lib" -pthread -lm
echo "callgrind --cache-sim=yes ($CACHES: LL = L2), per registration (the timed run of bench.c's registration rows, warm-up excluded)"
echo
echo "| registrations | Tether instructions | Tether D1 misses | Tether L2 misses | C instructions | C D1 misses | C L2 misses |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for n in 10 1000 100000; do
    regs=100000  # bench.c times 100,000 registrations a run at every size (batches of containers)
    file="$OUT/callgrind.reg$n"
    valgrind --tool=callgrind --cache-sim=yes $CACHES --callgrind-out-file="$file" \
        --toggle-collect=reg_tether_timed --toggle-collect=reg_base_timed \
        "$OUT/bench-c-prof" -s scale -b reg -n "$n" -r 1 >/dev/null 2>"$file.log"
    # Inclusive events of the two timed loops: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
    callgrind_annotate --inclusive=yes --auto=no "$file" 2>/dev/null | awk -v n="$n" -v regs="$regs" '
        function num(s) { gsub(",", "", s); return (s == "." ? 0 : s + 0) }
        /reg_tether_timed|reg_base_timed/ {
            line = $0; gsub(/\( *[0-9.]+%\)/, "", line); f = split(line, w, " ")
            for (i = 1; i <= f; i++) v[i] = num(w[i])
            side = ($0 ~ /reg_tether_timed/) ? "t" : "c"
            ir[side] = v[1]; d1[side] = v[5] + v[6]; ll[side] = v[8] + v[9]
        }
        END {
            printf "| %d | %.0f | %.2f | %.2f | %.0f | %.2f | %.2f |\n", n,
                ir["t"] / regs, d1["t"] / regs, ll["t"] / regs, ir["c"] / regs, d1["c"] / regs, ll["c"] / regs
        }'
done
