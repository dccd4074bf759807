"""A Python factory resolving a key its thread is constructing: its own, or one further out.

The library decides (``Executor/Reentry.swift``): a replay running in Python tells it what it
constructs before any call into it (``tether_replay_enter``), so the nested resolve fails with
``CycleError`` naming the path, and no factory runs a second time, whichever path the outer
resolve took (a plan replayed in Python, the library's build, ``aresolve``'s attempts).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import tether
from tether import Scope, _state

from conftest import causes as _chain, container

SCOPES = [Scope.GRAPH, Scope.TRANSIENT, Scope.SINGLETON, Scope.CONTAINER]


def _fails_once_as_a_cycle(info: pytest.ExceptionInfo[Any], path: str) -> None:
    """``CycleError``, or ``FactoryError`` whose cause is one: no FactoryError wrapping another."""
    chain = _chain(info.value)
    types = [type(e) for e in chain]
    assert types in ([tether.CycleError], [tether.FactoryError, tether.CycleError]), types
    cycle = chain[-1]
    assert str(cycle).startswith(f"the constructors of {path} need each other: "), str(cycle)  # the whole path
    assert str(info.value).count("raised") <= 1


@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.name)
def test_a_factory_resolving_its_own_key_runs_once(scope: Scope, plans: bool) -> None:
    c = container(plans=plans)
    made: list[str] = []

    def make_a() -> object:
        made.append("A")
        c.resolve("A")
        return object()

    c.register("A", make_a, scope=scope)
    for _ in range(3):  # the first resolve and the replays after it
        made.clear()
        with pytest.raises(tether.TetherError) as info:
            c.resolve("A")
        _fails_once_as_a_cycle(info, '"A" -> "A"')
        assert made == ["A"]
    assert _state.constructing == []
    c.close()


def _a_needs_b(c: tether.Container, scope: Scope, made: list[str]) -> dict[str, Any]:
    """Registers A(B) in ``scope``, and B's factories that resolve A (sync, and async with aresolve)."""

    class A:
        def __init__(self, b: object) -> None:
            made.append("A")

    def make_b() -> object:
        made.append("B")
        c.resolve("A")
        return object()

    async def make_b_async() -> object:
        made.append("B")
        await c.aresolve("A")
        return object()

    c.register("A", A, deps=["B"], scope=scope)
    return {"sync": make_b, "async": make_b_async}


def _fails_each_time(resolve: Any, made: list[str], times: int) -> None:
    for _ in range(times):
        made.clear()
        with pytest.raises(tether.TetherError) as info:
            resolve()
        _fails_once_as_a_cycle(info, '"A" -> "B" -> "A"')
        assert made == ["B"]


@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.name)
def test_a_factory_resolving_a_key_further_out_runs_once(scope: Scope, plans: bool) -> None:
    c = container(plans=plans)
    made: list[str] = []
    c.register("B", _a_needs_b(c, scope, made)["sync"], scope=scope)
    _fails_each_time(lambda: c.resolve("A"), made, 3)
    c.close()


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.name)
def test_aresolve_of_a_key_further_out_runs_each_factory_once(scope: Scope) -> None:
    c = tether.Container()
    made: list[str] = []
    factories = _a_needs_b(c, scope, made)
    for form in ("async", "sync"):  # an async factory, and a sync one under aresolve: the same
        c.register("B", factories[form], scope=scope)
        _fails_each_time(lambda: asyncio.run(c.aresolve("A")), made, 2)
    c.close()


def test_a_nested_resolve_whose_graph_reaches_a_key_under_construction() -> None:
    """B's factory resolves X, whose graph needs A (under construction further out): the cycle
    names the whole path, and neither A's nor X's factory runs."""
    c = tether.Container()
    made: list[str] = []

    def make_b() -> object:
        made.append("B")
        return ("B", c.resolve("X"))

    c.register("A", lambda b: made.append("A") or ("A", b), deps=["B"])
    c.register("B", make_b)
    c.register("X", lambda a: made.append("X") or ("X", a), deps=["A"])
    for _ in range(3):
        made.clear()
        with pytest.raises(tether.TetherError) as info:
            c.resolve("A")
        _fails_once_as_a_cycle(info, '"A" -> "B" -> "X" -> "A"')
        assert made == ["B"]
    c.close()


