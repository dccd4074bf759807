"""Resolves run in Python from the plan the library describes: the library decides, the binding executes.

For a graph the library can describe (``tether_plan_describe``: graph- and transient-scoped
registrations, singleton-scoped leaves taken from their caches, the root's runtime arguments,
completion callbacks declared ones whose targets are steps of the build, or resolver-form ones the
plan can answer: see ``plan_resolver``), and whose every step is a
Python registration (a made step: a simple factory, only dependency slots, passed positionally; a
cached step: a Python singleton), ``prepare`` and ``bind`` make a function that takes the cached
steps' published objects, calls the factories in the plan's order, each with the instances the
plan names, then the completion callbacks in the plan's order with their targets (a weak one as
``weakref.ref``, as the library's path gives it): no call into the library and no C -> Python
callback per resolve. ``Container.resolve`` runs it while the container's configuration (the sum
of the version words ``tether_container_versions`` gives) is the one read before describing, and,
with cached steps, the container's hit word (``tether_container_hit_word``) the token under which
the library answered those singletons as published; otherwise (or while a cached step has no object)
it resolves through the library, which makes what is missing in its place. A failure is the
library's to describe: the builder reports the failing step or completion call and the reason
(``tether_plan_failure``) and raises the status and message the library returns, so a replay
fails exactly as the library's resolve of the same graph (message, status, cause). A child
container with nothing registered in it builds what its parent builds: it binds the plan its
ancestor prepared to its own version words (``Container._prepared_plan``). A plan's value steps
(``TETHER_PLAN_STEP_VALUE``, a declared value key) make a builder that takes the resolving child's
values by key id (``build(vals)``), so a child made with values runs the plan its parent described
(``Container._resolve``: the library said each of its values takes a slot there, see
``Container._slots_for``); a value it lacks makes the builder decline (the library reports it).
"""

from __future__ import annotations

import functools
import sys
import weakref
from sys import _getframe, getrefcount
from threading import get_ident
from ctypes import addressof, byref, c_int32, c_size_t, c_uint32, sizeof, string_at
from typing import Any, Callable, Sequence

from ._cabi import (E_BUFFER_TOO_SMALL, E_FACTORY_FAILED, OK, PARAM_DEP, PARAM_WEAK, PLAN_COMPLETION_RESOLVER,
                    PLAN_INPUT_RESOLVER, PLAN_STEP_CACHED, PLAN_STEP_CONTAINER, PLAN_STEP_VALUE, Api, PlanCompletion,
                    PlanKey, PlanStep, plan_argument)
from . import aio, teardown
from ._state import PLAN_FILE, constructing, here, let_go, raise_caused, tls as _tls
from .completion import Completion
from .messages import last as last_parts
from .native_refs import python_weak
from .plan_resolver import PlanAnswers, fresh
from .registration import Registration, failed_status, reason

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


def describe_keys(api: Api, handle: int, kid: int) -> Sequence[PlanKey] | None:
    """The key table of the plan of ``kid`` (``tether_plan_keys``: what its resolver-form callbacks'
    resolvers find in the graph), or None when the library describes none now."""
    cap = 8
    for _ in range(4):
        keys = (PlanKey * cap)()
        count = c_size_t()
        status = api.tether_plan_keys(handle, kid, keys, cap, byref(count))
        if status == E_BUFFER_TOO_SMALL:
            cap = count.value
            continue
        return keys[: count.value] if status == OK and count.value else None
    return None


#: Per runtime-argument type a builder passes on as it came (see ``parameters.ARG_TYPES``): the
#: test a value passes to reach the factory unchanged; any other value goes through the library.
_ARGUMENT_TESTS = {
    "int": "type({0}) is int and -9223372036854775808 <= {0} <= 9223372036854775807",
    "float": "type({0}) is float",
    "object": "True",
}


def _simple(reg: Registration | None, root: bool) -> bool:
    """A live registration whose factory a replay can call: dependencies (and, at the root,
    runtime arguments a builder passes on unchanged) only, positional (its completion callbacks,
    of either form, as the plan describes them: see ``prepare``)."""
    return (
        reg is not None
        and reg.handle is not None
        and reg.factory is not None
        and not reg.scope.shared
        and not reg.has_teardown  # its teardown runs when the library drops it: the library makes it
        and not reg.plan.names
        and all(slot.kind == PARAM_DEP or (root and slot.arg in _ARGUMENT_TESTS) for slot in reg.plan.slots)
    )


#: What a builder returns when it does not run because the plan may be stale (see ``bind``).
MISS: Any = object()
#: What a builder returns while a replay or a library resolve started from Python is under way (on
#: this thread: a factory resolving; or on another): resolve through the library this time.
BUSY: Any = object()
#: What a builder returns when its runtime arguments are not ones it passes on unchanged: the
#: library's resolve converts them, or reports what is wrong.
SLOW: Any = object()


