"""The seed cycle scenarios (Resolver, Swinject, Dip, ZIKRouter) from Python, with Python objects."""

import gc
import weakref
from typing import Annotated, Any, Callable

import pytest

import tether
from tether import Scope

from conftest import causes as _chain


# -- Resolver: CyclicA(B), CyclicB(C), CyclicC{weak a} --------------------------------------


def resolver_classes(count):
    class CyclicC:
        def __init__(self) -> None:
            count("C")
            self.a: Any = None

    class CyclicB:
        def __init__(self, c: CyclicC) -> None:
            count("B")
            self.c = c

    class CyclicA:
        def __init__(self, b: CyclicB) -> None:
            count("A")
            self.b = b

    return CyclicA, CyclicB, CyclicC


def test_resolver_abc_completion_through_the_graph(c, count):
    A, B, C = resolver_classes(count)
    c.register(A, on_complete=lambda r, a: setattr(r.get(C), "a", r.weak(A)))
    c.register(B)
    c.register(C)
    a = c.resolve(A)
    assert a.b.c.a() is a
    assert (count["A"], count["B"], count["C"]) == (1, 1, 1)


def test_resolver_abc_completion_directly(c, count):
    A, B, C = resolver_classes(count)
    c.register(A, on_complete=lambda r, a: setattr(a.b.c, "a", r.weak(A)))
    c.register(B)
    c.register(C)
    a = c.resolve(A)
    assert a.b.c.a() is a
    assert (count["A"], count["B"], count["C"]) == (1, 1, 1)
    # a second resolve is a second graph
    a2 = c.resolve(A)
    assert a2 is not a and a2.b.c.a() is a2
    assert count["A"] == 2


def test_resolver_abc_back_reference_dies_with_a(c, count):
    A, B, C = resolver_classes(count)
    c.register(A, on_complete=lambda r, a: setattr(a.b.c, "a", r.weak(A)))
    c.register(B)
    c.register(C)
    a = c.resolve(A)
    cc = a.b.c
    del a
    gc.collect()
    assert cc.a() is None  # the weak back-reference did not keep A alive


def test_resolver_weak_lazy_to_weak_scoped_p(c, count):
    class ClassC:
        def __init__(self, p: Annotated[Callable[[], Any], tether.weak_lazy("ClassP")]) -> None:
            count("C")
            self.p = p

    class ClassP:
        __tether_key__ = "ClassP"

        def __init__(self, c: ClassC) -> None:
            count("P")
            self.c = c

    c.register(ClassP, scope=Scope.WEAK)
    c.register(ClassC)
    p = c.resolve(ClassP)
    assert p.c.p() is p
    assert p.c.p() is p
    assert (count["P"], count["C"]) == (1, 1)  # the weak-lazy call reused P: no factory ran again
    child = p.c
    del p
    gc.collect()
    assert child.p() is None  # P released: the provider answers None


def test_resolver_lazy_holds_strongly_and_resolves_once(c, count):
    class Service:
        def __init__(self) -> None:
            count("Service")

    class Client:
        def __init__(self, service: Annotated[Callable[[], Service], tether.lazy(Service)]) -> None:
            count("Client")
            self.service = service

    c.register(Service)
    c.register(Client)
    client = c.resolve(Client)
    assert count["Service"] == 0  # nothing resolved yet
    first = client.service()
    assert isinstance(first, Service) and client.service() is first
    assert count["Service"] == 1
    ref = weakref.ref(first)
    del first
    gc.collect()
    assert ref() is not None  # the lazy holds it strongly


def test_weak_lazy_breaks_a_constructor_cycle_and_strong_lazy_is_refused(c, count):
    class Node:  # weakly referenceable
        def __init__(self, **kw: Any) -> None:
            self.__dict__.update(kw)
            count(type(self).__name__)

    c.register("Parent", lambda child: Node(child=child), deps=["Child"])
    c.register("Child", lambda parent: Node(parent=parent), deps=[tether.lazy("Parent")])
    with pytest.raises(tether.RetainCycleError) as info:
        c.validate()  # not a constructor cycle: a retain cycle once called
    assert 'deps=[tether.weak_lazy("Parent")]' in str(info.value) and "TETHER_" not in str(info.value)
    p = c.resolve("Parent")
    with pytest.raises(tether.RetainCycleError) as called:
        p.child.parent()
    assert 'make it deps=[tether.weak_lazy("Parent")]' in str(called.value)
    assert count["Node"] == 2  # never a second Parent
    c.register("Child", lambda parent: Node(parent=parent), deps=[tether.weak_lazy("Parent")])  # the fix
    c.validate()
    p = c.resolve("Parent")
    assert p.child.parent() is p and count["Node"] == 4


class GraphX:
    def __init__(self, y: "GraphY") -> None:
        self.y = y


