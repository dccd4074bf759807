#!/bin/sh
# Which resolves take the second executor (`Graph.build`) rather than a plan, and why: the
# conformance corpus (build/tests/conformance), every C test (build/tests/test_*) and the C bench's
# single-threaded bodies, each run with TETHER_PLAN_STATS=1 (the library prints its counts to stderr
# at exit, `PlanStats`), summed per source. From the repository root, after `make build`:
#   sh benchmarks/plan_coverage.sh [ITERS]
# ITERS: the bench's -n (default 1000; each body runs it twice). Prints a Markdown table: per
# reason (`Plan.Decline`), the resolves that reached Graph.build, and their share of all resolves;
# then one of resolvers' requests (RESOLVER slots' and completion callbacks' gets): found in the
# graph or a cache, served by a plan, or built, by reason.
set -eu
ITERS=${1:-1000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$ROOT/build/plan_coverage"
rm -rf "$OUT"
mkdir -p "$OUT"
TESTS=$(for t in Tests/c/test_*.c; do t=${t#Tests/c/}; printf 'build/tests/%s ' "${t%.c}"; done)
make -s build/tests/conformance build/conformance.lines $TESTS >"$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log" >&2; exit 1; }
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Iinclude benchmarks/c/bench.c -o "$OUT/bench-c" \
    -Lbuild/lib -ltether -Wl,-rpath,"$ROOT/build/lib" -pthread -lm

# Each process's lines `tether-plan-stats: NAME COUNT TEXT`, tagged with its source.
run() {  # SOURCE COMMAND...
    src=$1; shift
    TETHER_PLAN_STATS=1 "$@" >/dev/null 2>"$OUT/stderr" || echo "note: $* exited $?" >&2
    grep '^tether-plan-stats: ' "$OUT/stderr" | sed "s/^tether-plan-stats: /$src /" >>"$OUT/counts" || true
}
run conformance build/tests/conformance build/conformance.lines
for t in $TESTS; do run ctests "$t"; done
run bench "$OUT/bench-c" -s S1,S2,S3,S4,shapes -n "$ITERS" -r 1

awk '
    { src = $1; name = $2; n = $3; text = $4; for (i = 5; i <= NF; i++) text = text " " $i
      count[name, src] += n; count[name, "all"] += n
      if (!(name in texts)) {
          texts[name] = text
          if (name ~ /^request\./) { if (name != "request.requests" && name != "request.found" && name != "request.plan") rorder[++rreasons] = name }
          else if (name != "resolves" && name != "plan") order[++reasons] = name
      } }
    function cell(name, src) { return sprintf("%d (%.1f%%)", count[name, src], 100 * count[name, src] / (count["resolves", src] ? count["resolves", src] : 1)) }
    function rcell(name, src) { return sprintf("%d (%.1f%%)", count[name, src], 100 * count[name, src] / (count["request.requests", src] ? count["request.requests", src] : 1)) }
    END {
        print "| reason | conformance | C tests | C bench | all |"
        print "|---|---:|---:|---:|---:|"
        printf "| resolves | %d | %d | %d | %d |\n", count["resolves", "conformance"], count["resolves", "ctests"], count["resolves", "bench"], count["resolves", "all"]
        printf "| served by a plan | %s | %s | %s | %s |\n", cell("plan", "conformance"), cell("plan", "ctests"), cell("plan", "bench"), cell("plan", "all")
        # Reasons by their count over all sources, largest first.
        for (i = 1; i <= reasons; i++) for (j = i + 1; j <= reasons; j++)
            if (count[order[j], "all"] > count[order[i], "all"]) { t = order[i]; order[i] = order[j]; order[j] = t }
        for (i = 1; i <= reasons; i++) {
            r = order[i]
            printf "| `%s`: %s | %s | %s | %s | %s |\n", r, texts[r], cell(r, "conformance"), cell(r, "ctests"), cell(r, "bench"), cell(r, "all")
        }
        # Requests of resolvers (RESOLVER slots, completion callbacks), apart: found (no build), served by a plan, or built, why.
        print ""
        print "| resolver requests | conformance | C tests | C bench | all |"
        print "|---|---:|---:|---:|---:|"
        printf "| requests | %d | %d | %d | %d |\n", count["request.requests", "conformance"], count["request.requests", "ctests"], count["request.requests", "bench"], count["request.requests", "all"]
        printf "| found in the graph or a cache | %s | %s | %s | %s |\n", rcell("request.found", "conformance"), rcell("request.found", "ctests"), rcell("request.found", "bench"), rcell("request.found", "all")
        printf "| served by a plan | %s | %s | %s | %s |\n", rcell("request.plan", "conformance"), rcell("request.plan", "ctests"), rcell("request.plan", "bench"), rcell("request.plan", "all")
        for (i = 1; i <= rreasons; i++) for (j = i + 1; j <= rreasons; j++)
            if (count[rorder[j], "all"] > count[rorder[i], "all"]) { t = rorder[i]; rorder[i] = rorder[j]; rorder[j] = t }
        for (i = 1; i <= rreasons; i++) {
            r = rorder[i]
            printf "| `%s`: %s | %s | %s | %s | %s |\n", substr(r, 9), texts[r], rcell(r, "conformance"), rcell(r, "ctests"), rcell(r, "bench"), rcell(r, "all")
        }
    }' "$OUT/counts"
