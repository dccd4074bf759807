"""Singleton hits served in Python: a cached Python singleton handed out again with no call.

``Container.resolve`` passes the Python singleton a registration caches as TETHER_RESOLVE_HELD.
When the library answers that it is the published singleton (no handle, no drop), the container
keeps ``hit(cell, words, stamp)`` as the key's builder: it returns the object, with no call into
the library, while both of these hold:

- the sum of the cache version words of the container and its parents
  (``tether_container_cache_versions``) is ``stamp``, read before that resolve. The library moves
  a word after every singleton (and every weak-scope instance: see ``Registration.published``) its
  container lets go of (``tether_reset``, re-registration, a scope change, ``tether_container_free``,
  whether Python or C code sharing the container asked)
  and on every configuration change (a key registered here or in a parent may now resolve to
  another registration);
- the registration's ``object_table.Owned`` cell still holds the object: the binding empties it when
  the container lets go (Python's ``reset``, ``close``, re-registration) and when the library
  drops the object's last box, so a hit never keeps an object alive beyond the library.

Otherwise it returns ``executor.MISS`` and the resolve goes through the library, as before.

The guarantee, with threads: a hit reads the object, then the words, and the library moves a word
only after the singleton was unpublished, so the object returned was the published singleton
when the words were read. A reset (or re-registration, or free) that completed before the
resolve started, on any thread, from Python or C, is always seen: the resolve goes through the
library and gets (or makes) the current singleton. One racing with the resolve is seen or not,
as with a hit in the library (the resolve is ordered before or after it); the object returned is
then alive (Python holds it) even if the library drops it the moment after, as a WEAK hit's is.
"""

from __future__ import annotations

from ctypes import c_size_t
from typing import Any, Callable, Sequence

from .object_table import Owned
from .executor import MISS


def stamp(words: Sequence[c_size_t]) -> int:
    """The sum of the cache version ``words``: read it before the resolve that confirms a hit."""
    return sum([word.value for word in words])


def hit(cell: Owned, words: Sequence[c_size_t], stamp: int) -> Callable[[], Any]:
    """The builder serving the singleton in ``cell`` while ``words`` sum to ``stamp`` (else MISS)."""
    if len(words) == 1:
        word = words[0]

        def singleton() -> Any:
            obj = cell.obj  # first: the words then say it was still published
            if obj is not None and word.value == stamp:
                return obj
            return MISS

        return singleton

    if len(words) == 2:  # a child of a root container: the sum written out (see executor._compile)
        word, parent = words

        def child() -> Any:
            obj = cell.obj
            if obj is not None and word.value + parent.value == stamp:
                return obj
            return MISS

        return child

    def chained() -> Any:  # deeper chains
        obj = cell.obj
        if obj is not None and sum([word.value for word in words]) == stamp:
            return obj
        return MISS

    return chained
