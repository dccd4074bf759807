"""Resolves replayed in Python: the library records a key's plan and the binding runs it.

For a graph the library can describe (``tether_plan_describe``: graph- and transient-scoped
registrations, no runtime arguments, completion callbacks only declared ones whose targets are
steps of the build), and whose every step is a Python registration with a simple factory (only
dependency slots, passed positionally), ``prepare`` and ``bind`` make a function that calls the factories in
the plan's order, each with the instances the plan names, then the completion callbacks in the
plan's order with their targets (a weak one as ``weakref.ref``, as the library's path gives it):
no call into the library and no C -> Python callback per resolve. ``Container.resolve``
runs it while the container's configuration (the sum of the version words
``tether_container_versions`` gives) is the one read before describing, which every
registration change in the container or its parents moves; otherwise it resolves through the
library, as always. A resolve nested in a factory replays too: the library builds a nested
resolve as a graph of its own, so the two share nothing but the thread's stack. A child container
with nothing registered in it builds what its parent builds: it binds the plan its ancestor
prepared to its own version words (``Container._prepared_plan``).

A replay behaves as the library's resolve of the same graph: the same factory calls in the same
order, the same sharing, nothing kept by the container afterwards, and a factory that raises or
returns None, or a completion callback that raises, fails the resolve with the same
``FactoryError`` (message, status and cause).
"""

from __future__ import annotations

import weakref
from ctypes import byref, c_int32, c_size_t
from typing import Any, Callable, Sequence

from ._native import E_BUFFER_TOO_SMALL, FIX_CALLBACK, FIX_FACTORY, OK, PARAM_DEP, PARAM_WEAK, PLAN_INPUT_RESOLVER, Api, PlanCompletion, PlanStep
from ._state import raise_caused
from .native import python_weak
from .errors import Status
from .messages import Parts
from .registration import Registration, reason
from .scope import Scope

#: Generated builders by shape (see ``bind``), so equal graphs compile once.
_makers: dict[tuple[Any, ...], Callable[..., Callable[[], Any]]] = {}


Described = tuple[Sequence[PlanStep], Sequence[int], Sequence[PlanCompletion]]


def describe(api: Api, handle: int, kid: int) -> Described | None:
    """The plan of key ``kid`` from container ``handle`` (steps, inputs, completions), or None if there is none."""
    step_cap, input_cap, completion_cap = 16, 64, 8
    for _ in range(4):  # the plan may grow between calls: ask again with the sizes it needs
        steps = (PlanStep * step_cap)()
        inputs = (c_int32 * input_cap)()
        completions = (PlanCompletion * completion_cap)()
        step_count, input_count, completion_count = c_size_t(), c_size_t(), c_size_t()
        status = api.tether_plan_describe(handle, kid, steps, step_cap, inputs, input_cap, completions, completion_cap,
                                             byref(step_count), byref(input_count), byref(completion_count))
        if status == E_BUFFER_TOO_SMALL:
            step_cap, input_cap, completion_cap = step_count.value, input_count.value, completion_count.value
            continue
        if status != OK or step_count.value == 0:  # an error is the library's resolve to report
            return None
        return steps[: step_count.value], inputs[: input_count.value], completions[: completion_count.value]
    return None


def _simple(reg: Registration | None) -> bool:
    """A live registration whose factory a replay can call: dependencies only, positional, no
    completion callbacks but declared ones."""
    return (
        reg is not None
        and reg.handle is not None
        and reg.factory is not None
        and reg.scope in (Scope.GRAPH, Scope.TRANSIENT)
        and reg.completions is not None
        and not reg.plan.names
        and all(slot.kind == PARAM_DEP for slot in reg.plan.slots)
    )


#: What a builder returns when it does not run (see ``bind``).
MISS: Any = object()
#: What a builder returns while a replay of its plan is under way (on this thread, a factory
#: resolving the root again, or another thread): resolve through the library this time.
BUSY: Any = object()


#: A described plan made ready for ``bind``: the builder's shape, its failure handlers and its
#: root's ``replaying`` flag, and the factories, None-checks and callbacks it calls.
Prepared = tuple[tuple[Any, ...], tuple[Callable[..., None], Callable[..., None], list[bool]], tuple[Callable[..., Any], ...]]


