"""Container.resolve passes a Python singleton's cached object as TETHER_RESOLVE_HELD: a hit on it
needs no handle (no tether_ref_release), and once the library answered that it is the published
singleton, later hits need no call at all (test_singleton_hits.py checks when they
stop); native singletons keep their handles, and hits stay right while another thread resets the
singleton."""

import gc
import sys
import threading
import weakref

from test_native_refs import Counts, Thing, lib, register_native  # noqa: F401 (lib: the fixture)

from tether import Scope
from tether._cabi import RESOLVE_HELD, RESOLVE_MORE_DROPS, RESOLVE_NO_WAIT

PLAIN = RESOLVE_NO_WAIT | RESOLVE_MORE_DROPS  # the flags of every collecting call of Container.resolve


class Service:
    pass


def spy(c):
    """Records the flags of every collecting call and every handle release of ``c``."""
    flags, releases = [], []
    collect, release = c._gil_collect, c._ref_release
    c._gil_collect = lambda handle, kid, f, io: flags.append(f) or collect(handle, kid, f, io)
    c._ref_release = lambda ref: releases.append(ref) or release(ref)
    return flags, releases


def test_python_singleton_hits_need_no_handle(c):
    c.register(Service, scope=Scope.SINGLETON)
    c.register("Nested", lambda: c.resolve(Service), deps=[], scope=Scope.TRANSIENT)
    flags, releases = spy(c)
    first = c.resolve(Service)  # made: nothing cached to hold yet, a handle
    assert flags == [PLAIN] and len(releases) == 1
    assert c.resolve(Service) is first  # held: the library says it is the published one, no handle
    assert flags == [PLAIN, PLAIN | RESOLVE_HELD] and len(releases) == 1
    assert all(c.resolve(Service) is first for _ in range(5)) and len(flags) == 2  # then served in Python: no call
    assert c.resolve("Nested") is first  # a hit nested in a resolve: no call for it either
    assert flags.count(PLAIN | RESOLVE_HELD) == 1 and len(releases) == 1
    c.reset(Scope.SINGLETON)
    second = c.resolve(Service)
    assert second is not first and len(releases) == 2  # made again: a handle again


def test_native_singletons_keep_their_handles(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Native", Scope.SINGLETON)
    flags, _releases = spy(c)
    ref = c.resolve("Native")
    assert c.resolve("Native") is ref and flags == [PLAIN] * 2  # nothing Python holds: no HELD
    c.reset(Scope.SINGLETON)
    assert n.dropped == 0 and ref.cast(Thing).contents.id >= 1  # the NativeRef's handle keeps it
    ref.release()
    assert n.made == 1 and n.dropped == 1


def test_hits_while_another_thread_resets(c):
    made = []

    class Counted:
        def __init__(self) -> None:
            made.append(weakref.ref(self))

    c.register(Counted, scope=Scope.SINGLETON)
    stop = threading.Event()
    errors = []

    def reset_loop():
        try:
            while not stop.is_set():
                c.reset(Scope.SINGLETON)
                c.resolve(Counted)  # the next one made here: the other thread still holds the last it saw
        except BaseException as exc:
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the GIL changes hands as often as it can
    thread = threading.Thread(target=reset_loop, daemon=True)
    try:
        thread.start()
        resolves = 0
        # hits take no call, so 20000 may be over before the other thread ran: go on until it reset
        while resolves < 20000 or (len(made) <= 10 and resolves < 10**7):
            got = c.resolve(Counted)
            assert type(got) is Counted
            resolves += 1
    finally:
        stop.set()
        thread.join(30)
        sys.setswitchinterval(interval)
    assert not errors and len(made) > 10
    del got
    c.reset(Scope.SINGLETON)
    gc.collect()
    assert all(r() is None for r in made)  # every one let go of, once
