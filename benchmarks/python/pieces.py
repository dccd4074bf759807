"""What S2 and S3 cost piece by piece (issue 15): the matrix's shapes next to variants that each
leave one piece out, so the differences say what a piece costs.

  S2                           c.resolve("Config") through a lambda, a singleton hit (the matrix's S2)
  S2 floor                     the same lambda calling a Python method that only returns a dict item
  dependency-injector S2       its Singleton provider called directly (the matrix's peer), if installed
  S3 hand-built                Parent(Child()) and the weakref back edge, written out
  S3 declared                  the matrix's S3: tether.complete(link, deps=[tether.weak("Parent")])
  S3 declared, no-op callback  tether.complete(lambda child: None, deps=[])
  S3r                          the matrix's S3r: lambda r, child: setattr(child, "parent", r.weak("Parent"))
  S3r, callback only r.weak    lambda r, child: r.weak("Parent")
  S3r, no-op callback          lambda r, child: None (the resolver opened and closed, nothing asked)

Usage (TETHER_LIBRARY and bindings/python as for bench.py):
  python pieces.py [--loops N] [--repeats R]   CPU time of the thread per operation, the best of R
                                               loops of N, gc off (a loaded machine disturbs it least)
  python pieces.py --only NAME --loops N       only runs NAME N times: under callgrind, the difference
                                               between N and 0 loops is its instructions (see README)
"""

from __future__ import annotations

import argparse
import gc
import time
import weakref
from typing import Any, Callable

import tether
from tether import Scope

from bench import Child, Config, Parent  # the matrix's classes


def link(child: Child, parent: Any) -> None:
    child.parent = parent


def s3(on_complete: Any) -> tether.Container:
    c = tether.Container()
    c.register("Child", Child, deps=[], on_complete=on_complete)
    c.register("Parent", Parent, deps=["Child"])
    return c


class Floor:
    def __init__(self) -> None:
        self.items = {"Config": Config()}

    def get(self, key: str, *args: Any) -> Any:
        return self.items[key]


def hand() -> Parent:
    p = Parent(Child())
    p.child.parent = weakref.ref(p)
    return p


def scenarios() -> dict[str, Callable[[], Any]]:
    c2 = tether.Container()
    c2.register("Config", Config, deps=[], scope=Scope.SINGLETON)
    r2, floor = c2.resolve, Floor().get
    ops: dict[str, Callable[[], Any]] = {"S2": lambda: r2("Config"), "S2 floor": lambda: floor("Config")}
    try:
        from dependency_injector import providers

        ops["dependency-injector S2"] = providers.Singleton(Config)
    except ImportError:
        pass
    ops["S3 hand-built"] = hand
    for name, on_complete in {
        "S3 declared": tether.complete(link, deps=[tether.weak("Parent")]),
        "S3 declared, no-op callback": tether.complete(lambda child: None, deps=[]),
        "S3r": lambda r, child: setattr(child, "parent", r.weak("Parent")),
        "S3r, callback only r.weak": lambda r, child: r.weak("Parent"),
        "S3r, no-op callback": lambda r, child: None,
    }.items():
        ops[name] = (lambda resolve: lambda: resolve("Parent"))(s3(on_complete).resolve)
    ops["_keep"] = (c2,)  # type: ignore[assignment]
    return ops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loops", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--only", help="run this scenario --loops times and print nothing")
    opts = ap.parse_args()
    ops = scenarios()
    for name, op in ops.items():
        if not name.startswith("_"):
            for _ in range(100):  # the plans described, the hit confirmed
                op()
    gc.disable()
    if opts.only:
        op = ops[opts.only]
        for _ in range(opts.loops):
            op()
        return
    for name, op in ops.items():
        if name.startswith("_"):
            continue
        best = float("inf")
        for _ in range(opts.repeats):
            t0 = time.thread_time_ns()
            for _ in range(opts.loops):
                op()
            best = min(best, (time.thread_time_ns() - t0) / opts.loops)
        print(f"{name:30s} {best:6.0f} ns")


if __name__ == "__main__":
    main()
