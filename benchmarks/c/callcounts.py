"""Calls per operation of selected runtime functions in a callgrind profile.

    python3 benchmarks/c/callcounts.py build/bench/callgrind.s1_tether_key OPS
Counts every call edge into functions whose name contains one of the patterns below
(allocation, reference counting, locks, libffi), divided by OPS.
"""
import re
import sys
from collections import Counter

PATTERNS = ["swift_retain", "swift_release", "swift_allocObject", "swift_slowAlloc", "malloc", "free",
            "swift_weak", "swift_bridgeObjectRetain", "swift_bridgeObjectRelease", "swift_beginAccess",
            "pthread_mutex_lock", "pthread_getspecific", "swift_once", "ffi_call", "swift_dynamicCast",
            "swift_isUniquelyReferenced", "_consumeAndCreateNew", "swift_arrayInitWithCopy", "swift_arrayDestroy"]


def main() -> None:
    path, ops = sys.argv[1], int(sys.argv[2])
    names: dict[str, str] = {}
    calls: Counter[str] = Counter()
    cfn = None

    def resolve(spec: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not m:
            return spec
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), m.group(1))

    with open(path) as f:
        for line in f:
            if line.startswith("fn="):
                resolve(line[3:].strip())
            elif line.startswith("cfn="):
                cfn = resolve(line[4:].strip())
            elif line.startswith("calls=") and cfn is not None:
                calls[cfn] += int(line[6:].split()[0])
    rows = []
    for name, n in calls.items():
        base = name.split("'")[0]
        if any(p == base or (p in base and not base.startswith("_int")) for p in PATTERNS):
            rows.append((n / ops, name))
    merged: Counter[str] = Counter()
    for per, name in rows:
        merged[name.split("'")[0]] += per
    print(f"calls per operation ({ops} operations):")
    for name, per in merged.most_common(25):
        if per >= 0.05:
            print(f"{per:10.2f}  {name[:150]}")


if __name__ == "__main__":
    main()
