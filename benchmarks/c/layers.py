"""Instructions per operation by layer, from a callgrind profile (self cost of every function).

    python3 benchmarks/c/layers.py build/bench/callgrind.s1_tether_key OPS
Layers: the client's own code (the benchmark's factories, destructors, callbacks, adapters), Swinject, libc's
malloc/free, the Swift runtime's reference counting (strong and weak), its object allocation
and deallocation, Tether's core (Sources/TetherCore), its ABI layer (Sources/Tether), and the rest
(thread-local lookups, one-time initializer checks, libffi).
"""
import subprocess
import sys
from collections import Counter

LAYERS = [
    ("client code (factories, destructors, callbacks)", lambda f: "bench.c" in f or "SwiftBench" in f),
    ("Swinject", lambda f: "8Swinject" in f or "/Swinject/" in f),
    ("libc malloc/free", lambda f: "malloc.c" in f or "memalign" in f),
    ("Swift reference counting (strong, weak, side tables)",
     lambda f: any(p in f for p in ("swift_retain", "swift_release", "RefCount", "swift_weak", "SideTable",
                                    "swift_unowned", "Unowned", "formWeakReference", "swift_bridgeObject"))
     and "_swift_release_dealloc" not in f),
    ("Swift object allocation / deallocation",
     lambda f: any(p in f for p in ("swift_allocObject", "swift_slowAlloc", "swift_slowDealloc", "swift_dealloc",
                                    "_swift_release_dealloc", "type metadata accessor"))),
    # By file, or for compiler-generated code by the module in the mangled name.
    ("Tether core (Sources/TetherCore)", lambda f: "Sources/TetherCore/" in f or "10TetherCore" in f),
    ("Tether ABI (Sources/Tether)", lambda f: "Sources/Tether/" in f or "6Tether" in f or ":tether_" in f),
]


def main() -> None:
    path, ops = sys.argv[1], int(sys.argv[2])
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=no", "--threshold=100", path],
                         capture_output=True, text=True).stdout
    totals: Counter[str] = Counter()
    grand = 0
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].replace(",", "").isdigit():
            continue
        ir = int(parts[0].replace(",", ""))
        rest = line.split(")", 1)[1] if "(" in parts[1] else parts[1]
        rest = rest.split(" [", 1)[0]  # the object file's path may name anything (SwiftBench)
        if "PROGRAM TOTALS" in rest:
            grand = ir
            continue
        if any(s in rest for s in ("bench.c:main", "bench.c:measure", "profiledLoop", "libc-start", "(below main)")):
            continue
        layer = next((name for name, match in LAYERS if match(rest)), "other (thread-locals, once-checks, libffi, ...)")
        totals[layer] += ir
    print(f"instructions per operation by layer ({ops} operations; self cost, total {grand / ops:.0f}):")
    for name, ir in totals.most_common():
        print(f"{ir / ops:10.0f}  {name}")


if __name__ == "__main__":
    main()
