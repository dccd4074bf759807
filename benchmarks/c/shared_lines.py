"""Reads a lackey trace (valgrind --tool=lackey --trace-mem=yes) of benchmarks/c/shared_lines.c on stdin.

Prints each 64-byte line one thread's phase wrote and the other's touched, with the accesses per phase
and the code that wrote it: the last instruction before the store that is not in the Swift runtime's
retain/release (a refcount written shows as its caller). Arguments: the marker address, the library's
load address and the path of its symbols (`nm -n` output)."""
import bisect
import collections
import sys

marker, base = int(sys.argv[1], 16), int(sys.argv[2], 16)
syms = []
for line in open(sys.argv[3]):
    p = line.split(None, 2)
    if len(p) == 3 and len(p[0]) == 16:
        syms.append((int(p[0], 16), p[2].strip()))
syms.sort()
keys = [s[0] for s in syms]
runtime = [(a, n) for a, n in syms if n in ('swift_retain', 'swift_release', 'swift_bridgeObjectRetain', 'swift_bridgeObjectRelease')]


def name(ip):
    a = ip - base
    i = bisect.bisect_right(keys, a) - 1
    return '%s+%#x' % (syms[i][1][:110], a - syms[i][0]) if i >= 0 and a >= 0 else hex(ip)


def in_runtime(ip):
    a = ip - base
    i = bisect.bisect_right(keys, a) - 1
    return i >= 0 and syms[i][1] in ('swift_retain', 'swift_release', 'swift_retain_n', 'swift_release_n')


phase, caller = 0, 0
count = [None, collections.Counter(), collections.Counter()]
writers = collections.defaultdict(collections.Counter)
for line in sys.stdin:
    kind = line[0:2].strip()
    if kind not in ('I', 'S', 'M', 'L'):
        continue
    address = int(line[3:line.index(',')], 16)
    if kind == 'I':
        if not in_runtime(address):
            caller = address
        continue
    if kind != 'L' and marker <= address < marker + 32:
        slot = (address - marker) // 8
        phase = 1 if slot == 0 else 2 if slot == 2 else 0
        continue
    if not phase:
        continue
    line_address = address >> 6 << 6
    count[phase][(kind == 'L', line_address)] += 1
    if kind != 'L':
        writers[line_address][name(caller)] += 1
for line_address in sorted(writers):
    w1, w2 = count[1][(False, line_address)], count[2][(False, line_address)]
    r1, r2 = count[1][(True, line_address)], count[2][(True, line_address)]
    if (w1 and (w2 or r2)) or (w2 and (w1 or r1)):
        print('%#x: thread 1 wrote %d, read %d; thread 2 wrote %d, read %d' % (line_address, w1, r1, w2, r2))
        for who, n in writers[line_address].most_common(4):
            print('    written by %s (%d)' % (who, n))