class GraphY:
    def __init__(self, x: Callable[[], Any]) -> None:
        self.x = x


@pytest.mark.parametrize("scope", [Scope.GRAPH, Scope.TRANSIENT, Scope.SINGLETON, Scope.WEAK])
def test_weak_lazy_answers_the_x_that_holds_this_y(c, count, scope):
    c.register(GraphX, lambda y: count("X") or GraphX(y), deps=[GraphY], scope=scope)
    c.register(GraphY, lambda x: count("Y") or GraphY(x), deps=[tether.weak_lazy(GraphX)],
               scope=scope if scope != Scope.TRANSIENT else Scope.GRAPH)
    x = c.resolve(GraphX)
    assert x.y.x() is x and x.y.x() is x  # the graph's X, whatever its scope: no second one
    assert count["X"] == 1 and count["Y"] == 1


def test_weak_lazy_from_a_completion_callback(c, count):
    seen = []
    c.register(GraphX, lambda y: count("X") or GraphX(y), deps=[GraphY])
    c.register(GraphY, lambda x: count("Y") or GraphY(x), deps=[tether.weak_lazy(GraphX)],
               on_complete=lambda r, y: seen.append(y.x()))
    x = c.resolve(GraphX)
    assert seen == [x]  # answered at once, while X's graph is still completing: no nested graphs
    assert count["X"] == 1 and count["Y"] == 1


def test_strong_lazy_from_a_completion_callback_is_a_retain_cycle(c, count):
    c.register(GraphX, lambda y: count("X") or GraphX(y), deps=[GraphY])
    c.register(GraphY, lambda x: count("Y") or GraphY(x), deps=[tether.lazy(GraphX)],
               on_complete=lambda r, y: y.x())
    with pytest.raises(tether.RetainCycleError) as info:
        c.resolve(GraphX)
    assert isinstance(info.value.__cause__, tether.RetainCycleError)
    assert "tether.weak_lazy(" in str(info.value.__cause__)
    assert count["X"] == 1 and count["Y"] == 1  # never a second X


def test_a_strong_lazy_whose_fresh_instance_holds_its_singleton_owner_is_refused(c, count):
    """A LAZY slot of a singleton whose key (transient) depends on it strongly: each call resolves
    it anew, and the library's slot refuses the owner's late edge to it (a retain cycle), as the C
    slot's call does (corpus: a_lazy_slot_whose_fresh_instance_holds_its_singleton_owner_is_refused)."""
    class App:
        def __init__(self, job: Callable[[], Any]) -> None:
            self.job = job

    jobs: weakref.WeakSet[Any] = weakref.WeakSet()

    class Job:
        def __init__(self, app: App) -> None:
            count("Job")
            jobs.add(self)
            self.app = app

    c.register(App, lambda job: App(job), deps=[tether.lazy(Job)], scope=Scope.SINGLETON)
    c.register(Job, lambda app: Job(app), deps=[App], scope=Scope.TRANSIENT, close=lambda job: count("closed"))
    app = c.resolve(App)
    for made in (1, 2):  # the slot stays empty: the next call resolves anew and is refused again
        with pytest.raises(tether.RetainCycleError) as info:
            app.job()
        message = str(info.value)
        assert "tether.weak_lazy(" in message and "TETHER_" not in message, message
        assert count["Job"] == made and count["closed"] == made  # the refused Job went at once, once
        del info
        assert not jobs  # no cycle left to the collector
    assert c.resolve(App) is app


def test_a_weak_lazy_whose_fresh_instance_holds_its_singleton_owner_answers_none(c, count):
    """The same slot weak-lazy: nothing but the slot would hold the fresh Job, held weakly, so it
    goes at once and the call answers None (the library's slot: EXPIRED); no cycle, no refusal."""
    class App:
        def __init__(self, job: Callable[[], Any]) -> None:
            self.job = job

    class Job:
        def __init__(self, app: App) -> None:
            count("Job")
            self.app = app

    c.register(App, lambda job: App(job), deps=[tether.weak_lazy(Job)], scope=Scope.SINGLETON)
    c.register(Job, lambda app: Job(app), deps=[App], scope=Scope.TRANSIENT, close=lambda job: count("closed"))
    app = c.resolve(App)
    assert app.job() is None and app.job() is None
    assert count["Job"] == 1 and count["closed"] == 1  # resolved once, then held weakly: gone


# -- Swinject: Parent/Child ----------------------------------------------------------------


class SwChild:
    def __init__(self) -> None:
        self.parent: Any = None


class SwParent:
    def __init__(self, child: SwChild) -> None:
        self.child = child


