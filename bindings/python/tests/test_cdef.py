"""cffi binds the library from the generated declarations (build/tether_cdef.h, written by
tools/make_cdef.py during `make build`), with no hand-written declarations: a C-style
registration with options, a dependency and a runtime argument resolves, and errors read back."""

import os
from pathlib import Path

import cffi
from conftest import REPO_ROOT

import tether

CDEF = Path(os.environ.get("TETHER_CDEF", REPO_ROOT / "build" / "tether_cdef.h"))


def bind():
    ffi = cffi.FFI()
    ffi.cdef(CDEF.read_text())
    return ffi, ffi.dlopen(tether.library_path())


def test_generated_declarations_bind_and_resolve():
    ffi, lib = bind()
    binding = ffi.new("tether_binding *", {"version": lib.TETHER_BINDING_API_VERSION})
    assert lib.tether_binding_open(binding) == lib.TETHER_OK and binding.plan_describe != ffi.NULL
    refused = ffi.new("tether_binding *", {"version": lib.TETHER_BINDING_API_VERSION + 1})
    assert lib.tether_binding_open(refused) == lib.TETHER_E_INVALID_ARGUMENT and refused.plan_describe == ffi.NULL
    assert ffi.string(lib.tether_version()).decode().split(".")[0] == str(lib.TETHER_VERSION_MAJOR)

    child_box, parent_box = ffi.new("int *", 1), ffi.new("int *", 2)
    seen, dropped = {}, []

    @ffi.callback("void *(void)")
    def make_child():
        return child_box

    @ffi.callback("void *(void *, int64_t)")
    def make_parent(child, n):
        seen["child"], seen["n"] = child, n
        return parent_box

    @ffi.callback("void (void *, void *)")
    def drop(instance, context):
        dropped.append(ffi.cast("int *", instance)[0])

    c = ffi.new("tether_container **")
    assert lib.tether_container_new(ffi.NULL, c) == lib.TETHER_OK
    options = ffi.new("tether_options *", {"version": lib.TETHER_OPTIONS_VERSION, "scope": lib.TETHER_SCOPE_GRAPH, "drop": drop})
    assert lib.tether_register_with(c[0], b"Child", ffi.cast("tether_fn", make_child), ffi.NULL, 0, options, ffi.NULL) == lib.TETHER_OK
    key = ffi.new("char[]", b"Child")
    params = ffi.new("tether_param[2]", [{"kind": lib.TETHER_PARAM_DEP, "key": key}, {"kind": lib.TETHER_PARAM_I64}])
    assert lib.tether_register_with(c[0], b"Parent", ffi.cast("tether_fn", make_parent), params, 2, options, ffi.NULL) == lib.TETHER_OK

    args = ffi.new("tether_value[1]")
    args[0].kind = lib.TETHER_PARAM_I64
    args[0].u.i64 = 42                       # `u`: the union member's name is no Python keyword
    ref = ffi.new("tether_ref **")
    assert lib.tether_resolve_args(c[0], b"Parent", args, 1, ref) == lib.TETHER_OK
    assert lib.tether_ref_get(ref[0]) == parent_box
    assert seen["child"] == child_box and seen["n"] == 42
    assert lib.tether_ref_release(ref[0]) == lib.TETHER_OK
    assert dropped == [2, 1]                 # dependents first

    keep = ffi.new("tether_ref **")
    assert lib.tether_get(c[0], b"Missing", keep) == ffi.NULL and keep[0] == ffi.NULL
    assert lib.tether_last_status() == lib.TETHER_E_NOT_FOUND
    assert b'"Missing"' in ffi.string(lib.tether_last_error())
    options.version = 99
    assert lib.tether_register_with(c[0], b"X", ffi.cast("tether_fn", make_child), ffi.NULL, 0, options, ffi.NULL) \
        == lib.TETHER_E_INVALID_ARGUMENT
    assert b"options.version is 99" in ffi.string(lib.tether_last_error())
    assert lib.tether_container_free(c[0]) == lib.TETHER_OK
