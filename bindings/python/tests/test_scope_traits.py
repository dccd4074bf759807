"""What the package does per scope comes from the library (``scope_traits``), not from a scope's name:
each ``Scope`` says what the library decides for it."""

from __future__ import annotations

from tether import Scope


def test_each_scope_says_what_the_library_decides_for_it() -> None:
    shared = {s for s in Scope if s.shared}
    assert shared == {Scope.SINGLETON, Scope.WEAK, Scope.CONTAINER}
    assert {s for s in Scope if s.kept_strongly} == {Scope.SINGLETON}
    assert {s for s in Scope if s.kept_weakly} == {Scope.WEAK}
    assert {s for s in Scope if s.per_container} == {Scope.CONTAINER}
    # a shared scope is kept by exactly one keeper: its registration (strongly or weakly) or the container
    for s in Scope:
        assert s.kept_by_registration == (s.kept_strongly or s.kept_weakly)
        assert s.shared == (s.kept_by_registration or s.per_container)
        assert not (s.kept_by_registration and s.per_container)