def test_nested_resolves_of_other_keys_still_work_and_replays_resume() -> None:
    """A factory resolving a key nobody constructs gets it (through the library: nested resolves
    build step by step); afterwards the plan replays again, and nothing is left entered."""
    c = tether.Container()
    made: list[str] = []

    def make_b() -> object:
        made.append("B")
        return ("B", c.resolve("C"), c.resolve("C"))

    c.register("A", lambda b: ("A", b), deps=["B"])
    c.register("B", make_b)
    c.register("C", lambda: made.append("C") or object())
    for _ in range(3):
        made.clear()
        a = c.resolve("A")
        assert a[0] == "A" and a[1][0] == "B" and a[1][1] is not a[1][2]  # two top-level resolves of C
        assert made == ["B", "C", "C"]
    assert _state.constructing == []
    c.register("A", lambda: "plain")  # a resolve after the failures and nested ones: replayed as usual
    assert c.resolve("A") == "plain" and c.resolve("A") == "plain"
    c.close()


def test_a_child_per_request_running_its_parents_plan() -> None:
    """A child with nothing registered runs the plan its parent described: a factory resolving
    its own key from the child is refused the same way."""
    parent = tether.Container()
    made: list[str] = []
    holder: dict[str, tether.Container] = {}

    def make_a() -> object:
        made.append("A")
        holder["c"].resolve("A")
        return object()

    parent.register("A", make_a)
    for _ in range(3):
        made.clear()
        with tether.Container(parent) as child:
            holder["c"] = child
            with pytest.raises(tether.TetherError) as info:
                child.resolve("A")
        _fails_once_as_a_cycle(info, '"A" -> "A"')
        assert made == ["A"]
    parent.close()