def prepare(regs: dict[int, Registration], steps: Sequence[PlanStep], inputs: Sequence[int],
            completions: Sequence[PlanCompletion] = ()) -> Prepared | None:
    """The described plan made ready to run with the Python registrations ``regs`` (by handle), or
    None when a step is not a simple Python registration of this process. All but the version
    words its builder checks (``bind``), so containers that build the same graph (a container and
    its children with nothing registered in them) share it."""
    made: list[Registration] = []
    args: list[tuple[int, ...]] = []
    for step in steps:
        reg = regs.get(step.registration or 0)
        if not _simple(reg):
            return None
        assert reg is not None
        slots = tuple(inputs[step.first_input : step.first_input + step.slot_count])
        deps = slots[1:] if slots and slots[0] == PLAN_INPUT_RESOLVER else slots  # install()'s hidden resolver
        if len(deps) != len(reg.plan.slots) or len(slots) - len(deps) != (1 if deps else 0) or any(i < 0 for i in deps):
            return None
        made.append(reg)
        args.append(deps)
    calls: list[tuple[int, tuple[tuple[int, bool], ...]]] = []  # per completion: its step, its targets (step, weak)
    callbacks: list[Callable[..., Any]] = []
    numbers: list[int] = []
    for record in completions:
        declared = made[record.step].completions
        if declared is None or record.number >= len(declared):
            return None  # registered again since it was described
        completion = declared[record.number]
        targets = tuple(inputs[record.first_target : record.first_target + record.target_count])
        if len(targets) != len(completion.deps) or any(not 0 <= t < len(made) for t in targets):
            return None
        calls.append((record.step, tuple((t, dep.kind == PARAM_WEAK) for t, dep in zip(targets, completion.deps))))
        callbacks.append(completion.fn)
        numbers.append(record.number)
    checks = tuple(not reg.fresh for reg in made)  # a fresh_class factory never returns None
    names = [reg.name for reg in made]
    parents = [step.parent for step in steps]
    nones = [reg._returned_none for reg in made]
    completed = [names[step] for step, _ in calls]

    def failed(i: int, exc: BaseException) -> None:
        """Raises what the library's resolve raises when step ``i``'s factory fails: the same
        parts, rendered as ``messages`` renders the library's."""
        path: list[str] = []
        step = i
        while step >= 0:
            path.append(names[step])
            step = parents[step]
        parts = Parts(Status.E_FACTORY_FAILED, FIX_FACTORY, names[i], path=path[::-1], reason=reason(exc).decode("utf-8"))
        raise_caused(Status.E_FACTORY_FAILED, parts, exc)

    def failed_completion(k: int, exc: BaseException, weak_targets: tuple[Any, ...]) -> None:
        """Raises what the library's resolve raises when completion callback ``k`` of the plan
        fails: a weak target without weak references fails it first, with python_weak's error."""
        try:
            for obj in weak_targets:
                python_weak(obj)
        except TypeError as no_weak:
            exc = no_weak
        parts = Parts(Status.E_FACTORY_FAILED, FIX_CALLBACK, reason=reason(exc).decode("utf-8"),
                      callback_of=completed[k], callback=numbers[k] + 1)
        raise_caused(Status.E_FACTORY_FAILED, parts, exc)

    return ((tuple(args), checks, tuple(calls)), (failed, failed_completion, made[-1].replaying),
            (*(reg.factory for reg in made), *(n for n, check in zip(nones, checks) if check), *callbacks))


def bind(prepared: Prepared, words: Sequence[c_size_t], stamp: int) -> Callable[[], Any]:
    """A function running ``prepared`` for a container whose version ``words`` summed to ``stamp``;
    it returns ``MISS`` without running when the plan may be stale (the sum is no longer ``stamp``),
    ``BUSY`` while a replay of the plan is under way."""
    shape, handlers, called = prepared
    key = (*shape, len(words))
    maker = _makers.get(key)
    if maker is None:
        if len(_makers) > 256:
            _makers.clear()
        args, checks, calls = shape
        maker = _makers[key] = _compile(list(args), checks, list(calls), len(words))
    return maker(*handlers, weakref.ref, MISS, BUSY, tuple(words), stamp, *called)


def _compile(args: list[tuple[int, ...]], checks: tuple[bool, ...],
             calls: list[tuple[int, tuple[tuple[int, bool], ...]]], nwords: int) -> Callable[..., Callable[[], Any]]:
    """Compiles ``make(failed, failed_completion, busy, weak, MISS, BUSY, words, stamp, f0, f1, ..., n..., c0,
    c1, ...)`` returning ``build()``: the configuration check (the sum of the ``nwords`` version
    words, written out: a comprehension's call costs 4x the loads), one call per step, in order,
    its arguments the earlier steps' results, then one per completion callback, its weak targets
    ``weakref.ref``s (a try per call costs nothing until it raises)."""
    factories = [f"f{i}" for i in range(len(args))]
    nones = [f"n{i}" for i, check in enumerate(checks) if check]
    callbacks = [f"c{k}" for k in range(len(calls))]
    names = [f"w{i}" for i in range(nwords)]
    configuration = " + ".join(f"{w}.value" for w in names)
    # while a replay of the plan runs (a factory of it may resolve its root again) the plan
    # declines: such a resolve goes through the library, which reports a re-entered key as a cycle
    lines = [f"def make(failed, failed_completion, busy, weak, MISS, BUSY, words, stamp, {', '.join(factories + nones + callbacks)}):",
             f"    {', '.join(names)}, = words",
             "    def build():",
             "        if busy[0]:",
             "            return BUSY",
             f"        if {configuration} != stamp:",
             "            return MISS",
             "        busy[0] = True",
             "        try:"]
    for i, deps in enumerate(args):
        lines.append("            try:")
        lines.append(f"                v{i} = f{i}({', '.join(f'v{d}' for d in deps)})")
        if checks[i]:
            lines.append(f"                if v{i} is None:")
            lines.append(f"                    raise n{i}()")
        lines.append("            except BaseException as e:")
        lines.append(f"                failed({i}, e)")
    for k, (step, targets) in enumerate(calls):
        lines.append("            try:")
        lines.append(f"                c{k}({', '.join([f'v{step}'] + [f'weak(v{t})' if is_weak else f'v{t}' for t, is_weak in targets])})")
        weak_targets = "".join(f"v{t}, " for t, is_weak in targets if is_weak)
        lines.append("            except BaseException as e:")
        lines.append(f"                failed_completion({k}, e, ({weak_targets}))")
    lines.append(f"            return v{len(args) - 1}")
    lines.append("        finally:")
    lines.append("            busy[0] = False")
    lines.append("    return build")
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<tether plan>", "exec"), namespace)
    make: Callable[..., Callable[[], Any]] = namespace["make"]
    return make
