#!/usr/bin/env python3
"""Writes README.md's performance table (between its `bench:begin` and `bench:end` markers) from
the run `make bench` just made: build/bench/c.md (benchmarks/c/bench.c) and build/bench/python.md
(benchmarks/python/bench.py), plus, when the C benchmark has `-t N`, its rows from 2 threads.

Single-thread rows: each C row named `S1`..`S4` `... by interned key`, but the trace hook's (ns, and the ratio to the
hand-written C of the same run), with the Python tether row's figure for that scenario.
Thread rows: `bench -t 2`'s lines `| shape | threads=2 | ops/s | Nx | machine Mx | K% | ...`, when its
usage (`bench -h`) offers `-t N`; otherwise none.
Usage: python3 benchmarks/readme_table.py [build/bench]   (`make bench` runs it)
"""
import datetime
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- bench:begin (written by `make bench`: benchmarks/readme_table.py) -->", "<!-- bench:end -->"
C_ROW = re.compile(r"^\| (S[1-4]) (.*?by interned key.*?) \| ([\d.]+) ns/op \| ([\d.]+) \| ([\d.]+x) \|")
PY_ROW = re.compile(r"^\| tether \| (.*) \|$")
# the row's first six columns (the CPU-time and spread columns after them are left out of README.md's table)
THREAD_ROW = re.compile(r"^\| (.+?) \| threads=(\d+) \| (\d+) \| ([\d.]+x) \| machine ([\d.]+x) \| ([\d.]+%) \|")


def run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


def python_figures(text: str) -> dict[str, str]:
    """The tether row of bench.py's table: S1..S4 -> its first figure (µs per resolve)."""
    for line in text.splitlines():
        m = PY_ROW.match(line)
        if m:
            cells = [c.strip() for c in m.group(1).split("|")]
            return {f"S{i + 1}": cell.split(";")[0].strip() for i, cell in enumerate(cells[:4])}
    return {}


def thread_rows(bench: Path) -> list[str]:
    usage = run(str(bench), "-h")
    if "-t N" not in usage.stderr + usage.stdout:
        return []
    out = run(str(bench), "-t", "2")
    rows = [THREAD_ROW.match(line) for line in out.stdout.splitlines()]
    return [f"| {m.group(1)} | {m.group(3)} | {m.group(4)} | {m.group(5)} | {m.group(6)} |" for m in rows if m]


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bench"
    c_md, py_md = (out / "c.md").read_text(), (out / "python.md").read_text()
    python = python_figures(py_md)
    rows = []
    for line in c_md.splitlines():
        m = C_ROW.match(line)
        if m and "trace hook" not in line:  # (the trace rows diagnose the hook's cost)
            scenario, name, ns, _, ratio = m.groups()
            name = re.sub(r",? ?by interned key,? ?", " ", name).strip(" =,")
            rows.append(f"| {scenario} {name} | "
                        f"{ns} ns | {ratio} | {python.pop(scenario, '—')} |")
    if not rows:
        sys.exit(f"readme_table: no `S1..S4 ... by interned key` rows in {out / 'c.md'}: did the C benchmark run?")
    commit = run("git", "rev-parse", "--short", "HEAD").stdout.strip() or "?"
    if run("git", "status", "--porcelain", "--untracked-files=no").stdout.strip():
        commit += " + uncommitted changes"
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor() or "?")
    cores = len(re.findall(r"^processor\s*:", Path("/proc/cpuinfo").read_text(), re.M))
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [BEGIN,
             f"Per resolve, release build: `make bench` on {when}, commit {commit}, {cpu} ({cores} cores, "
             f"{platform.machine()}, load average {os.getloadavg()[1]:.1f} over the last 5 minutes: other "
             f"work on the machine slows every figure), Python {python_version(py_md)}.",
             "",
             "| scenario | C (by interned key) | x hand-written C | Python |",
             "|---|---|---|---|", *rows]
    threads = thread_rows(out / "bench-c")
    if threads:
        lines += ["", "From 2 threads on one container (`bench -t 2`): aggregate throughput, its scaling over 1 "
                  "thread, the machine's own scaling of a CPU loop in the same rounds, and the share kept.", "",
                  "| shape | ops/s | scaling vs 1 thread | machine | kept |", "|---|---|---|---|---|", *threads]
    lines.append(END)
    readme = ROOT / "README.md"
    text = readme.read_text()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"readme_table: README.md lacks the markers {BEGIN} ... {END}")
    readme.write_text(text[:start] + "\n".join(lines) + text[end + len(END):])
    print("\n".join(lines))
    return 0


def python_version(py_md: str) -> str:
    m = re.search(r"^Python (\S+)", py_md, re.M)
    return m.group(1) if m else "?"


if __name__ == "__main__":
    sys.exit(main())