def test_threads_resolving_through_the_library_leave_nothing_under_construction() -> None:
    """Threads resolving through the library at once, switching as often as the interpreter lets
    them, leave nothing marked under construction (else every later replay would decline). (The
    marks are list appends and pops: a ``+= 1`` leaked under Python 3.9 in test_threads.py's
    re-registering test, which this does not reproduce reliably.)"""
    import sys
    import threading

    c = container(plans=False)  # every resolve through the library
    c.register("K", lambda: object())
    start = threading.Barrier(4)

    def work() -> None:
        start.wait()
        for _ in range(3000):
            c.resolve("K")

    threads = [threading.Thread(target=work) for _ in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a thread switch wherever the interpreter allows one
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert _state.constructing == []
    c.close()


def test_another_threads_construction_leaves_this_threads_replays_alone() -> None:
    """What is under construction is per thread: while a factory of another thread's resolve runs
    (a library call under way there), this thread's resolves still replay their plans in Python
    (no library call), and a factory of its own resolving its own key is still a cycle."""
    import sys
    import threading

    c = container(plans=True)
    inside, release = threading.Event(), threading.Event()

    def slow() -> object:
        inside.set()
        release.wait(10)
        return object()

    c.register("Slow", slow)
    c.register("B", object)
    c.register("A", lambda b: ["A", b], deps=["B"])
    for _ in range(3):
        c.resolve("A")  # described and prepared: replayed from here on
    other = threading.Thread(target=c.resolve, args=("Slow",))
    other.start()
    try:
        assert inside.wait(10) and _state.constructing  # the other thread's library call is under way
        calls: list[str] = []

        def profile(frame: Any, event: str, _arg: Any) -> None:
            if event == "call" and frame.f_code is tether.Container._through_library.__code__:
                calls.append(frame.f_code.co_name)

        sys.setprofile(profile)  # this thread only
        try:
            a = c.resolve("A")
        finally:
            sys.setprofile(None)
        assert a[0] == "A" and calls == []  # replayed, not declined to the library
    finally:
        release.set()
        other.join(10)
    assert _state.constructing == []
    c.close()


def test_another_threads_replay_ending_leaves_this_threads_replay_under_way() -> None:
    """Two replays running at once on two threads: the one that ends first does not take the
    other's mark of construction with it, so the other's factory resolving its own key is still
    a cycle found before that factory runs twice (one shared flag used to be cleared by either)."""
    import threading

    c = container(plans=True)
    made: list[str] = []
    recurse = [False]
    started, other_done = threading.Event(), threading.Event()

    def make_a() -> object:
        made.append("A")
        if recurse[0]:
            if len(made) == 1:
                started.set()
                assert other_done.wait(10)
            c.resolve("A")
        return object()

    c.register("A", make_a)
    c.register("B", object)
    for _ in range(3):  # described and prepared: replayed from here on
        c.resolve("A")
        c.resolve("B")
    made.clear()
    recurse[0] = True

    def other() -> None:
        assert started.wait(10)
        c.resolve("B")  # a replay of its own, begun and ended while A's factory runs
        other_done.set()

    thread = threading.Thread(target=other)
    thread.start()
    try:
        with pytest.raises(tether.TetherError) as info:
            c.resolve("A")
    finally:
        other_done.set()
        thread.join(10)
    _fails_once_as_a_cycle(info, '"A" -> "A"')
    assert made == ["A"]
    assert _state.constructing == []
    c.close()


def test_replays_of_one_plan_hammered_from_threads_run_each_factory_once() -> None:
    """8 threads replay one plan at once, some of whose factory calls resolve their own key: each
    such call is a cycle after one factory run, every other resolve makes its graph once."""
    import threading

    c = container(plans=True)
    lock = threading.Lock()
    counts: dict[int, int] = {}
    local = threading.local()

    def make_a(b: object) -> object:
        with lock:
            counts[threading.get_ident()] = counts.get(threading.get_ident(), 0) + 1
        if getattr(local, "recurse", False):
            c.resolve("A")
        return ["A", b]

    c.register("B", object)
    c.register("A", make_a, deps=["B"])
    for _ in range(3):
        c.resolve("A")
    counts.clear()
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []
    rounds = 200

    def hammer(i: int) -> None:
        try:
            barrier.wait(10)
            for n in range(rounds):
                local.recurse = (i + n) % 3 == 0
                if local.recurse:
                    with pytest.raises(tether.TetherError) as info:
                        c.resolve("A")
                    _fails_once_as_a_cycle(info, '"A" -> "A"')
                else:
                    assert c.resolve("A")[0] == "A"
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]
    assert sorted(counts.values()) == [rounds] * 8  # each resolve ran A's factory once
    assert _state.constructing == []
    c.close()


class _Node:
    """An instance Python can reference weakly (``r.weak``), holding what it was made from."""

    def __init__(self, held: object = None) -> None:
        self.held = held


def _x_resolving_y_whose_callback_gets_x(c: tether.Container, made: list[str], seen: list[BaseException]) -> None:
    """X's factory resolves Y inside itself; Y's completion callback asks its resolver for X."""

    def make_x() -> object:
        made.append("X")
        c.resolve("Y")
        return object()

    def y_done(r: Any, y: object) -> None:
        try:
            r.get("X")
        except tether.TetherError as e:
            seen.append(e)

    c.register("X", make_x)
    c.register("Y", lambda: made.append("Y") or object(), on_complete=y_done)


@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
def test_a_callback_inside_a_factorys_nested_resolve_names_the_real_path(plans: bool) -> None:
    """The cycle is X -> Y -> X (not X -> X), and the fix names Y as a dependency of X or a
    completion callback of X, not the callback the request already came from."""
    c = container(plans=plans)
    made: list[str] = []
    seen: list[BaseException] = []
    _x_resolving_y_whose_callback_gets_x(c, made, seen)
    c.resolve("X")
    assert made == ["X", "Y"]
    assert len(seen) == 1 and isinstance(seen[0], tether.CycleError)
    text = str(seen[0])
    assert '"X" -> "Y" -> "X"' in text and '"X" -> "X"' not in text
    assert 'a completion callback of "Y" that this runs asks for "X"' in text
    assert 'take "Y" as a dependency of "X" (deps=["Y"]' in text
    assert 'r.get("Y") in a completion callback of "X" (on_complete=)' in text
    assert 'the callback of "Y" then takes "X" weakly (r.weak("X"))' in text
    assert "tether_" not in text  # Python's terms
    c.close()


