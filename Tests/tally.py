#!/usr/bin/env python3
"""The closing summary of `make test`: for each suite's log (build/test-logs/SUITE.log, its exit
status in SUITE.status), what ran, failed and was skipped, then every skip with its reason, and
the total as one line `total: N passed, N failed, N skipped`.

What is counted, per log line:
  - `ok   X` / `FAIL X` / `SKIP X` (or `skip X`) / `xfail X`: one check each (the C harness, the
    shell checks, the conformance runner, the README check);
  - pytest's closing line (`311 passed, 8 skipped, 4 xfailed in 58.2s`), with `-rs`'s
    `SKIPPED [n] file:line: reason` lines for the reasons;
  - Swift Testing's `Test run with N tests ... passed|failed`.
A suite that exited non-zero is failed whatever it counted. Exit status: 1 if any suite failed.
Usage: tally.py LOGDIR SUITE...
"""
import re
import sys
from pathlib import Path

CHECK = re.compile(r"^(ok|FAIL|SKIP|skip|xfail)\s+(.*)")
PYTEST = re.compile(r"^=*\s*((?:\d+ (?:passed|failed|skipped|xfailed|xpassed|errors?|deselected|warnings?),? ?)+) in [\d.]+s")
PYTEST_SKIP = re.compile(r"^SKIPPED \[(\d+)\] (.*)")
SWIFT = re.compile(r"Test run with (\d+) tests?.* (passed|failed)")
SWIFT_ISSUES = re.compile(r"with (\d+) issues?")
# Swift Testing counts recorded known issues (withKnownIssue) and warnings in its total:
# "with 4 issues (including 3 known issues)" is one failure.
SWIFT_NOT_FAILURES = re.compile(r"(\d+) (?:known issues?|warnings?)")


def failures(log: str) -> list[str]:
    """What failed, for a table that is all a CI shows: Swift Testing's issue lines (`✘ Test X
    recorded an issue at File.swift:N: ...`, not known ones) and the harness's `FAIL` lines."""
    return [line.rstrip()[:300] for line in log.splitlines()
            if line.startswith("FAIL ") or (line.startswith("\u2718 Test") and "recorded an issue" in line)]


def count(log: str) -> tuple[dict[str, int], list[str]]:
    n = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}
    reasons: list[str] = []
    for line in log.splitlines():
        line = line.rstrip()
        m = CHECK.match(line)
        if m:
            kind = {"ok": "passed", "FAIL": "failed", "SKIP": "skipped", "skip": "skipped", "xfail": "xfailed"}[m.group(1)]
            n[kind] += 1
            if kind == "skipped":
                reasons.append(m.group(2))
            continue
        m = PYTEST.match(line)
        if m:
            for number, word in re.findall(r"(\d+) (\w+)", m.group(1)):
                word = {"error": "failed", "errors": "failed", "xpassed": "passed"}.get(word, word)
                if word in n:
                    n[word] += int(number)
            continue
        m = PYTEST_SKIP.match(line)
        if m:
            reasons.append(f"{m.group(2)} (x{m.group(1)})" if m.group(1) != "1" else m.group(2))
            continue
        m = SWIFT.search(line)
        if m:
            issues = SWIFT_ISSUES.search(line)
            bad = int(issues.group(1)) if m.group(2) == "failed" and issues else 0
            if bad:
                bad -= sum(int(k) for k in SWIFT_NOT_FAILURES.findall(line[issues.end():]))
                bad = max(bad, 1)  # a failed run failed something
            n["passed"] += int(m.group(1)) - min(bad, int(m.group(1)))
            n["failed"] += min(bad, int(m.group(1)))
    return n, reasons


def main() -> int:
    logdir, suites = Path(sys.argv[1]), sys.argv[2:]
    total = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}
    failed_suites, skips, failed_lines = [], [], []
    print(f"\n{'suite':<28} {'result':<7} {'passed':>7} {'failed':>7} {'skipped':>8} {'xfailed':>8}")
    for suite in suites:
        log = logdir / f"{suite}.log"
        status = (logdir / f"{suite}.status").read_text().strip() if (logdir / f"{suite}.status").exists() else "?"
        text = log.read_text(errors="replace") if log.exists() else ""
        n, reasons = count(text)
        result = "ok" if status == "0" else "FAILED"
        if status != "0":
            failed_suites.append(suite)
            failed_lines += [f"{suite}: {f}" for f in failures(text)[:20]]
        for k in total:
            total[k] += n[k]
        skips += [f"{suite}: {r}" for r in reasons]
        print(f"{suite:<28} {result:<7} {n['passed']:>7} {n['failed']:>7} {n['skipped']:>8} {n['xfailed']:>8}")
    if skips:
        print(f"\nskipped ({total['skipped']}):")
        for s in skips:
            print(f"  {s}")
    if failed_lines:
        print("\nfailures (the first 20 lines of each failed suite):")
        for f in failed_lines:
            print(f"  {f}")
    print()
    if failed_suites:
        print(f"{len(failed_suites)} of {len(suites)} suites FAILED: {' '.join(failed_suites)} (logs: {logdir}/SUITE.log)")
    elif total["skipped"]:
        print(f"{len(suites)} suites passed, {total['skipped']} checks skipped (listed above)")
    else:
        print(f"all {len(suites)} suites passed, nothing skipped")
    print(f"total: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
    return 1 if failed_suites else 0


if __name__ == "__main__":
    sys.exit(main())
