"""Misuse refused before any factory runs: runtime ints outside i64 (and addresses outside
64 bits, ints too large for a double), and ``register("K", None)``."""

import pytest

import tether


def test_int_argument_outside_i64_is_refused_before_the_factory(c):
    made = []
    c.register("N", lambda n: made.append(n) or [n], deps=[int])
    for bad in (2**63, 2**64, -(2**63) - 1, 10**30):
        with pytest.raises(tether.ArgumentMismatchError, match=r"runtime argument 1 of 'N' .*i64.*got " + str(bad)):
            c.resolve("N", bad)
    assert made == []
    assert c.resolve("N", 2**63 - 1) == [2**63 - 1]
    assert c.resolve("N", -(2**63)) == [-(2**63)]
    assert made == [2**63 - 1, -(2**63)]
    for _ in range(3):  # also once the resolve is replayed from a plan
        assert c.resolve("N", 5) == [5]
        with pytest.raises(tether.ArgumentMismatchError, match="i64"):
            c.resolve("N", 2**64)
    assert made == [2**63 - 1, -(2**63), 5, 5, 5]


def test_int_argument_of_a_c_registration_is_refused_too(c):
    # no Python registration: the value's type picks the slot (I64); still checked before C
    with pytest.raises(tether.ArgumentMismatchError, match="i64"):
        c.resolve("NotRegistered", 2**64)


def test_float_and_address_arguments_out_of_range_are_refused(c):
    made = []
    c.register("F", lambda x: made.append(x) or [x], deps=[float])
    c.register("P", lambda p: made.append(p) or [p], deps=[tether.Pointer])
    with pytest.raises(tether.ArgumentMismatchError, match="f64"):
        c.resolve("F", 10**400)
    for bad in (-1, 2**64):
        with pytest.raises(tether.ArgumentMismatchError, match="address"):
            c.resolve("P", bad)
    assert made == []
    assert c.resolve("P", 2**64 - 1) == [2**64 - 1]


def test_register_with_an_explicit_none_factory_is_a_type_error(c):
    with pytest.raises(TypeError, match="callable, not NoneType"):
        c.register("K", None)
    with pytest.raises(TypeError, match="callable, not NoneType"):
        c.register(dict, None)
    assert not c._regs
    # the decorator forms still work
    @c.register("D")
    def make_d():
        return ["d"]

    assert c.resolve("D") == ["d"]