@pytest.mark.parametrize("way", ["dependency", "own-callback"])
@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
def test_the_nested_resolve_advice_works(plans: bool, way: str) -> None:
    """Applied, the advice above resolves X with Y's callback getting this X, each factory once."""
    c = container(plans=plans)
    made: list[str] = []
    got: list[object] = []
    xs: list[object] = []

    def make_x(*deps: object) -> object:
        made.append("X")
        xs.append(_Node())
        return xs[-1]

    if way == "dependency":
        c.register("X", make_x, deps=["Y"])
    else:
        c.register("X", make_x, on_complete=lambda r, x: r.get("Y"))
    c.register("Y", lambda: made.append("Y") or _Node(), on_complete=lambda r, y: got.append(r.weak("X")()))
    for _ in range(2):
        made.clear()
        x = c.resolve("X")
        assert sorted(made) == ["X", "Y"] and got[-1] is x
    c.close()


def test_a_factorys_nested_resolve_needing_its_key_names_the_path_and_the_fix() -> None:
    """X's factory resolves Y, which takes X as a dependency: X -> Y -> X, fixed by getting Y in
    X's completion callback (applied: each factory once)."""
    c = tether.Container()
    made: list[str] = []

    def make_x() -> object:
        made.append("X")
        c.resolve("Y")
        return object()

    c.register("X", make_x)
    c.register("Y", lambda x: made.append("Y") or _Node(x), deps=["X"])
    with pytest.raises(tether.TetherError) as info:
        c.resolve("X")
    text = str(_chain(info.value)[-1])
    assert '"X" -> "Y" -> "X"' in text
    assert 'whose construction needs "X"' in text and 'get "Y" with r.weak("Y") in a completion callback of "X"' in text
    assert made == ["X"]

    made.clear()
    ys: list[Any] = []
    c.register("X", lambda: made.append("X") or _Node(), on_complete=lambda r, x: ys.append(r.weak("Y")()))
    x = c.resolve("X")
    assert made == ["X", "Y"] and ys[0].held is x
    c.close()


def test_a_factory_resolving_a_key_its_resolve_constructs_is_told_weak_lazy_and_that_works() -> None:
    """X takes Y; Y's factory resolves X: X -> Y -> X, fixed by Y taking X weak-lazy and calling it
    once made (applied: each factory once, and the provider gives this X)."""
    c = tether.Container()
    made: list[str] = []

    def make_y() -> object:
        made.append("Y")
        c.resolve("X")
        return _Node()

    c.register("X", lambda y: made.append("X") or _Node(y), deps=["Y"])
    c.register("Y", make_y)
    with pytest.raises(tether.TetherError) as info:
        c.resolve("X")
    text = str(_chain(info.value)[-1])
    assert '"X" -> "Y" -> "X"' in text and '"X" -> "X"' not in text
    assert 'make "Y"\'s dependency on "X" weak-lazy (deps=[tether.weak_lazy("X")]) and call it once' in text
    assert made == ["Y"]

    made.clear()
    c.register("Y", lambda x: made.append("Y") or _Node(x), deps=[tether.weak_lazy("X")])
    x = c.resolve("X")
    assert made == ["Y", "X"] and x.held.held() is x
    c.close()