class Prepared:
    """A described plan made ready for ``bind``: the builder's shape, its failure handlers, the
    factories, None-checks and callbacks it calls, the registrations of its cached steps, and its
    compiled makers by word counts (a child per request binds it again: no shape hashed then).
    ``made`` and ``picks`` say where ``called`` comes from, so ``again`` makes the same plan ready
    with other registrations of the same declarations (the next child's)."""

    __slots__ = ("shape", "handlers", "called", "cached", "takes_arguments", "takes_values", "makers",
                 "made", "picks", "containers", "runner")

    def __init__(self, shape: tuple[Any, ...], handlers: tuple[Callable[..., None], Callable[..., None], list[bool]],
                 called: tuple[Callable[..., Any], ...], cached: tuple[Registration, ...],
                 made: Sequence[Registration | None] = (),
                 picks: tuple[Any, ...] | None = None) -> None:
        self.shape, self.handlers, self.called, self.cached = shape, handlers, called, cached
        self.takes_arguments = bool(shape[3])
        #: value steps: its builder takes the resolving container's values (``build(values)``, by key id)
        self.takes_values = any(k >= 0 for k in shape[4])
        self.makers: dict[tuple[int, int], Callable[..., Callable[..., Any]]] = {}
        #: per step its registration (None for a value step), and what ``called`` and ``cached`` take
        #: of them: (factory steps, None-checked steps, completion calls as (step, number), cached
        #: steps); None when ``called`` holds more (resolver-form callbacks' resolvers)
        self.made, self.picks = made, picks
        #: its container steps (``TETHER_PLAN_STEP_CONTAINER``), in step order: the builder takes
        #: their instances from the resolving child's values by key id, as value steps; a child
        #: with no C container makes the missing ones first (``make_containers``)
        self.containers: tuple[ContainerStep, ...] = ()
        #: its runner for ``aresolve`` (``runner``), compiled when first needed
        self.runner: Callable[..., Any] | None = None


def prepare(regs: dict[int, Registration], steps: Sequence[PlanStep], inputs: Sequence[int],
            completions: Sequence[PlanCompletion], api: Api, handle: int, kid: int,
            container: Any = None) -> Prepared | None:
    """The plan the library described for key ``kid`` from container ``handle``, made ready to run
    with the Python registrations ``regs`` (by handle), or None when a step is not a Python
    registration of this process that the builder can call (or, cached, a Python singleton). All
    but the version words and cached objects its builder checks (``bind``), so containers that
    build the same graph (a container and its children with nothing registered in them) share it.
    A failure is the library's to describe (``tether_plan_failure``). Resolver-form callbacks get
    a ``PlanResolver`` answering from the plan's key table, and from ``container`` (the Python
    container of ``handle``) for keys outside it; without ``container`` such a plan is not run."""
    made: list[Registration] = []
    args: list[tuple[int, ...] | None] = []  # per step: its inputs, None for a cached step
    cached: list[Registration] = []
    arguments: list[str] = []  # the root's runtime arguments' types, in order
    values: list[int] = []  # per step: the key id of a value step, else -1
    containers: list[ContainerStep] = []
    for number, step in enumerate(steps):
        values.append(step.key if step.flags & (PLAN_STEP_VALUE | PLAN_STEP_CONTAINER) else -1)
        if step.flags & PLAN_STEP_VALUE:  # the resolving container's value: no registration to call
            made.append(None)  # type: ignore[arg-type]
            args.append(None)
            continue
        reg = regs.get(step.registration or 0)
        if step.flags & PLAN_STEP_CONTAINER:  # taken as a value by the builder; made by make_containers
            if reg is None or reg.handle is None or reg.factory is None or not reg.scope.per_container or reg.plan.names:
                return None
            slots = tuple(inputs[step.first_input : step.first_input + step.slot_count])
            deps = slots[1:] if slots and slots[0] == PLAN_INPUT_RESOLVER else slots  # install()'s hidden resolver
            if (len(deps) != len(reg.plan.slots) or len(slots) - len(deps) != (1 if deps else 0)
                    or any(slot.kind != PARAM_DEP for slot in reg.plan.slots)
                    or any(i < 0 or i >= number or values[i] < 0 for i in deps)):
                return None
            path, at = [], number  # root first: what a run constructs while this step's factory awaits
            while at >= 0:
                path.append(steps[at].key)
                at = steps[at].parent
            containers.append(ContainerStep(number, step.key, reg, tuple(values[i] for i in deps), path[::-1]))
            made.append(None)  # type: ignore[arg-type]
            args.append(None)
            continue
        if step.flags & PLAN_STEP_CACHED:
            if reg is None or reg.handle is None or not reg.scope.kept_strongly:
                return None  # weak-scoped or native: the library resolves it
            made.append(reg)
            args.append(None)
            cached.append(reg)
            continue
        root = number == len(steps) - 1
        if not _simple(reg, root):
            return None
        assert reg is not None
        slots = tuple(inputs[step.first_input : step.first_input + step.slot_count])
        deps = slots[1:] if slots and slots[0] == PLAN_INPUT_RESOLVER else slots  # install()'s hidden resolver
        if len(deps) != len(reg.plan.slots) or len(slots) - len(deps) != (1 if deps else 0):
            return None
        for i, slot in zip(deps, reg.plan.slots):
            if (i < 0) != (slot.kind != PARAM_DEP) or (i < 0 and plan_argument(len(arguments)) != i):
                return None  # an argument where a dependency was declared, or out of order
            if i < 0:
                arguments.append(slot.arg or "")
        made.append(reg)
        args.append(deps)
    # per completion: its step, its targets (step, weak), or None for a resolver-form callback
    calls: list[tuple[int, tuple[tuple[int, bool], ...] | None]] = []
    for record in completions:
        if made[record.step] is None:
            return None
        given = made[record.step].callbacks
        if record.number >= len(given):
            return None  # registered again since it was described
        completion = given[record.number]
        if record.flags & PLAN_COMPLETION_RESOLVER:
            if isinstance(completion, Completion) or container is None:
                return None  # registered again since it was described
            calls.append((record.step, None))
            continue
        if not isinstance(completion, Completion):
            return None
        targets = tuple(inputs[record.first_target : record.first_target + record.target_count])
        if len(targets) != len(completion.deps) or any(not 0 <= t < len(made) for t in targets):
            return None
        calls.append((record.step, tuple((t, dep.kind == PARAM_WEAK) for t, dep in zip(targets, completion.deps))))
    checks = tuple(a is not None and not reg.fresh for a, reg in zip(args, made))  # a fresh_class factory never returns None
    root_reg = made[-1] or (containers[-1].reg if containers and containers[-1].step == len(steps) - 1 else None)
    if root_reg is None:
        return None  # the root is a value: resolving it needs no plan
    resolvers: tuple[Any, ...] = ()
    if any(targets is None for _, targets in calls):
        answers = _answers(api, handle, kid, steps, made, container)
        if answers is None:
            return None
        # what a replay makes its resolvers with (see _compile): per resolver-form call, its _call
        resolvers = (fresh, getrefcount, get_ident,
                     *((answers, k, step) for k, (step, targets) in enumerate(calls) if targets is None))
    picks = (tuple(i for i, a in enumerate(args) if a is not None), tuple(i for i, check in enumerate(checks) if check),
             tuple((record.step, record.number) for record in completions),
             tuple(i for i, (a, k) in enumerate(zip(args, values)) if a is None and k < 0))
    prepared = Prepared((tuple(args), checks, tuple(calls), tuple(arguments), tuple(values)),
                        _handlers(api, handle, kid), _called(made, picks) + resolvers, tuple(cached),
                        made, None if resolvers or containers else picks)  # (no template: see again)
    prepared.containers = tuple(containers)
    return prepared


