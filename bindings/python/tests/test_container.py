"""Registering (every form), autowiring, scopes, runtime arguments, parents, validation, DOT."""

import ctypes
from typing import Annotated, Any, Callable

import pytest

import tether
from tether import Scope


class Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []


class Repository:
    def __init__(self, log: Logger) -> None:
        self.log = log


class Service:
    def __init__(self, repo: Repository, log: Logger, retries: int = 3) -> None:
        self.repo, self.log, self.retries = repo, log, retries


def test_appendix_a_example(c):
    class Child:
        parent: Any = None

    class Parent:
        def __init__(self, child: Child) -> None:
            self.child = child

    c.register("Parent", lambda child: Parent(child), deps=["Child"])
    c.register("Child", Child, on_complete=lambda r, child: setattr(child, "parent", r.weak("Parent")))
    p = c.resolve("Parent")
    assert p.child.parent() is p


def test_class_keys_autowire_from_type_hints(c):
    c.register(Logger)
    c.register(Repository)
    c.register(Service)
    s = c.resolve(Service)
    assert type(s) is Service  # the real object, no proxy
    assert s.repo.log is s.log  # graph scope: one Logger per resolve
    assert s.retries == 3  # a parameter with a default keeps it
    assert tether.key_name(Service) == "test_container.Service"


def test_decorator_forms(c):
    @c.register
    class Config:
        pass

    @c.register(scope=Scope.SINGLETON)
    class Clock:
        pass

    @c.register("Greeting", deps=[Config])
    def greeting(config):
        return ("hello", config)

    @c.register
    def make_logger() -> Logger:
        return Logger()

    assert isinstance(Config, type) and callable(greeting)  # decorators return what they decorate
    assert c.resolve("Greeting")[0] == "hello"
    assert c.resolve(Clock) is c.resolve(Clock)
    assert isinstance(c.resolve(Logger), Logger)


def test_annotated_keys_and_markers(c):
    class Holder:
        def __init__(
            self,
            log: Annotated[Logger, "Logger#file"],
            peer: Annotated[Callable[[], Any], tether.weak("Peer")],
            later: Annotated[Callable[[], Any], tether.lazy("Later")],
            *,
            label: Annotated[str, tether.arg],
        ) -> None:
            self.log, self.peer, self.later, self.label = log, peer, later, label

    file_logger = Logger()
    c.register("Logger#file", lambda: file_logger)
    c.register("Peer", Logger)
    c.register("Later", Logger)
    c.register(Holder)
    h = c.resolve(Holder, "x")
    assert h.log is file_logger and h.label == "x"
    assert h.peer() is None  # nobody holds the Peer once the resolve returned
    assert isinstance(h.later(), Logger)


def test_explicit_deps_override_autowiring(c):
    c.register("L", Logger)
    c.register(Repository, lambda log: Repository(log), deps=["L"])
    assert isinstance(c.resolve(Repository).log, Logger)


def test_string_key_with_class_factory_autowires(c):
    c.register(Logger)
    c.register("repo", Repository)
    assert isinstance(c.resolve("repo").log, Logger)


def test_tether_key_attribute_names_the_class(c):
    class Named:
        __tether_key__ = "named"

    class Sub(Named):
        pass

    c.register(Named)
    assert tether.key_name(Named) == "named"
    assert tether.key_name(Sub) != "named"  # not inherited
    assert isinstance(c.resolve("named"), Named)


def test_scopes(c, count):
    def make(name):
        def factory():
            count(name)
            return Logger()

        return factory

    c.register("g", make("g"))
    c.register("t", make("t"), scope=Scope.TRANSIENT)
    c.register("s", make("s"), scope=Scope.SINGLETON)
    c.register("pair_g", lambda a, b: (a, b), deps=["g", "g"])
    c.register("pair_t", lambda a, b: (a, b), deps=["t", "t"])
    a, b = c.resolve("pair_g")
    assert a is b  # graph: one per resolve
    assert c.resolve("pair_g")[0] is not a
    a, b = c.resolve("pair_t")
    assert a is not b  # transient: new every time, even within one resolve
    assert c.resolve("s") is c.resolve("s") and count["s"] == 1
    c.reset(Scope.SINGLETON)
    c.resolve("s")
    assert count["s"] == 2
    c.reset(Scope.GRAPH)  # no cache: nothing happens


def test_runtime_arguments_from_declared_types(c):
    payload = object()
    c.register(
        "All",
        lambda i, f, s, b, o, p, flag: (i, f, s, b, o, p, flag),
        deps=[int, float, str, bytes, object, tether.Pointer, bool],
    )
    buf = ctypes.create_string_buffer(4)
    got = c.resolve("All", 7, 2, "héllo", b"raw", payload, buf, True)
    assert got == (7, 2.0, "héllo", b"raw", payload, ctypes.addressof(buf), True)
    assert got[4] is payload  # `object` carries the Python object itself
    assert c.resolve("All", -1, 0.5, "", b"", None, None, False)[4:6] == (None, None)


def test_runtime_argument_errors(c):
    c.register("Two", lambda n, name: (n, name), deps=[int, str])
    with pytest.raises(tether.ArgumentMismatchError, match="takes 2 runtime arguments, got 1"):
        c.resolve("Two", 1)
    with pytest.raises(tether.ArgumentMismatchError, match="runtime argument 1"):
        c.resolve("Two", 1.5, "x")
    with pytest.raises(TypeError):  # ArgumentMismatchError is a TypeError: caught before C
        c.resolve("Two", 1, 2)
    with pytest.raises(ValueError, match="NUL"):
        c.resolve("Two", 1, "a\0b")
    c.register("User", lambda two: two, deps=["Two"])
    with pytest.raises(tether.ArgumentMismatchError, match="cannot be a dependency"):
        c.resolve("User")


