"""What the package does per scope comes from the library (``scope_traits``), not from a scope's name:
each ``Scope`` says what the library decides for it."""

from __future__ import annotations

from tether import Scope

TRAITS = ("shared", "kept_strongly", "kept_weakly", "kept_by_registration", "per_container")


def test_each_scope_says_what_the_library_decides_for_it() -> None:
    expected = {
        Scope.GRAPH: set(),
        Scope.TRANSIENT: set(),
        Scope.SINGLETON: {"shared", "kept_strongly", "kept_by_registration"},
        Scope.WEAK: {"shared", "kept_weakly", "kept_by_registration"},
        Scope.CONTAINER: {"shared", "per_container"},
    }
    for scope, traits in expected.items():
        assert {t for t in TRAITS if getattr(scope, t)} == traits, scope


def test_a_shared_scope_has_one_keeper() -> None:
    for s in Scope:  # any scope the library has: its registration (strongly or weakly), or the container
        assert s.kept_by_registration == (s.kept_strongly or s.kept_weakly)
        assert s.shared == (s.kept_by_registration or s.per_container)
        assert not (s.kept_by_registration and s.per_container)
        assert not (s.kept_strongly and s.kept_weakly)