class ContainerStep:
    """A container step of a described plan (``TETHER_PLAN_STEP_CONTAINER``): its step number, key
    id and registration, the key ids of the value and container steps its slots take, and the
    key ids from the plan's root down to it (``tether_construct_enter``'s, while it is awaited)."""

    __slots__ = ("step", "kid", "reg", "inputs", "path")

    def __init__(self, step: int, kid: int, reg: Registration, inputs: tuple[int, ...], path: Sequence[int]) -> None:
        self.step, self.kid, self.reg, self.inputs = step, kid, reg, inputs
        self.path = (c_uint32 * len(path))(*path)


#: What a run of container steps made: (key id, object, its teardowns as ``[(teardown, owner)]``), in order
Made = list[tuple[int, Any, list[Any]]]


def _inputs(step: ContainerStep, vals: dict[int, Any], made: Made) -> list[Any] | None:
    """The instances ``step``'s slots take, or None when the child lacks a value (the library reports it)."""
    args = []
    for kid in step.inputs:
        obj = vals.get(kid)
        if obj is None:
            obj = next((o for k, o, _ in made if k == kid), None)
            if obj is None:
                return None
        args.append(obj)
    return args


def with_made(vals: dict[int, Any], made: Made) -> dict[int, Any]:
    """``vals`` and what a run made, by key id: what the builder takes."""
    if not made:
        return vals
    merged = dict(vals)
    for kid, obj, _ in made:
        merged[kid] = obj
    return merged


def make_containers(prepared: Prepared, vals: dict[int, Any]) -> Made | None:
    """The container steps of ``prepared`` that ``vals`` (a child's values and container instances,
    by key id) lacks, made in step order by synchronous factories, for the builder and then the
    child (``Container._publish``), their teardowns kept with them (not noted: no library box
    holds them); None when this cannot make them (an async factory: ``aresolve`` does; a value
    missing: the library reports it), with nothing made. A factory failing fails the resolve as
    the library's would, what this made torn down."""
    made: Made = []
    for step in prepared.containers:
        if step.kid in vals:
            continue
        args = _inputs(step, vals, made)
        factory = step.reg.factory
        if args is None or hasattr(factory, aio.BEGIN):
            discard(made)
            return None
        making = getattr(factory, teardown.MADE, None)
        try:
            if making is None:
                obj, teardowns = factory(*args), []
            else:
                obj, teardowns = making(args)
            if obj is None:
                raise step.reg._returned_none()
        except BaseException as exc:
            discard(made)
            prepared.handlers[0](step.step, exc)
        made.append((step.kid, obj, teardowns))
    return made


class Contended:
    """What a runner returns when another run of the same child makes one of its container steps
    now: ``waiters``, that run's list of ``(loop, future)`` it wakes when it ends (``aresolve``
    waits on it, then runs again)."""

    __slots__ = ("kid", "waiters")

    def __init__(self, kid: int, waiters: list[Any]) -> None:
        self.kid, self.waiters = kid, waiters


