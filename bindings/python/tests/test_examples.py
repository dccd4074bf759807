"""The examples run as tests: examples/python/cycles.py, seeds.py, service.py and the polyglot one (C + Python)."""

import shutil

import pytest
from conftest import REPO_ROOT, load_script, run_python_ok

CYCLES = REPO_ROOT / "examples" / "python" / "cycles.py"
POLYGLOT = REPO_ROOT / "examples" / "polyglot" / "polyglot.py"
SERVICE = REPO_ROOT / "examples" / "python" / "service.py"
SEEDS = REPO_ROOT / "examples" / "python" / "seeds.py"


def test_cycles_example():
    out = run_python_ok(CYCLES)
    assert "p.child.parent() is p: True; factory calls: {'Parent': 1, 'Child': 1}" in out
    assert 'CycleError: the constructors of "A" -> "B" -> "A" need each other' in out
    assert "RetainCycleError caused by RetainCycleError" in out
    assert out.rstrip().endswith("cycles ok")


def test_seeds_example():
    """The seeds' cycles (Resolver, Swinject, Dip): each factory and each teardown once."""
    out = run_python_ok(SEEDS)
    for scenario in ("Resolver A(B) B(C) C{weak a}, resolveProperties",
                     "Resolver A(B) B(C) C(weak-lazy a), WeakLazyInjected",
                     "Swinject Parent(Child) Child{weak parent}, initCompleted",
                     "Swinject Parent{child} Child{weak parent}, property/property",
                     "Dip Client(Server) Server{weak client}, resolvingProperties"):
        assert f"{scenario}: ok (each factory once, each teardown once)" in out
    assert out.rstrip().endswith("seeds ok")


def test_service_example():
    out = run_python_ok(SERVICE)
    assert "/a user=1 one session=True cycle closed=True" in out
    assert "/async user=7 one session=True cycle closed=True" in out
    assert ("events: open db, begin /a, commit /a, begin /b, commit /b, begin /async, commit /async, "
            "flush cache /async, close db") in out
    assert out.rstrip().endswith("service ok")


def _polyglot_module():
    return load_script(POLYGLOT, "polyglot_example")


@pytest.fixture(scope="module")
def parts_library(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    return _polyglot_module().build_parts(tmp_path_factory.mktemp("parts"))


def test_polyglot_in_a_fresh_process(parts_library):
    out = run_python_ok(POLYGLOT, parts_library)
    assert "destroyed: {'configs_dropped': 2, 'servers_dropped': 2} + Python {'Handler': 2, 'PyLogger': 2}" in out
    assert out.rstrip().endswith("polyglot ok")


def test_polyglot_in_this_process(parts_library):
    module = _polyglot_module()  # fresh classes and counters
    report = module.run(parts_library)
    assert report["made"] == {"configs_made": 2, "servers_made": 2}
    assert report["dropped"] == {"configs_dropped": 2, "servers_dropped": 2}
    assert report["python_destroyed"] == {"Handler": 2, "PyLogger": 2}
    assert '"Server" -> "Handler"' in report["dot"]


def test_polyglot_compiles_from_the_script():
    """Without an argument the script compiles parts.c itself."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    out = run_python_ok(POLYGLOT)
    assert "polyglot ok" in out


def test_readme_first_example_runs():
    text = (REPO_ROOT / "bindings" / "python" / "README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
