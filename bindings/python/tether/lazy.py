"""The callables a Python factory gets for ``tether.lazy``, ``tether.weak_lazy`` and ``tether.factory`` dependencies.

They are Python objects, not the library's C trampolines: a C lazy slot lives only as long as
the dependent's C box, while a Python dependent lives as long as Python holds it (and a Python
object outlives its box). The C slot is still declared (so ``validate`` and ``to_dot`` see the
edge), and the library decides what it answers: the binding watches the slot
(``tether_provider_watch``) and keeps the answer, the graph's own instance of the key (the object
that holds this dependent) or the refusal of a strong back edge (a retain cycle), in the Python
object; without one, the first call of a lazy one asks the slot it held (``tether_lazy_hold``,
``tether_lazy_get``: the C slot's own call, whose owner's late strong edge to what it resolves
anew the library refuses when it closes a retain cycle) while the slot's owner lives, else (and
for a weak-lazy one, whose weak hold closes no cycle) resolves the key through the library. What the slot then
holds, it gives again without a call while its container's hit word has the value read when it
was made; once the word moved, the library says whether that container still answers
(``tether_container_hit_word``: a freed one does not, and every call fails as the library's slot
does). A weak-lazy one holds its answer weakly from the first call on: it returns None when
nothing else holds it, as the library's slot answers ``TETHER_E_EXPIRED``.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

from ctypes import byref, c_void_p

from ._cabi import OK, PROVIDER_WATCH_FN
from .errors import InvalidHandleError
from .native_refs import NativeRef

_UNSET: Any = object()

#: Lazy objects waiting for their graph's answer, by the token their watch passes as its context.
_watching: dict[int, Callable[[], Any]] = {}
_tokens = itertools.count(1)
_api: list[Any] = []


def _told(context: int | None, status: int, instance: int | None) -> None:
    """tether_provider_watch's callback: inside the resolve, on its thread; maps the answer to
    the binding's object now, while the graph keeps it."""
    ref = _watching.pop(context or 0, None)
    lazy = ref() if ref is not None else None
    if lazy is None:
        return
    from . import messages, object_table  # (no import cycle at load time)

    if status != OK:
        lazy._graph = (status, messages.last(_api[0]))
        return
    obj = object_table.lookup(instance or 0, object_table.MISSING)
    if obj is object_table.MISSING:
        return  # a native instance: resolved anew on the first call
    try:
        lazy._graph = obj.downgrade() if isinstance(obj, NativeRef) else weakref.ref(obj)
    except TypeError:
        pass  # not weakly referenceable: resolved anew on the first call


_TOLD = PROVIDER_WATCH_FN(_told)


def watch(api: Any, lazy: _Deferred, provider: int | None) -> None:
    """Has the library tell ``lazy`` what the C slot ``provider`` answers from its graph."""
    if not provider:
        return
    if not _api:
        _api.append(api)
    token = next(_tokens)

    def forget(_ref: Any) -> None:  # the lazy object went before its graph answered
        _watching.pop(token, None)

    _watching[token] = weakref.ref(lazy, forget)
    if api.tether_provider_watch(provider, _TOLD, token) != OK:
        _watching.pop(token, None)
    if isinstance(lazy, Lazy):  # what it resolves anew is the slot's to hold or refuse (``Lazy._fresh``)
        held = c_void_p()
        if api.tether_lazy_hold(provider, held) == OK:
            lazy._held = held.value


class _Deferred:
    __slots__ = ("_container", "_key", "_graph", "_word", "_token", "_handle", "__weakref__")

    def __init__(self, container: Any, key: str) -> None:
        self._container: Callable[[], Any] | None = weakref.ref(container) if container is not None else None
        self._key = key
        #: What the graph the dependent was made in answers: None (nothing: resolve anew), a weak
        #: reference to its instance of the key, or ``(status, parts)``: the library's refusal.
        self._graph: Any = None
        #: The container's hit word and the value it had when this was made: while it has it, the
        #: container still answers (see ``_confirm``)
        self._word = getattr(container, "_hit_word", None)
        self._token = self._word.value if self._word is not None else 0
        self._handle = getattr(container, "_handle", None)

    def _confirm(self) -> None:
        """The hit word moved: the library says whether the container still answers (a freed one
        does not: then every call fails with its error, as the library's slot does)."""
        if self._handle is None:
            container = self._container() if self._container is not None else None
            if container is None or container.closed:
                raise InvalidHandleError(f"lazy dependency on {self._key!r}: its container was closed")
            return
        from . import _state, messages  # (no import cycle at load time)

        api = _api[0] if _api else None
        if api is None:
            return
        word = c_void_p()
        status = api.tether_container_hit_word(self._handle, byref(word))
        if status != OK:
            _state.raise_caused(status, messages.last(api), None)
        self._token = self._word.value

    def _resolve(self) -> Any:
        if self._word is not None and self._word.value != self._token:
            self._confirm()
        graph = self._graph
        if graph is not None:
            if isinstance(graph, tuple):
                from . import _state

                _state.raise_caused(graph[0], graph[1], None)
            obj = graph()
            if obj is not None:
                return obj
        container = self._container() if self._container is not None else None
        if container is None or container.closed:
            raise InvalidHandleError(f"lazy dependency on {self._key!r}: its container was closed")
        fresh = self._fresh()
        return container.resolve(self._key) if fresh is _UNSET else fresh

    def _fresh(self) -> Any:
        """What the slot answers when resolved anew: ``_UNSET`` (no slot to ask: resolve it here)."""
        return _UNSET