def wake(waiters: list[Any]) -> None:
    """Wakes the runs that waited for a run's claims (see ``Contended``)."""
    for loop, future in waiters:
        loop.call_soon_threadsafe(aio._wake, future)


def runner(prepared: Prepared) -> Callable[..., Any]:
    """``prepared``'s runner for ``aresolve`` of a child with values and no C container, compiled
    once per plan: ``await run(child, vals, build)`` makes the container steps the child lacks, in
    step order, on the caller's task (async factories awaited there, an async generator's first
    ``__anext__`` made inline), then calls ``build`` (the plan's builder) with them, and keeps them
    in the child (``Container._publish``); what the builder returns (MISS, BUSY included), MISS when
    a value is missing (the library reports it), or ``Contended`` when another run of the child
    makes one of them now. Each step it makes is claimed in the child's ``_making`` (``setdefault``:
    no lock) until the run ends. A factory failing fails the resolve as the library's would, what
    the run made torn down (last made first); cancelled, it tears them down and is cancelled."""
    run = prepared.runner
    if run is None:
        run = prepared.runner = _compile_runner(prepared)
    return run


def _compile_runner(prepared: Prepared) -> Callable[..., Any]:
    steps = prepared.containers
    own = {step.kid: n for n, step in enumerate(steps)}
    namespace: dict[str, Any] = {"MISS": MISS, "Contended": Contended, "wake": wake, "adiscard": adiscard,
                                 "failed": prepared.handlers[0], "frames": _tls.frames, "partial": functools.partial,
                                 "finish_async": teardown.finish_async, "get_hooks": sys.get_asyncgen_hooks,
                                 "set_hooks": sys.set_asyncgen_hooks, "awaiting": aio.awaiting}
    lines = ["async def run(child, vals, build):"]
    lines += [f"    o{n} = vals.get({step.kid})" for n, step in enumerate(steps)]
    lines.append(f"    if {' and '.join(f'o{n} is not None' for n in range(len(steps)))}:")
    lines.append("        return build(vals)")  # (another run made them all)
    lines.append("    making = child._making")
    lines.append("    if making is None:")
    lines.append("        making = child._making = {}")
    lines.append("    waiters = []")  # of every claim of this run
    for n, step in enumerate(steps):
        lines.append(f"    c{n} = o{n} is None")
        lines.append(f"    if c{n}:")
        lines.append(f"        other = making.setdefault({step.kid}, waiters)")
        lines.append("        if other is not waiters:")  # another run's: let go of ours, wait for its end
        lines += [f"            if c{m}:\n                making.pop({steps[m].kid}, None)" for m in range(n)]
        lines.append("            if waiters:\n                wake(waiters)")
        lines.append(f"            return Contended({step.kid}, other)")
    lines.append("    made = []")
    lines.append("    try:")
    for n, step in enumerate(steps):
        reg = step.reg
        factory = reg.factory
        namespace[f"F{n}"], namespace[f"N{n}"] = factory, reg._returned_none
        lines.append(f"        if c{n}:")
        args = []
        for i, kid in enumerate(step.inputs):
            if kid in own:
                args.append(f"o{own[kid]}")  # an earlier container step: made or kept by now
                continue
            lines.append(f"            a{i} = vals.get({kid})")
            lines.append(f"            if a{i} is None:")
            lines.append("                await adiscard(made)")
            lines.append("                return MISS")
            args.append(f"a{i}")
        call = ", ".join(args)
        agen = getattr(factory, aio.AGEN, None)
        begin = getattr(factory, aio.BEGIN, None)
        namespace[f"P{n}"] = step.path
        making = getattr(factory, teardown.MADE, None)
        lines.append("            try:")
        if agen is not None:  # aio.wrap_factory's begin and _first, inline; the child owns its teardown
            namespace[f"F{n}"] = agen[1]
            namespace[f"E{n}"] = (f"the async generator factory for {agen[0]!r} returned without yielding an "
                                  "instance")
            lines += [f"                g = F{n}({call})",
                      # the container finalizes it (its teardown), not the loop: no asyncgen hooks (see aio)
                      "                hooks = get_hooks()",
                      "                set_hooks(None, None)",
                      "                try:",
                      "                    first = g.__anext__()",
                      "                finally:",
                      "                    set_hooks(*hooks)",
                      # awaited: this task constructs the path to it, read from this frame (aio.marks)
                      f"                at = P{n}",
                      "                awaiting.append(None)",
                      "                try:",
                      f"                    o{n} = await first",
                      "                except StopAsyncIteration:",
                      f"                    raise TypeError(E{n}) from None",
                      "                finally:",
                      "                    at = None",
                      "                    del awaiting[-1]",
                      f"                if o{n} is None:",
                      "                    await g.aclose()",
                      f"                    raise N{n}()",
                      f"                t = [(partial(finish_async, {agen[0]!r}, g), child)]"]
        elif begin is not None:
            namespace[f"B{n}"] = begin
            lines += ["                frames.append([child])",  # the container its async teardown belongs to (aio.owner)
                      "                try:",
                      f"                    w, teardowns_of = B{n}(({call}{',' if args else ''}), {{}})",
                      "                finally:",
                      "                    frames.pop()",
                      # awaited: this task constructs the path to it, read from this frame (aio.marks)
                      f"                at = P{n}",
                      "                awaiting.append(None)",
                      "                try:",
                      f"                    o{n} = await w",
                      "                finally:",
                      "                    at = None",
                      "                    del awaiting[-1]",
                      f"                if o{n} is None:",
                      f"                    raise N{n}()",
                      f"                t = teardowns_of(o{n})"]
        elif making is not None:
            namespace[f"M{n}"] = making
            lines += [f"                o{n}, t = M{n}([{call}])",
                      f"                if o{n} is None:",
                      f"                    raise N{n}()"]
        else:
            lines += [f"                o{n} = F{n}({call})",
                      f"                if o{n} is None:",
                      f"                    raise N{n}()",
                      "                t = []"]
        lines += ["            except Exception as e:",
                  "                await adiscard(made)",
                  f"                failed({step.step}, e)",
                  f"            made.append(({step.kid}, o{n}, t))"]
    lines += ["        merged = dict(vals)"]
    lines += [f"        merged[{step.kid}] = o{n}" for n, step in enumerate(steps)]
    lines += ["        try:",
              "            result = build(merged)",
              "        except BaseException:",
              "            await adiscard(made)",
              "            raise",
              "        child._publish(made)",  # (also when the builder declined: made for this child, as the library's would be)
              "    except BaseException:",
              "        await adiscard(made)",
              "        raise",
              "    finally:"]
    lines += [f"        if c{n}:\n            making.pop({step.kid}, None)" for n, step in enumerate(steps)]
    lines += ["        if waiters:\n            wake(waiters)",
              "    return result"]
    exec(compile("\n".join(lines), aio.RUNNER_FILE, "exec"), namespace)
    return namespace["run"]  # type: ignore[no-any-return]


