#!/usr/bin/env python3
"""The hot functions of the profiled benchmark bodies, as gold's --section-ordering-file wants them.

Usage: hot_order.py OPS CALLGRIND_FILE... (each file: one body's loop of OPS operations, written as functions() says).
       hot_order.py --tune PROFILED_LIB LINKED_LIB ORDER OPS CALLGRIND_FILE...   (since branch rq0order; see tune())
Prints one `.text.SYMBOL` line per function of libtether.so that ran in any file, the first file's functions first
(then the next file's new ones, ...), each file's in order of instructions run, most first. gold places the sections
listed, in this order, together in .text: the request path's code packed instead of spread over the library, so it
evicts itself less from the L1 instruction cache (since branch rqfoot; benchmarks/README.md). Only functions in a
section of their own move: Package.swift's -function-sections gives every Swift function one (without it swiftc gives
only its public ones one), and the static runtime's C/C++ functions have theirs.
"""
import bisect
import collections
import random
import subprocess
import sys

I1_SETS, I1_WAYS, LINE = 64, 8, 64  # callgrind's default I1: 32 KB, 8-way, 64-byte lines


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


def symbols(lib):
    """name -> (address, size) of the library's functions (nm; assembly ones without a size get 0)."""
    out = {}
    for line in subprocess.run(['nm', '-S', '--defined-only', lib], capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in 'tT':
            out.setdefault(p[3], (int(p[0], 16), int(p[1], 16)))
        elif len(p) == 3 and p[1] in 'tT':
            out.setdefault(p[2], (int(p[0], 16), 0))
    return out


def hot_lines(path, ops, profiled):
    """The 64-byte lines fetched at least every other operation in one profile: other objects' as fixed lines (ob,
    line: they do not move, and a mapping at a page boundary keeps a line's set), libtether's as (function, offset)
    against the profiled library's symbols (they move with their function). An instruction's last byte counts too: one
    that crosses into the next line fetches it (its length is the gap to the next instruction run, else 6 bytes, a
    branch's or call's; without this the model missed the lines that only a crossing instruction fetches)."""
    starts = sorted((a, n) for n, (a, _) in profiled.items())
    keys = [a for a, _ in starts]
    ob = None
    skip = False
    count = collections.Counter()
    for line in open(path):
        if line.startswith('ob='):
            ob = line[3:].strip()
        elif line.startswith('calls='):
            skip = True
        elif line.startswith('0x'):
            if skip:
                skip = False
                continue
            parts = line.split()
            if len(parts) > 2:
                count[ob, int(parts[0], 16)] += int(parts[2])
    run = collections.defaultdict(list)
    for ob, addr in count:
        run[ob].append(addr)
    fixed, moving = set(), set()
    for ob, addrs in run.items():
        addrs.sort()
        for i, addr in enumerate(addrs):
            if 2 * count[ob, addr] < ops:
                continue
            size = addrs[i + 1] - addr if i + 1 < len(addrs) and addrs[i + 1] - addr <= 15 else 6
            for byte in (addr, addr + size - 1):
                if 'libtether' in ob:
                    a, fn = starts[bisect.bisect_right(keys, addr) - 1]
                    moving.add((fn, byte - a))
                else:
                    fixed.add((ob, byte // LINE))
    return fixed, moving


def tune(profiled_lib, linked_lib, order, ops, paths, rounds=3000, seed=1):
    """Reorders ORDER (the functions hot_order.py placed, LINKED_LIB linked with them) so that fewer of each body's
    hot lines share an I1 set beyond its 8 ways: a set's lines past 8, run in turn every operation, all miss (LRU), so
    the score is the number of hot lines in over-full sets, plus half of those in full ones (a stray fetch of a cold
    line evicts one: in callgrind, full sets gave most of a tuned layout's misses, RQ1 49 of 85 per op), summed over the
    bodies. Placement is predicted as gold does
    it: the listed sections one after another, 16-byte aligned, from where LINKED_LIB put the first (the same
    functions, so the same start); functions gold kept elsewhere (folded identical code) stay. A random search (moves
    and swaps, a fixed seed) keeps any change that does not raise the score. Since branch rq0order: the plain order
    packed the request path but left RQ0's lines colliding (benchmarks/README.md, rq0order)."""
    profiled, linked = symbols(profiled_lib), symbols(linked_lib)
    bodies = [hot_lines(p, ops, profiled) for p in paths]
    order = [fn for fn in order if fn in linked]
    # The block's start: the first listed function that the next one follows directly (a folded one lives elsewhere).
    base = next(linked[f][0] for f, g in zip(order, order[1:])
                if 0 <= linked[g][0] - linked[f][0] - linked[f][1] < 64)
    placed = {fn for fn in order if base <= linked[fn][0] < base + 4 * sum(linked[f][1] + 16 for f in order)}

    def score(candidate):
        addr, cur = {}, base
        for fn in candidate:
            if fn in placed:
                cur = (cur + 15) & ~15
                addr[fn] = cur
                cur += linked[fn][1]
        total = 0
        for fixed, moving in bodies:
            lines = {(ob, line) for ob, line in fixed}
            lines.update((None, (addr.get(fn, linked.get(fn, (0, 0))[0]) + off) // LINE) for fn, off in moving)
            per_set = collections.Counter(line % I1_SETS for _, line in lines)
            total += sum(n if n > I1_WAYS else n / 2 for n in per_set.values() if n >= I1_WAYS)
        return total

    rng = random.Random(seed)
    best, best_score = list(order), score(order)
    first = best_score
    for _ in range(rounds):
        cand = list(best)
        i, j = rng.randrange(len(cand)), rng.randrange(len(cand))
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            cand.insert(j, cand.pop(i))
        s = score(cand)
        if s <= best_score:
            best, best_score = cand, s
    print('hot_order.py --tune: lines in over-full I1 sets (+ half of full ones), summed over the bodies: %d -> %d' % (first, best_score),
          file=sys.stderr)
    return best


def main():
    if sys.argv[1] == '--tune':
        profiled_lib, linked_lib, order_path, ops = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        order = [line.strip()[len('.text.'):] for line in open(order_path) if line.strip()]
        out = tune(profiled_lib, linked_lib, order, ops, sys.argv[6:])
    else:
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
