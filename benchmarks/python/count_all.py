"""Instructions per operation of every bench.py tether shape, in one process: each shape's measured
loop runs inside one C call (``collections.deque(map(...), maxlen=0)``), and callgrind collects
only inside ``deque_init`` and dumps after each (count_all.sh), so interpreter start-up and
warm-up are not counted and one run gives every shape. A no-op shape (``loop``) gives the
wrapper's own cost (``map`` calling a Python function), which count_all.sh subtracts.

  python count_all.py N    (under count_all.sh; alone, it only runs the shapes)
"""

from __future__ import annotations

import collections
import sys
from typing import Any, Callable

import bench

SHAPES = ("loop", "S1", "S2", "S3", "S3r", "S4", "SG", "RA", "RQ0", "RQV", "RQ1", "RQVC")


def rqvc(ops: dict[str, Any]) -> Callable[[], Any]:
    """RQV with the child's C container made before it resolves (``handle``): what a request would
    cost if the binding gave every child its C container instead of asking the library about
    its values (issue 28 item 2)."""
    import tether
    from bench import Handler, Request

    root = ops["_keep"][-1]  # the matrix's root (cg)

    def op() -> Any:
        with tether.Container(root, values={Request: Request()}) as child:
            child.handle
            return child.resolve(Handler)

    return op


def main() -> None:
    n = int(sys.argv[1])
    ops = bench.contender_tether()
    ops["loop"] = (lambda: None, "")
    ops["RQVC"] = (rqvc(ops), "")
    for name in SHAPES:
        op = ops[name][0]
        for _ in range(200):  # warm-up: plans described, hits confirmed (not collected)
            op()
        count = n // 4 if name == "RQ1" else n
        print(name, count, flush=True)
        collections.deque(map(lambda _: op(), range(count)), maxlen=0)  # collected: see count_all.sh


if __name__ == "__main__":
    main()
