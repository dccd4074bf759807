#!/usr/bin/env python3
"""The hot functions of the profiled benchmark bodies, as gold's --section-ordering-file wants them.

Usage: hot_order.py OPS CALLGRIND_FILE... (each file: one body's loop of OPS operations, written as functions() says).
Prints one `.text.SYMBOL` line per function of libtether.so that ran in any file, the first file's functions first
(then the next file's new ones, ...), each file's in order of instructions run, most first. gold places the sections
listed, in this order, together in .text: the request path's code packed instead of spread over the library, so it
evicts itself less from the L1 instruction cache (since branch rqfoot; benchmarks/README.md). Only functions in a
section of their own move: Package.swift's -function-sections gives every Swift function one (without it swiftc gives
only its public ones one), and the static runtime's C/C++ functions have theirs.
"""
import collections
import sys


def functions(path, ops):
    """Instructions per function of libtether.so that runs in the loop, from one callgrind output file written with
    --demangle=no --dump-instr=yes --compress-pos=no --compress-strings=no: a function counts when one of its
    instructions ran at least once every other operation (a one-time metadata instantiation in the first operation
    does not)."""
    ob = fn = None
    skip = False
    cost, peak = collections.Counter(), collections.Counter()
    for line in open(path):
        if line.startswith('ob='):
            ob = line[3:].strip()
        elif line.startswith('fn='):
            fn = line[3:].strip().split("'")[0]  # callgrind's 'N marks recursion depth N of the same function
        elif line.startswith('calls='):
            skip = True  # the next cost line is the call's inclusive cost
        elif line.startswith('0x'):
            if skip:
                skip = False
                continue
            parts = line.split()
            if 'libtether' in ob and len(parts) > 2:
                ir = int(parts[2])  # address, line, Ir
                cost[fn] += ir
                peak[fn] = max(peak[fn], ir)
    return collections.Counter({fn: c for fn, c in cost.items() if 2 * peak[fn] >= ops})


def main():
    seen, out = set(), []
    ops = int(sys.argv[1])
    for path in sys.argv[2:]:
        for fn, _ in functions(path, ops).most_common():
            if fn not in seen and not fn.startswith('0x'):
                seen.add(fn)
                out.append(fn)
    for fn in out:
        print('.text.' + fn)


if __name__ == '__main__':
    main()