def test_builtin_hints_are_refused_at_registration_with_a_fix_that_works(c):
    class Greeter:
        def __init__(self, name: str, times: int, scale: float, log: Logger) -> None:
            self.text = f"{name}x{times}@{scale}"
            self.log = log

    c.register(Logger)
    with pytest.raises(TypeError) as info:
        c.register(Greeter)  # would silently take runtime arguments, and never be a dependency
    message = str(info.value)
    assert "parameter 'name' is hinted str" in message and "name: Annotated[str, tether.arg]" in message
    c.register(Greeter, deps=[str, int, float, Logger])  # a fix: runtime arguments declared
    g = c.resolve(Greeter, "hi", 3, 1.5)
    assert g.text == "hix3@1.5" and isinstance(g.log, Logger)

    class Said:
        def __init__(self, name: Annotated[str, tether.arg], times: Annotated[int, tether.arg], log: Logger) -> None:
            self.text = f"{name}x{times}"

    c.register(Said)  # the fix the message names
    assert c.resolve(Said, "hi", 2).text == "hix2"

    class Timer:
        def __init__(self, seconds: int = 30) -> None:  # the other fix: a default
            self.seconds = seconds

    c.register(Timer)
    assert c.resolve(Timer).seconds == 30


def test_parent_and_child_containers(c):
    c.register("Config", lambda: "parent config")
    c.register("Clock", Logger, scope=Scope.SINGLETON)
    c.register("App", lambda cfg, clock: (cfg, clock), deps=["Config", "Clock"])
    with tether.Container(parent=c) as child:
        assert child.parent is c
        assert child.resolve("App")[0] == "parent config"  # falls through to the parent
        child.register("Config", lambda: "child config")
        cfg, clock = child.resolve("App")
        assert cfg == "child config"  # a child's registration overrides for resolves through it
        assert clock is c.resolve("Clock")  # singletons live in the container that registered them
        assert c.resolve("App")[0] == "parent config"


def test_reregistering_replaces(c):
    c.register("K", lambda: "old")
    c.register("K", lambda: "new")
    assert c.resolve("K") == "new"


def test_validate_and_dot(c):
    c.register(Logger, scope=Scope.SINGLETON)
    c.register(Repository)
    c.register("Watcher", lambda r: r, deps=[tether.weak(Repository)])
    c.validate()  # nothing wrong: returns None
    dot = c.to_dot()
    assert dot.startswith("digraph")
    assert '"test_container.Repository" -> "test_container.Logger"' in dot
    assert "singleton" in dot and "dashed" in dot


def test_handle_is_the_c_pointer(c):
    api = tether._loader.api()
    assert isinstance(c.handle, int) and c.handle != 0
    c.register("K", lambda: "from python")
    out = ctypes.c_void_p()
    assert api.tether_resolve(c.handle, b"K", ctypes.byref(out)) == 0  # C can use the handle
    assert api.tether_ref_release(out) == 0


def test_provider_is_a_plain_c_function_pointer(c, count):
    def make():
        count("made")
        return Logger()

    c.register("Log", make)
    with c.provider("Log") as provider:
        assert isinstance(provider.address, int)
        first = provider()
        assert provider() is first and count["made"] == 1  # resolves once, then holds it
        as_c = ctypes.CFUNCTYPE(ctypes.c_void_p)(provider.address)
        assert tether.object_table.lookup(as_c()) is first


def test_resolver_get_from_a_python_callback_returns_the_graph_instance(c):
    c.register(Logger)
    c.register(Repository, on_complete=lambda r, repo: setattr(repo, "same", r.get(Logger) is repo.log))
    assert c.resolve(Repository).same


def test_containers_keep_their_state_in_slots_never_an_instance_dict():
    """Every container's state is in slots: an instance dict (past the ~29 attribute names CPython
    shares among a class's instances, or once read) would put every attribute read and write of a
    child per request on CPython's generic paths. Roots, children per request (with values: the
    second one made from the first's template), and a child that made its C container alike."""
    import weakref

    class Request:
        pass

    root = tether.Container()
    root.register(Logger, scope=Scope.SINGLETON)
    root.register(Repository)
    root.register_value(Request)
    made = [root]
    for n in range(3):
        with tether.Container(root) as child:
            assert child.resolve(Repository).log is root.resolve(Logger)
            made.append(child)
        request = Request()
        with tether.Container(root, values={Request: request}) as child:
            assert child.resolve(Repository).log is root.resolve(Logger)
            assert child.resolve(Request) is request
            made.append(child)
    with tether.Container(root) as child:
        child.register(Service, deps=[Repository, Logger])
        assert child.resolve(Service).repo.log is root.resolve(Logger)
        made.append(child)
    for container in made:
        assert not hasattr(container, "__dict__"), container
    assert weakref.ref(root)() is root  # (plans hold their container weakly)

    class Subclass(tether.Container):  # a subclass may keep its own attributes (it has a dict)
        pass

    sub = Subclass()
    sub.note = "kept"
    sub.register(Logger)
    assert isinstance(sub.resolve(Logger), Logger) and sub.note == "kept"
    sub.close()
    root.close()