def in_teardown_order(made: Made) -> list[Any]:
    """The teardowns of ``made`` (a run's, or what a child kept), newest entry first."""
    return [fn for _, _, teardowns in reversed(made) for fn, _ in reversed(teardowns)]


def discard(made: Made) -> None:
    """Tears down what a run made that no container keeps (a failed resolve), last made first,
    as the library's abort drops a failed resolve's instances."""
    if made:
        fns = in_teardown_order(made)
        made.clear()
        teardown.run(fns, None)


async def adiscard(made: Made) -> None:
    """``discard``, awaiting async teardowns; their failures go to ``sys.unraisablehook``."""
    if not made:
        return
    fns = in_teardown_order(made)
    made.clear()
    gathering = teardown.gather(None, True)
    try:
        teardown.run(fns, gathering)
    finally:
        teardown.stop_gathering()
    if gathering.queue:
        await teardown.run_queued(gathering)
    for exc in gathering.errors:
        teardown.unraisable(exc, "tether: tearing down what a failed aresolve made failed")


#: A described step's size in 8-byte words (its registration handle is the first)
_STEP_WORDS = sizeof(PlanStep) // 8
assert sizeof(PlanStep) % 8 == 0 and PlanStep.registration.offset == 0


def identity(described: Described, own: dict[int, Registration]) -> tuple[tuple[Any, ...], list[int]] | None:
    """What says that a container with its own registrations ``own`` (by handle) got the same plan
    described as another did: the description as it came, the handles of its steps that are ``own``
    ones replaced by those registrations' declarations (``Registration.declared``); and the steps'
    handles. None when the plan has no steps of ``own``: nothing to tell apart."""
    steps, inputs, completions = described
    raw = bytearray(string_at(addressof(steps[0]), len(steps) * sizeof(PlanStep)))
    words = memoryview(raw).cast("Q")
    handles = words[0::_STEP_WORDS].tolist()
    declared = []
    for i, handle in enumerate(handles):
        reg = own.get(handle)
        if reg is not None:
            words[i * _STEP_WORDS] = 0
            declared.append((i, reg.declared()))
    words.release()
    if not declared:
        return None
    ends = string_at(addressof(completions[0]), len(completions) * sizeof(PlanCompletion)) if completions else b""
    return (bytes(raw), tuple(inputs), ends, tuple(declared)), handles


def template(prepared: Prepared, own: Sequence[int]) -> Prepared:
    """``prepared`` holding none of the registrations of steps ``own`` (a child's, that ``again``
    puts in), nor what they call: kept for the next child whose plan has the same ``identity``."""
    made = [None if i in own else reg for i, reg in enumerate(prepared.made)]
    kept = Prepared(prepared.shape, prepared.handlers, (), (), made, prepared.picks)
    kept.handlers = None  # type: ignore[assignment]  # (they name the child's container)
    kept.makers = prepared.makers
    return kept


