"""Turns conformance/scenarios.json into the line format the C runner reads (C has no JSON parser).

One record per line, fields separated by tabs: the record's name, then `field=value` pairs (values
never hold a tab or a newline). Setups (`use`) are expanded here. Records, in order:
  S name=N                          a scenario starts
  known path=P reason=R / flaky ... / skip ...   a known failure / one that happens only
                                    sometimes / a path that cannot express the scenario
  reg key= in= scope= [fail= fail_when=]
    slot kind= [key=]               its factory's slots, in order
    fop get=|weak=|resolve=|call= [in=] [else_weak=1] [propagate=1]    factory ops, in order
    cb form=resolver|declared [fail= fail_when=]
      cop ... (as fop) / tgt kind=dep|weak key=
  endreg
  <action> ...                      resolve/release/clone/downgrade/upgrade/peek/container/free/
    arg i64=|f64=|str=              reset/validate/flag/live/set_scope/resolve_all/factory, their fields as in the JSON
    msg has=|lacks=
  end                               the action's end
  threads count= repeat= writer_repeat= [report=K,K]
    tstep op= arg0= [in= as=] / wstep ...  a worker's / the writer's steps ("reg ..." block before
                                           a step op=register: the thread registers it)
  endthreads
  T line=L                          one expected trace line
  E                                 the scenario ends
Usage: python3 tolines.py scenarios.json out.lines
"""

from __future__ import annotations

import json
import sys
from typing import Any

ACTIONS = ("resolve", "release", "clone", "downgrade", "upgrade", "peek", "container", "free", "reset",
           "validate", "flag", "live", "set_scope", "resolve_all", "factory", "clear_override")


def text(value: Any) -> str:
    s = value if isinstance(value, str) else json.dumps(value)
    if "\t" in s or "\n" in s:
        raise ValueError(f"a tab or newline in {s!r}")
    return s


def record(tag: str, **fields: Any) -> str:
    return "\t".join([tag] + [f"{k}={text(v)}" for k, v in fields.items() if v is not None])


def ops(tag: str, entries: list[dict[str, Any]]) -> list[str]:
    out = []
    for op in entries:
        fields = {k: (1 if v is True else v) for k, v in op.items() if v is not False}
        out.append(record(tag, **fields))
    return out


def step_lines(step: dict[str, Any], setups: dict[str, list[dict[str, Any]]]) -> list[str]:
    if "use" in step:
        return [line for inner in setups[step["use"]] for line in step_lines(inner, setups)]
    if "register" in step:
        lines = [record("reg", key=step["register"], **{"in": step.get("in", "root")},
                        scope=step.get("scope", "graph"), fail=step.get("fail"), fail_when=step.get("fail_when"),
                        mode=step.get("mode"))]
        for slot in step.get("deps", []):
            kind, _, key = slot.partition(":") if ":" in slot else ("dep", "", slot)
            if slot in ("i64", "f64", "str", "ptr", "context", "resolver"):
                kind, key = slot, ""
            lines.append(record("slot", kind=kind, key=key or None))
        lines += ops("fop", step.get("ops", []))
        for cb in step.get("complete", []):
            declared = "targets" in cb
            lines.append(record("cb", form="declared" if declared else "resolver", fail=cb.get("fail"),
                                fail_when=cb.get("fail_when")))
            for target in cb.get("targets", []):
                weak = target.startswith("weak:")
                lines.append(record("tgt", kind="weak" if weak else "dep", key=target[5:] if weak else target))
            lines += ops("cop", cb.get("ops", []))
        return lines + ["endreg"]
    if "threads" in step:
        lines = [record("threads", count=step["threads"], repeat=step.get("repeat", 1),
                        writer_repeat=step.get("writer_repeat", 1),
                        report=",".join(step["report"]) if "report" in step else None)]
        for tag, steps in (("tstep", step["body"]), ("wstep", step.get("writer", []))):
            for inner in steps:
                if "register" in inner:  # registered by the thread: the block, then its step
                    lines += step_lines(inner, setups) + [record(tag, op="register")]
                    continue
                op = next(a for a in ("resolve", "release", "clone", "downgrade", "upgrade") if a in inner)
                lines.append(record(tag, op=op, arg0=inner[op], **{"in": inner.get("in")}, **{"as": inner.get("as")}))
        return lines + ["endthreads"]
    action = next((a for a in ACTIONS if a in step), None)
    if action is None:
        raise ValueError(f"unknown step {step}")
    fields = {k: (1 if v is True else 0 if v is False else v) for k, v in step.items()
              if k not in ("args", "message", "message_lacks")}
    lines = [record("do", **{"op": action}, **{("arg0" if k == action else k): v for k, v in fields.items()})]
    for arg in step.get("args", []):
        kind = "str" if isinstance(arg, str) else "f64" if isinstance(arg, float) else "i64"
        lines.append(record("arg", **{kind: arg}))
    lines += [record("msg", has=m) for m in step.get("message", [])]
    lines += [record("msg", lacks=m) for m in step.get("message_lacks", [])]
    return lines + ["end"]


def convert(corpus: dict[str, Any]) -> list[str]:
    setups = corpus.get("setups", {})
    lines = []
    for s in corpus["scenarios"]:
        lines.append(record("S", name=s["name"]))
        for tag in ("known", "flaky", "skip"):
            lines += [record(tag, path=p, reason=r) for p, r in s.get(tag, {}).items()]
        for step in s["steps"]:
            lines += step_lines(step, setups)
        lines += [record("T", line=t) for t in s["trace"]]
        lines.append("E")
    return lines


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        out = convert(json.load(f))
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
