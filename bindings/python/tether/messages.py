"""Error messages in Python's terms, rendered from the parts the library composes its own from.

The library composes every message (``tether_last_error``) and hands out what it is made of
(``tether_last_error_parts``: the status, which kind of fix applies, the keys, the path, the
reason a factory gave). This module says the same thing for a Python user: the fix as Python
spells it (``register(...)``, ``tether.lazy(...)``, ``on_complete=``, ``r.weak(...)``), and a
factory that raised says it raised. It holds no copy of the library's wording: a failure whose
parts propose no particular fix shows the library's text, without the C function name it
starts with.
"""

from __future__ import annotations

import re
from ctypes import byref, c_size_t
from typing import Sequence

from ._cabi import (
    FIX_BREAK_CYCLE,
    FIX_CALLBACK,
    FIX_CALLBACK_LAP,
    FIX_FACTORY,
    FIX_NESTED_RESOLVE,
    FIX_NONE,
    FIX_PROVIDE_VALUE,
    FIX_RECURSION,
    FIX_UNFINISHED,
    FIX_REGISTER,
    FIX_WAIT_CYCLE,
    FIX_WEAK_EDGE,
    FIX_WEAK_LAZY,
    FIX_RUNTIME_ARGUMENTS,
    FIX_WEAK_TARGET,
    OK,
    Api,
    ErrorParts,
)
from .errors import FactoryReturnedNone
from .markers import class_keys

#: Paths longer than this are shown as their first and last ``_PATH_END`` keys (as the library's).
_PATH_MAX, _PATH_END = 7, 3


class Parts:
    """One failure's parts: ``tether_error_parts`` read at once (its strings live until the next
    failure), or made by the binding for a failure it found itself (a replayed plan's)."""

    __slots__ = ("status", "fix", "key", "target", "path", "omitted", "reason", "callback_of", "callback", "text",
                 "nested")

    def __init__(self, status: int, fix: int = FIX_NONE, key: str | None = None, *, target: str | None = None,
                 path: Sequence[str] = (), omitted: int = 0, reason: str | None = None,
                 callback_of: str | None = None, callback: int = 0, text: str = "",
                 nested: Sequence[tuple[str, str, bool]] = ()) -> None:
        self.status, self.fix, self.key, self.target = status, fix, key, target
        self.path, self.omitted, self.reason = list(path), omitted, reason
        self.callback_of, self.callback, self.text = callback_of, callback, text
        #: FIX_NESTED_RESOLVE: the nested resolves the cycle runs through, outermost first, as
        #: (from, to, made in a completion callback of ``from``); the last is key -> target.
        self.nested = list(nested)


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace")


def last(api: Api) -> Parts:
    """This thread's last failure, as parts (read right after the failing call)."""
    raw = ErrorParts()
    if api.tether_last_error_parts(byref(raw)) != OK:
        return Parts(api.tether_last_status(), text=api.last_error())
    return _parts(raw, api.last_error())


def _parts(raw: ErrorParts, text: str) -> Parts:
    path = [_text(raw.path[i]) or "" for i in range(raw.path_count)]
    nested = [(_text(raw.nested[2 * i]) or "", _text(raw.nested[2 * i + 1]) or "", bool(raw.nested_in_callback >> i & 1))
              for i in range(raw.nested_count)]
    return Parts(raw.status, raw.fix, _text(raw.key), target=_text(raw.target), path=path, omitted=raw.path_omitted,
                 reason=_text(raw.reason), callback_of=_text(raw.callback_of), callback=raw.callback, text=text,
                 nested=nested)


def validate_report(api: Api) -> str:
    """The last failed ``tether_validate``'s report in Python's terms: its first line, then each
    problem rendered from its parts (``tether_validate_problem_parts``), or its line as it is."""
    lines = api.last_error().splitlines()
    raw, count = ErrorParts(), c_size_t()
    out = [re.sub(r"^tether_\w+: ", "", lines[0])] if lines else []
    api.tether_validate_problem_parts(0, byref(raw), byref(count))
    shown = count.value if count.value == len(lines) - 1 else len(lines) - 2  # a long report ends in "... and N more"
    for i, line in enumerate(lines[1:]):
        if i < shown and api.tether_validate_problem_parts(i, byref(raw), None) == OK and raw.fix != FIX_NONE:
            line = render(_parts(raw, line))
        out.append(line)
    return "\n".join(out)


def last_message(api: Api) -> str:
    """This thread's last failure in Python's terms (no Python exception known as its cause)."""
    return render(last(api))


def _q(key: str | None) -> str:
    return f'"{key}"'


def _path(parts: Parts) -> str:
    return _capped([_q(k) for k in parts.path], " -> ", parts.omitted)