def _deep_shape(c: tether.Container, shape: str, made: list[str], seen: list[BaseException]) -> None:
    """Registers a cycle through several nested resolves (each factory records itself, and a failed
    nested resolve's error in ``seen``, then makes its instance anyway):
    three: X's factory resolves Y, Y's resolves Z, Z's resolves X; callback: Y's completion callback
    gets Z in between; lazy: Y's factory calls its lazy slot on Z; in_callback: Y's completion
    callback resolves X itself (not through its resolver)."""

    def resolving(key: str, nested: str | None) -> Any:
        def make(*slots: Any) -> object:
            made.append(key)
            try:
                if nested:
                    c.resolve(nested)
                for slot in slots:
                    slot()
            except tether.TetherError as e:
                seen.append(e)
            return _Node()
        return make

    def resolving_x(r: Any, y: object) -> None:
        try:
            c.resolve("X")
        except tether.TetherError as e:
            seen.append(e)

    c.register("X", resolving("X", "Y"))
    if shape == "three":
        c.register("Y", resolving("Y", "Z"))
    elif shape == "lazy":
        c.register("Y", resolving("Y", None), deps=[tether.lazy("Z")])
    else:
        c.register("Y", resolving("Y", None), on_complete=(lambda r, y: r.get("Z")) if shape == "callback" else resolving_x)
    if shape != "in_callback":
        c.register("Z", resolving("Z", "X"))


_WEAK_LAZY_Z = ('make "Z"\'s dependency on "X" weak-lazy (deps=[tether.weak_lazy("X")]) and call it once the factory '
                'of "X" returned')
_DEEP = {
    "three": ('"X" -> "Y" -> "Z" -> "X"', _WEAK_LAZY_Z, 'but first take "Y" as a dependency of "X" (deps=["Y"]), '
              '"Z" as a dependency of "Y" (deps=["Z"]) (each instead of its nested resolve)', ["X", "Y", "Z"]),
    "callback": ('"X" -> "Y" -> "Z" -> "X"', _WEAK_LAZY_Z,
                 'but first take "Y" as a dependency of "X" (deps=["Y"]) (instead of its nested resolve)', ["X", "Y", "Z"]),
    "lazy": ('"X" -> "Y" -> "Z" -> "X"', _WEAK_LAZY_Z, 'but first take "Y" as a dependency of "X" (deps=["Y"]), '
             '"Z" as a dependency of "Y" (deps=["Z"]) (each instead of its nested resolve)', ["X", "Y", "Z"]),
    "in_callback": ('"X" -> "Y" -> "X"', 'a completion callback of "Y" resolves "X" in a resolve of its own, and that is '
                    'still being constructed; get "X" with r.weak("X") in that callback instead',
                    'but first take "Y" as a dependency of "X" (deps=["Y"]) (instead of its nested resolve)', ["X", "Y"]),
}


@pytest.mark.parametrize("shape", list(_DEEP))
@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
def test_a_cycle_through_several_nested_resolves_names_the_whole_path(plans: bool, shape: str) -> None:
    """The path is the whole chain, each key once but X; the fix makes every nested resolve but the
    innermost a dependency first (each builds a graph of its own), then breaks the innermost; every
    factory runs once, on the first resolve and on the replays of its described plan after it."""
    path, fix, first, factories = _DEEP[shape]
    c = container(plans=plans)
    made: list[str] = []
    seen: list[BaseException] = []
    _deep_shape(c, shape, made, seen)
    for _ in range(3):  # the first resolve and the replays after it
        made.clear()
        seen.clear()
        c.resolve("X")
        assert sorted(made) == factories
        assert len(seen) == 1 and isinstance(seen[0], tether.CycleError)
        text = str(seen[0])
        assert text.startswith(f"the constructors of {path} need each other: ")
        assert fix in text and first in text and "tether_" not in text
    assert _state.constructing == []
    c.close()


