"""make test's own machinery: the Debian set-up's message when it may not install, the venv
set-up's failure when pip cannot install, which interpreters the Python suite runs on, and the
closing summary's counts (`make test-python` runs this file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "Tests" / "setup"


def stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def test_system_setup_names_the_apt_get_command_when_not_root(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    stub(bin_, "dpkg-query", "exit 1")  # nothing installed
    stub(bin_, "id", "echo 1000")       # not root
    stub(bin_, "apt-get", "echo apt-get ran >&2; exit 9")
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}")
    result = subprocess.run(["sh", str(SETUP / "system.sh"), sys.executable], env=env, capture_output=True, text=True)
    assert result.returncode == 1
    assert "apt-get ran" not in result.stderr
    assert "sudo apt-get update && sudo apt-get install -y libffi-dev pkgconf graphviz" in result.stderr
    assert "cmake valgrind" in result.stderr


def test_system_setup_installs_as_root(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "apt.log"
    stub(bin_, "dpkg-query", 'case "$3" in cmake|graphviz) exit 1 ;; esac; echo "install ok installed"')
    stub(bin_, "id", "echo 0")
    stub(bin_, "apt-get", f'echo "$@" >> {log}')
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}")
    result = subprocess.run(["sh", str(SETUP / "system.sh"), sys.executable], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert calls[0] == "update -qq"
    assert calls[1].startswith("install -y -qq") and calls[1].split()[3:] == ["graphviz", "cmake"]


def test_venv_setup_fails_saying_pip_could_not_install(tmp_path):
    env = dict(os.environ, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_FIND_LINKS="", PIP_RETRIES="0",
               PIP_TIMEOUT="2", PIP_NO_CACHE_DIR="1")
    result = subprocess.run(["sh", str(SETUP / "venv.sh"), sys.executable, str(tmp_path / "venv")], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "pip could not install" in result.stderr and "Tests/requirements.txt" in result.stderr
    assert not (tmp_path / "venv" / "ready").exists()


def test_pythons_are_the_oldest_and_newest_besides_the_default(tmp_path):
    for minor in (9, 10, 11, 13):
        folder = tmp_path / f"versions/3.{minor}.1/bin"
        folder.mkdir(parents=True)
        stub(folder, f"python3.{minor}", f"echo {minor}")
    default = tmp_path / "python3"
    stub(tmp_path, "python3", "echo 11")
    env = dict(os.environ, PYENV_ROOT=str(tmp_path), PATH="/usr/bin:/bin")

    def found(mode: str) -> list[str]:
        out = subprocess.run(["sh", str(SETUP / "pythons.sh"), mode, str(default)], env=env, capture_output=True,
                             text=True).stdout.split()
        return [Path(p).name for p in out]

    assert found("ends") == ["python3.9", "python3.13"]
    assert found("all") == ["python3.9", "python3.10", "python3.13"]


def tally(tmp_path: Path, logs: dict[str, tuple[str, int]]) -> subprocess.CompletedProcess[str]:
    for suite, (text, status) in logs.items():
        (tmp_path / f"{suite}.log").write_text(text)
        (tmp_path / f"{suite}.status").write_text(f"{status}\n")
    return subprocess.run([sys.executable, str(ROOT / "Tests" / "tally.py"), str(tmp_path), *logs],
                          capture_output=True, text=True)


def test_the_summary_counts_every_suite_and_names_each_skip(tmp_path):
    result = tally(tmp_path, {
        "test-c": ("ok   a\nok   b\nSKIP dot -Tsvg check: graphviz is not installed\n2 passed, 0 failed\n", 0),
        "test-python": ("..s\nSKIPPED [1] tests/test_x.py:3: TETHER_SKIP_PIP=1\n2 passed, 1 skipped in 0.1s\n", 0),
        "test-swift": ("✔ Test run with 40 tests in 3 suites passed after 1.2 seconds.\n", 0),
    })
    assert result.returncode == 0, result.stdout
    out = result.stdout
    assert "test-c: dot -Tsvg check: graphviz is not installed" in out
    assert "test-python: tests/test_x.py:3: TETHER_SKIP_PIP=1" in out
    assert "all 3 suites passed" not in out and "3 suites passed, 2 checks skipped" in out
    assert out.rstrip().endswith("total: 44 passed, 0 failed, 2 skipped")


def test_the_summary_fails_when_a_suite_failed(tmp_path):
    result = tally(tmp_path, {"test-c": ("ok   a\nFAIL b\n", 1), "test-abi": ("ok   x\n", 0)})
    assert result.returncode == 1
    assert "1 of 2 suites FAILED: test-c" in result.stdout
    assert result.stdout.rstrip().endswith("total: 2 passed, 1 failed, 0 skipped")


def test_nothing_skipped_says_so(tmp_path):
    result = tally(tmp_path, {"test-c": ("ok   a\n", 0)})
    assert result.returncode == 0
    assert "all 1 suites passed, nothing skipped" in result.stdout
