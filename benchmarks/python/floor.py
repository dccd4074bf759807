"""What one ctypes crossing costs on this machine: the floor under every Python resolve (issue 5).

A Python resolve through the C ABI is at least: one ctypes call into the library (the resolve),
one C -> Python callback per Python factory, one ctypes call to release the handle, and one
callback per destructor (for class factories the destructor is ``dict.pop`` itself, no Python
frame). This measures those pieces on their own, with trivial C functions from libc, so the
tether rows of bench.py can be read against them:

  call0 / call1     a ctypes call of a C function, 0 / 1 args, no argtypes (the binding's hot calls)
  call1 argtypes    the same with argtypes declared (every from_param conversion)
  callback          C -> Python function -> C: qsort of 256 equal items with a Python comparator,
                    minus qsort with a C comparator (strcmp), per comparison
  callback builtin  the same with a C-implemented callable (as DROP_FAST, which is dict.pop)
  python call       an ordinary Python function call, for scale

Usage: python floor.py [--quick]   (no tether needed; run it next to bench.py)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import operator
import sys
import time
from ctypes import CFUNCTYPE, c_int, c_size_t, c_void_p
from typing import Callable

REPEATS = 7
MIN_NS = 50_000_000


def per_op(fn: Callable[[int], None]) -> float:
    """Fastest ns per op of fn(n) over the repeats (a floor: the least disturbed run), n calibrated
    to >= MIN_NS per repeat, gc off."""
    n = 1000
    while True:
        t0 = time.perf_counter_ns()
        fn(n)
        dt = time.perf_counter_ns() - t0
        if dt >= MIN_NS // 5:
            break
        n *= 4
    n = max(1, int(n * MIN_NS / max(dt, 1)))
    gc.disable()
    try:
        fn(n)
        samples = []
        for _ in range(REPEATS):
            t0 = time.perf_counter_ns()
            fn(n)
            samples.append((time.perf_counter_ns() - t0) / n)
    finally:
        gc.enable()
    return min(samples)


def main() -> int:
    global REPEATS, MIN_NS
    if "--quick" in sys.argv:
        REPEATS, MIN_NS = 3, 20_000_000
    libc = ctypes.CDLL(ctypes.util.find_library("c"))

    getpagesize = libc["getpagesize"]  # 0 args, no system call
    labs = libc["labs"]  # 1 arg, no argtypes
    labs.restype = ctypes.c_long
    labs_typed = libc.labs
    labs_typed.restype, labs_typed.argtypes = ctypes.c_long, [ctypes.c_long]
    one = ctypes.c_long(1)

    # Callbacks: qsort of N identical items, once with strcmp (C) and once with a Python
    # comparator; both return 0 every time, so both make the same comparisons (counted once).
    CMP = CFUNCTYPE(c_int, c_void_p, c_void_p)
    qsort = libc.qsort
    qsort.restype = None
    qsort.argtypes = [c_void_p, c_size_t, c_size_t, c_void_p]
    N = 256
    text = ctypes.c_char_p(b"same")
    same = ctypes.cast(text, c_void_p).value  # every item the same pointer: strcmp of the items'
    ptrs = (c_void_p * N)(*([same] * N))  # bytes (the pointers themselves) is 0
    base = ctypes.addressof(ptrs)
    strcmp_addr = ctypes.cast(libc.strcmp, c_void_p).value
    calls = [0]

    def counting(a: int | None, b: int | None) -> int:
        calls[0] += 1
        return 0

    def cmp(a: int | None, b: int | None) -> int:
        return 0

    counting_cb = CMP(counting)
    qsort(base, N, 8, ctypes.cast(counting_cb, c_void_p).value)
    per_sort = calls[0]
    py_cmp = CMP(cmp)
    py_cmp_addr = ctypes.cast(py_cmp, c_void_p).value
    builtin_cmp = CMP(operator.is_)  # two new ints are never the same object: 0; C-implemented, no frame
    builtin_addr = ctypes.cast(builtin_cmp, c_void_p).value

    def loop(f: Callable[..., object], *args: object) -> Callable[[int], None]:
        def run(n: int) -> None:
            for _ in range(n):
                f(*args)
        return run

    def empty(n: int) -> None:
        for _ in range(n):
            pass

    def pyf(x: object) -> object:
        return x

    base_ns = per_op(empty)
    rows: list[tuple[str, float]] = []
    rows.append(("python call f(x)", per_op(loop(pyf, one)) - base_ns))
    rows.append(("ctypes call, 0 args (getpagesize)", per_op(loop(getpagesize)) - base_ns))
    rows.append(("ctypes call, 1 arg, no argtypes (labs)", per_op(loop(labs, one)) - base_ns))
    rows.append(("ctypes call, 1 arg, argtypes (labs)", per_op(loop(labs_typed, 1)) - base_ns))
    q_c = per_op(loop(qsort, base, N, 8, strcmp_addr))
    q_py = per_op(loop(qsort, base, N, 8, py_cmp_addr))
    q_b = per_op(loop(qsort, base, N, 8, builtin_addr))
    rows.append(("C -> Python callback (2 pointer args), Python function", (q_py - q_c) / per_sort))
    rows.append(("C -> Python callback (2 pointer args), C-implemented callable", (q_b - q_c) / per_sort))

    print(f"Python {sys.version.split()[0]}; ns per operation, fastest of {REPEATS} repeats (loop overhead "
          f"{base_ns:.0f} ns subtracted)")
    print()
    print("| operation | ns |")
    print("|---|---:|")
    for name, ns in rows:
        print(f"| {name} | {ns:.0f} |")
    call = rows[2][1]
    cb = rows[4][1]
    cbb = rows[5][1]
    print()
    print(f"Floor of one Python resolve of a 3-factory chain (S1) through the ABI, before the library's own "
          f"work and the objects' construction: 2 calls + 3 factory callbacks + 3 destructor callbacks "
          f"(dict.pop) = {2 * call + 3 * cb + 3 * cbb:.0f} ns.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