class Lazy(_Deferred):
    """``tether.lazy(K)``: the first call answers the K of the graph the dependent was made in,
    while it lives, else resolves K (from the container the dependent was resolved from); then
    holds it strongly and returns the same object on every call while that container is open
    (then ``InvalidHandleError``). A K whose graph instance holds
    the dependent strongly is refused (``RetainCycleError``: use ``tether.weak_lazy``)."""

    __slots__ = ("_value", "_held")

    def __init__(self, container: Any, key: str) -> None:
        super().__init__(container, key)
        self._value: Any = _UNSET
        #: The library's slot (``tether_lazy_hold``) while its instance may still live: what the first
        #: call resolves anew is its owner's late strong edge, which the library refuses when it closes
        #: a retain cycle (the key's instance holds the dependent strongly), as a C slot's call does.
        self._held: int | None = None

    def _fresh(self) -> Any:
        held = self._held
        if held is None:
            return _UNSET
        from . import native_refs, provider  # (no import cycle at load time)

        api = _api[0]
        handle = c_void_p()

        def get() -> int:
            instance = c_void_p()
            return (instance.value or 0) if api.tether_lazy_get(held, instance, handle) == OK else 0

        try:
            provider.call(api, get)
        except InvalidHandleError:
            return _UNSET  # its owner is gone (a stale slot): the object outlives it, resolves in its container
        return native_refs.adopt(api, handle)

    def __del__(self) -> None:
        # only here: another thread may be in a call through it until then
        held, self._held = self._held, None
        if held is not None and _api:
            try:
                _api[0].tether_lazy_release(held)
            except Exception:  # (interpreter shutdown)
                pass

    def __call__(self) -> Any:
        value = self._value
        if value is _UNSET:
            value = self._resolve()
            if self._value is _UNSET:  # two threads may race the first call: the first result wins
                self._value = value
                self._graph = None
            value = self._value
        elif self._word is not None and self._word.value != self._token:
            self._confirm()
        return value

    def __repr__(self) -> str:
        return f"<tether.lazy {self._key!r}{' resolved' if self._value is not _UNSET else ''}>"


class WeakLazy(_Deferred):
    """``tether.weak_lazy(K)``: the first call answers the K of the graph the dependent was made
    in, while it lives, else resolves K; it holds it weakly and returns None once it is gone (on
    the first call too, when nothing else holds what it resolved)."""

    __slots__ = ("_ref",)

    def __init__(self, container: Any, key: str) -> None:
        super().__init__(container, key)
        self._ref: Callable[[], Any] | None = None

    def __call__(self) -> Any:
        ref = self._ref
        if ref is not None:
            if self._word is not None and self._word.value != self._token:
                self._confirm()
            return ref()
        value = self._resolve()
        if isinstance(value, NativeRef):
            ref = value.downgrade()
        else:
            try:
                ref = weakref.ref(value)
            except TypeError:
                raise TypeError(
                    f"tether.weak_lazy({self._key!r}): {type(value).__name__!r} objects cannot be weakly "
                    f"referenced; give the class a __weakref__ slot or use tether.lazy"
                ) from None
        if self._ref is None:
            self._ref = ref
            self._graph = None
        del value  # held weakly: alive now only if something else holds it
        return self._ref()

    def __repr__(self) -> str:
        return f"<tether.weak_lazy {self._key!r}>"


class Factory(_Deferred):
    """``tether.factory(K)``: ``make(*args)`` builds a new K with those runtime arguments (as
    ``container.resolve(K, *args)``, from the container the dependent was resolved from), its
    other dependencies injected; wrong arguments raise ``ArgumentMismatchError``, a call after
    that container closed ``InvalidHandleError``."""

    __slots__ = ()

    def __call__(self, *args: Any) -> Any:
        container = self._container() if self._container is not None else None
        if container is None or container.closed:
            raise InvalidHandleError(f"tether.factory({self._key!r}): its container was closed")
        return container.resolve(self._key, *args)

    def __repr__(self) -> str:
        return f"<tether.factory {self._key!r}>"
