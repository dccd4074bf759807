"""Reads a lackey trace (valgrind --tool=lackey --trace-mem=yes) of benchmarks/c/shared_lines.c on stdin.

Prints each 64-byte line one thread's phase wrote and the other's touched, with the accesses per phase
and the code that wrote it: the last instruction before the store that is not in the Swift runtime's
retain/release (a refcount written shows as its caller). Arguments: the marker address, the library's
load address, the path of its symbols (`nm -n` output) and, optional, the run's output (its `map` lines):
then code outside the library is named by its object's symbols (libc's malloc, the bench's body) and each
line by where it lies (a symbol of an object's data, or `heap`)."""
import bisect
import collections
import subprocess
import sys

marker, base = int(sys.argv[1], 16), int(sys.argv[2], 16)


def read_nm(lines):
    out = []
    for line in lines:
        p = line.split(None, 2)
        if len(p) == 3 and len(p[0]) == 16:
            out.append((int(p[0], 16), p[2].strip()))
    out.sort()
    return out


syms = read_nm(open(sys.argv[3]))
keys = [s[0] for s in syms]

# Other objects, from the run's /proc/self/maps: (start, end, load base, path); their symbols on demand.
objects, object_syms = [], {}
if len(sys.argv) > 4:
    first = {}
    for line in open(sys.argv[4]):
        if not line.startswith('map '):
            continue
        p = line.split()
        if len(p) < 7 or not p[6].startswith('/'):
            continue
        lo, hi = (int(x, 16) for x in p[1].split('-'))
        if p[6] not in first:
            first[p[6]] = lo - int(p[3], 16)
        objects.append((lo, hi, first[p[6]], p[6]))


def object_of(address):
    for lo, hi, load, path in objects:
        if lo <= address < hi:
            return load, path
    return None


def symbols_of(path):
    if path not in object_syms:
        found = []
        for flags in (['-n', '--defined-only'], ['-D', '-n', '--defined-only']):
            try:
                text = subprocess.run(['nm'] + flags + [path], capture_output=True, text=True).stdout
            except OSError:
                text = ''
            found = read_nm(text.splitlines())
            if found:
                break
        object_syms[path] = (found, [s[0] for s in found])
    return object_syms[path]


def name_in(table, table_keys, offset):
    i = bisect.bisect_right(table_keys, offset) - 1
    return '%s+%#x' % (table[i][1][:110], offset - table[i][0]) if i >= 0 else None


def name(ip):
    where = object_of(ip) if objects else None
    if where is None or where[0] == base:
        n = name_in(syms, keys, ip - base) if ip >= base else None
        return n or hex(ip)
    load, path = where
    table, table_keys = symbols_of(path)
    return '%s:%s' % (path.rsplit('/', 1)[-1], name_in(table, table_keys, ip - load) or hex(ip - load))


def place(address):
    """Where a line lies: an object's data symbol, or the heap (anonymous memory)."""
    where = object_of(address) if objects else None
    if where is None:
        return 'heap/anonymous' if objects else ''
    return 'in ' + name(address)


def in_runtime(ip):
    a = ip - base
    i = bisect.bisect_right(keys, a) - 1
    return i >= 0 and syms[i][1] in ('swift_retain', 'swift_release', 'swift_retain_n', 'swift_release_n')


phase, caller = 0, 0
count = [None, collections.Counter(), collections.Counter()]
writers = collections.defaultdict(collections.Counter)
readers = collections.defaultdict(collections.Counter)
words = collections.defaultdict(set)  # (line, phase, 'w' or 'r') -> offsets in the line, 8-byte words
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
    words[(line_address, phase, 'r' if kind == 'L' else 'w')].add(address & 56)
    if kind != 'L':
        writers[line_address][name(caller)] += 1
    else:
        readers[(line_address, phase)][name(caller)] += 1
shared = 0
for line_address in sorted(writers):
    w1, w2 = count[1][(False, line_address)], count[2][(False, line_address)]
    r1, r2 = count[1][(True, line_address)], count[2][(True, line_address)]
    if (w1 and (w2 or r2)) or (w2 and (w1 or r1)):
        shared += 1
        print('%#x: thread 1 wrote %d, read %d; thread 2 wrote %d, read %d %s' % (line_address, w1, r1, w2, r2,
                                                                                 place(line_address)))
        for who, n in writers[line_address].most_common(4):
            print('    written by %s (%d)' % (who, n))
        # The words each thread touched: disjoint ones are false sharing (two objects in one line).
        print('    words: ' + '; '.join('thread %d %s %s' % (t, 'wrote' if k == 'w' else 'read',
                                                      ','.join('+%#x' % o for o in sorted(words[(line_address, t, k)])))
                                         for t in (1, 2) for k in ('w', 'r') if words[(line_address, t, k)]))
        # A line one thread only reads: who reads it (the shared object, when the writes are another's).
        for t, w in ((1, w1), (2, w2)):
            if not w:
                for who, n in readers[(line_address, t)].most_common(3):
                    print('    read by thread %d in %s (%d)' % (t, who, n))
print('%d line(s) shared' % shared)
