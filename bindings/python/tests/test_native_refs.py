"""Native (C-made) instances in Python graphs: NativeRef/NativeWeak ownership and identity.

A tiny C library (compiled here with cc) provides factories and counters; the test registers
them through the C API on ``container.handle``, the way a C extension would.
"""

import ctypes
import gc
import shutil
import subprocess
import weakref
from ctypes import c_int, c_void_p
from typing import Any

import pytest
from conftest import REPO_ROOT

import tether
from tether import Scope

SOURCE = r"""
#include <stdlib.h>
#include "tether_binding.h"
static int made, dropped;
typedef struct thing { int id; void *held; } thing;
void *make_thing(void) { thing *t = calloc(1, sizeof *t); t->id = ++made; return t; }
void *make_holder(void *python_object) { thing *t = calloc(1, sizeof *t); t->id = ++made; t->held = python_object; return t; }
void drop_thing(void *instance, void *context) { (void)context; dropped++; free(instance); }
int things_made(void) { return made; }
int things_dropped(void) { return dropped; }
void *thing_held(thing *t) { return t->held; }
size_t options_layout(size_t *offsets) {
    offsets[0] = offsetof(tether_registration_options, scope);
    offsets[1] = offsetof(tether_registration_options, flags);
    offsets[2] = offsetof(tether_registration_options, context);
    offsets[3] = offsetof(tether_registration_options, drop);
    offsets[4] = offsetof(tether_registration_options, completions);
    offsets[5] = offsetof(tether_registration_options, completion_contexts);
    offsets[6] = offsetof(tether_registration_options, completion_count);
    offsets[7] = offsetof(tether_registration_options, variadic_fixed);
    offsets[8] = offsetof(tether_registration_options, callbacks);
    offsets[9] = offsetof(tether_registration_options, callback_count);
    return sizeof(tether_registration_options);
}
int register_native(tether_container *c, const char *key, int scope, const char *dep) {
    tether_registration *r;
    tether_param p[] = { TETHER_DEP(dep) };
    tether_status st = dep ? tether_register(c, key, (tether_fn)make_holder, p, 1, &r)
                           : tether_register(c, key, (tether_fn)make_thing, NULL, 0, &r);
    if (st == TETHER_OK) st = tether_set_scope(r, (tether_scope)scope);
    if (st == TETHER_OK) st = tether_set_context(r, NULL, drop_thing);
    return st;
}
"""


class Thing(ctypes.Structure):
    _fields_ = [("id", c_int), ("held", c_void_p)]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    tmp = tmp_path_factory.mktemp("native")
    src = tmp / "things.c"
    src.write_text(SOURCE)
    libdir = str(tether.library_path()).rsplit("/", 1)[0]
    out = tmp / "libthings.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-std=c11", "-Wall", "-Werror", f"-I{REPO_ROOT / 'include'}", str(src),
                    "-o", str(out), f"-L{libdir}", "-ltether", f"-Wl,-rpath,{libdir}"], check=True)
    things = ctypes.CDLL(str(out))
    things.register_native.argtypes = [c_void_p, ctypes.c_char_p, c_int, ctypes.c_char_p]
    things.register_native.restype = c_int
    things.thing_held.argtypes, things.thing_held.restype = [c_void_p], c_void_p
    things.options_layout.argtypes, things.options_layout.restype = [c_void_p], ctypes.c_size_t
    return things


class Counts:
    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.made0, self.dropped0 = lib.things_made(), lib.things_dropped()

    @property
    def made(self) -> int:
        return self.lib.things_made() - self.made0

    @property
    def dropped(self) -> int:
        return self.lib.things_dropped() - self.dropped0


def register_native(lib, c, key, scope=Scope.GRAPH, dep=None):
    assert lib.register_native(c.handle, key.encode(), int(scope), dep.encode() if dep else None) == 0


