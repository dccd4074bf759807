#!/usr/bin/env bash
# `make test`: runs each suite (a make target) to the end even when an earlier one failed, its
# output shown and kept in build/test-logs/SUITE.log, then Tests/tally.py's summary.
# Usage: bash Tests/run_suites.sh SUITE...   (MAKE, PYTHON from the environment)
set -u
cd "$(dirname "$0")/.."
logs=build/test-logs
rm -rf "$logs" && mkdir -p "$logs"
for suite in "$@"; do
    echo "=== make $suite"
    ${MAKE:-make} --no-print-directory "$suite" 2>&1 | tee "$logs/$suite.log"
    echo "${PIPESTATUS[0]}" > "$logs/$suite.status"
done
"${PYTHON:-python3}" Tests/tally.py "$logs" "$@"
