"""The conformance corpus (conformance/scenarios.json) through the public Python API, on containers
whose plans the binding replays ("python-plans") and on containers whose every resolve goes through the
library ("python-library": a trace hook set, see conftest.container; "python-noplans", TETHER_NO_PLANS=1,
before branch noplansoff): every scenario's trace must equal the one in the data.

The generic factory, callbacks and actions are described in conformance/README.md; this file
implements them once for Python. `python3 test_conformance.py [NAME...]` prints actual traces.
"""

from __future__ import annotations

import functools
import gc
import json
import sys
import threading
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, container

import tether
from tether import Scope

CORPUS = json.loads((REPO_ROOT / "conformance" / "scenarios.json").read_text())
PATHS = ("python-plans", "python-library")
SCOPES = {scope.name.lower(): scope for scope in Scope}  # the corpus's names (a new scope needs nothing here)
STATUS = {
    tether.NotFoundError: "NOT_FOUND", tether.CycleError: "CYCLE", tether.RetainCycleError: "RETAIN_CYCLE",
    tether.FactoryError: "FACTORY_FAILED", tether.ArgumentMismatchError: "ARGUMENT_MISMATCH",
    tether.ExpiredError: "EXPIRED", tether.WrongContextError: "WRONG_CONTEXT",
    tether.InvalidHandleError: "INVALID_HANDLE", tether.InvalidArgumentError: "INVALID_ARGUMENT",
}


class Unsupported(Exception):
    """A scenario uses something the Python API cannot express (the data must say `skip`)."""


def status_of(exc: BaseException) -> str:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    raise exc


def applies(table: dict[str, str] | None, path: str) -> str | None:
    """The reason `table` ("known"/"skip") gives for `path`: exact name, or a prefix ending in '*'."""
    for pattern, reason in (table or {}).items():
        if pattern == path or (pattern.endswith("*") and path.startswith(pattern[:-1])):
            return reason
    return None


class Obj:
    """What the generic factory makes: a name (key + ordinal) and every input it was given, then
    what its callbacks took, by index. A Python object holds its dependencies itself, so this one
    lets go of them as the design orders an instance's edges: its destructor first, then its
    dependencies, last edge first (README, "Per-request containers and teardown"): its LAZY slots'
    answers, then what its callbacks took, newest first, then its inputs in the reverse of slot order
    (a list's items last first)."""

    def __init__(self, name: str, inputs: dict[int, tuple[str, Any]], on_drop: Any) -> None:
        self.name = name
        self.inputs = inputs
        self.on_drop = on_drop

    def __del__(self) -> None:
        self.on_drop()
        inputs = sorted(self.inputs.items())
        # A LAZY slot's answer first: the library's lazy cell lets go of it before the instance's
        # other edges (`ReleaseQueue.queue`), the object's own Lazy is the cell here.
        lazies = [value for _, (kind, value) in inputs if kind == "lazy"]
        held = [value for _, (kind, value) in inputs if kind != "lazy"]
        self.inputs = inputs = {}
        while lazies:
            lazies.pop()
        while held:
            held.pop()  # a list goes with its items, last first (CPython's list dealloc)