def test_swinject_initializer_property(c, count):
    def make_parent(child):
        count("Parent")
        return SwParent(child)

    def make_child():
        count("Child")
        return SwChild()

    c.register("Parent", make_parent, deps=["Child"])
    c.register("Child", make_child, on_complete=lambda r, child: setattr(child, "parent", r.weak("Parent")))
    p = c.resolve("Parent")
    assert p.child.parent() is p
    assert (count["Parent"], count["Child"]) == (1, 1)  # the Swinject remark cannot happen: once each


def property_pair(count):
    """Parent and Child made with no arguments, each counted, their edges to each other set after construction."""
    class Parent:
        def __init__(self) -> None:
            count("Parent")
            self.child: Any = None

    class Child:
        def __init__(self) -> None:
            count("Child")
            self.parent: Any = None

    return Parent, Child


def test_swinject_property_property(c, count):
    Parent, Child = property_pair(count)

    c.register(Parent, on_complete=lambda r, p: setattr(p, "child", r.get(Child)))
    c.register(Child, on_complete=lambda r, ch: setattr(ch, "parent", r.weak(Parent)))
    p = c.resolve(Parent)
    assert p.child.parent() is p
    assert (count["Parent"], count["Child"]) == (1, 1)
    ch = c.resolve(Child)  # from the other side, a new graph
    assert ch.parent() is None or ch.parent().child is ch
    assert (count["Parent"], count["Child"]) == (2, 2)


def test_swinject_initializer_initializer_is_a_cycle_error(c, count):
    def parent(child):
        count("Parent")
        return object()

    def child(parent):
        count("Child")
        return object()

    c.register("Parent", parent, deps=["Child"])
    c.register("Child", child, deps=["Parent"])
    with pytest.raises(tether.CycleError) as info:
        c.resolve("Parent")
    assert '"Parent" -> "Child" -> "Parent"' in str(info.value)
    assert "completion callback" in str(info.value)
    assert (count["Parent"], count["Child"]) == (0, 0)  # detected before any factory ran
    with pytest.raises(tether.CycleError):
        c.validate()


def test_self_dependency_is_a_cycle_of_one(c):
    c.register("A", lambda a: a, deps=["A"])
    with pytest.raises(tether.CycleError, match='"A" -> "A"'):
        c.resolve("A")


# -- Dip: Client(server), Server.client via completion --------------------------------------


def dip(c, count, seen):
    class Server:
        def __init__(self) -> None:
            count("Server")
            self.client: Any = None

    class Client:
        def __init__(self, server: Server) -> None:
            count("Client")
            self.server = server

    def complete_server(r, server):
        server.client = r.weak(Client)
        seen.append(server.client() is not None)  # never expired while the resolve runs

    c.register(Server, on_complete=complete_server)
    c.register(Client)
    return Server, Client


def test_dip_client_first(c, count):
    seen: list[bool] = []
    _Server, Client = dip(c, count, seen)
    client = c.resolve(Client)
    assert client.server.client() is client
    assert (count["Server"], count["Client"]) == (1, 1)
    assert seen == [True]


def test_dip_server_first_and_the_weak_note(c, count):
    seen: list[bool] = []
    Server, _Client = dip(c, count, seen)
    server = c.resolve(Server)
    assert seen == [True]  # the client existed during the resolve...
    gc.collect()
    assert server.client() is None  # ...and nobody holds it strongly afterwards
    assert (count["Server"], count["Client"]) == (1, 1)


def test_strong_back_edge_is_a_retain_cycle(c):
    c.register("Parent", lambda child: SwParent(child), deps=["Child"])
    c.register("Child", SwChild, on_complete=lambda r, ch: setattr(ch, "parent", r.get("Parent")))
    with pytest.raises(tether.RetainCycleError) as info:
        c.resolve("Parent")
    cause = info.value.__cause__
    assert isinstance(cause, tether.RetainCycleError)
    assert "retain cycle" in str(cause) and 'r.weak("Parent")' in str(cause) and "tether_" not in str(cause)


def test_retain_cycle_can_be_caught_and_answered_weakly(c):
    def complete(r, child):
        try:
            child.parent = r.get("Parent")
        except tether.RetainCycleError:
            child.parent = r.weak("Parent")

    c.register("Parent", lambda child: SwParent(child), deps=["Child"])
    c.register("Child", SwChild, on_complete=complete)
    p = c.resolve("Parent")
    assert p.child.parent() is p


def test_diamond_is_not_a_retain_cycle(c):
    class Leaf:
        pass

    class Left:
        def __init__(self, leaf: Leaf) -> None:
            self.leaf = leaf

    class Right:
        def __init__(self, leaf: Leaf) -> None:
            self.leaf = leaf

    class Top:
        def __init__(self, left: Left, right: Right) -> None:
            self.left, self.right = left, right

    for cls in (Leaf, Left, Right):
        c.register(cls)
    c.register(Top, on_complete=lambda r, t: setattr(t, "leaf", r.get(Leaf)))
    t = c.resolve(Top)
    assert t.left.leaf is t.right.leaf is t.leaf


