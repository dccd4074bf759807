#!/bin/sh
# Instruction profile of one Tether benchmark body under callgrind (repeatable counts,
# unlike timings). From the repository root, after `make build`:
#   sh benchmarks/c/profile.sh s2_tether_key [ITERS] [TOP]
# C bodies (benchmarks/c/bench.c): s1_tether s1_tether_key s2_tether_name s2_tether_key
#         s3_tether s3_tether_key s3_declared_key s4_tether s4_tether_key (and the baselines s1_base s2_base
#         s3_base s4_base); the shape matrix's sg_tether rq0_tether rq1_tether ra_tether rp_tether (and -t's rqv_tether rc_tether) (baselines
#         sg_base rq1_base ra_base rp_base).
# Swift bodies (benchmarks/swift, built here as run.sh builds it; no `make build` needed):
#         swift_sN_CONTENDER, N in 1-4, CONTENDER tether, swinject or hand (hand-written Swift).
# Prints instructions per operation, inclusive and self, for the TOP most costly functions,
# then calls per operation of allocation / refcounting / lock functions.
set -eu
BODY=${1:?usage: profile.sh BODY [ITERS] [TOP]}
ITERS=${2:-20000}
TOP=${3:-30}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
case "$BODY" in
    *s1*) S=S1 ;; *s2*) S=S2 ;; *s3*) S=S3 ;; *s4*) S=S4 ;; sg_* | rq*_* | ra_* | rp_* | rc_*) S=shapes ;; *) echo "unknown body $BODY" >&2; exit 2 ;;
esac
# Instruction counts: collected inside the loop only (--toggle-collect). Call counts are not
# subject to toggling, so they come from the whole run (setup adds a handful of calls).
case "$BODY" in
swift_*)
    (cd "$ROOT/benchmarks/swift" && TETHER_DWARF4=1 swift build -c release --scratch-path .build -Xswiftc -enforce-exclusivity=unchecked \
        >"$OUT/swift-prof-build.log" 2>&1) || { tail -20 "$OUT/swift-prof-build.log" >&2; exit 1; }
    # --only S --iters ITERS: that scenario's loop of ITERS resolves, once, in profiledLoop.
    valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$BODY" --toggle-collect='*profiledLoop*' \
        "$ROOT/benchmarks/swift/.build/release/SwiftBench" --only "$S" --iters "$ITERS" --contender "${BODY##*_}" \
        >/dev/null 2>"$OUT/callgrind.$BODY.log"
    OPS=$ITERS
    ;;
*)
    ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -I"$ROOT/include" "$ROOT/benchmarks/c/bench.c" -o "$OUT/bench-c-prof" \
        -L"$ROOT/build/lib" -ltether -Wl,-rpath,"$ROOT/build/lib" -pthread -lm
    # -b BODY -n ITERS -r 1: only that body runs, twice (warm-up + 1 run) = 2*ITERS operations.
    valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$BODY" --toggle-collect="$BODY" \
        "$OUT/bench-c-prof" -s "$S" -b "$BODY" -n "$ITERS" -r 1 >/dev/null 2>"$OUT/callgrind.$BODY.log"
    OPS=$((2 * ITERS))
    ;;
esac
echo "callgrind, $BODY, $OPS operations; Ir = instructions per operation"
DEMANGLE="cat"
command -v swift >/dev/null 2>&1 && DEMANGLE="swift demangle --simplified --compact"
for mode in yes no; do
    if [ $mode = yes ]; then printf '\n-- inclusive (this function and what it calls)\n'; else printf '\n-- self\n'; fi
    callgrind_annotate --auto=no --inclusive=$mode "$OUT/callgrind.$BODY" 2>/dev/null \
        | grep -v -e 'libc-start' -e '(below main)' -e '???:0x0' -e 'bench.c:main' -e 'bench.c:measure' -e 'profiledLoop' \
        | awk -v ops="$OPS" -v top="$TOP" '
            /PROGRAM TOTALS/ { gsub(",", "", $1); printf "%10.1f  TOTAL\n", $1 / ops; next }
            /^ *[0-9,]+ +\( *[0-9.]+%\)/ && n < top {
                ir = $1; gsub(",", "", ir);
                line = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", line); sub(/ \[.*\]$/, "", line);
                printf "%10.1f  %s\n", ir / ops, line; n++ }' \
        | $DEMANGLE | cut -c1-200
done
echo
python3 "$ROOT/benchmarks/c/callcounts.py" "$OUT/callgrind.$BODY" "$OPS"
echo
python3 "$ROOT/benchmarks/c/layers.py" "$OUT/callgrind.$BODY" "$OPS"