class Run:
    """One scenario on one path: containers, variables, flags and the trace."""

    def __init__(self, scenario: dict[str, Any], plans: bool) -> None:
        self.plans = plans
        self.trace: list[str] = []
        self.containers: dict[str, tether.Container] = {}
        self.vars: dict[str, Any] = {}
        self.flags: set[str] = set()
        self.serial: Counter[str] = Counter()
        self.lock = threading.RLock()
        self.counting: Counter[str] | None = None  # set while threads run
        self.made: set[str] = set()
        self.dropped: list[str] = []
        self.setups = CORPUS.get("setups", {})
        self.new_container("root", None)

    # -- events ---------------------------------------------------------------------------------

    def event(self, kind: str, key: str, text: str) -> None:
        """A factory, callback or destructor event: traced, or counted as "<kind> <key>" in threads."""
        with self.lock:
            if self.counting is not None:
                self.counting[f"{kind} {key}"] += 1
            else:
                self.trace.append(text)

    def dropped_obj(self, key: str, name: str) -> None:
        with self.lock:
            self.dropped.append(name)
        self.event("drop", key, f"drop {name}")

    def new_container(self, name: str, parent: str | None) -> None:
        self.containers[name] = container(self.containers[parent] if parent else None, plans=self.plans)

    # -- the generic factory and callbacks ------------------------------------------------------

    def show(self, kind: str, value: Any) -> str:
        if kind == "dep":
            return value.name
        if kind == "weak":
            target = value()
            return "~" + target.name if target is not None else "~expired"
        if kind in ("lazy", "weak_lazy"):
            return f"{kind}:{value[1]}"
        if kind == "all":
            return "[" + ",".join(item.name for item in value) + "]"
        if kind == "factory":
            return f"factory:{value[1]}"
        if kind == "arg":
            return json.dumps(value)
        return kind

    def run_ops(self, ops: list[dict[str, Any]], resolver: Any, inputs: dict[int, tuple[str, Any]]
                ) -> tuple[list[str], BaseException | None]:
        """Runs ops, adding what they took to `inputs`; returns what they did and the failure a
        `propagate` op ends with."""
        shown = []
        for op in ops:
            try:
                if "get" in op:
                    obj = resolver.get(op["get"])
                    inputs[len(inputs)] = ("dep", obj)
                    shown.append(f"get {op['get']}={obj.name}")
                elif "weak" in op:
                    ref = resolver.weak(op["weak"])
                    inputs[len(inputs)] = ("weak", ref)
                    shown.append(f"weak {op['weak']}={self.show('weak', ref)}")
                elif "resolve" in op:
                    obj = self.containers[op.get("in", "root")].resolve(op["resolve"])
                    inputs[len(inputs)] = ("dep", obj)
                    shown.append(f"resolve {op['resolve']}={obj.name}")
                elif "call" in op:
                    shown.append(f"call {op['call']}={self.peek_path(inputs, str(op['call']))}")
                else:
                    raise Unsupported(f"op {op}")
            except tether.TetherError as exc:
                exc.__traceback__ = None  # frames of the failed call would keep objects for the collector
                shown.append(f"{next(iter(op))} {next(iter(op.values()))}!{status_of(exc)}")
                if op.get("else_weak") and "get" in op:
                    try:  # a fallback that fails too is not traced (the C runner and the model)
                        ref = resolver.weak(op["get"])
                    except tether.TetherError as again:
                        again.__traceback__ = None
                    else:
                        inputs[len(inputs)] = ("weak", ref)
                        shown.append(f"weak {op['get']}={self.show('weak', ref)}")
                if op.get("propagate"):
                    return shown, exc
        return shown, None

    def failing(self, spec: dict[str, Any]) -> str | None:
        if "fail" not in spec:
            return None
        when = spec.get("fail_when")
        return spec["fail"] if when is None or when in self.flags else None

    def factory(self, key: str, spec: dict[str, Any], kinds: list[tuple[str, Any]]) -> Any:
        def make(*values: Any) -> Any:
            inputs: dict[int, tuple[str, Any]] = {}
            for (kind, extra), value in zip(kinds, values):
                inputs[len(inputs)] = (kind, (value, extra) if kind in ("lazy", "weak_lazy", "factory") else value)
            shown = ",".join(self.show(k, v) for k, v in inputs.values())
            ops, error = self.run_ops(spec.get("ops", []), None, inputs)
            tail = "".join(f"; {o}" for o in ops)
            message = self.failing(spec)
            if message is not None or error is not None:
                self.event("fail", key, f"fail {key}({shown}){tail}")
                raise error or RuntimeError(message)
            with self.lock:
                self.serial[key] += 1
                name = f"{key}{self.serial[key]}"
                self.made.add(name)
            obj = Obj(name, inputs, functools.partial(self.dropped_obj, key, name))
            self.event("make", key, f"make {name}({shown}){tail}")
            return obj

        return make

    def callback(self, key: str, index: int, count: int, spec: dict[str, Any]) -> Any:
        suffix = f"/{index + 1}" if count > 1 else ""

        def finish(obj: Obj, head: str, ops: list[str], error: BaseException | None = None) -> None:
            message = self.failing(spec)
            tail = "".join(f"; {o}" for o in ops) + ("; fail" if message is not None else "")
            self.event("complete", key, f"{head}{tail}")
            if message is not None:
                raise RuntimeError(message)
            if error is not None:
                raise error

        if "targets" in spec:
            def declared(obj: Obj, *targets: Any) -> None:
                shown = []
                for target, value in zip(spec["targets"], targets):
                    kind = "weak" if target.startswith("weak:") else "dep"
                    obj.inputs[len(obj.inputs)] = (kind, value)
                    shown.append(self.show(kind, value))
                finish(obj, f"complete {obj.name}{suffix}({','.join(shown)})", [])

            deps = [tether.weak(t[5:]) if t.startswith("weak:") else t for t in spec["targets"]]
            return tether.complete(declared, deps=deps)

        def resolver_form(r: Any, obj: Obj) -> None:
            finish(obj, f"complete {obj.name}{suffix}", *self.run_ops(spec.get("ops", []), r, obj.inputs))

        return resolver_form

    def register(self, step: dict[str, Any]) -> None:
        key = step["register"]
        deps: list[Any] = []
        kinds: list[tuple[str, Any]] = []
        for slot in step.get("deps", []):
            kind, _, target = slot.partition(":") if ":" in slot else ("dep", "", slot)
            if slot in ("i64", "f64", "str", "ptr", "context", "resolver"):
                if slot in ("i64", "f64", "str"):
                    deps.append({"i64": int, "f64": float, "str": str}[slot])
                    kinds.append(("arg", None))
                    continue
                raise Unsupported(f"slot {slot}")
            maker = {"dep": lambda k: k, "weak": tether.weak, "lazy": tether.lazy, "weak_lazy": tether.weak_lazy,
                     "all": tether.all, "factory": tether.factory}
            if kind not in maker:
                raise Unsupported(f"slot {slot}")
            deps.append(maker[kind](target))
            kinds.append((kind, target))
        callbacks = step.get("complete", [])
        c = self.containers[step.get("in", "root")]
        mode = step.get("mode", "register")
        if mode != "register" and callbacks:
            raise Unsupported(f"{mode} with completion callbacks")
        if mode == "override":
            c.override(key, factory=self.factory(key, step, kinds), deps=deps, scope=SCOPES[step.get("scope", "graph")])
            return
        if mode == "decorate":  # the instance is the first slot (see conformance/README.md)
            if not deps or deps[0] != key:
                raise Unsupported("a decorator whose first slot is not its key")
            self.outcome(step, f"register {key}", lambda: c.decorate(key, self.factory(key, step, kinds), deps=deps[1:]) or True)
            return
        c.register(key, self.factory(key, step, kinds), deps=deps, scope=SCOPES[step.get("scope", "graph")],
                   on_complete=[self.callback(key, i, len(callbacks), cb) for i, cb in enumerate(callbacks)])

    # -- actions --------------------------------------------------------------------------------

    def target(self, kind: str, value: Any) -> Any:
        """The object an input stands for: a dep's object, an upgraded weak, a provider's result."""
        if kind == "dep":
            return value
        if kind == "weak":
            return value()
        if kind in ("lazy", "weak_lazy"):
            return value[0]()
        raise Unsupported(f"peek into a {kind} input")

    def peek_input(self, inputs: dict[int, tuple[str, Any]], index: int) -> str:
        kind, value = inputs[index]
        if kind not in ("dep", "weak", "lazy", "weak_lazy"):
            return self.show(kind, value)
        try:
            target = self.target(kind, value)
        except tether.TetherError as exc:
            exc.__traceback__ = None
            return "!" + status_of(exc)
        return target.name if target is not None else ("expired" if kind == "weak" else "none")

    def peek_path(self, inputs: dict[int, tuple[str, Any]], path: str) -> str:
        """Follows inputs along `path` ("0.1": input 0's input 1) and shows the last input."""
        *steps, last = (int(i) for i in path.split("."))
        for index in steps:
            inputs = self.target(*inputs[index]).inputs
        return self.peek_input(inputs, last)

    def outcome(self, step: dict[str, Any], head: str, call: Any) -> Any:
        """Runs `call`; on failure appends `head: STATUS` and checks the message fragments (what
        the failed resolve made is gone by then, without the collector: the exception's traceback
        keeps no object alive). Returns the result, None after a failure."""
        try:
            return_value = call()
        except tether.TetherError as exc:
            status, message = status_of(exc), str(exc)
        else:
            if step.get("message"):
                self.trace.append("succeeded, but a message was expected")
            return return_value
        self.trace.append(f"{head}: {status}")
        for fragment in step.get("message", []):
            if fragment not in message:
                self.trace.append(f"message lacks {fragment!r}: {message}")
        for fragment in step.get("message_lacks", []):
            if fragment in message:
                self.trace.append(f"message has {fragment!r}: {message}")
        return None

    def build(self, step: dict[str, Any], op: str, call: Any) -> None:
        """A `resolve` or `factory` action: `call(args)` with the step's runtime arguments, traced
        as "op ARG(args) = NAME", the result kept under `as` (else let go of at once)."""
        args = step.get("args", [])
        head = f"{op} {step[op]}" + (f"({','.join(json.dumps(a) for a in args)})" if args else "")
        obj = self.outcome(step, head, lambda: call(args))
        if obj is not None:
            self.trace.append(f"{head} = {obj.name}")
            if "as" in step:
                self.vars[step["as"]] = obj
            del obj

    def step(self, step: dict[str, Any]) -> None:
        if "use" in step:
            for inner in self.setups[step["use"]]:
                self.step(inner)
        elif "register" in step:
            self.register(step)
        elif "resolve" in step:
            c = self.containers[step.get("in", "root")]
            self.build(step, "resolve", lambda args: c.resolve(step["resolve"], *args))
        elif "factory" in step:
            var, _, index = step["factory"].partition(".")
            _kind, value = self.vars[var].inputs[int(index)]
            self.build(step, "factory", lambda args: value[0](*args))
        elif "resolve_all" in step:
            c = self.containers[step.get("in", "root")]
            head = f"resolve_all {step['resolve_all']}"
            items = self.outcome(step, head, lambda: c.resolve_all(step["resolve_all"]))
            if items is not None:
                self.trace.append(f"{head} = {self.show('all', items)}")
                if "as" in step:
                    self.vars[step["as"]] = items
                del items
        elif "release" in step:
            del self.vars[step["release"]]
            self.trace.append(f"release {step['release']}")
        elif "clone" in step:
            obj = self.vars[step["as"]] = self.vars[step["clone"]]
            self.trace.append(f"clone {step['clone']} = {obj.name}")
        elif "downgrade" in step:
            self.vars[step["as"]] = weakref.ref(self.vars[step["downgrade"]])
            self.trace.append(f"downgrade {step['downgrade']}")
        elif "upgrade" in step:
            obj = self.vars[step["upgrade"]]()
            if obj is None:
                self.trace.append(f"upgrade {step['upgrade']}: EXPIRED")
            else:
                self.vars[step["as"]] = obj
                self.trace.append(f"upgrade {step['upgrade']} = {obj.name}")
            del obj
        elif "peek" in step:
            var, _, path = step["peek"].partition(".")
            self.trace.append(f"peek {step['peek']} = {self.peek_path(self.vars[var].inputs, path)}")
        elif "container" in step:
            self.new_container(step["container"], step.get("parent", "root"))
            self.trace.append(f"container {step['container']}")
        elif "free" in step:
            name = step["free"]
            if self.outcome(step, f"free {name}", lambda: self.containers[name].close() or True):
                gc.collect()
                self.trace.append(f"free {name}")
        elif "reset" in step:
            self.containers[step.get("in", "root")].reset(SCOPES[step["reset"]])
            self.trace.append(f"reset {step['reset']}")
        elif "clear_override" in step:
            key, c = step["clear_override"], self.containers[step.get("in", "root")]
            if self.outcome(step, f"clear_override {key}", lambda: c.clear_override(key) or True):
                self.trace.append(f"clear_override {key}")
        elif "validate" in step:
            c = self.containers[step["validate"]]
            if self.outcome(step, "validate", lambda: c.validate() or True):
                self.trace.append("validate = OK")
        elif "flag" in step:
            (self.flags.add if step.get("on", True) else self.flags.discard)(step["flag"])
        elif "live" in step:
            gc.collect()
            with self.lock:
                live = sorted(self.made - set(self.dropped), key=natural)
            self.trace.append("live " + " ".join(live) if live else "live none")
        elif "threads" in step:
            self.threads(step)
        else:
            raise Unsupported(f"step {step}")

    def threads(self, step: dict[str, Any]) -> None:
        """Workers run `body` `repeat` times behind a barrier (a `writer` thread runs its steps
        `writer_repeat` times meanwhile); events are counted, not traced."""
        count, repeat = step["threads"], step.get("repeat", 1)
        report = step.get("report")
        self.counting = Counter()
        seen: dict[str, set[str]] = {}
        errors: Counter[str] = Counter()
        barrier = threading.Barrier(count + (1 if "writer" in step else 0))

        def run(steps: list[dict[str, Any]], times: int) -> None:
            mine: dict[str, Any] = {}  # this thread's handles; the main thread's are read only
            try:
                barrier.wait()
                for _ in range(times):
                    for inner in steps:
                        try:
                            self.thread_step(inner, mine, seen)
                        except tether.TetherError as exc:
                            exc.__traceback__ = None
                            with self.lock:
                                errors[status_of(exc)] += 1
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                with self.lock:
                    errors[type(exc).__name__] += 1

        workers = [threading.Thread(target=run, args=(step["body"], repeat)) for _ in range(count)]
        if "writer" in step:
            workers.append(threading.Thread(target=run, args=(step["writer"], step.get("writer_repeat", 1))))
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        gc.collect()
        counts, self.counting = self.counting, None
        items = [f"{k}={v}" for k, v in counts.items() if report is None or k.split(" ", 1)[1] in report]
        items += [f"distinct {k}={len(v)}" for k, v in seen.items() if report is None or k in report]
        items += [f"error {k}={v}" for k, v in errors.items()]
        self.trace.append(("threads: " + ", ".join(sorted(items))).rstrip())

    def thread_step(self, step: dict[str, Any], mine: dict[str, Any], seen: dict[str, set[str]]) -> None:
        def held(name: str) -> Any:
            return mine[name] if name in mine else self.vars[name]

        if "resolve" in step:
            obj = self.containers[step.get("in", "root")].resolve(step["resolve"])
            with self.lock:
                seen.setdefault(step["resolve"], set()).add(obj.name)
            if "as" in step:
                mine[step["as"]] = obj
        elif "clone" in step:
            mine[step["as"]] = held(step["clone"])
        elif "downgrade" in step:
            mine[step["as"]] = weakref.ref(held(step["downgrade"]))
        elif "upgrade" in step:
            obj = held(step["upgrade"])()
            if obj is None:
                raise tether.ExpiredError("the instance is gone")
            mine[step["as"]] = obj
        elif "release" in step:
            del mine[step["release"]]
        elif "register" in step:
            self.register(step)
        else:
            raise Unsupported(f"thread step {step}")

    def finish(self) -> None:
        """Lets go of everything; every object made must be dropped exactly once."""
        for name in reversed(list(self.vars)):   # newest binding first, as every runner does
            del self.vars[name]
        for name in reversed(list(self.containers)):
            if not self.containers[name].closed:
                self.containers[name].close()
        self.containers.clear()
        gc.collect()
        twice = sorted(n for n, k in Counter(self.dropped).items() if k > 1)
        leaked = sorted(self.made - set(self.dropped))
        if twice:
            self.trace.append("dropped twice: " + " ".join(twice))
        if leaked:
            self.trace.append("never dropped: " + " ".join(leaked))


