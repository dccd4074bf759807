"""8 threads, 16 requests: each request a child container resolving a CONTAINER-scoped synchronous
factory that sleeps 50 ms (issue 27). Serialized creation takes 16 x 50 ms; per-key creation cells
let the threads' factories overlap.

    PYTHONPATH=bindings/python TETHER_LIBRARY=build/lib/libtether.so python3 benchmarks/python/threads_overlap.py
"""

from __future__ import annotations

import threading
import time

import tether
from tether import Scope


class Request:
    pass


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


def main(threads: int = 8, per_thread: int = 2, seconds: float = 0.05) -> None:
    now, most, lock = [0], [0], threading.Lock()

    def session(request: Request) -> Session:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(seconds)
        with lock:
            now[0] -= 1
        return Session(request)

    root = tether.Container()
    root.register_value(Request)
    root.register(Session, session, scope=Scope.CONTAINER)

    def serve() -> None:
        for _ in range(per_thread):
            with tether.Container(parent=root, values={Request: Request()}) as child:
                child.resolve(Session)

    workers = [threading.Thread(target=serve) for _ in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    root.close()
    print(f"{threads} threads, {threads * per_thread} requests, {seconds * 1000:.0f} ms factories: "
          f"{elapsed:.3f} s, at most {most[0]} factories at once")


if __name__ == "__main__":
    main()