# -- ZIKRouter: two completion callbacks, each filling the other side once ------------------


def test_zik_guarded_completions(c, count):
    Parent, Child = property_pair(count)

    def complete_parent(r, p):
        if p.child is None:
            count("fill child")
            p.child = r.get(Child)

    def complete_child(r, ch):
        if ch.parent is None:
            count("fill parent")
            ch.parent = r.weak(Parent)

    c.register(Parent, on_complete=complete_parent)
    c.register(Child, on_complete=complete_child)
    p = c.resolve(Parent)
    assert p.child.parent() is p
    assert (count["Parent"], count["Child"]) == (1, 1)
    assert (count["fill child"], count["fill parent"]) == (1, 1)


def test_completion_order_is_dependencies_first(c):
    order: list[str] = []
    c.register("Leaf", dict, on_complete=lambda r, x: order.append("Leaf"))
    c.register("Mid", lambda leaf: {"leaf": leaf}, deps=["Leaf"], on_complete=lambda r, x: order.append("Mid"))
    c.register(
        "Top",
        lambda mid: {"mid": mid},
        deps=["Mid"],
        on_complete=[lambda r, x: order.append("Top#1"), lambda r, x: order.append("Top#2")],
    )
    c.resolve("Top")
    assert order == ["Leaf", "Mid", "Top#1", "Top#2"]


# -- a factory resolving a key under construction again: the library's cycle error ----------




@pytest.mark.parametrize("scope", list(Scope)[:4])
def test_factory_resolving_its_own_key_is_a_short_cycle_error(c, scope):
    made = []

    class A:
        pass

    def make_a():
        made.append(1)
        c.resolve("A")
        return A()

    c.register("A", make_a, scope=scope)
    with pytest.raises(tether.TetherError) as info:
        c.resolve("A")
    cycles = [e for e in _chain(info.value) if isinstance(e, tether.CycleError)]
    assert cycles and '"A" -> "A"' in str(cycles[0])
    assert len(str(info.value)) < 1000 and str(info.value).count("returned NULL") <= 2
    # once, replayed or not: a replay tells the library what it constructs (test_reentry.py)
    assert len(made) == 1


def test_factory_resolving_a_key_further_down_its_path_names_the_path(c):
    c.register("A", lambda b: ("A", b), deps=["B"])
    c.register("B", lambda: ("B", c.resolve("A")))
    with pytest.raises(tether.TetherError) as info:
        c.resolve("A")
    cycles = [e for e in _chain(info.value) if isinstance(e, tether.CycleError)]
    assert cycles and '"A" -> "B" -> "A"' in str(cycles[0])
    assert len(str(info.value)) < 1000


# -- a completion callback whose request makes a new instance of its own key, transient all the way --


class Lapped:
    """What the callback-lap factories make: weakly referable."""


def register_callback_lap(c, count, x_scope=Scope.TRANSIENT, z_dep="X"):
    """X(Y), Y's callback takes "Z" weakly, Z(X): with X and Z transient, each new Y's callback makes a new Z, X, Y."""
    c.register("X", lambda y: count("X") or Lapped(), deps=["Y"], scope=x_scope)
    c.register("Y", lambda: count("Y") or Lapped(), scope=Scope.TRANSIENT, on_complete=lambda r, y: r.weak("Z"))
    c.register("Z", lambda x: count("Z") or Lapped(), deps=[z_dep], scope=Scope.TRANSIENT)


def test_a_transient_lap_through_a_completion_callback_is_a_cycle_error(c, count):
    register_callback_lap(c, count)
    for lap in (1, 2):  # nothing cached: the second resolve fails the same
        with pytest.raises(tether.CycleError) as info:
            c.resolve("X")
        text = str(info.value)
        assert '"Y" -> "Z" -> "X" -> "Y"' in text and 'a completion callback of "Y" asks for "Z"' in text
        assert 'make "X" graph-scoped (scope=Scope.GRAPH)' in text
        assert 'deps=[tether.weak_lazy("X")]' in text and "TETHER_" not in text
        # the first lap ran (X, Y; Y's callback: Z, X, Y), the second's Z did not
        assert (count["X"], count["Y"], count["Z"]) == (2 * lap, 2 * lap, lap)


@pytest.mark.parametrize("fix", ["x graph-scoped", "z weak-lazy on x"])
def test_each_fix_of_a_callback_lap_makes_each_once(c, count, fix):
    if fix == "x graph-scoped":
        register_callback_lap(c, count, x_scope=Scope.GRAPH)
    else:
        register_callback_lap(c, count, z_dep=tether.weak_lazy("X"))
    c.resolve("X")
    assert (count["X"], count["Y"], count["Z"]) == (1, 1, 1)
