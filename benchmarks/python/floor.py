"""What one ctypes crossing costs on this machine: the floor under every Python resolve (issue 5).

A Python resolve through the C ABI is at least: one ctypes call into the library (the resolve),
one C -> Python callback per Python factory, one ctypes call to release the handle, and one
callback per destructor (for class factories the destructor is ``dict.pop`` itself, no Python
frame). This measures those pieces on their own, with trivial C functions from libc, so the
tether rows of bench.py can be read against them:

  call0 / call1     a ctypes call of a C function, 0 / 1 args, no argtypes (the binding's hot calls)
  call1 argtypes    the same with argtypes declared (every from_param conversion)
  callbacks         C -> Python -> C, timed in a C loop of a helper library compiled with ``cc``
                    (a factory-shaped callback, a destructor as a Python function and as dict.pop,
                    which is DROP_FAST); without a compiler, from qsort of 256 equal items with a
                    Python comparator minus qsort with strcmp, per comparison
  python call       an ordinary Python function call, for scale
  library S1        with the helper and tether importable: resolve + release of A(B(C)) made by C
                    factories through the binding's hot calls (the library's work + 2 crossings)

Tight C loops keep everything in cache: inside a real resolve each crossing costs more (compare
the tether S1 row of bench.py with library S1 + 3 factory and 3 destructor callbacks + the
hand-built row). Instruction counts (valgrind --tool=callgrind) are the steadier measure on a
shared machine.

Usage: python floor.py [--quick]   (TETHER_LIBRARY and bindings/python as for bench.py, optional)
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


# With a C compiler, a helper library calls the callbacks in a C loop (exact per-callback cost,
# the call into the loop amortised) and offers a 4-pointer no-op (the shape of the hot resolve).
HELPER_C = r"""
typedef void *(*f2)(void *, void *);
typedef void (*d2)(void *, void *);
void *noop4(void *a, void *b, void *c, void *d) { (void)b; (void)c; (void)d; return a; }
void *loop2(f2 f, void *a, long n) { void *r = 0; for (long i = 0; i < n; i++) r = f(a, a); return r; }
void loopd(d2 f, void *a, long n) { for (long i = 0; i < n; i++) f(a, 0); }
static char object_[16];
void *make0(void) { return object_; }
void *make2(void *resolver, void *dep) { (void)resolver; (void)dep; return object_; }
"""


def build_helper() -> ctypes.CDLL | None:
    """The helper library, compiled with ``cc`` into a temporary directory; None without a compiler."""
    import os
    import shutil
    import subprocess
    import tempfile

    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        return None
    tmp = tempfile.mkdtemp(prefix="tether-floor-")
    src, lib = os.path.join(tmp, "helper.c"), os.path.join(tmp, "libhelper.so")
    with open(src, "w") as f:
        f.write(HELPER_C)
    try:
        subprocess.run([cc, "-O2", "-shared", "-fPIC", src, "-o", lib], check=True, capture_output=True)
        return ctypes.CDLL(lib)
    except (OSError, subprocess.CalledProcessError):
        return None


def library_s1(helper: ctypes.CDLL) -> float | None:
    """ns per resolve + release of A(B(C)) made by C factories (the helper's), through tether's hot
    calls: the library's work plus the two crossings. None if tether cannot be imported."""
    import os

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
    try:
        import tether
        from tether import _cabi
    except Exception:  # noqa: BLE001
        return None
    c = tether.Container()
    api = c._api
    P = _cabi.Param
    for key, fn, params in ((b"C", helper.make0, []),
                            (b"B", helper.make2, [P(_cabi.PARAM_RESOLVER, None), P(_cabi.PARAM_DEP, b"C")]),
                            (b"A", helper.make2, [P(_cabi.PARAM_RESOLVER, None), P(_cabi.PARAM_DEP, b"B")])):
        array = (P * max(1, len(params)))(*params)
        options = _cabi.RegistrationOptions(scope=1)  # TRANSIENT
        status = api.tether_register_ex(c.handle, key, ctypes.cast(fn, c_void_p), array, len(params),
                                        ctypes.byref(options), None)
        if status:
            return None
    kid = c._lookup("A")[0]
    handle, hot, release = c._handle_arg, c._hot_resolve, c._ref_release
    out, instance = (c_void_p * 1)(), (c_void_p * 1)()

    def run(n: int) -> None:
        for _ in range(n):
            hot(handle, kid, instance, out)
            release(out[0])

    try:
        return per_op(run)
    finally:
        c.close()


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
    helper = build_helper()
    if helper is not None:
        F2 = CFUNCTYPE(c_void_p, c_void_p, c_void_p)  # a factory with the hidden resolver and one dependency
        D2 = CFUNCTYPE(None, c_void_p, c_void_p)  # drop(instance, context)
        loop2, loopd = helper.loop2, helper.loopd
        loop2.restype, loop2.argtypes = c_void_p, [F2, c_void_p, ctypes.c_long]
        loopd.restype, loopd.argtypes = None, [D2, c_void_p, ctypes.c_long]
        noop4 = helper["noop4"]
        noop4.restype = c_int
        h, k, out1, out2 = c_void_p(1 << 40), 7, (c_void_p * 1)(), (c_void_p * 1)()
        f2 = F2(lambda r, p: p)
        d2 = D2(lambda p, c: None)
        db = D2({}.pop)  # what DROP_FAST is: a dict's pop, called by C
        rows.append(("ctypes call, 4 args, no argtypes (the hot resolve's shape)", per_op(loop(noop4, h, k, out1, out2)) - base_ns))
        rows.append(("C -> Python callback, (resolver, dep) -> pointer, Python function", per_op(lambda n: loop2(f2, 5, n))))
        rows.append(("C -> Python destructor callback, Python function", per_op(lambda n: loopd(d2, 5, n))))
        rows.append(("C -> Python destructor callback, dict.pop (DROP_FAST)", per_op(lambda n: loopd(db, 5, n))))
        call, cb, cbb = rows[-4][1], rows[-3][1], rows[-1][1]
        call1 = rows[3][1]  # the release: one handle, with argtypes
    else:
        q_c = per_op(loop(qsort, base, N, 8, strcmp_addr))
        q_py = per_op(loop(qsort, base, N, 8, py_cmp_addr))
        q_b = per_op(loop(qsort, base, N, 8, builtin_addr))
        rows.append(("C -> Python callback (2 pointer args), Python function", (q_py - q_c) / per_sort))
        rows.append(("C -> Python callback (2 pointer args), C-implemented callable", (q_b - q_c) / per_sort))
        call, call1 = rows[2][1], rows[3][1]
        cb, cbb = rows[-2][1], rows[-1][1]

    print(f"Python {sys.version.split()[0]}; ns per operation, fastest of {REPEATS} repeats (loop overhead "
          f"{base_ns:.0f} ns subtracted)")
    print()
    print("| operation | ns |")
    print("|---|---:|")
    for name, ns in rows:
        print(f"| {name} | {ns:.0f} |")
    library = library_s1(helper) if helper is not None else None
    if library is not None:
        print()
        print(f"The library's own S1 seen from Python: resolve + release of A(B(C)) with C factories (no "
              f"callbacks, no destructors) through the binding's hot calls: {library:.0f} ns.")
    print()
    print(f"Floor of one Python resolve of a 3-factory chain (S1) through the ABI, before the library's own "
          f"work and the objects' construction: the resolve call + the release call + 3 factory callbacks + "
          f"3 destructor callbacks (dict.pop) = {call + call1 + 3 * cb + 3 * cbb:.0f} ns.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