@pytest.mark.parametrize("shape", list(_DEEP))
@pytest.mark.parametrize("scope", [Scope.GRAPH, Scope.SINGLETON, Scope.CONTAINER], ids=lambda s: s.name)
@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
def test_the_advice_for_several_nested_resolves_works(plans: bool, scope: Scope, shape: str) -> None:
    """Applied (Y a dependency of X, Z of Y unless a callback gets it, the innermost request as the
    advice says), X resolves with each factory once, and what asked for X gets this X."""
    c = container(plans=plans)
    made: list[str] = []
    back: list[Any] = []

    def make(key: str) -> Any:
        def build(*slots: Any) -> _Node:
            made.append(key)
            if key == "Z":
                back.append(slots[0])
            return _Node(slots[0] if slots else None)
        return build

    c.register("X", make("X"), deps=["Y"], scope=scope)
    if shape == "in_callback":
        c.register("Y", make("Y"), on_complete=lambda r, y: back.append(r.weak("X")))
    elif shape == "callback":
        c.register("Y", make("Y"), on_complete=lambda r, y: r.get("Z"))
    else:
        c.register("Y", make("Y"), deps=["Z"], scope=scope)
    if shape != "in_callback":
        c.register("Z", make("Z"), deps=[tether.weak_lazy("X")], scope=scope)
    for n in range(1, 4):
        made.clear()
        x = c.resolve("X")
        assert sorted(made) == ([] if scope != Scope.GRAPH and n > 1 else sorted(_DEEP[shape][3]))
        assert back[-1]() is x and x.held is not None
    c.close()


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.name)
@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
def test_factories_raising_through_several_nested_resolves_run_once_and_cache_nothing(plans: bool, scope: Scope) -> None:
    """X's factory resolves Y, Y's resolves Z, Z's resolves X, each letting the error through: the
    resolve of X fails with the cycle at the end of its causes (each factory that raised wraps
    the one inside), every factory ran once, and nothing is cached: the next resolve runs each again."""
    c = container(plans=plans)
    made: list[str] = []

    def resolving(key: str, nested: str) -> Any:
        def make() -> object:
            made.append(key)
            c.resolve(nested)
            return object()
        return make

    for key, nested in (("X", "Y"), ("Y", "Z"), ("Z", "X")):
        c.register(key, resolving(key, nested), scope=scope)
    for _ in range(3):
        made.clear()
        with pytest.raises(tether.TetherError) as info:
            c.resolve("X")
        chain = _chain(info.value)
        assert [type(e) for e in chain] == [tether.FactoryError] * 3 + [tether.CycleError]
        assert str(chain[-1]).startswith('the constructors of "X" -> "Y" -> "Z" -> "X" need each other: ')
        assert made == ["X", "Y", "Z"]
    assert _state.constructing == []
    c.close()


@pytest.mark.parametrize("plans", [True, False], ids=["plans", "no-plans"])
def test_a_callbacks_own_resolve_of_what_needs_the_key_names_the_path_and_the_fix_works(plans: bool) -> None:
    """X's factory resolves Y; Y's completion callback resolves T itself, and T needs X: X -> Y -> T
    -> X, fixed by Y a dependency of X and T taken from the callback's resolver, its dependency on
    X weak (applied: each factory once, and T's X is this X)."""
    c = container(plans=plans)
    made: list[str] = []
    seen: list[BaseException] = []

    def y_done(r: Any, y: object) -> None:
        try:
            c.resolve("T")
        except tether.TetherError as e:
            seen.append(e)

    c.register("X", lambda: made.append("X") or c.resolve("Y") and _Node())
    c.register("Y", lambda: made.append("Y") or _Node(), on_complete=y_done)
    c.register("T", lambda x: made.append("T") or _Node(x), deps=["X"])
    for _ in range(3):
        made.clear()
        seen.clear()
        c.resolve("X")
        assert made == ["X", "Y"] and len(seen) == 1
        text = str(seen[0])
        assert text.startswith('the constructors of "X" -> "Y" -> "T" -> "X" need each other: a completion callback of "Y" '
                               'resolves "T" in a resolve of its own, and its construction needs "X", still being constructed; ')
        assert ('get "T" with r.weak("T") in that callback instead (or with r.get("T") and "T"\'s dependency on "X" weak); '
                'but first take "Y" as a dependency of "X" (deps=["Y"]) (instead of its nested resolve)') in text

    got: list[Any] = []
    c.register("X", lambda y: made.append("X") or _Node(y), deps=["Y"])
    c.register("Y", lambda: made.append("Y") or _Node(), on_complete=lambda r, y: got.append(r.get("T")))
    c.register("T", lambda x: made.append("T") or _Node(x), deps=[tether.weak("X")])
    for _ in range(3):
        made.clear()
        x = c.resolve("X")
        assert sorted(made) == ["T", "X", "Y"] and got[-1].held() is x
    c.close()