def _needed_by(parts: Parts) -> str:
    """`` (needed by "A" -> "B")`` after a key's text when a path needed it, else nothing."""
    return f" (needed by {_path(parts)})" if parts.path else ""


def _capped(shown: list[str], separator: str, omitted: int = 0) -> str:
    """``shown`` joined, a long list cut in the middle as the library cuts a path (``omitted``: it did)."""
    if not omitted and len(shown) > _PATH_MAX:
        shown, omitted = shown[:_PATH_END] + shown[-_PATH_END:], len(shown) - 2 * _PATH_END
    if omitted:
        shown[_PATH_END:_PATH_END] = [f"... ({omitted} more)"]
    return separator.join(shown)


def _failed(what: str, reason: str | None, cause: BaseException | None) -> str:
    """``what`` (a factory or callback) failing: it raised ``cause`` (its reason is the exception
    as text), returned None, or (a C callback) failed with the reason it gave, if any."""
    if isinstance(cause, FactoryReturnedNone):
        return f"{what} returned None; return the instance (raise to fail)"
    if cause is not None:
        return f"{what} raised {reason or type(cause).__name__}"
    return f"{what} failed: {reason}" if reason else f"{what} failed"


def _nested_resolve(parts: Parts) -> str:
    """A key asked for again, by a resolve nested in the factory of ``parts.key``, before that
    factory returned; the fix depends on where the request came from (the parts say which), and
    leaves one edge between the two strong, so the other is taken weakly. Any other nested resolve
    on the cycle (``parts.nested`` but the last) becomes a dependency first."""
    factory, nested, again = _q(parts.key), _q(parts.target), _q(parts.path[-1] if parts.path else parts.target)
    text = f"the constructors of {_path(parts)} need each other: "
    if parts.nested and parts.nested[-1][2]:
        text += (f"a completion callback of {factory} resolves {nested} in a resolve of its own, and "
                 + ("that is" if nested == again else f"its construction needs {again},") + " still being constructed; "
                 f"get {nested} with r.weak({nested}) in that callback instead"
                 + ("" if nested == again else f" (or with r.get({nested}) and {nested}'s dependency on {again} weak)"))
    elif parts.callback_of:
        text += (f"the factory of {factory} resolves {nested}, and a completion callback of {_q(parts.callback_of)} "
                 f"that this runs asks for {again} before that factory returned; take {nested} as a dependency of "
                 f"{factory} (deps=[{nested}], or tether.lazy / tether.weak_lazy called after the factory returns) "
                 f"instead of resolving it in the factory, or get it with r.get({nested}) in a completion callback "
                 f"of {factory} (on_complete=); the callback of {_q(parts.callback_of)} then takes {again} weakly "
                 f"(r.weak({again}))")
    elif nested != again:
        text += (f"the factory of {factory} resolves {nested}, whose construction needs {again} before that factory "
                 f"returned; get {nested} with r.weak({nested}) in a completion callback of {factory} (on_complete=) "
                 f"instead, once {again} is made (or with r.get({nested}) and {nested}'s dependency on {again} weak)")
    else:
        text += (f"the factory of {factory} (or a lazy provider it called) resolves {again}, which is still being "
                 f"constructed; make {factory}'s dependency on {again} weak-lazy (deps=[tether.weak_lazy({again})]) "
                 f"and call it once the factory of {again} returned, or, {factory} being a dependency of {again}, get "
                 f"it with r.weak({again}) in a completion callback of {factory} (on_complete=) instead")
    if len(parts.nested) > 1:
        first = [f"{_q(to)} with r.get({_q(to)}) in that completion callback of {_q(of)}" if in_callback
                 else f"{_q(to)} as a dependency of {_q(of)} (deps=[{_q(to)}])"
                 for of, to, in_callback in parts.nested[:-1]]
        text += (f"; but first take {_capped(first, ', ')} ({'each ' if len(first) > 1 else ''}instead of its nested resolve): a nested resolve "
                 f"builds a graph of its own, so this fix works only once one resolve builds the whole cycle")
    return text