def test_registration_options_layout_matches_the_header(lib):
    from tether._cabi import RegistrationOptions

    names = ["scope", "flags", "context", "drop", "completions", "completion_contexts", "completion_count", "variadic_fixed",
             "callbacks", "callback_count"]
    assert [name for name, _ in RegistrationOptions._fields_] == names
    offsets = (ctypes.c_size_t * len(names))()
    assert lib.options_layout(offsets) == ctypes.sizeof(RegistrationOptions)
    assert list(offsets) == [getattr(RegistrationOptions, name).offset for name in names]


def test_resolving_a_native_instance_gives_an_owning_native_ref(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Thing")
    ref = c.resolve("Thing")
    assert isinstance(ref, tether.NativeRef) and ref.address
    assert ref.cast(Thing).contents.id >= 1
    assert n.made == 1 and n.dropped == 0
    ref.release()
    ref.release()  # idempotent
    assert n.dropped == 1
    with pytest.raises(tether.InvalidHandleError):
        ref.cast(Thing)


def test_native_ref_identity_and_context_manager(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Single", Scope.SINGLETON)
    with c.resolve("Single") as a:
        assert c.resolve("Single") is a  # one NativeRef per live address
    assert n.dropped == 0  # the singleton cache still holds it
    c.reset(Scope.SINGLETON)
    assert n.dropped == 1


def test_python_object_holding_a_native_dependency_keeps_it_alive(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Thing")

    class User:
        def __init__(self, thing: Any) -> None:
            self.thing = thing

    c.register("User", User, deps=["Thing"])
    user = c.resolve("User")
    assert isinstance(user.thing, tether.NativeRef)
    assert n.made == 1 and n.dropped == 0  # alive after the resolve: the Python object owns a handle
    del user
    gc.collect()
    assert n.dropped == 1


def test_weak_dependency_on_a_native_instance(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Single", Scope.SINGLETON)
    c.register("Watcher", lambda w: {"w": w}, deps=[tether.weak("Single")])
    watcher = c.resolve("Watcher")
    target = watcher["w"]()
    assert isinstance(target, tether.NativeRef) and target is c.resolve("Single")
    del target
    c.reset(Scope.SINGLETON)
    gc.collect()
    assert watcher["w"]() is None and n.dropped == 1


class Watcher:
    single: Any = None


def test_resolver_weak_to_a_native_singleton(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Single", Scope.SINGLETON)
    c.register("Watcher", Watcher, deps=[], on_complete=lambda r, w: setattr(w, "single", r.weak("Single")))
    watcher = c.resolve("Watcher")
    assert isinstance(watcher.single, tether.NativeWeak)
    target = watcher.single()
    assert isinstance(target, tether.NativeRef) and target is c.resolve("Single")
    assert n.made == 1
    del target
    c.reset(Scope.SINGLETON)
    gc.collect()
    assert watcher.single() is None and n.dropped == 1


def test_resolver_weak_to_a_native_transient_builds_it_once(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Thing", Scope.TRANSIENT)
    seen = []

    def complete(r: Any, w: Watcher) -> None:
        w.single = r.weak("Thing")
        seen.append(w.single().address)  # alive while the resolve runs

    c.register("Watcher", Watcher, deps=[], on_complete=complete)
    watcher = c.resolve("Watcher")
    gc.collect()
    assert seen[0] and n.made == 1  # one instance: the weak edge's own, no second build
    assert watcher.single() is None and n.dropped == 1  # only weakly held: gone with the resolve


def test_native_instance_holding_a_python_object(c, lib):
    n = Counts(lib)
    drops = []

    class Payload:
        def __del__(self) -> None:
            drops.append(1)

    c.register("Payload", Payload)
    register_native(lib, c, "Holder", Scope.SINGLETON, dep="Payload")
    holder = c.resolve("Holder")
    payload = tether.object_table.lookup(lib.thing_held(holder), None)
    assert isinstance(payload, Payload)  # C holds the very Python object
    del payload
    gc.collect()
    assert drops == []  # kept alive by the C holder's strong edge, beyond the resolve
    holder.release()
    c.reset(Scope.SINGLETON)
    gc.collect()
    assert drops == [1] and n.dropped == 1


def test_lazy_to_a_native_instance(c, lib):
    register_native(lib, c, "Single", Scope.SINGLETON)
    c.register("Client", lambda later: {"later": later}, deps=[tether.lazy("Single")])
    client = c.resolve("Client")
    got = client["later"]()
    assert isinstance(got, tether.NativeRef) and client["later"]() is got


def test_transient_native_dependency_of_a_python_factory(c, lib):
    """The Python side takes its own handle on the very instance it received (tether_resolver_ref):
    no second instance of a transient key."""
    n = Counts(lib)
    register_native(lib, c, "Fresh", Scope.TRANSIENT)
    c.register("User", lambda fresh: {"fresh": fresh}, deps=["Fresh"])
    c.register("Pair", lambda a, b: (a, b), deps=["Fresh", "Fresh"])
    user = c.resolve("User")
    assert isinstance(user["fresh"], tether.NativeRef)
    assert n.made == 1
    a, b = c.resolve("Pair")
    assert a is not b and n.made == 3  # transient: two per resolve, each kept by its own handle
    del user, a, b
    gc.collect()
    assert n.dropped == n.made == 3


def test_resolver_get_of_a_native_instance_in_a_python_callback(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Fresh", Scope.TRANSIENT)
    c.register("Holder", Thing, on_complete=lambda r, h: setattr(h, "fresh", r.get("Fresh")))
    holder = c.resolve("Holder")
    assert isinstance(holder.fresh, tether.NativeRef) and n.made == 1 and n.dropped == 0
    del holder
    gc.collect()
    assert n.dropped == 1


def test_pointer_arguments_reach_native_factories(c):
    api = tether._loader.api()
    c.register("Echo", lambda p: p, deps=[tether.Pointer])
    buf = ctypes.create_string_buffer(8)
    assert c.resolve("Echo", buf) == ctypes.addressof(buf)
    assert c.resolve("Echo", ctypes.c_void_p(1234)) == 1234
    assert c.resolve("Echo", 77) == 77  # an int is an address where a pointer is declared
    assert api is not None


def test_weakref_to_native_ref_objects(c, lib):
    register_native(lib, c, "Thing")
    ref = c.resolve("Thing")
    w = weakref.ref(ref)
    del ref
    gc.collect()
    assert w() is None


@pytest.mark.parametrize("end", ["reset", "close", "collect"])
def test_python_singleton_held_by_a_native_object_outlives_its_cache(lib, end):
    drops = []

    class Payload:
        def __del__(self) -> None:
            drops.append(1)

    c = tether.Container()
    c.register("Payload", Payload, scope=Scope.SINGLETON)
    register_native(lib, c, "Holder", Scope.GRAPH, dep="Payload")
    holder = c.resolve("Holder")
    if end == "reset":
        c.reset(Scope.SINGLETON)
    elif end == "close":
        c.close()
    else:
        del c  # the garbage collector closes it
    gc.collect()
    payload = tether.object_table.lookup(lib.thing_held(holder), None)
    assert isinstance(payload, Payload) and drops == []  # C still holds it: so does the table
    del payload
    holder.release()
    gc.collect()
    assert drops == [1]
    if end == "reset":
        c.close()


def test_native_items_of_a_multibinding_come_back_as_owning_native_refs(c, lib):
    n = Counts(lib)
    register_native(lib, c, "Part#c")
    c.register("Part", lambda: "python", name="p")
    c.register("Host", lambda parts: parts, deps=[tether.all("Part")])
    listed = c.resolve_all("Part")
    assert isinstance(listed[0], tether.NativeRef) and listed[1] == "python"
    assert n.made == 1 and n.dropped == 0  # its own handle keeps the item after the list's
    got = c.resolve("Host")
    assert isinstance(got[0], tether.NativeRef) and got[0] is not listed[0] and n.made == 2
    listed[0].release()
    assert n.dropped == 1
    got[0].release()
    assert n.dropped == 2
