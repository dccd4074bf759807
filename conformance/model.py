#!/usr/bin/env python3
"""A reference model of Tether's semantics: an executable spec, independent of the library.

It reads the steps of conformance/scenarios.json (README there) and computes the trace the
design requires: the README's "How a resolve works", "Closing a cycle", "Scopes", "Per-request
containers and teardown", the comments of include/tether.h. It never imports `tether` and is
written for reading, not speed: plain objects, reference counts, lists.

    model.py [--corpus FILE] --check [NAME...]   every scenario's recorded trace must be the model's
    model.py [--corpus FILE] --print NAME...     the model's trace of some scenarios
    model.py [--corpus FILE] --fill [NAME...]    write the model's traces into the corpus
    model.py --replay LOG...
                                                 differential fuzzing: each LOG (scenarios the fuzz
                                                 target wrote in the line form, with the traces the
                                                 library gave) must be what the model computes

Where the documents are silent the model decides, and says so in a comment marked DECISION.
The order of destruction is the documented one (README, "Per-request containers and teardown"):
releasing an instance destroys it (its destructor runs first), then lets go of its
edges last edge first, depth first (`destroy`); freeing or resetting a container lets go of
what it caches, last cached first (`publish`); a failed resolve destroys what it made, last
made first. "Made" is creation order: every instance has a sequence number.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import deque
from pathlib import Path
from typing import Any, Optional

RUNTIME = ("i64", "f64", "str", "ptr")
OK = "OK"
# Ops a scenario's factories and callbacks may run outside threads steps; past it an op list ends
# with "; budget" (Tests/conformance/runner.c: OP_BUDGET). Generated scenarios can chain callbacks
# exponentially; hand-written ones never reach it.
OP_BUDGET = 512
# In a threads step the runner stops running ops past THREADS_OP_BUDGET and traces only "threads: over
# budget"; the model does the same, so a step past it whose line fell beyond MAX_TRACE still ends.
THREADS_OP_BUDGET = 4096
# The runners keep a scenario's first MAX_TRACE lines (Tests/conformance/runner.c: MAX_TRACE).
MAX_TRACE = 512


class Fail(Exception):
    """A status other than OK, raised where the library would return it."""

    def __init__(self, status: str, text: str = ""):
        super().__init__(status)
        self.status = status
        self.text = text   # an op list's trace so far, when a propagated op failure ends it


# ---- the world's objects ------------------------------------------------------------------------

class Reg:
    """A registration: key -> generic factory (slots, ops, failure), scope, callbacks."""

    def __init__(self, spec: dict[str, Any], container: "Container"):
        self.key: str = spec["register"]
        self.container = container
        self.scope: str = spec.get("scope", "graph")
        self.mode: str = spec.get("mode", "register")
        self.slots: list[tuple[str, str]] = [slot_of(s) for s in spec.get("deps", [])]
        self.ops: list[dict[str, Any]] = spec.get("ops", [])
        self.fail: Optional[str] = spec.get("fail")
        self.fail_when: Optional[str] = spec.get("fail_when")
        self.callbacks: list[dict[str, Any]] = spec.get("complete", [])
        self.decorators: list[Reg] = []

    def runtime_kinds(self) -> list[str]:
        return [k for k, _ in self.slots if k in RUNTIME]

    def takes(self) -> list[str]:
        """The runtime arguments the key takes as it resolves now: its newest decorator's, if it is
        decorated (README "Decorators": the decorator resolves as the key, so its runtime slots are
        the key's; decorating a key that takes arguments is refused, so no other layer has any)."""
        return (self.decorators[-1] if self.decorators else self).runtime_kinds()


def slot_of(text: str) -> tuple[str, str]:
    if text in ("i64", "f64", "str", "ptr", "context", "resolver"):
        return text, ""
    kind, sep, key = text.partition(":")
    return (kind, key) if sep else ("dep", text)


class Obj:
    """An instance the generic factory made, in the library's reference-counted box."""

    def __init__(self, world: "World", reg: Reg, name: str, inputs: list[list[Any]], container: "Container"):
        world.seq += 1
        self.seq = world.seq             # creation order
        self.cached = 0                  # publication order, once a container caches it (`publish`)
        self.cause = -1                  # the callback's request it was made for (`Graph.requests`)
        self.reg = reg
        self.key = reg.key
        self.name = name
        self.inputs = inputs             # what the runner's object records: [kind, value]
        self.strong: list[Obj] = []      # the library's strong edges from it (slots, gets, targets, lazy cells)
        self.rc = 0                      # strong references: handles, edges, caches, open graphs
        self.alive = True
        self.container = container       # where its dependencies were looked up (resolver gets, lazy slots)
        self.keys: set[str] = {reg.key}  # every key its construction looked up (overrides rebuild by it)
        self.layers: list[Obj] = [self]  # a decorated instance: the original, then each decorator's


class Container:
    def __init__(self, name: str, parent: Optional["Container"]):
        self.name = name
        self.parent = parent
        self.children: list[Container] = []
        self.regs: dict[str, Reg] = {}
        self.order: list[str] = []                   # keys, first registration first (ALL lists)
        self.overrides: dict[str, list[Reg]] = {}    # a stack per key
        self.cache: dict[Reg, Obj] = {}              # singleton and container scope: held
        self.weak: dict[Reg, Obj] = {}               # weak scope: remembered, not held
        self.freed = False
        if parent:
            parent.children.append(self)

    def chain(self) -> list["Container"]:
        out: list[Container] = []
        c: Optional[Container] = self
        while c:
            out.append(c)
            c = c.parent
        return out

    def descendants(self) -> list["Container"]:
        out = [self]
        for child in self.children:
            out += child.descendants()
        return out


class Provider:
    """A LAZY or WEAK_LAZY slot: remembers the graph it was filled in (tether.h, tether_provider)."""

    def __init__(self, kind: str, key: str, graph: "Graph", container: Container):
        self.kind, self.key, self.graph, self.container = kind, key, graph, container
        self.owner: Optional[Obj] = None
        self.filled: Optional[Obj] = None
        self.anchor: Optional[Obj] = None   # the transient under construction around it, once made
        self.reg: Optional[Reg] = None      # what its container looks the key up to when it is filled
        self.early: list[Obj] = []   # a LAZY slot's hold taken while its owner's factory runs


class FactoryHandle:
    """A FACTORY slot: builds its key with runtime arguments from the receiver's container."""

    def __init__(self, key: str, container: Container):
        self.key, self.container = key, container


class Resolver:
    """A RESOLVER slot or a completion callback's resolver: gets within the current graph."""

    def __init__(self, graph: "Graph", owner: Optional[Obj], container: Container):
        self.graph: Optional[Graph] = graph
        self.owner, self.container = owner, container
        self.edges: list[Obj] = []       # strong edges a factory took, for the instance it will make


class ListHandle:
    def __init__(self, items: list[Obj]):
        self.items = items


class Graph:
    """One top-level resolve."""

    def __init__(self, container: Container):
        self.container = container
        self.made: list[Obj] = []                    # created by it, held by it until it ends
        self.cells: dict[Reg, Obj] = {}              # graph-scoped instances; shared ones not yet published
        self.pending: list[tuple[Container, Reg, Obj]] = []   # shared instances to publish at the end
        # "the graph's instance of k" (lazy slots), by registration as the library's graph table: the
        # registration the slot's container looks k up to (a singleton's slots: its own container's).
        self.by_reg: dict[Reg, Obj] = {}
        # DECISION: a transient key has no instance of the graph's but the one under construction
        # around a lazy slot on it (the X that holds this Y, tether.h); its slots wait for it here.
        self.building: list[Reg] = []
        self.awaiting: dict[Reg, list["Provider"]] = {}
        self.undecorated: dict[Reg, Obj] = {}        # a decorated key's own instance (`build`)
        self.queue: deque[Obj] = deque()             # instances whose callbacks have not run
        self.root: Optional[str] = None              # the key resolved (`claim_in_order`)
        self.claimed = False                         # a shared instance's creation begun in it
        # Callback laps (`lap_check`): completion callbacks' requests (owner's reg, the reg asked, the
        # request that caused the owner, kept_made then), what the running callback's request is.
        self.requests: list[tuple[Reg, Reg, int, int]] = []
        self.kept_made = 0                           # instances made that the graph or a cache keeps
        self.cause = -1                              # the request whose build runs (-2: not recorded yet)
        self.asking: Optional[tuple[Reg, Reg, int, int]] = None   # its record, until recorded
        self.running_cb: Optional[Obj] = None        # the instance whose callback runs
        self.lap_refused = False

    def add(self, o: Obj, transient: bool) -> None:
        self.made.append(o)
        o.rc += 1
        if not transient:
            # A decorated key's instance is the last layer's (`build` enters it): its own instance
            # and the layers before are never what the key answers (README, Decorators).
            if not o.reg.decorators and o.reg.mode != "decorate":
                self.by_reg.setdefault(o.reg, o)
            self.kept_made += 1
        if o.reg.callbacks:
            if self.cause == -2:
                assert self.asking is not None
                self.requests.append(self.asking)
                self.cause = len(self.requests) - 1
            o.cause = self.cause
            self.queue.append(o)


# ---- the model ----------------------------------------------------------------------------------

class World:
    """One scenario's state: containers, variables, flags, and the trace."""

    def __init__(self, setups: Optional[dict[str, list[dict[str, Any]]]] = None):
        self.setups = setups or {}
        self.seq = 0
        self.cached_count = 0
        self.trace: list[str] = []
        self.containers: dict[str, Container] = {"root": Container("root", None)}
        self.vars: dict[str, tuple[str, Any]] = {}   # name -> ("ref", Obj) | ("weak", Obj) | ("list", ListHandle)
        self.flags: set[str] = set()
        self.ordinals: dict[str, int] = {}
        self.made: list[Obj] = []
        self.dropped: list[str] = []
        self.graphs: list[Graph] = []                # open graphs of this thread, outermost first
        self.running: list[Reg] = []                 # factories on this thread's stack
        self.counting: Optional[dict[str, int]] = None   # in a threads step: events counted, not traced
        self.ops_run = 0                             # factory and callback ops run (OP_BUDGET)
        self.threads_ops = 0                         # and in the threads step running (THREADS_OP_BUDGET)

    # -- events -------------------------------------------------------------------------------

    def event(self, kind: str, key: str, text: str) -> None:
        if self.counting is not None:
            ev = f"{kind} {key}"
            self.counting[ev] = self.counting.get(ev, 0) + 1
        else:
            self.trace.append(text)

    def flag_on(self, name: Optional[str]) -> bool:
        return name is None or name in self.flags

    # -- reference counts and destruction -----------------------------------------------------

    def release(self, o: Obj) -> None:
        o.rc -= 1
        assert o.rc >= 0, f"{o.name} released too often"
        if o.rc == 0:
            self.destroy(o)

    def destroy(self, o: Obj) -> None:
        """The destructor first (it traces and lets go of the handles the object owns, in input
        order), then the library lets go of the object's edges, last edge first.
        DECISION (sibling order): an instance's edges go in the reverse of the order it took them
        (`o.strong`: its slots' in slot order, an ALL slot's items in list order, then what its
        resolver and lazy slots took during the factory, then its completion callbacks' edges), as
        C++ destroys members in the reverse of their declaration, not of their construction. Each
        goes with what only it held before the next (depth first). Ordering by when the targets
        were made would need a creation order comparable across threads on every instance."""
        o.alive = False
        self.dropped.append(o.name)
        self.event("drop", o.key, f"drop {o.name}")
        for kind, value in o.inputs:   # (an ALL slot's list is the library's: its items are edges)
            if kind == "ref":
                self.release(value)
        edges, o.strong = o.strong, []
        for d in reversed(edges):
            self.release(d)

    def release_list(self, items: list[Obj]) -> None:
        """A tether_resolve_all handle: its instance is the list, which holds its items as an ALL
        slot's (`destroy`: edges in the reverse of list order, each with what only it held)."""
        for o in reversed(items):
            self.release(o)

    def release_all(self, objs: list[Obj]) -> None:
        """Lets go of several references: last made first (the documented sibling order)."""
        for o in sorted(objs, key=lambda x: x.seq, reverse=True):
            self.release(o)

    def reaches(self, start: Obj, goal: Obj) -> bool:
        """Whether `start` holds `goal` through strong edges (a retain cycle if goal -> start is added)."""
        seen, todo = set(), [start]
        while todo:
            o = todo.pop()
            if o is goal:
                return True
            if id(o) in seen:
                continue
            seen.add(id(o))
            todo += o.strong
        return False

    # -- looking keys up ----------------------------------------------------------------------

    def lookup(self, c: Container, key: str) -> Optional[Reg]:
        """The nearest container that has the key answers (a child overrides its parents);
        DECISION (overrides): within one container its newest override goes before its
        registration, so an override reaches the children that do not register the key."""
        for x in c.chain():
            if x.overrides.get(key):
                return x.overrides[key][-1]
            if key in x.regs:
                return x.regs[key]
        return None

    def variants(self, c: Container, key: str) -> list[str]:
        """An ALL slot's keys: `key` and `key#name`, registration order; a child's variant
        replaces its parent's in place (the key stays where it was), adds otherwise."""
        out: list[str] = []
        for x in reversed(c.chain()):
            for k in x.order:
                if (k == key or k.startswith(key + "#")) and k not in out and self.lookup(c, k) is not None:
                    out.append(k)   # (a key whose only override ended is not listed)
        return out

    # -- resolving ----------------------------------------------------------------------------

    def top_resolve(self, c: Container, key: str, args: Optional[list[Any]] = None) -> Obj:
        """A top-level resolve: opens a graph, builds, runs the callbacks, publishes, returns a
        strong reference (the caller's handle). Raises Fail after destroying what it made."""
        if c.freed:
            raise Fail("INVALID_HANDLE")
        g = Graph(c)
        g.root = key
        self.graphs.append(g)
        try:
            try:
                o = self.resolve_key(g, key, c, args if args is not None else [])
                self.complete(g)
            except Fail:
                self.rollback(g)
                raise
            self.publish(g)
            o.rc += 1
            self.release_all(g.made)
            return o
        finally:
            self.graphs.pop()

    def publish(self, g: Graph) -> None:
        """Shared instances made by `g` become visible only now (design rule 5). DECISION: a
        decorated one's cache holds every layer (the original and each decorator's result), so
        freeing or resetting lets go of them like any other cached instance. DECISION (cache
        order): a container lets go of what it caches last cached first, the reverse of the order
        the resolves that made them published them (each resolve's in the order it made them), so
        what a factory resolved inside another's resolve, published first, goes last."""
        published: list[Obj] = []
        for home, reg, shared in g.pending:
            if reg.scope == "weak":
                home.weak[reg] = shared
            else:
                home.cache[reg] = shared
                for layer in shared.layers:
                    layer.rc += 1
                published += shared.layers
        for layer in sorted(published, key=lambda x: x.seq):   # one resolve's: in the order it made them
            self.cached_count += 1
            layer.cached = self.cached_count

    def rollback(self, g: Graph) -> None:
        """Destroys what a failed `g` made, last made first; nothing is cached (rule 4)."""
        undone, g.made, g.pending = g.made, [], []
        self.release_all(undone)

    def resolve_key(self, g: Graph, key: str, c: Container, args: Optional[list[Any]]) -> Obj:
        """`key`'s instance for graph `g`, looked up from `c`. `args`: the runtime arguments of a
        top-level resolve or factory call; None for a dependency."""
        if c.freed:
            raise Fail("INVALID_HANDLE")
        reg = self.lookup(c, key)
        if reg is None:
            raise Fail("NOT_FOUND")
        kinds = reg.takes()   # a decorator's runtime slots get the resolve's arguments (`takes`)
        if args is None:
            if kinds:
                raise Fail("ARGUMENT_MISMATCH")   # runtime arguments only at the top (TETHER_FACTORY)
        elif [arg_kind(a) for a in args] != kinds:
            raise Fail("ARGUMENT_MISMATCH")       # DECISION: exact count and kinds; an integer is no f64
        if reg in self.running and reg.scope == "container":
            # DECISION (the library's, found by make fuzz-diff): a container-scoped key made for one
            # container while another container's instance of it is cached answers that one from
            # its cache: nothing is constructed twice (README: no factory runs twice).
            cached = c.cache.get(reg)
            if cached is not None and cached.alive:
                g.by_reg.setdefault(reg, cached)
                return cached
        if reg in self.running:
            # DECISION: after the arguments are looked at. A request in the wrong form for its key
            # (a dependency on a key that takes arguments) fails the same way wherever it is made,
            # and its fix (a FACTORY slot, tether_resolve_args) is the one that works; a cycle's
            # (a lazy or weak slot) would not.
            raise Fail("CYCLE")
        if reg.scope in ("singleton", "weak", "container"):
            # Singletons live in the registering container and take their dependencies from it
            # (README, Scopes). Weak-scoped instances: one cache per registration, in the
            # registering container; their dependencies, as any but a singleton's, come from the
            # resolving container (DECISION, the documents say nothing more). Container scope:
            # one per resolving container, dependencies from it.
            home = c if reg.scope == "container" else reg.container
            cached = (home.weak if reg.scope == "weak" else home.cache).get(reg)
            if cached is not None and cached.alive:
                g.by_reg.setdefault(reg, cached)
                return cached
            if reg in g.cells:
                return g.cells[reg]
            if any((h, r) == (home, reg) for outer in self.graphs if outer is not g for h, r, _ in outer.pending):
                raise Fail("CYCLE")   # unfinished in an outer resolve of this thread: not published yet
                                      # (container scope: the same resolving container's)
            if not g.claimed:
                g.claimed = True
                if reg.scope != "container":
                    self.claim_in_order(g)
            o = self.build(g, reg, home if reg.scope == "singleton" else c, args)
            g.cells[reg] = o
            g.pending.append((home, reg, o))
            return o
        if reg.scope == "graph" and reg in g.cells:
            return g.cells[reg]
        o = self.build(g, reg, c, args)
        if reg.scope == "graph":
            g.cells[reg] = o
        return o

    def claim_in_order(self, g: Graph) -> None:
        """DECISION (claims in order, the library's `Graph.claimInOrder`): the first singleton or
        weak-scoped instance a graph creates, when it is the graph's first shared one, claims the
        creation cells of every uncached singleton, weak or container-scoped instance the root's
        constructor edges reach (DEP, WEAK and ALL slots, decorators' too) when there are two or more,
        in one order, before any factory on the way runs: two threads then never hold one each while
        waiting for the other's. So one of them unfinished in an outer resolve of this thread is a
        cycle before this graph makes anything more."""
        if g.root is None:
            return
        wanted: list[tuple[Container, Reg]] = []
        seen: set[int] = set()
        stack = [(self.lookup(g.container, g.root), g.container)]
        while stack:
            reg, c = stack.pop()
            if reg is None or id(reg) in seen:
                continue
            seen.add(id(reg))
            if reg.scope in ("singleton", "weak", "container"):
                home = c if reg.scope == "container" else reg.container
                cached = (home.weak if reg.scope == "weak" else home.cache).get(reg)
                if cached is not None and cached.alive:
                    continue
                wanted.append((home, reg))
            deps = reg.container if reg.scope == "singleton" else c
            for d in [reg] + reg.decorators:
                for kind, k in d.slots:
                    if d is not reg and (kind, k) == ("dep", reg.key):
                        continue   # a decorator's DEP on its key: the instance so far
                    if kind in ("dep", "weak"):
                        stack.append((self.lookup(deps, k), deps))
                    elif kind == "all":
                        stack += [(self.lookup(deps, v), deps) for v in self.variants(deps, k)]
        if len(wanted) < 2:
            return
        for outer in self.graphs:
            if outer is not g and any((h, r) in wanted for h, r, _ in outer.pending):
                raise Fail("CYCLE")

    def build(self, g: Graph, reg: Reg, c: Container, args: Optional[list[Any]]) -> Obj:
        """Runs `reg`'s factory (depth first along its slots), then its decorators."""
        if reg in self.running:
            raise Fail("CYCLE")       # a constructor cycle, or a factory re-entered from a nested resolve
        self.running.append(reg)
        g.building.append(reg)
        try:
            # DECISION: a decorated key's own instance is the graph's like any other (one per key
            # per graph unless transient): a decorator that failed leaves it there, and a second
            # attempt in the same resolve decorates it again; its factory does not run twice.
            if reg.decorators and reg.scope != "transient" and reg in g.undecorated:
                o = g.undecorated[reg]
            else:
                o = self.run_factory(g, reg, c, [] if reg.decorators else list(args or []), None, reg)
                if reg.decorators and reg.scope != "transient":
                    g.undecorated[reg] = o
            layers = [o]
            for d in reg.decorators:  # in the order added; each gets the instance so far (slot 0)
                o = self.run_factory(g, d, c, list(args or []) if d is reg.decorators[-1] else [], o, reg)
                layers.append(o)
            o.layers = layers
            if reg.decorators and reg.scope != "transient":
                g.by_reg.setdefault(reg, o)
            for p in g.awaiting.pop(reg, []):
                p.anchor = o
            return o
        finally:
            self.running.pop()
            g.building.pop()

    def run_factory(self, g: Graph, reg: Reg, c: Container, args: list[Any], inner: Optional[Obj], base: Reg) -> Obj:
        inputs: list[list[Any]] = []
        strong: list[Obj] = []
        keys: set[str] = set()
        providers: list[Provider] = []
        resolver: Optional[Resolver] = None
        for kind, key in reg.slots:
            if inner is not None and (kind, key) == ("dep", reg.key):   # a decorator's DEP on its key: the instance
                inputs.append(["dep", inner]); strong.append(inner); keys |= inner.keys
            elif kind in ("dep", "weak"):
                d = self.resolve_key(g, key, c, None)
                inputs.append([kind, d]); keys |= d.keys
                if kind == "dep":
                    strong.append(d)
            elif kind in ("lazy", "weak_lazy"):
                p = Provider(kind, key, g, c)
                providers.append(p)
                target = p.reg = self.lookup(c, key)
                if target is not None and target.scope == "transient" and target in g.building:
                    g.awaiting.setdefault(target, []).append(p)
                inputs.append([kind, p])
            elif kind == "all":
                items = [self.resolve_key(g, k, c, None) for k in self.variants(c, key)]
                inputs.append(["list", items]); strong += items
                for d in items:
                    keys |= d.keys
            elif kind == "factory":
                inputs.append(["factory", FactoryHandle(key, c)])
            elif kind == "context":
                inputs.append(["context", None])
            elif kind == "resolver":
                resolver = Resolver(g, None, c)
                inputs.append(["resolver", resolver])
            else:
                inputs.append([kind, args.pop(0)])
        keys |= {key for kind, key in reg.slots if key}   # declared, lazy and factory slots too
        shown = ",".join(self.show(k, v) for k, v in inputs)
        try:
            text = self.run_ops(reg.ops, resolver, inputs, None)
        except Fail as f:
            text = f.text   # the generic factory ignores a propagated op failure
        if resolver:
            resolver.graph = None                         # valid during the factory only
        if reg.fail and self.flag_on(reg.fail_when):
            self.event("fail", reg.key, f"fail {reg.key}({shown}){text}")
            self.drop_inputs(inputs)
            self.release_all((resolver.edges if resolver else []) + [o for p in providers for o in p.early])
            raise Fail("FACTORY_FAILED")
        n = self.ordinals[reg.key] = self.ordinals.get(reg.key, 0) + 1
        o = Obj(self, reg, f"{reg.key}{n}", inputs, c)
        o.keys |= keys
        for d in strong:
            d.rc += 1
        o.strong = strong + (resolver.edges if resolver else [])
        for d in (resolver.edges if resolver else []):
            o.keys |= d.keys
        for p in providers:
            p.owner = o
            o.strong += p.early
        self.made.append(o)
        self.event("make", reg.key, f"make {o.name}({shown}){text}")
        g.add(o, base.scope == "transient")
        return o

    def drop_inputs(self, inputs: list[list[Any]]) -> None:
        """What the generic factory releases when it fails: the handles it holds."""
        for kind, value in inputs:
            if kind == "ref":
                self.release(value)

    # -- completion callbacks -----------------------------------------------------------------

    def complete(self, g: Graph) -> None:
        """Deferred callbacks: creation order; those created meanwhile join the queue."""
        while g.queue:
            o = g.queue.popleft()
            count = len(o.reg.callbacks)
            g.running_cb = o
            for i, cb in enumerate(o.reg.callbacks):
                head = f"complete {o.name}/{i + 1}" if count > 1 else f"complete {o.name}"
                if "targets" in cb:
                    shown = []
                    r = Resolver(g, o, o.container)
                    for target in cb["targets"]:   # a target that cannot be handed over: fn is not called
                        weak = target.startswith("weak:")
                        got = self.resolver_get(r, target[5:] if weak else target, weak)
                        o.inputs.append(["weak" if weak else "dep", got])
                        shown.append(self.show("weak" if weak else "dep", got))
                    text = "(" + ",".join(shown) + ")"
                    status = OK
                else:
                    r = Resolver(g, o, o.container)
                    text = ""
                    status = OK
                    try:
                        text = self.run_ops(cb.get("ops", []), r, o.inputs, o)
                    except Fail as f:   # a propagated op failure: the callback returns it
                        text, status = f.text, f.status
                failing = cb.get("fail") and self.flag_on(cb.get("fail_when"))
                self.event("complete", o.key, head + text + ("; fail" if failing else ""))
                if g.lap_refused:
                    raise Fail("CYCLE")   # a refused lap fails the resolve, whatever the callback made of it
                if failing:
                    raise Fail("FACTORY_FAILED")
                if status != OK:
                    # tether.h: a callback not returning OK fails the resolve with FACTORY_FAILED;
                    # tether_resolve lists RETAIN_CYCLE for "a callback's strong edge would close a
                    # cycle of strong edges", so that status passes through.
                    raise Fail("RETAIN_CYCLE" if status == "RETAIN_CYCLE" else "FACTORY_FAILED")

    def lap_check(self, g: Graph, r: Resolver, key: str) -> Obj:
        """A completion callback's request (the library's `Graph.buildAsked`). DECISION (callback laps):
        refused (CYCLE, and the resolve fails so whatever the callback does) when the owner was made,
        through the chain of such requests, because an instance of the owner's registration asked for
        the same registration, and nothing kept (not transient) was made since: each lap would make
        the same again, without end (each callback is taken to ask the same for every instance)."""
        o = r.owner
        assert o is not None
        asked = self.lookup(r.container, key)
        if asked is not None:
            c = o.cause
            while c >= 0:
                owner, was_asked, parent, kept_before = g.requests[c]
                if owner is o.reg and was_asked is asked:
                    if kept_before == g.kept_made:
                        g.lap_refused = True
                        raise Fail("CYCLE")
                    break
                c = parent
        saved = (g.cause, g.asking)
        g.cause, g.asking = -2, (o.reg, asked, o.cause, g.kept_made)
        try:
            return self.resolve_key(g, key, r.container, None)
        finally:
            g.cause, g.asking = saved

    def resolver_get(self, r: Resolver, key: str, weak: bool) -> Obj:
        """tether_resolver_get / _get_weak: `key` within the current graph; a strong get records an
        edge from the instance being completed (or built), refused if it closes a strong cycle.
        DECISION: what a get that fails made before failing stays in the graph (every instance
        it made was fully built) and goes with it: destroyed at its end, or cached if shared."""
        g = r.graph
        if g is None:
            raise Fail("WRONG_CONTEXT")
        if r.owner is not None and r.owner is g.running_cb and not g.building:
            d = self.lap_check(g, r, key)
        else:
            d = self.resolve_key(g, key, r.container, None)
        if weak:
            return d
        if r.owner is not None:
            if d is r.owner or self.reaches(d, r.owner):
                raise Fail("RETAIN_CYCLE")
            r.owner.strong.append(d)
            r.owner.keys |= d.keys
        else:
            r.edges.append(d)
        d.rc += 1
        return d

    # -- the generic factory's ops, peeks and calls (the runners' part) -------------------------

    def run_ops(self, ops: list[dict[str, Any]], r: Optional[Resolver], inputs: list[list[Any]],
                owner: Optional[Obj]) -> str:
        text = ""
        for op in ops:
            if self.counting is None:
                self.ops_run += 1
                if self.ops_run > OP_BUDGET:
                    return text + "; budget"
            else:
                self.threads_ops += 1
                if self.threads_ops > THREADS_OP_BUDGET:
                    return text + "; budget"
            kind = next(k for k in ("get", "weak", "resolve", "call") if k in op)
            arg = op[kind]
            status = OK
            try:
                if kind in ("get", "weak"):
                    if r is None:
                        raise Fail("INVALID_HANDLE")   # no RESOLVER slot: the runner passes NULL
                    d = self.resolver_get(r, arg, kind == "weak")
                    inputs.append(["dep" if kind == "get" else "weak", d])
                    text += f"; {kind} {arg}={'~' if kind == 'weak' else ''}{self.show('dep', d)}"
                elif kind == "resolve":
                    d = self.top_resolve(self.container(op.get("in")), arg)
                    inputs.append(["ref", d])
                    text += f"; resolve {arg}={d.name}"
                else:
                    text += f"; call {arg}={self.peek_path(inputs, arg)}"
            except Fail as f:
                status = f.status
            if status != OK:
                text += f"; {kind} {arg}!{status}"
                if op.get("else_weak") and r is not None:
                    try:
                        d = self.resolver_get(r, arg, True)
                        inputs.append(["weak", d])
                        text += f"; weak {arg}=~{self.show('dep', d)}"
                    except Fail:
                        pass
                if op.get("propagate"):
                    raise Fail(status, text)
        return text

    def show(self, kind: str, v: Any) -> str:
        if kind in ("dep", "ref"):
            return str(v.name)
        if kind == "weak":
            return "~" + (v.name if v.alive else "expired")
        if kind in ("lazy", "weak_lazy", "factory"):
            return f"{kind}:{v.key}"
        if kind == "context":
            return "context"
        if kind == "resolver":
            return "resolver"
        if kind == "list":
            return "[" + ",".join(o.name for o in v) + "]"
        if kind == "i64":
            return str(v)
        if kind == "f64":
            return "%g" % v
        if kind == "str":
            return f'"{v}"'
        return "ptr"

    def target(self, kind: str, v: Any, holds: list[Obj]) -> tuple[Optional[Obj], str]:
        """The object an input leads to (weak handles upgraded, providers called), or why not."""
        if kind in ("dep", "ref"):
            return v, ""
        if kind == "weak":
            if not v.alive:
                return None, "expired"
            v.rc += 1
            holds.append(v)
            return v, ""
        if kind in ("lazy", "weak_lazy"):
            try:
                return self.call_provider(v), ""
            except Fail as f:
                return None, "none" if (kind == "weak_lazy" and f.status == "EXPIRED") else "!" + f.status
        return None, "not an object"

    def peek_path(self, inputs: list[list[Any]], path: str) -> str:
        holds: list[Obj] = []
        out = ""
        tokens = path.split(".") if path else []
        for i, tok in enumerate(tokens):
            last = i == len(tokens) - 1
            index = int(tok)
            if index < 0 or index >= len(inputs):
                out = f"no input {index}"
                break
            kind, v = inputs[index]
            if last and kind not in ("dep", "ref", "weak", "lazy", "weak_lazy"):
                out = self.show(kind, v)
                break
            o, why = self.target(kind, v, holds)
            if o is None:
                out = why
                break
            if last:
                out = o.name
                break
            inputs = o.inputs
        for o in reversed(holds):
            self.release(o)
        return out

    def call_provider(self, p: Provider) -> Obj:
        """A lazy slot's call (tether.h, tether_provider): its first call answers its graph's
        instance of the key while that lives, else resolves the key anew; then it holds what it
        answered (WEAK_LAZY: weakly, NULL + EXPIRED once it is gone)."""
        # DECISION: called while its owner's factory runs (no owner yet), it answers as any first
        # call; what a LAZY slot holds then becomes the owner's edge once the factory returns.
        if p.container.freed or (p.owner is not None and not p.owner.alive):
            raise Fail("INVALID_HANDLE")
        if p.filled is not None:
            if p.kind == "weak_lazy" and not p.filled.alive:
                raise Fail("EXPIRED")
            return p.filled
        # DECISION (the library's, found by make fuzz-diff): the graph's instance of the registration
        # the slot's container finds for the key (`Graph.rememberGraph`), not another container's
        # instance of the same key in that graph; none found there: it resolves anew from its container.
        mine = p.anchor or (p.graph.by_reg.get(p.reg) if p.reg is not None else None)
        if mine is not None and mine.alive:
            if p.kind == "lazy":
                if p.owner is not None and (mine is p.owner or self.reaches(mine, p.owner)):
                    raise Fail("RETAIN_CYCLE")   # never a second instance; the next call answers the same
                mine.rc += 1
                self.hold(p, mine)
            p.filled = mine
            return mine
        o = self.top_resolve(p.container, p.key)   # a failure leaves it empty: the next call retries
        if p.kind == "lazy" and p.owner is not None and (o is p.owner or self.reaches(o, p.owner)):
            # DECISION (the library's, found by make fuzz-diff, seed 1501): an instance resolved anew
            # that holds the owner strongly is refused as the graph's is (`LazyCell.get`: the owner's
            # late edge would close a strong cycle, a leak); it goes now, the cell stays empty.
            self.release(o)
            raise Fail("RETAIN_CYCLE")
        p.filled = o
        if p.kind == "lazy":
            self.hold(p, o)                       # the handle's reference becomes the cell's
            return o
        self.release(o)
        if not o.alive:
            raise Fail("EXPIRED")
        return o

    def hold(self, p: Provider, o: Obj) -> None:
        (p.owner.strong if p.owner is not None else p.early).append(o)

    def call_factory(self, f: FactoryHandle, args: list[Any]) -> Obj:
        if f.container.freed:
            raise Fail("INVALID_HANDLE")
        return self.top_resolve(f.container, f.key, args)

    # -- registering, caches, containers ------------------------------------------------------

    def container(self, name: Optional[str]) -> Container:
        return self.containers[name or "root"]

    def let_go(self, pairs: list[tuple[dict[Reg, Obj], Reg]]) -> None:
        """Drops cache entries: held ones are released last cached first (`publish`), weak ones forgotten."""
        held: list[Obj] = []
        for table, reg in pairs:
            o = table.pop(reg)
            if not any(table is c.weak for c in self.all_containers()):
                held += o.layers
        for o in sorted(held, key=lambda x: x.cached, reverse=True):
            self.release(o)

    def all_containers(self) -> list[Container]:
        return list(self.containers.values())

    def caches_of(self, reg: Reg) -> list[tuple[dict[Reg, Obj], Reg]]:
        return [(t, reg) for c in self.all_containers() for t in (c.cache, c.weak) if reg in t]

    def register(self, spec: dict[str, Any]) -> None:
        c = self.container(spec.get("in"))
        reg = Reg(spec, c)
        key = reg.key
        if c.freed:
            self.trace.append(f"register {key}: INVALID_HANDLE")
            return
        # tether.h: two RESOLVER slots, a shared scope with runtime-argument slots (each resolve
        # would want its own instance), a decorator without exactly one DEP on its key.
        if [k for k, _ in reg.slots].count("resolver") > 1 or (
                reg.mode != "decorate" and reg.scope in ("singleton", "weak", "container") and reg.runtime_kinds()) or (
                reg.mode == "decorate" and reg.slots.count(("dep", key)) != 1):
            self.trace.append(f"register {key}: INVALID_ARGUMENT")
            return
        if reg.mode == "decorate":
            # README "Decorators": it decorates the key's registration in that container itself,
            # in the key's scope (its own is ignored); refused for an overridden key, a key not
            # registered there, one taking runtime arguments (DECISION: checked in that order, and
            # the decorator's own runtime slots count too). A key an earlier decorator gave runtime
            # slots takes arguments (`takes`): the library's `decoratable` refuses a second decorator
            # there too, as its DEP on the key could not pass them (found by make fuzz-diff).
            # DECISION: a cached instance of the key is let go (the next one is decorated).
            base = c.regs.get(key)
            status = ("INVALID_ARGUMENT" if c.overrides.get(key) else "NOT_FOUND" if base is None
                      else "ARGUMENT_MISMATCH" if base.takes()
                      else "INVALID_ARGUMENT" if reg.runtime_kinds() and {base.scope, reg.scope} & {"singleton", "weak", "container"}
                      else OK)   # (the scope it was given is checked too, though the key's applies)
            if status != OK or base is None:
                self.trace.append(f"register {key}: {status}")
                return
            base.decorators.append(reg)
            self.let_go_deepest_first(c, base)
            self.rebuild_dependents(c, key)   # what was built over the undecorated instance
            return
        if key not in c.order:
            c.order.append(key)
        if reg.mode == "override":
            c.overrides.setdefault(key, []).append(reg)
            self.rebuild_dependents(c, key)
            return
        old = c.regs.get(key)
        c.regs[key] = reg   # replaces: what the old one cached is let go; dependents keep theirs
        if old is not None:
            self.let_go_deepest_first(c, old)

    def let_go_deepest_first(self, c: Container, reg: Reg) -> None:
        """What `reg` (registered in `c`, replaced or decorated) cached is let go, container by container:
        DECISION: the deepest first (a child's before its parent's), each last cached first, as the
        library's `Container.retireAll` (a child's cache counts its own order; siblings' is not fixed)."""
        for x in sorted(c.descendants(), key=lambda d: len(d.chain()), reverse=True):
            self.let_go([(t, r) for t, r in self.caches_of(reg) if t is x.cache or t is x.weak])

    def rebuild_dependents(self, c: Container, key: str) -> None:
        """An override (added or cleared) reaches `c` and its children: shared instances cached
        there that were built over `key` are let go, so they are rebuilt over what it is now.
        DECISION: at once (not at their next resolve), and the key's own registrations keep theirs."""
        pairs = []
        for x in c.descendants():
            for table in (x.cache, x.weak):
                pairs += [(table, r) for r, o in table.items()
                          if r.key != key and (key in o.keys or self.declared_over(r, key, x))]
        self.let_go(pairs)

    def declared_over(self, reg: Reg, key: str, c: Container) -> bool:
        """Whether `key` is in `reg`'s declared dependencies, any slot kind, callback targets and
        decorators included, transitively (as the registrations are now, looked up from `c`)."""
        seen: set[str] = set()
        todo = [reg]
        while todo:
            r = todo.pop()
            for d in [r] + r.decorators:
                names = [k for kind, k in d.slots if k]
                names += [t.split(":", 1)[-1] for cb in d.callbacks for t in cb.get("targets", [])]
                for kind, k in d.slots:
                    if kind == "all":
                        names += self.variants(c, k)
                for k in names:
                    if k == key:
                        return True
                    found = self.lookup(c, k)
                    if k not in seen and found is not None:
                        seen.add(k)
                        todo.append(found)
        return False

    def free(self, c: Container) -> str:
        if c.freed:
            return "INVALID_HANDLE"
        if any(not child.freed for child in c.children):
            return "INVALID_ARGUMENT"
        self.reset(c, None)
        c.freed = True
        if c.parent:
            c.parent.children.remove(c)
        return OK

    def reset(self, c: Container, scope: Optional[str]) -> None:
        """Lets go of `c`'s cache of `scope` (None: all), last made first; weak ones forgotten."""
        pairs = [(c.cache, r) for r in c.cache if scope in (None, r.scope)]
        pairs += [(c.weak, r) for r in c.weak if scope in (None, "weak")]
        self.let_go(pairs)

    # -- validation ---------------------------------------------------------------------------

    def validate(self, c: Container) -> str:
        """What a resolve of some key would refuse, running nothing. tether.h: the first found
        of NOT_FOUND, CYCLE, RETAIN_CYCLE, ARGUMENT_MISMATCH, CAPTIVE_DEPENDENCY (DECISION: in
        that order)."""
        keys = []
        for x in c.chain():
            keys += [k for k in x.order if k not in keys]
        regs: dict[str, Reg] = {}
        for k in keys:
            found_reg = self.lookup(c, k)
            if found_reg is not None:
                regs[k] = found_reg
        found: set[str] = set()
        ctor: dict[str, list[str]] = {}      # constructor edges
        strong: dict[str, list[str]] = {}    # strong edges: slots, lists, declared DEP targets, LAZY slots
        late: list[tuple[str, str]] = []     # strong edges made after construction

        def uses_of(reg: Reg, k: str, home: Container) -> list[tuple[str, str]]:
            uses: list[tuple[str, str]] = []
            for r in [reg] + reg.decorators:
                slots = [x for x in r.slots if x != ("dep", k)] if r is not reg else r.slots   # not the instance
                for kind, d in slots:
                    if kind == "all":
                        uses += [("dep", v) for v in self.variants(home, d)]
                    elif kind in ("dep", "weak", "lazy", "weak_lazy", "factory"):
                        uses.append((kind, d))
            for cb in [cb for r in [reg] + reg.decorators for cb in r.callbacks]:
                for t in cb.get("targets", []):
                    uses.append(("weak_target", t[5:]) if t.startswith("weak:") else ("target", t))
            return uses

        for k, reg in regs.items():
            ctor[k], strong[k] = [], []
            home = reg.container if reg.scope == "singleton" else c   # a singleton's come from its own
            for kind, d in uses_of(reg, k, home):
                if self.lookup(home, d) is None:
                    continue
                if kind in ("dep", "weak"):
                    ctor[k].append(d)
                if kind in ("dep", "target", "lazy"):
                    strong[k].append(d)
                if kind in ("target", "lazy"):
                    late.append((k, d))
        # DECISION (the library's, GraphCheck; found by make fuzz-diff): every registration a resolve from `c`
        # reaches is looked at in the container it is resolved from, as a resolve does: what a singleton reaches
        # comes from the singleton's container, so a key only `c` registers is NOT_FOUND there.
        seen: set[tuple[int, int]] = set()
        stack = [(reg, c) for reg in regs.values()]
        while stack:
            reg, ctx = stack.pop()
            if (id(reg), id(ctx)) in seen:
                continue
            seen.add((id(reg), id(ctx)))
            home = reg.container if reg.scope == "singleton" else ctx
            for kind, d in uses_of(reg, reg.key, home):
                used = self.lookup(home, d)
                if used is None:
                    found.add("NOT_FOUND")
                    continue
                # DECISION (the library's, GraphCheck.findArgumentDependencies; found by make fuzz-diff):
                # only what a resolve itself needs (DEP, WEAK, ALL slots, declared targets) cannot be
                # a key taking runtime arguments (README: "cannot be a plain dependency"); a LAZY or
                # WEAK_LAZY slot resolves nothing until called, and its call says ARGUMENT_MISMATCH.
                if kind not in ("factory", "lazy", "weak_lazy") and used.takes():
                    found.add("ARGUMENT_MISMATCH")
                if reg.scope == "singleton" and kind in ("dep", "target") and \
                        used.scope in ("graph", "transient", "weak", "container"):
                    found.add("CAPTIVE_DEPENDENCY")   # README 8: held for the singleton's life (list items too)
                stack.append((used, home))
        if any(self.path_exists(ctor, d, k) for k in ctor for d in ctor[k]):
            found.add("CYCLE")
        if any(self.path_exists(strong, d, k) for k, d in late):
            found.add("RETAIN_CYCLE")
        for status in ("NOT_FOUND", "CYCLE", "RETAIN_CYCLE", "ARGUMENT_MISMATCH", "CAPTIVE_DEPENDENCY"):
            if status in found:
                return status
        return OK

    @staticmethod
    def path_exists(edges: dict[str, list[str]], start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            k = todo.pop()
            if k == goal:
                return True
            if k not in seen:
                seen.add(k)
                todo += edges.get(k, [])
        return False

    # -- steps --------------------------------------------------------------------------------

    def step(self, s: dict[str, Any]) -> None:
        if "use" in s:
            for inner in self.setups[s["use"]]:
                self.step(inner)
        elif "register" in s:
            self.register(s)
        elif "threads" in s:
            self.threads(s)
        else:
            self.action(s)

    def bind(self, name: str, kind: str, value: Any) -> None:
        """Binds a variable; finish() lets go of the left ones newest first."""
        assert name not in self.vars, f"{name} is still bound"
        self.vars[name] = (kind, value)

    def unbind(self, name: str) -> None:
        kind, value = self.vars.pop(name)
        if kind == "ref":
            self.release(value)
        elif kind == "list":
            self.release_list(value.items)

    def outcome(self, head: str, fn: Any) -> Any:
        try:
            return fn()
        except Fail as f:
            self.trace.append(f"{head}: {f.status}")
            return None

    def handle(self, op: str, name: str, kind: Optional[str]) -> bool:
        """Whether the variable an action names (`v` of "v.0.1") is bound to a handle of `kind`
        (None: any); else traced as the runners do (a generated scenario may name a handle
        whose step failed)."""
        bound = self.vars.get(name.split(".")[0])
        if bound is not None and kind in (None, bound[0]):
            return True
        self.trace.append(f"{op} {name}: no such handle")
        return False

    def action(self, s: dict[str, Any]) -> None:
        t = self.trace
        for op, kind in (("factory", "ref"), ("release", None), ("clone", "ref"), ("downgrade", "ref"),
                         ("upgrade", "weak"), ("peek", "ref")):
            if op in s and not self.handle(op, s[op], kind):
                return
        if "resolve" in s:
            key, c = s["resolve"], self.container(s.get("in"))
            head = "resolve " + key + args_text(s.get("args", []))
            o = self.outcome(head, lambda: self.top_resolve(c, key, s.get("args", [])))
            if o is not None:
                t.append(f"{head} = {o.name}")
                self.keep(s.get("as"), "ref", o)
        elif "resolve_all" in s:
            key, c = s["resolve_all"], self.container(s.get("in"))
            items = self.outcome(f"resolve_all {key}", lambda: self.resolve_all(c, key))
            if items is not None:
                t.append(f"resolve_all {key} = {self.show('list', items)}")
                self.keep(s.get("as"), "list", ListHandle(items))
        elif "factory" in s:
            var, _, index = s["factory"].partition(".")
            kind, f = self.vars[var][1].inputs[int(index)]
            head = "factory " + s["factory"] + args_text(s.get("args", []))
            if kind != "factory":
                t.append(f"{head}: not a factory input")
                return
            o = self.outcome(head, lambda: self.call_factory(f, list(s.get("args", []))))
            if o is not None:
                t.append(f"{head} = {o.name}")
                self.keep(s.get("as"), "ref", o)
        elif "release" in s:
            self.unbind(s["release"])
            t.append(f"release {s['release']}")
        elif "clone" in s:
            o = self.vars[s["clone"]][1]
            o.rc += 1
            self.bind(s["as"], "ref", o)
            t.append(f"clone {s['clone']} = {o.name}")
        elif "downgrade" in s:
            self.bind(s["as"], "weak", self.vars[s["downgrade"]][1])
            t.append(f"downgrade {s['downgrade']}")
        elif "upgrade" in s:
            o = self.vars[s["upgrade"]][1]
            if not o.alive:
                t.append(f"upgrade {s['upgrade']}: EXPIRED")
                return
            o.rc += 1
            self.bind(s["as"], "ref", o)
            t.append(f"upgrade {s['upgrade']} = {o.name}")
        elif "peek" in s:
            var, _, path = s["peek"].partition(".")
            t.append(f"peek {s['peek']} = {self.peek_path(self.vars[var][1].inputs, path)}")
        elif "container" in s:
            self.containers[s["container"]] = Container(s["container"], self.container(s.get("parent")))
            t.append(f"container {s['container']}")
        elif "free" in s:
            status = self.free(self.container(s["free"]))
            t.append(f"free {s['free']}" if status == OK else f"free {s['free']}: {status}")
        elif "reset" in s:
            self.reset(self.container(s.get("in")), s["reset"])
            t.append(f"reset {s['reset']}")
        elif "set_scope" in s:
            c = self.container(s.get("in"))
            reg = c.regs[s["set_scope"]]
            self.let_go(self.caches_of(reg))
            reg.scope = s["scope"]
            t.append(f"set_scope {s['set_scope']} {s['scope']}")
        elif "clear_override" in s:
            key, c = s["clear_override"], self.container(s.get("in"))
            if c.freed:
                t.append(f"clear_override {key}: INVALID_HANDLE")
            elif not c.overrides.get(key):
                t.append(f"clear_override {key}: INVALID_ARGUMENT")
            else:
                reg = c.overrides[key].pop()
                if not c.overrides[key] and key not in c.regs:
                    # DECISION: a key left with neither registration nor override leaves the
                    # container's order; registered again, it lists last (ALL lists), as a new key.
                    c.order.remove(key)
                self.let_go(self.caches_of(reg))
                self.rebuild_dependents(c, key)
                t.append(f"clear_override {key}")
        elif "validate" in s:
            c = self.container(s["validate"])
            status = "INVALID_HANDLE" if c.freed else self.validate(c)
            t.append("validate = OK" if status == OK else f"validate: {status}")
        elif "flag" in s:
            if s.get("on", True):
                self.flags.add(s["flag"])
            else:
                self.flags.discard(s["flag"])
        elif "live" in s:
            names = sorted((o.name for o in self.made if o.alive), key=lambda n: (by_name(n), n))
            t.append("live " + " ".join(names) if names else "live none")
        else:
            raise ValueError(f"unknown step {s}")

    def keep(self, name: Optional[str], kind: str, value: Any) -> None:
        if name:
            self.bind(name, kind, value)
        elif kind == "ref":
            self.release(value)
        else:
            self.release_list(value.items)

    def resolve_all(self, c: Container, key: str) -> list[Obj]:
        """tether_resolve_all: one graph building every variant, the list holding each."""
        if c.freed:
            raise Fail("INVALID_HANDLE")
        g = Graph(c)
        self.graphs.append(g)
        try:
            try:
                items = [self.resolve_key(g, k, c, None) for k in self.variants(c, key)]
                self.complete(g)
            except Fail:
                self.rollback(g)
                raise
            self.publish(g)
            for o in items:
                o.rc += 1
            self.release_all(g.made)
            return items
        finally:
            self.graphs.pop()

    # -- threads: run one after another, events counted ----------------------------------------

    def threads(self, s: dict[str, Any]) -> None:
        """Only what does not depend on timing is reported (the corpus's `report`), so running the
        workers one after another, then the writer, gives the counts any interleaving gives."""
        self.counting = {}
        self.threads_ops = 0
        seen: dict[str, set[str]] = {}
        errors: dict[str, int] = {}
        runs = [s["body"]] * s["threads"]
        reps = [s.get("repeat", 1)] * s["threads"]
        if s.get("writer"):
            runs.append(s["writer"])
            reps.append(s.get("writer_repeat", 1))
        for body, times in zip(runs, reps):
            mine: dict[str, tuple[str, Any]] = {}
            for _ in range(times):
                for st in body:
                    try:
                        self.thread_step(st, mine, seen)
                    except Fail as f:
                        errors[f.status] = errors.get(f.status, 0) + 1
            for name in reversed(list(mine)):
                kind, v = mine.pop(name)
                if kind == "ref":
                    self.release(v)
        report = s.get("report")
        items = [f"{ev}={n}" for ev, n in self.counting.items() if report is None or ev.split(" ", 1)[1] in report]
        items += [f"distinct {k}={len(v)}" for k, v in seen.items() if report is None or k in report]
        items += [f"error {st}={n}" for st, n in errors.items()]
        self.counting = None
        if self.threads_ops > THREADS_OP_BUDGET:
            self.trace.append("threads: over budget")
            return
        self.trace.append(("threads: " + ", ".join(sorted(items))) if items else "threads:")

    def thread_step(self, st: dict[str, Any], mine: dict[str, tuple[str, Any]], seen: dict[str, set[str]]) -> None:
        def held(name: str) -> tuple[str, Any]:
            return mine[name] if name in mine else self.vars[name]
        if "register" in st:
            self.register(st)
        elif "resolve" in st:
            o = self.top_resolve(self.container(st.get("in")), st["resolve"])
            seen.setdefault(st["resolve"], set()).add(o.name)
            if st.get("as"):
                mine[st["as"]] = ("ref", o)
            else:
                self.release(o)
        elif "clone" in st:
            o = held(st["clone"])[1]
            o.rc += 1
            mine[st["as"]] = ("ref", o)
        elif "downgrade" in st:
            mine[st["as"]] = ("weak", held(st["downgrade"])[1])
        elif "upgrade" in st:
            o = held(st["upgrade"])[1]
            if not o.alive:
                raise Fail("EXPIRED")
            o.rc += 1
            mine[st["as"]] = ("ref", o)
        elif "release" in st:
            kind, v = mine.pop(st["release"])
            if kind == "ref":
                self.release(v)

    # -- the end --------------------------------------------------------------------------------

    def finish(self) -> None:
        """What every runner does last: releases the handles left, newest binding first, frees
        the containers left, newest first, and reports what was not dropped exactly once."""
        for name in reversed(list(self.vars)):
            self.unbind(name)
        for c in reversed(list(self.containers.values())):
            if not c.freed:
                self.free(c)
        for o in self.made:
            n = self.dropped.count(o.name)
            if n != 1:
                self.trace.append(f"dropped twice: {o.name}" if n else f"never dropped: {o.name}")


def arg_kind(a: Any) -> str:
    return "str" if isinstance(a, str) else "f64" if isinstance(a, float) else "i64"


def args_text(args: list[Any]) -> str:
    if not args:
        return ""
    shown = [f'"{a}"' if isinstance(a, str) else ("%g" % a if isinstance(a, float) else str(a)) for a in args]
    return "(" + ",".join(shown) + ")"


def by_name(name: str) -> tuple[str, int]:
    """The C runner's order of names: the part before the first digit, then its number (then
    the whole name)."""
    i = 0
    while i < len(name) and not name[i].isdigit():
        i += 1
    digits = ""
    for ch in name[i:]:
        if not ch.isdigit():
            break
        digits += ch
    return name[:i], int(digits or 0)


def model_trace(scenario: dict[str, Any], setups: dict[str, list[dict[str, Any]]]) -> list[str]:
    w = World(setups)
    for s in scenario["steps"]:
        w.step(s)
    w.finish()
    return w.trace[:MAX_TRACE]


# ---- command line -------------------------------------------------------------------------------

def diff(got: list[str], want: list[str]) -> str:
    lines = []
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else ""
        w = want[i] if i < len(want) else ""
        lines.append(f"  {'!' if g != w else ' '} {w:<60} | {g}")
    return "\n".join(lines)


def reduce(path: str, runner: str) -> int:
    """Shrinks a logged scenario the model and the C runner disagree on: drops steps one at a
    time while they still disagree, then prints what is left and both traces."""
    import subprocess
    import tempfile
    sys.path.insert(0, str(Path(__file__).parent))
    from tolines import convert

    def library(steps: list[dict[str, Any]]) -> list[str]:
        with tempfile.NamedTemporaryFile("w", suffix=".lines") as f:
            f.write("\n".join(convert({"scenarios": [{"name": "r", "steps": steps, "trace": []}]})) + "\n")
            f.flush()
            out = subprocess.run([runner, "-p", f.name], capture_output=True, text=True).stdout.splitlines()
        return [line for line in out[out.index("## r") + 1:] if line and not line.startswith("c: ")]

    def differ(steps: list[dict[str, Any]]) -> bool:
        try:
            mine = model_trace({"steps": steps}, {})
        except Exception:   # noqa: BLE001 - a step list the model cannot follow is no reduction
            return False
        return mine != library(steps)

    steps = from_lines(Path(path).read_text())[0]["steps"]
    if not differ(steps):
        print("model.py: the model and the runner agree on it")
        return 0
    i = 0
    while i < len(steps):
        if differ(steps[:i] + steps[i + 1:]):
            steps = steps[:i] + steps[i + 1:]
        else:
            i += 1
    # Then the parts of what is left: a list item (an op, a callback, a slot) or an optional field at a
    # time, anywhere in a step, as long as they still disagree (a variant the model cannot follow is no reduction).
    smaller = True
    while smaller:
        smaller = False
        for variant in _one_part_less(steps):
            if differ(variant):
                steps, smaller = variant, True
                break
    for step in steps:
        print(json.dumps(step))
    print(f"the library's trace (left), the model's (right):\n{diff(model_trace({'steps': steps}, {}), library(steps))}")
    return 1


def _one_part_less(value: Any, top: bool = True) -> Any:
    """Every copy of `value` with one list item or one dict field (not a step's first: what it is) left out."""
    if isinstance(value, list):
        for i in range(len(value)):
            if not top:
                yield value[:i] + value[i + 1:]
            for inner in _one_part_less(value[i], False):
                yield value[:i] + [inner] + value[i + 1:]
    elif isinstance(value, dict):
        keys = list(value)
        for k in keys[1:]:
            yield {x: v for x, v in value.items() if x != k}
        for k in keys:
            for inner in _one_part_less(value[k], False):
                yield {**value, k: inner}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(Path(__file__).with_name("scenarios.json")))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--print", action="store_true")
    mode.add_argument("--fill", action="store_true")
    mode.add_argument("--replay", action="store_true")
    mode.add_argument("--reduce", metavar="LOG", help="shrink a logged scenario the runner and the model disagree on")
    ap.add_argument("--runner", default="build/tests/conformance", help="with --reduce: the C runner")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args(argv)
    if a.reduce:
        return reduce(a.reduce, a.runner)
    if a.replay:
        return replay(a.names)
    with open(a.corpus) as f:
        corpus = json.load(f)
    setups = corpus.get("setups", {})
    chosen = [s for s in corpus["scenarios"] if not a.names or s["name"] in a.names]
    failed = 0
    filled: dict[str, list[str]] = {}
    for s in chosen:
        got = model_trace(s, setups)
        if a.print:
            print(f"## {s['name']}")
            print("\n".join(got))
        elif a.fill:
            filled[s["name"]] = got
        elif got != s["trace"]:
            failed += 1
            print(f"FAIL {s['name']}: the recorded trace (left) is not the model's (right)")
            print(diff(got, s["trace"]))
    if a.fill:
        path = Path(a.corpus)
        path.write_text(fill_text(path.read_text(), filled))
        print(f"model.py: wrote {len(chosen)} traces into {a.corpus}")
    if a.check:
        failed += check_renumbering()
        print(f"model.py: {len(chosen) - failed} scenarios agree with the model, {failed} do not")
    return 1 if failed else 0


def fill_text(text: str, traces: dict[str, list[str]]) -> str:
    """Rewrites the `trace` arrays of the named scenarios in the corpus's own text, keeping its
    layout (one trace line per line, or one line for a scenario written on one)."""
    decoder = json.JSONDecoder()
    for name, trace in traces.items():
        at = text.index(f'{{"name": {json.dumps(name)}')
        start = text.index('"trace": [', at) + len('"trace": ')
        _, end = decoder.raw_decode(text, start)
        if "\n" in text[start:end]:
            column = start - len('"trace": ') - text.rindex("\n", 0, start) - 1
            body = ",\n".join(" " * (column + 1) + json.dumps(line) for line in trace)
            new = "[\n" + body + "\n" + " " * column + "]"
        else:
            new = json.dumps(trace)
        text = text[:start] + new + text[end:]
    return text


def from_lines(text: str) -> list[dict[str, Any]]:
    """The scenarios of the line form (conformance/tolines.py writes it, the fuzz target's
    differential mode logs it, the C runner reads it), back as the corpus's steps."""
    def fields(parts: list[str]) -> dict[str, str]:
        return dict(p.split("=", 1) for p in parts)
    scenarios: list[dict[str, Any]] = []
    reg: dict[str, Any] = {}
    cb: dict[str, Any] = {}
    act: dict[str, Any] = {}
    for raw in text.splitlines():
        if not raw:
            continue
        tag, *parts = raw.split("\t")
        f = fields(parts)
        if tag == "S":
            scenario: dict[str, Any] = {"name": f["name"], "steps": [], "trace": []}
            scenarios.append(scenario)
        elif tag == "reg":
            reg = {"register": f["key"], "in": f["in"], "scope": f["scope"]}
            reg.update({k: f[k] for k in ("fail", "fail_when", "mode") if k in f})
        elif tag == "slot":
            kind, key = f["kind"], f.get("key")
            reg.setdefault("deps", []).append(key if kind == "dep" else f"{kind}:{key}" if key else kind)
        elif tag in ("fop", "cop"):
            entry = {k: (True if k in ("else_weak", "propagate") else v) for k, v in f.items()}
            (reg if tag == "fop" else cb).setdefault("ops", []).append(entry)
        elif tag == "cb":
            cb = {k: f[k] for k in ("fail", "fail_when") if k in f}
            if f["form"] == "declared":
                cb["targets"] = []
            reg.setdefault("complete", []).append(cb)
        elif tag == "tgt":
            cb["targets"].append(f["key"] if f["kind"] == "dep" else f"weak:{f['key']}")
        elif tag == "endreg":
            scenario["steps"].append(reg)
        elif tag == "do":
            op, arg = f.pop("op"), f.pop("arg0")
            act = {op: True if op == "live" else arg}
            act.update({k: (v != "0") if k == "on" else v for k, v in f.items()})
        elif tag == "arg":
            kind, v = next(iter(f.items()))
            act.setdefault("args", []).append(int(v) if kind == "i64" else float(v) if kind == "f64" else v)
        elif tag == "end":
            scenario["steps"].append(act)
        elif tag == "threads":
            act = {"threads": int(f["count"]), "repeat": int(f["repeat"]), "body": [], "writer": [],
                   "writer_repeat": int(f.get("writer_repeat", "1"))}
            if "report" in f:
                act["report"] = f["report"].split(",")
        elif tag in ("tstep", "wstep"):
            op = f.pop("op")
            # a thread's registration: the reg block just read, then this step
            step = scenario["steps"].pop() if op == "register" else {op: f.pop("arg0", ""), **f}
            act["body" if tag == "tstep" else "writer"].append(step)
        elif tag == "endthreads":
            scenario["steps"].append(act)
        elif tag == "T":
            scenario["trace"].append(f["line"])
        elif tag not in ("msg", "E", "known", "flaky", "skip"):
            raise ValueError(f"the model cannot replay a {tag} record")
    return scenarios


# An instance's name in a fuzz log: the runner's key (fuzz/api_fuzz.c: K0-K4, Kx, a decorator's K0#a),
# then its number among that key's instances.
FUZZ_INSTANCE = re.compile(r"\b(K[0-9x](?:#[0-9a-z])?)([0-9]+)\b")


def renumbered_after_threads(trace: list[str]) -> list[str]:
    """A threads step reports only counts that do not depend on timing; how many instances of a key it
    does not report the workers made does (threads sharing a live weak instance make fewer than the
    model's workers, run one after another). So from the first threads line on, each key's instances
    first named there are numbered again by first appearance (`K3~1`); identities are still compared."""
    at = next((i for i, line in enumerate(trace) if line.startswith("threads:")), None)
    if at is None:
        return trace
    before = {m.group(0) for line in trace[:at] for m in FUZZ_INSTANCE.finditer(line)}
    names: dict[str, str] = {}
    counts: dict[str, int] = {}

    def rename(m: "re.Match[str]") -> str:
        name = m.group(0)
        if name in before:
            return name
        if name not in names:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
            names[name] = f"{m.group(1)}~{counts[m.group(1)]}"
        return names[name]
    return trace[:at] + [FUZZ_INSTANCE.sub(rename, line) for line in trace[at:]]


def check_renumbering() -> int:
    """`--check` runs this: the model's run of a threads step over a weak key makes an instance per
    worker, the library's workers may share one; what follows must compare equal, a swap must not."""
    model = ["make K01()", "threads: make K1=2", "make K33(); resolve K1=K12", "drop K33", "drop K01"]
    library = ["make K01()", "threads: make K1=2", "make K32(); resolve K1=K12", "drop K32", "drop K01"]
    swapped = ["make K01()", "threads: make K1=2", "make K32(); resolve K1=K12", "drop K31", "drop K01"]
    same = renumbered_after_threads(model) == renumbered_after_threads(library)
    differs = renumbered_after_threads(model) != renumbered_after_threads(swapped)
    if same and differs:
        return 0
    print("FAIL renumbered_after_threads: instances after a threads step are not compared by identity")
    return 1


def replay(paths: list[str]) -> int:
    """Differential fuzzing: each file holds scenarios in the line form with the trace the
    library gave (T records); every one must be the model's, destructors' order included."""
    failed = total = skipped = 0
    for p in paths:
        for s in from_lines(Path(p).read_text()):
            total += 1
            if "threads: over budget" in s["trace"]:   # the runner's THREADS_OP_BUDGET: which ops
                skipped += 1                           # ran depended on the interleaving
                continue
            try:
                got = model_trace(s, {})
            except Exception as exc:   # the model cannot follow the log: a finding too
                print(f"FAIL {p} {s['name']}: the model raised {exc!r}")
                failed += 1
                continue
            if got != s["trace"] and renumbered_after_threads(got) != renumbered_after_threads(s["trace"]):
                failed += 1
                print(f"FAIL {p} {s['name']}: the library's trace (left) is not the model's (right)")
                print(diff(got, s["trace"]))
    print(f"model.py: {total - failed - skipped} logged scenarios agree with the model"
          f", {failed} do not"
          f"{f', {skipped} set aside (a threads step over the runner budget)' if skipped else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
