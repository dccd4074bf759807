"""Multibindings: ``tether.all(K)`` gives the factory a list of every registration of K and of its
named variants (``register(K, impl, name=...)``, key K's key + "#name") visible from the resolving
container, in registration order (a child's variant replaces its parent's in place, a new one is
added after); ``resolve_all(K)`` gives the same list. The library decides the list (one rule for
C and Python); validate, DOT and trace see every item."""

import gc

import pytest

import tether
from tether import Scope


class Codec:
    pass


class Gzip(Codec):
    pass


class Zstd(Codec):
    pass


class Brotli(Codec):
    pass


class Registry:
    def __init__(self, codecs):
        self.codecs = codecs


def test_the_factory_gets_every_variant_in_registration_order_with_identities(c):
    made = []
    c.register(Codec, lambda: made.append("plain") or Codec(), scope=Scope.TRANSIENT)
    c.register(Codec, Gzip, name="gzip", scope=Scope.SINGLETON)
    c.register("Codecs", Zstd, name="x")  # another family ("Codecs#x"): not listed
    c.register(Codec, Zstd, name="zstd")
    c.register(Registry, Registry, deps=[tether.all(Codec)])
    registry = c.resolve(Registry)
    assert [type(x) for x in registry.codecs] == [Codec, Gzip, Zstd]
    assert registry.codecs[1] is c.resolve(tether.key_name(Codec) + "#gzip")  # the singleton itself
    again = c.resolve(Registry)
    assert again.codecs[1] is registry.codecs[1] and again.codecs[0] is not registry.codecs[0]
    assert made == ["plain", "plain"]
    listed = c.resolve_all(Codec)
    assert [type(x) for x in listed] == [Codec, Gzip, Zstd] and listed[1] is registry.codecs[1]


def test_register_name_forms_and_bad_names(c):
    c.register(Brotli, name="br")                       # the class is its own factory
    c.register("Handler", lambda: "a", name="a")        # string keys with named variants
    c.register("Handler#b", lambda: "b")                # spelled out: the same family

    @c.register("Handler", name="c")
    def make_c():
        return "c"

    assert [type(x) for x in c.resolve_all(Brotli)] == [Brotli]
    assert c.resolve_all("Handler") == ["a", "b", "c"]
    with pytest.raises(TypeError, match="name"):
        c.register(Codec, Gzip, name="")
    with pytest.raises(TypeError, match="name"):
        c.register(name="x")


def test_a_child_replaces_its_parents_variant_in_place_and_adds_its_own():
    with tether.Container() as root:
        root.register(Codec, Gzip, name="a")
        root.register(Codec, Zstd, name="b")
        root.register(Registry, Registry, deps=[tether.all(Codec)])
        with tether.Container(root) as child:
            child.register(Codec, Codec, name="c")
            child.register(Codec, Brotli, name="b")
            assert [type(x) for x in child.resolve(Registry).codecs] == [Gzip, Brotli, Codec]
            assert [type(x) for x in root.resolve(Registry).codecs] == [Gzip, Zstd]
            assert [type(x) for x in child.resolve_all(Codec)] == [Gzip, Brotli, Codec]


def test_no_variant_is_an_empty_list(c):
    c.register(Registry, Registry, deps=[tether.all("Plugin")])
    assert c.resolve(Registry).codecs == []
    assert c.resolve_all("Plugin") == []
    c.validate()


def test_teardown_runs_the_dependent_first_then_its_items():
    log = []

    def item(name):
        def make():
            yield name
            log.append(name)
        return make

    def host(items):
        yield items
        log.append("host")

    with tether.Container() as c:
        c.register("Part", item("p1"), name="1", scope=Scope.SINGLETON)
        c.register("Part", item("p2"), name="2", scope=Scope.SINGLETON)
        c.register("Host", host, deps=[tether.all("Part")], scope=Scope.SINGLETON)
        assert c.resolve("Host") == ["p1", "p2"]
        assert log == []
    gc.collect()
    assert log[0] == "host" and sorted(log[1:]) == ["p1", "p2"]


def test_a_failing_item_fails_the_resolve_and_caches_nothing(c):
    made = []

    def broken():
        raise RuntimeError("no codec")

    c.register(Codec, lambda: made.append("gzip") or Gzip(), name="gzip", scope=Scope.SINGLETON)
    c.register(Codec, broken, name="broken")
    c.register(Registry, Registry, deps=[tether.all(Codec)])
    with pytest.raises(tether.FactoryError, match="no codec"):
        c.resolve(Registry)
    with pytest.raises(tether.FactoryError, match="no codec"):
        c.resolve_all(Codec)
    assert made == ["gzip", "gzip"]  # not cached by the failed resolves


def test_a_cycle_through_an_item_is_reported(c):
    c.register(Codec, lambda r: Gzip(), name="a", deps=[Registry])
    c.register(Registry, Registry, deps=[tether.all(Codec)])
    with pytest.raises(tether.CycleError) as resolved:
        c.resolve(Registry)
    assert "#a" in str(resolved.value)
    with pytest.raises(tether.CycleError):
        c.validate()


def test_validate_dot_and_trace_see_every_item(c):
    c.register(Codec, lambda missing: Gzip(), name="gzip", deps=["Missing"])
    c.register(Codec, Zstd, name="zstd")
    c.register(Registry, Registry, deps=[tether.all(Codec)])
    with pytest.raises(tether.NotFoundError, match="Missing"):
        c.validate()
    dot = c.to_dot()
    gzip, zstd = (tether.key_name(Codec) + suffix for suffix in ("#gzip", "#zstd"))
    registry = tether.key_name(Registry)
    assert f'"{registry}" -> "{gzip}" [label="all"]' in dot
    assert f'"{registry}" -> "{zstd}" [label="all"]' in dot
    c.register("Missing", object)
    rec = tether.Recorder()
    c.trace(rec)
    got = c.resolve(Registry)
    edges = [(e.key, e.target_key) for e in rec.events if e.kind == "edge" and e.key == registry]
    assert edges == [(registry, gzip), (registry, zstd)]
    assert [type(x) for x in got.codecs] == [Gzip, Zstd]