def natural(name: str) -> tuple[str, int]:
    """"Key12" sorts as ("Key", 12)."""
    stem = name.rstrip("0123456789")
    return stem, int(name[len(stem):] or 0)


def run(scenario: dict[str, Any], plans: bool) -> list[str]:
    r = Run(scenario, plans)
    try:
        for step in scenario["steps"]:
            r.step(step)
    finally:
        r.finish()
    return r.trace


def marks(s: dict[str, Any], path: str) -> list[Any]:
    """A known failure must fail (strict); a flaky one may pass or fail."""
    if applies(s.get("known"), path):
        return [pytest.mark.xfail(reason=applies(s.get("known"), path), strict=True)]
    if applies(s.get("flaky"), path):
        return [pytest.mark.xfail(reason=applies(s.get("flaky"), path), strict=False)]
    return []


CASES = [pytest.param(s, path, id=f"{s['name']}-{path}", marks=marks(s, path))
         for s in CORPUS["scenarios"] for path in PATHS]


@pytest.mark.parametrize("scenario,path", CASES)
def test_scenario(scenario: dict[str, Any], path: str) -> None:
    skip = applies(scenario.get("skip"), path)
    if skip:
        pytest.skip(skip)
    trace = run(scenario, plans=path == "python-plans")
    assert trace == scenario["trace"]


if __name__ == "__main__":
    names = set(sys.argv[1:])
    for s in CORPUS["scenarios"]:
        if names and s["name"] not in names:
            continue
        for path in PATHS:
            try:
                got = run(s, plans=path == "python-plans")
            except Unsupported as exc:
                print(f"## {s['name']} {path}: unsupported {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - a runner bug or a scenario error: show it
                print(f"## {s['name']} {path}: ERROR {exc!r}")
                continue
            status = "ok" if got == s.get("trace") else "DIFF"
            print(f"## {s['name']} {path}: {status}")
            if status != "ok":
                print(json.dumps(got, indent=1))
