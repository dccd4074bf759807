"""Runtime arguments of ``resolve(key, *args)`` as ``tether_value``s.

For a key registered from Python the declared types decide (an int is accepted for a float
slot); for a key registered by C the Python value decides: bool/int -> I64, float -> F64,
str/bytes -> STR, None/int-address/ctypes object/NativeRef -> PTR (use ``tether.Pointer(addr)``
or a ctypes object for an address, since a bare int means I64).

A value the slot's C type cannot hold (an int outside i64, an address outside 64 bits, an int
too large for a double) raises ``ArgumentMismatchError`` here, before anything reaches C:
ctypes would wrap it silently (``2**64`` would arrive as 0).
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

from . import object_table
from ._cabi import PARAM_F64, PARAM_I64, PARAM_PTR, PARAM_STR, Value
from .errors import ArgumentMismatchError
from .native_refs import NativeRef

_C_DATA = (ctypes.Structure, ctypes.Union, ctypes.Array)
_I64 = (-(2**63), 2**63 - 1)
_ADDRESS = (0, 2**64 - 1)


def _address(value: Any) -> int | None:
    """The address a PTR argument means, or None if ``value`` is not pointer-like."""
    if value is None:
        return 0
    if isinstance(value, NativeRef):
        return value.address
    if isinstance(value, ctypes.c_void_p):
        return value.value or 0
    if isinstance(value, (ctypes._Pointer, ctypes._CFuncPtr)):  # type: ignore[attr-defined]
        return ctypes.cast(value, ctypes.c_void_p).value or 0
    if isinstance(value, _C_DATA):
        return ctypes.addressof(value)
    return None


def _mismatch(position: int, name: str, expected: str, value: Any) -> ArgumentMismatchError:
    return ArgumentMismatchError(
        f"runtime argument {position} of {name!r} must be {expected}, got {type(value).__name__}"
    )


def _in_range(value: int, bounds: tuple[int, int], position: int, name: str, expected: str) -> int:
    if not bounds[0] <= value <= bounds[1]:
        raise ArgumentMismatchError(f"runtime argument {position} of {name!r} must be {expected}, got {value}")
    return value


def _encode(text: Any, position: int, name: str) -> bytes:
    raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if b"\0" in raw:
        raise ValueError(f"runtime argument {position} of {name!r} contains a NUL character")
    return raw


def to_values(name: str, args: Sequence[Any], kinds: Sequence[str] | None) -> tuple[Any, list[int]]:
    """(ctypes array of Value, pointers pinned for the call: release each with object_table.release)."""
    values = (Value * len(args))()
    pinned: list[int] = []
    try:
        for i, arg in enumerate(args):
            v = values[i]
            kind = kinds[i] if kinds is not None and i < len(kinds) else None
            position = i + 1
            if kind in ("int", "bool") or (kind is None and isinstance(arg, int)):
                if not isinstance(arg, int):
                    raise _mismatch(position, name, "an int (i64)", arg)
                v.kind, v.u.i64 = PARAM_I64, _in_range(arg, _I64, position, name, "an int in [-2**63, 2**63 - 1] (i64)")
            elif kind == "float" or (kind is None and isinstance(arg, float)):
                if not isinstance(arg, (int, float)) or isinstance(arg, bool):
                    raise _mismatch(position, name, "a float (f64)", arg)
                try:
                    v.kind, v.u.f64 = PARAM_F64, float(arg)
                except OverflowError:
                    raise ArgumentMismatchError(f"runtime argument {position} of {name!r} must fit a float (f64), "
                                                f"got an int of {arg.bit_length()} bits") from None
            elif kind in ("str", "bytes") or (kind is None and isinstance(arg, (str, bytes))):
                if not isinstance(arg, (str, bytes, bytearray)):
                    raise _mismatch(position, name, "a str or bytes", arg)
                v.kind, v.u.str = PARAM_STR, _encode(arg, position, name)
            elif kind == "object":
                v.kind, v.u.ptr = PARAM_PTR, object_table.retain(arg)
                pinned.append(v.u.ptr)
            else:
                raw_int = kind == "pointer" and isinstance(arg, int) and not isinstance(arg, bool)
                address = arg if raw_int else _address(arg)
                if address is None:
                    raise _mismatch(position, name, "a pointer (None, tether.Pointer, a ctypes object, a NativeRef)", arg)
                v.kind, v.u.ptr = PARAM_PTR, _in_range(address, _ADDRESS, position, name, "an address in [0, 2**64 - 1]")
    except BaseException:
        for ptr in pinned:
            object_table.release(ptr)
        raise
    return values, pinned
