#!/bin/sh
# The checked registration form refuses mismatched factories at compile time:
# CASE 0 of mismatched_factory.c must compile, CASEs 1-7 must not, in C and in C++.
# Usage: run.sh CC CXX
cc=${1:-cc} cxx=${2:-c++}
src=Tests/compile_fail/mismatched_factory.c
out=${TMPDIR:-/tmp}/tether_compile_fail.$$
failed=0
for lang in c c++; do
    if [ $lang = c ]; then compile="$cc -std=c11 -x c"; else compile="$cxx -std=c++17 -x c++"; fi
    for case in 0 1 2 3 4 5 6 7; do
        if $compile -Iinclude -DCASE=$case -c $src -o $out.o 2>$out.err; then got=compiled; else got=rejected; fi
        if [ $case = 0 ]; then want=compiled; else want=rejected; fi
        if [ $got = $want ]; then echo "ok   $lang case $case $got"
        else echo "FAIL $lang case $case $got (wanted $want)"; cat $out.err; failed=1; fi
    done
done
rm -f $out.o $out.err
exit $failed