def again(prepared: Prepared, handles: list[int], own: dict[int, Registration], api: Api, handle: int,
          kid: int) -> Prepared | None:
    """``prepared`` (a ``template``) for container ``handle``, whose plan of ``kid`` has the same
    ``identity``: its steps of handles in ``own`` (its registrations, of the same declarations)
    take those; None when it cannot be (a registration replaced meanwhile)."""
    picks = prepared.picks
    made = [own.get(h) or reg for h, reg in zip(handles, prepared.made)]
    if picks is None or any(reg is not None and (reg.factory is None or reg.handle is None) for reg in made):
        return None
    redone = Prepared(prepared.shape, _handlers(api, handle, kid), _called(made, picks),  # type: ignore[arg-type]
                      tuple(made[i] for i in picks[3]), made, picks)
    redone.makers = prepared.makers  # (the same shape: its compiled makers serve)
    return redone


def _called(made: Sequence[Registration | None], picks: tuple[Any, ...]) -> tuple[Callable[..., Any], ...]:
    """What a builder of ``made`` calls (see ``_compile``): the made steps' factories, the
    None-checks, then the completion callbacks (a declared one's function)."""
    factory_steps, checked, completions, _ = picks
    callbacks = [made[step].callbacks[number] for step, number in completions]  # type: ignore[union-attr]
    return (*(made[i].factory for i in factory_steps), *(made[i]._returned_none for i in checked),  # type: ignore[union-attr]
            *(fn.fn if isinstance(fn, Completion) else fn for fn in callbacks))


def _handlers(api: Api, handle: int, kid: int) -> tuple[Callable[..., None], Callable[..., None], list[bool]]:
    """A builder's failure handlers for the plan of ``kid`` from container ``handle`` (``failed.where``
    names the plan: see ``replaying``), and the count of constructions under way it checks."""
    report = api.tether_plan_failure

    def failed(i: int, exc: BaseException) -> None:
        """Raises what the library's resolve raises when step ``i``'s factory fails."""
        raise_caused(report(handle, kid, i, -1, reason(exc)), last_parts(api), exc)

    def failed_completion(k: int, exc: BaseException, weak_targets: tuple[Any, ...]) -> None:
        """Raises what the library's resolve raises when completion call ``k`` of the plan fails: a
        weak target without weak references fails it first, with python_weak's error."""
        exc = weak_refusal(exc, weak_targets)
        status = report(handle, kid, 0, k, reason(exc))
        # what the callback would return to the library's resolve (a refused edge stays a retain cycle)
        raise_caused(failed_status(exc) if status == E_FACTORY_FAILED else status, last_parts(api), exc)

    failed.where = (handle, kid)  # type: ignore[attr-defined]
    return failed, failed_completion, constructing


def weak_refusal(exc: BaseException, weak_targets: tuple[Any, ...]) -> BaseException:
    """What a failed declared completion call reports: python_weak's error when a weak target has
    no weak references (``weakref.ref``'s own says less), else ``exc``."""
    try:
        for obj in weak_targets:
            python_weak(obj)
    except TypeError as no_weak:
        return no_weak
    return exc


def _unkept_count(refs: Callable[[Any], int] = getrefcount) -> int:
    """What ``refs(r)`` reads for a local ``r`` nothing else holds: 2 up to CPython 3.13; 3.14
    may borrow the argument's reference and read 1, and then a kept resolver would read 2."""
    r = object()
    return refs(r)


_UNKEPT = _unkept_count()


def _answers(api: Api, handle: int, kid: int, steps: Sequence[PlanStep], made: Sequence[Registration | None],
             container: Any) -> PlanAnswers | None:
    """What the resolvers of the plan's resolver-form callbacks answer from: its key table
    (``tether_plan_keys``) by the encoded keys of the Python registrations of its steps; None when
    the library describes none now, or a step of it is not one of the plan's (configuration changed)."""
    keys = describe_keys(api, handle, kid)
    if keys is None:
        return None
    table: dict[bytes, tuple[int, int]] = {}
    for entry in keys:
        reg = made[entry.step] if entry.step < len(made) else None
        if reg is None or steps[entry.step].key != entry.key:
            return None
        table[reg.raw] = (entry.step, entry.closes)
    return PlanAnswers(table, len(steps), api, handle, kid, weakref.ref(container))


def bind(prepared: Prepared, words: Sequence[c_size_t], stamp: int,
         cache_words: Sequence[c_size_t] = (), cache_stamp: int = 0) -> Callable[[], Any]:
    """A function running ``prepared`` for a container whose version ``words`` summed to ``stamp``
    and (with cached steps) whose hit words summed to ``cache_stamp`` when the singletons in its
    registrations' cells were confirmed published; it returns ``MISS`` without running when the plan
    may be stale (a sum moved) or a cached step's cell is empty (the library resolves then)."""
    cached = prepared.cached
    ncache = len(cache_words) if cached else 0
    maker = prepared.makers.get((len(words), ncache))
    if maker is None:
        shape = prepared.shape
        key = (*shape, len(words), ncache)
        maker = _makers.get(key)
        if maker is None:
            if len(_makers) > 256:
                _makers.clear()
            args, checks, calls, arguments, values = shape
            maker = _makers[key] = _compile(list(args), checks, list(calls), arguments, len(words), ncache, values)
        prepared.makers[len(words), ncache] = maker
    cells = tuple([reg.cached for reg in cached]) if cached else ()
    return maker(*prepared.handlers, weakref.ref, MISS, BUSY, SLOW, tuple(words), stamp, tuple(cache_words[:ncache]),
                 cache_stamp, *cells, *prepared.called)


