#!/bin/sh
# Runs every Tether benchmark (issue 5): C, Python, Swift. From the repository root:
#   sh benchmarks/run.sh            (or: make bench)
# Options (environment): QUICK=1 for short runs; SKIP="python swift" to leave some out;
# NO_BUILD=1 to use build/lib/libtether.so as it is (no `make build`).
# Output: each suite's markdown table on stdout; also saved under build/bench/.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
SKIP=${SKIP:-}
QUICK=${QUICK:-}
CC=${CC:-cc}
skip() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }
status=0

echo "## machine"
echo
echo "$(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo

if ! skip c; then
    echo "## C (benchmarks/c)"
    [ -n "${NO_BUILD:-}" ] || make build >/dev/null
    "$CC" -std=c11 -O2 -Wall -Wextra -Iinclude benchmarks/c/bench.c -o "$OUT/bench-c" \
        -L"$ROOT/build/lib" -ltether -Wl,-rpath,"$ROOT/build/lib" -pthread -lm
    "$OUT/bench-c" ${QUICK:+-q} >"$OUT/c.md" || status=1
    cat "$OUT/c.md"
    echo
fi

if ! skip python; then
    echo "## Python (benchmarks/python)"
    [ -n "${NO_BUILD:-}" ] || [ -f build/lib/libtether.so ] || make build >/dev/null
    TETHER_LIBRARY="$ROOT/build/lib/libtether.so" sh benchmarks/python/run.sh ${QUICK:+--quick} \
        >"$OUT/python.md" || status=1
    cat "$OUT/python.md"
    echo
fi

if ! skip swift; then
    echo "## Swift (benchmarks/swift)"
    # Every module (Swinject, TetherCore, the benchmark) without dynamic exclusivity checks,
    # as the shipped libtether.so is built (Package.swift: -enforce-exclusivity=unchecked).
    SWIFTFLAGS="-Xswiftc -enforce-exclusivity=unchecked"
    if (cd benchmarks/swift && swift build -c release --scratch-path .build $SWIFTFLAGS >"$OUT/swift-build.log" 2>&1 \
        && swift run -c release --skip-build --scratch-path .build $SWIFTFLAGS SwiftBench ${QUICK:+--quick} >"$OUT/swift.md"); then
        cat "$OUT/swift.md"
    else
        echo "swift benchmark failed; see $OUT/swift-build.log"; tail -20 "$OUT/swift-build.log"; status=1
    fi
    echo
fi
exit $status
