"""Resolves replayed in Python: the library records a key's plan and the binding runs it.

For a graph the library can describe (``tether_plan_describe``: graph- and transient-scoped
registrations, no completion callbacks, no runtime arguments), and whose every step is a Python
registration with a simple factory (only dependency slots, passed positionally), ``builder``
makes a function that calls the factories in the plan's order, each with the instances the plan
names: no call into the library and no C -> Python callback per resolve. ``Container.resolve``
runs it while the container's configuration (the sum of the version words
``tether_container_versions`` gives) is the one read before describing, the registrations are
those of ``_state.generation``, and the resolve is not nested in another on its thread;
otherwise it resolves through the library, as always.

A replay behaves as the library's resolve of the same graph: the same factory calls in the same
order, the same sharing, nothing kept by the container afterwards, and a factory that raises or
returns None fails the resolve with the same ``FactoryError`` (message, status and cause).
"""

from __future__ import annotations

from ctypes import byref, c_int32, c_size_t
from typing import Any, Callable, Sequence

from ._native import E_BUFFER_TOO_SMALL, OK, PARAM_DEP, PLAN_INPUT_RESOLVER, Api, PlanStep
from ._state import raise_caused
from .errors import Status
from .registration import Registration, reason
from .scope import Scope

#: Generated builders by shape (see ``_shape``), so equal graphs compile once.
_makers: dict[tuple[Any, ...], Callable[..., Callable[[], Any]]] = {}


def describe(api: Api, handle: int, kid: int) -> tuple[Sequence[PlanStep], Sequence[int]] | None:
    """The plan of key ``kid`` from container ``handle`` (steps, inputs), or None if there is none."""
    step_cap, input_cap = 16, 64
    for _ in range(4):  # the plan may grow between calls: ask again with the sizes it needs
        steps = (PlanStep * step_cap)()
        inputs = (c_int32 * input_cap)()
        step_count, input_count = c_size_t(), c_size_t()
        status = api.tether_plan_describe(handle, kid, steps, step_cap, inputs, input_cap, byref(step_count), byref(input_count))
        if status == E_BUFFER_TOO_SMALL:
            step_cap, input_cap = step_count.value, input_count.value
            continue
        if status != OK or step_count.value == 0:  # an error is the library's resolve to report
            return None
        return steps[: step_count.value], inputs[: input_count.value]
    return None


def _simple(reg: Registration | None) -> bool:
    """A live registration whose factory a replay can call: dependencies only, positional, no callbacks."""
    return (
        reg is not None
        and reg.handle is not None
        and reg.factory is not None
        and reg.scope in (Scope.GRAPH, Scope.TRANSIENT)
        and len(reg.callables) == 1  # the factory trampoline, no completion callbacks
        and not reg.plan.names
        and all(slot.kind == PARAM_DEP for slot in reg.plan.slots)
    )


def builder(regs: dict[int, Registration], steps: Sequence[PlanStep], inputs: Sequence[int]) -> Callable[[], Any] | None:
    """A function running the described plan with the Python registrations ``regs`` (by handle),
    or None when a step is not a simple Python registration of this process."""
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
    checks = tuple(not reg.fresh for reg in made)  # a fresh_class factory never returns None
    shape = (tuple(args), checks)
    maker = _makers.get(shape)
    if maker is None:
        if len(_makers) > 256:
            _makers.clear()
        maker = _makers[shape] = _compile(args, checks)
    names = [reg.name for reg in made]
    parents = [step.parent for step in steps]
    nones = [reg._returned_none for reg in made]

    def failed(i: int, exc: BaseException) -> None:
        """Raises what the library's resolve raises when step ``i``'s factory fails."""
        message = f'factory for "{names[i]}" returned NULL: {reason(exc).decode("utf-8")}'
        path: list[str] = []
        step = i
        while step >= 0:
            path.append(f'"{names[step]}"')
            step = parents[step]
        if len(path) > 1:
            message += f" (while resolving {' -> '.join(reversed(path))})"
        raise_caused(Status.E_FACTORY_FAILED, message, exc)

    return maker(failed, *(reg.factory for reg in made), *(n for n, check in zip(nones, checks) if check))


def _compile(args: list[tuple[int, ...]], checks: tuple[bool, ...]) -> Callable[..., Callable[[], Any]]:
    """Compiles ``make(failed, f0, f1, ..., n...)`` returning ``build()``: one call per step, in
    order, its arguments the earlier steps' results (a try per step costs nothing until it raises)."""
    factories = [f"f{i}" for i in range(len(args))]
    nones = [f"n{i}" for i, check in enumerate(checks) if check]
    lines = [f"def make(failed, {', '.join(factories + nones)}):", "    def build():"]
    for i, deps in enumerate(args):
        lines.append("        try:")
        lines.append(f"            v{i} = f{i}({', '.join(f'v{d}' for d in deps)})")
        if checks[i]:
            lines.append(f"            if v{i} is None:")
            lines.append(f"                raise n{i}()")
        lines.append("        except BaseException as e:")
        lines.append(f"            failed({i}, e)")
    lines.append(f"        return v{len(args) - 1}")
    lines.append("    return build")
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<tether plan>", "exec"), namespace)
    make: Callable[..., Callable[[], Any]] = namespace["make"]
    return make
