#!/bin/sh
# The Debian packages `make test` needs, installed when run as root (apt-get update first);
# otherwise one message naming the apt-get command, and a non-zero exit.
#   libffi-dev: the library's build; pkgconf: the install check; graphviz: the DOT -> SVG check;
#   gcc, make, binutils: C tests, readelf/strip; libasan8, libubsan1: the ASan/UBSan runs;
#   cmake: the CMake package check; valgrind: the install check; python3-venv: the test venvs.
# The fuzzer is built with the clang beside `swift` (it has libFuzzer); without one, with
# Debian's clang and lld (the Makefile then uses them).
# Usage: sh Tests/setup/system.sh [PYTHON]   (`make test-setup`)
set -u
python=${1:-python3}
wanted="libffi-dev pkgconf graphviz gcc make binutils libasan8 libubsan1 cmake valgrind"
swift=$(command -v swift 2>/dev/null) && swift_clang="$(dirname "$(readlink -f "$swift")")/clang" || swift_clang=
[ -n "$swift_clang" ] && [ -x "$swift_clang" ] || wanted="$wanted clang lld"
# A Debian python3 has no venv (ensurepip) without python3-venv; pyenv's and others' have it.
"$python" -c "import ensurepip, venv" > /dev/null 2>&1 || wanted="$wanted python3-venv"

missing=
for pkg in $wanted; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get > /dev/null 2>&1; then
    echo "make test needs these Debian packages, and this is not a Debian-like system (no apt-get):$missing" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "make test needs:$missing. Install them with: sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "make test: installing Debian packages:$missing"
apt-get update -qq || { echo "apt-get update failed: make test cannot install$missing" >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$missing > /dev/null \
    || { echo "apt-get install -y$missing failed (output above)" >&2; exit 1; }