def _compile(args: list[tuple[int, ...] | None], checks: tuple[bool, ...],
             calls: list[tuple[int, tuple[tuple[int, bool], ...] | None]], arguments: tuple[str, ...], nwords: int,
             ncache: int, values: tuple[int, ...] = ()) -> Callable[..., Callable[..., Any]]:
    """Compiles ``make(failed, failed_completion, busy, weak, MISS, BUSY, SLOW, words, stamp, cache_words, cache_stamp,
    s0, s1, ..., f0, f1, ..., n..., c0, c1, ...)`` returning ``build()``: the cached steps' objects
    read from their cells (``s*``), then the configuration check (the sum of the ``nwords``
    version words, and of the ``ncache`` cache words, written out: a comprehension's call costs 4x
    the loads), one call per made step, in order, its arguments the earlier steps' results, then
    one per completion callback, its weak targets ``weakref.ref``s (a try per call costs nothing
    until it raises); a resolver-form callback is called with a ``PlanResolver`` (made by ``fresh``
    from its ``K*``, after the callbacks), opened for the call and closed when it returns, then kept
    for the next replay unless the callback kept it (``refs``: its reference count). With runtime ``arguments`` (their types), ``build(*a)`` takes them and
    returns ``SLOW`` unless they are as many and each passes its type's test. With value steps
    (``values``: per step its key id, or -1), ``build(vals)`` takes the resolving container's values
    by key id and returns ``MISS`` when one is missing (the library's resolve reports it)."""
    value_of = dict(enumerate(values))

    def let_go_steps(n: int) -> str:
        """A failure lets go of steps ``0..<n`` as a failed resolve does, last made first (an
        assignment chain assigns left to right; a step not reached yet is unbound, harmlessly)."""
        return " = ".join([f"v{i}" for i in reversed(range(n))] + ["None"]) if n else "pass"

    made = [i for i, a in enumerate(args) if a is not None]
    cells = [f"s{i}" for i, a in enumerate(args) if a is None and value_of.get(i, -1) < 0]
    factories = [f"f{i}" for i in made]
    nones = [f"n{i}" for i in made if checks[i]]
    callbacks = [f"c{k}" for k in range(len(calls))]
    resolves = any(targets is None for _, targets in calls)  # a resolver-form callback: its resolver made inline
    if resolves:
        callbacks += ["fresh", "refs", "ident", *(f"K{k}" for k, (_, targets) in enumerate(calls) if targets is None)]
    names = [f"w{i}" for i in range(nwords)]
    cache_names = [f"x{i}" for i in range(ncache)]
    configuration = " + ".join(f"{w}.value" for w in names)
    # while anything is under construction (a factory of a replay may resolve a key it constructs)
    # the plan declines: such a resolve goes through the library, which reports a re-entered key as a cycle
    factory_lines: dict[int, int] = {}  # the line of each step's factory call: its step
    lines = [f"def make(failed, failed_completion, busy, weak, MISS, BUSY, SLOW, words, stamp, cache_words, cache_stamp, "
             f"{', '.join(cells + factories + nones + callbacks)}):",
             f"    {', '.join(names)}, = words"]
    if cache_names:
        lines.append(f"    {', '.join(cache_names)}, = cache_words")
    for k, (_, targets) in enumerate(calls):
        if targets is None:  # its resolvers not in use (a list: pop and append are atomic between threads)
            lines.append(f"    p{k} = [fresh(K{k})]")
    takes_values = any(k >= 0 for k in values)
    lines.append("    def build(*a):" if arguments else "    def build(vals):" if takes_values else "    def build():")
    if arguments:
        names_a = [f"a{n}" for n in range(len(arguments))]
        lines.append(f"        if len(a) != {len(arguments)}:")
        lines.append("            return SLOW")
        lines.append(f"        {', '.join(names_a)}, = a")
        lines.append(f"        if not ({' and '.join(_ARGUMENT_TESTS[kind].format(n) for n, kind in zip(names_a, arguments))}):")
        lines.append("            return SLOW")
    lines.append("        if busy and here():")  # this thread constructs (others' change nothing)
    lines.append("            return BUSY")
    for i, a in enumerate(args):
        if a is None and value_of.get(i, -1) >= 0:
            lines.append(f"        v{i} = vals.get({value_of[i]})")
            lines.append(f"        if v{i} is None:")
            lines.append("            return MISS")
        elif a is None:  # first the object, then the words: they say it was still published (see Container)
            lines.append(f"        v{i} = s{i}.obj")
            lines.append(f"        if v{i} is None:")
            lines.append("            return MISS")
    lines.append(f"        if {configuration} != stamp:")
    lines.append("            return MISS")
    if cache_names:
        lines.append(f"        if {' + '.join(f'{x}.value' for x in cache_names)} != cache_stamp:")
        lines.append("            return MISS")
    lines.append("        busy.append(None)")  # a count: another thread's replay ending leaves this one's
    lines.append("        try:")
    for i in made:
        deps = args[i]
        assert deps is not None
        lines.append("            try:")
        factory_lines[len(lines) + 1] = i  # (line numbers count from 1)
        lines.append(f"                v{i} = f{i}({', '.join(f'v{d}' if d >= 0 else f'a{plan_argument(d)}' for d in deps)})")
        if checks[i]:
            lines.append(f"                if v{i} is None:")
            lines.append(f"                    raise n{i}()")
        lines.append("            except BaseException as e:")
        lines.append("                let_go(e)")
        lines.append(f"                {let_go_steps(i)}")
        lines.append(f"                failed({i}, e)")
    if resolves:  # what the resolvers answer from: every step's object, then the strong edges they add, what else they made
        lines.append(f"            vs = [{''.join(f'v{i}, ' for i in range(len(args)))}None, None]")
        lines.append("            t = ident()")
    for k, (step, targets) in enumerate(calls):
        if targets is None:  # closed when it returns; on a failure the traceback keeps no object alive
            lines.append("            try:")
            lines.append(f"                r = p{k}.pop()")
            lines.append("            except IndexError:")  # another thread's replay has it
            lines.append(f"                r = fresh(K{k})")
            lines.append("            r._values = vs")
            lines.append("            r._thread = t")
            lines.append("            try:")
            lines.append(f"                c{k}(r, v{step})")
            lines.append("            except BaseException as e:")
            lines.append("                let_go(e)")
            lines.append("                r._values = None")
            lines.append("                vs.clear()")
            lines.append(f"                {let_go_steps(len(args))}")
            lines.append(f"                failed_completion({k}, e, ())")
            lines.append("            r._values = None")
            lines.append(f"            if refs(r) == {_UNKEPT}:")  # the callback kept it otherwise
            lines.append(f"                p{k}.append(r)")
            continue
        lines.append("            try:")
        lines.append(f"                c{k}({', '.join([f'v{step}'] + [f'weak(v{t})' if is_weak else f'v{t}' for t, is_weak in targets])})")
        weak_targets = "".join(f"v{t}, " for t, is_weak in targets if is_weak)
        lines.append("            except BaseException as e:")
        lines.append("                let_go(e)")
        if weak_targets:
            lines.append(f"                e = weak_refusal(e, ({weak_targets}))")
        lines.append(f"                {let_go_steps(len(args))}")
        lines.append(f"                failed_completion({k}, e, ())")
    if resolves:  # a frame kept past the callback (by an exception it caught) keeps this one: let go as a graph does
        lines.append("            vs.clear()")
    lines.append(f"            return v{len(args) - 1}")
    lines.append("        finally:")
    lines.append("            del busy[-1]")  # (atomic as pop(), and cheaper: no method call)
    lines.append("    return build")
    namespace: dict[str, Any] = {"let_go": let_go, "weak_refusal": weak_refusal, "here": here}
    exec(compile("\n".join(lines), PLAN_FILE, "exec"), namespace)
    make: Callable[..., Callable[[], Any]] = namespace["make"]
    build = next(code for code in make.__code__.co_consts if getattr(code, "co_name", "") == "build")
    _factory_lines[build] = factory_lines
    return make


