# Shared by the shell checks (Tests/abi, Tests/packaging): one line per check, a temporary
# folder removed on exit, and the closing "N passed, N failed". Source it: . "$ROOT/Tests/abi/checks.sh"
passed=0
failed=0
ok()   { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | sed 's/^/       /'; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
