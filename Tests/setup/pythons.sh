#!/bin/sh
# The CPython 3.9+ interpreters on this machine besides DEFAULT's version, one per minor version
# (from PATH, pyenv's versions and /usr{,/local}/bin), printed as paths ending in python3.N:
#   ends: the oldest and the newest of them (what `make test` runs the Python suite on too);
#   all:  every one.
# Usage: sh Tests/setup/pythons.sh ends|all DEFAULT
mode=${1:-ends} default=${2:-python3}
minor() { "$1" -c 'import sys; sys.implementation.name == "cpython" and sys.version_info >= (3, 9) and print(sys.version_info[1])' 2>/dev/null; }
skip=$(minor "$default")
found=
for n in $(seq 9 30); do
    [ "$n" = "$skip" ] && continue
    for p in "$(command -v "python3.$n" 2>/dev/null)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$n".*/bin/python3."$n" \
             /usr/local/bin/python3."$n" /usr/bin/python3."$n"; do
        case $p in */shims/*) continue ;; esac  # pyenv's shims run only the selected version
        [ -x "$p" ] && [ "$(minor "$p")" = "$n" ] && { found="$found $p"; break; }
    done
done
set -- $found
case $mode in
    all) echo "$@" ;;
    *) [ $# -gt 0 ] && eval "last=\${$#}" && { [ "$1" = "$last" ] && echo "$1" || echo "$1 $last"; } ;;
esac