#: Per compiled builder's code, the line of each step's factory call and its step (see ``replaying``)
_factory_lines: weakref.WeakKeyDictionary[Any, dict[int, int]] = weakref.WeakKeyDictionary()


def replaying() -> tuple[int, int, int] | None:
    """What a replay running on this thread is constructing, as ``tether_replay_enter`` takes it:
    (the handle of the container its plan was described from, the root's key id, the step whose
    factory runs); None when no builder is on this thread's stack, or it runs no factory now (its
    completion callbacks run after every factory returned). At most one is: a resolve nested in
    a replay goes to the library (``_state.constructing``). Read from the stack, so a replay pays
    nothing for it: only a call into the library made while something is under way does."""
    frame = _getframe(1)
    while frame is not None:
        lines = _factory_lines.get(frame.f_code)
        if lines is not None:
            step = lines.get(frame.f_lineno)
            return None if step is None else (*frame.f_locals["failed"].where, step)
        frame = frame.f_back
    return None


def enter(api: Api) -> bool:
    """Before a call into the library made while something is under construction (``_state.constructing``):
    tells the library what this thread's replay constructs, if one runs a factory here
    (``tether_replay_enter``); whether a ``tether_replay_leave`` is owed after the call."""
    where = replaying()
    return where is not None and api.tether_replay_enter(*where) == OK


class Constructing:
    """``with Constructing(api):`` around a library call made from Python that may run factories:
    marks it under construction (``_state.constructing``), first telling the library what this
    thread's replay constructs if one runs a factory here (``enter``; left again after the call).
    Read the call's message inside the block: leaving the replay resets the thread's last error.
    The function holding the block goes in ``_state.constructing_calls`` (``_state.here``)."""

    __slots__ = ("api", "entered")

    def __init__(self, api: Api) -> None:
        self.api = api
        self.entered = False

    def __enter__(self) -> None:
        self.entered = bool(constructing) and enter(self.api)
        constructing.append(None)

    def __exit__(self, *_exc: object) -> None:
        del constructing[-1]
        if self.entered:
            self.api.tether_replay_leave()
