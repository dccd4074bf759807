# Which objects one bench.c body retains and releases, per operation, and from where: a shared
# object's count written by every request is a cache line every thread writes (issue 27).
# From the repository root, after `make build` and profile.sh (which builds build/bench/bench-c-prof):
#   BODY=rp_tether N=20 gdb -q -batch -x benchmarks/c/retains.py build/bench/bench-c-prof
# Prints, for each (retain|release, object, class, caller) seen at least N times in one run of
# N operations: the count. Objects made before the run (the root, its registrations and
# singletons) have the lowest addresses; a per-request child reused from its parent's spares
# keeps its address from one request to the next.
import os

import gdb

BODY = os.environ.get("BODY", "rp_tether")
N = int(os.environ.get("N", "20"))
seen = {}


class Counter(gdb.Breakpoint):
    def stop(self):
        obj = int(gdb.parse_and_eval("$rdi"))
        try:
            meta = int(gdb.parse_and_eval("*(unsigned long *)%d" % obj))
            cls = gdb.execute("info symbol %d" % meta, to_string=True).split(" ")[0]
        except gdb.error:
            return False
        caller = gdb.newest_frame().older()
        key = (self.location, hex(obj), cls, (caller.name() if caller else None) or "?")
        seen[key] = seen.get(key, 0) + 1
        return False


gdb.execute("set pagination off")
gdb.execute("break " + BODY)
# -b BODY -n N -r 1: the body runs twice (warm-up, then the run); count the second.
gdb.execute("run -s shapes -b %s -n %d -r 1 > /dev/null" % (BODY, N))
Counter("swift_retain")
Counter("swift_release")
gdb.execute("continue")
for (what, obj, cls, caller), count in sorted(seen.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    if count >= N and "Empty" not in cls:
        print("%4d %-8s %s %-40.40s %.100s" % (count, what, obj, cls, caller))