def render(parts: Parts, cause: BaseException | None = None) -> str:
    """The message for ``parts`` (``cause``: the Python exception the failing factory or callback
    raised, if there was one)."""
    fix, key = parts.fix, parts.key
    if fix == FIX_REGISTER:
        text = f"{_q(key)} is not registered{_needed_by(parts)}"
        if not parts.path and parts.callback_of and not parts.callback:
            text += f" (needed by a completion callback of {_q(parts.callback_of)})"
        cls = class_keys.get(key or "")
        how = f"container.register({cls})" if cls else f"container.register({_q(key)}, ...)"
        text += f": register it first ({how}) or check the spelling"
    elif fix == FIX_BREAK_CYCLE:
        before = parts.path[-2] if len(parts.path) > 1 else key
        text = (f"the constructors of {_path(parts)} need each other: set {_q(before)}'s dependency on {_q(key)} "
                f"after construction in a completion callback of {_q(before)} (on_complete=), or make it weak-lazy "
                f"(deps=[tether.weak_lazy({_q(key)})])")
    elif fix == FIX_NESTED_RESOLVE:
        text = _nested_resolve(parts)
    elif fix == FIX_CALLBACK_LAP:
        owner, kept = _q(parts.callback_of), _q(parts.path[-2])
        text = (f"completion callbacks would build the cycle {_path(parts)} anew forever: a completion callback of {owner} "
                f"asks for {_q(parts.path[1])}, whose making (nothing on the way kept in the graph) makes another {owner}; "
                f"make {kept} graph-scoped (scope=Scope.GRAPH) so that the graph's instance closes the cycle")
        if key:
            text += (f", or make {_q(key)}'s dependency on {_q(parts.target)} weak-lazy "
                     f"(deps=[tether.weak_lazy({_q(parts.target)})])")
    elif fix == FIX_WAIT_CYCLE:
        before = parts.path[-2] if len(parts.path) > 1 else key
        text = (f"the creations of the shared instances {_path(parts)} would wait for each other forever (each under way, "
                f"in this or another task or thread, and needing the next); break its edge {_q(before)} -> {_q(key)}: make {_q(before)}'s dependency "
                f"on {_q(key)} weak-lazy (deps=[tether.weak_lazy({_q(key)})]) and call it once {_q(before)} is made, instead "
                f"of resolving {_q(key)} while {_q(before)} is being made (a completion callback of {_q(before)} does not "
                f"break it: {_q(before)} is published only after its callbacks ran)")
    elif fix == FIX_WEAK_EDGE:
        text = (f"r.get({_q(parts.target)}) from {_q(key)} makes a strong reference that closes the retain "
                f"cycle {_path(parts)}: take it with r.weak({_q(parts.target)}) instead")
    elif fix == FIX_WEAK_TARGET:
        text = (f"the strong target {_q(parts.target)} of {_q(key)} closes the retain cycle {_path(parts)}: "
                f"declare it weak (tether.complete(fn, deps=[tether.weak({_q(parts.target)})]))")
    elif fix == FIX_WEAK_LAZY:
        text = (f"tether.lazy({_q(parts.target)}) in {_q(key)} would close the retain cycle {_path(parts)}: "
                f"{_q(parts.target)} holds {_q(key)} strongly; make it deps=[tether.weak_lazy({_q(parts.target)})]")
    elif fix == FIX_RUNTIME_ARGUMENTS:
        text = f"{_q(key)} takes runtime arguments and cannot be a dependency{_needed_by(parts)}"
        text += (f": declare the parameter tether.factory({class_keys.get(key or '') or _q(key)}) to build it with "
                 f"arguments from the factory, or resolve it with container.resolve({class_keys.get(key or '') or _q(key)}, ...)")
    elif fix == FIX_FACTORY:
        text = _failed(f"the factory for {_q(key)}", parts.reason, cause)
        if len(parts.path) > 1 or parts.omitted:
            text += f" (while resolving {_path(parts)})"
    elif fix == FIX_CALLBACK:
        text = _failed(f"completion callback #{parts.callback} of {_q(parts.callback_of)}", parts.reason, cause)
    elif fix == FIX_PROVIDE_VALUE:
        text = (f"no value for {_q(key)}, a declared value (register_value) that no container on the way provides"
                f"{_needed_by(parts)}")
        text += (f": resolve from a child container that provides it "
                 f"(tether.Container(parent=..., values={{{_q(key)}: ...}}))")
    elif fix == FIX_RECURSION:
        text = (f"resolves of {_q(key)} nested too deep on one thread: a factory keeps resolving itself; "
                f"break the loop by setting that dependency in a completion callback (on_complete=)")
    elif fix == FIX_UNFINISHED:
        via = f" ({_path(parts)})" if len(parts.path) > 1 else ""
        text = (f"{_q(key)} was resolved again{via} before the resolve that is making it finished: "
                f"a nested resolve cannot hand out an instance whose resolve may still fail; take it from the "
                f"completion callback's resolver (r.get({_q(key)})) or as a dependency")
    else:
        return re.sub(r"^tether_\w+: ", "", parts.text)
    if parts.callback and fix != FIX_CALLBACK:
        text = f"a declared target of completion callback #{parts.callback} of {_q(parts.callback_of)}: {text}"
    return text
