"""Finding the library: explicit path, $TETHER_LIBRARY, the package's copy, the checkout, errors.

Each case runs in a child Python, since a process loads the library once.
"""

import ctypes.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PACKAGE_ROOT, REPO_ROOT, subprocess_env

import tether
from tether._cabi import BINDING_API_VERSION
from tether._loader import PACKAGED_FILE

PROBE = """
import sys, tether
try:
    {body}
except ImportError as exc:
    print(type(exc).__name__, "|", exc)
    sys.exit(3)
"""


def probe(body="print(tether.library_path())", pythonpath=None, cwd=None, **env_changes):
    env = subprocess_env()
    env.pop("TETHER_LIBRARY", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    code = PROBE.format(body=body)
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd or REPO_ROOT, capture_output=True,
                          text=True, timeout=60)


def copy_package(dest: Path, with_library: bool) -> Path:
    """A copy of the package outside the checkout (so the checkout fallback does not apply)."""
    shutil.copytree(PACKAGE_ROOT / "tether", dest / "tether", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.so.*"))
    if with_library:
        shutil.copy2(tether.library_path(), dest / "tether" / PACKAGED_FILE)
    return dest


def compile_fake(tmp_path: Path, source: str) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    src = tmp_path / "fake.c"
    src.write_text(source)
    out = tmp_path / "libfake.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(out)], check=True)
    return out


def test_environment_variable_wins():
    result = probe(TETHER_LIBRARY=tether.library_path())
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout.strip() == tether.library_path()


def test_environment_variable_pointing_nowhere_is_an_import_error():
    result = probe(TETHER_LIBRARY="/nonexistent/libtether.so")
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith("LibraryNotFoundError")
    assert "/nonexistent/libtether.so" in result.stdout
    assert "make build" in result.stdout


def test_source_checkout_fallback():
    result = probe()
    assert result.returncode == 0, result.stderr + result.stdout
    assert Path(result.stdout.strip()) == REPO_ROOT / "build" / "lib" / "libtether.so"


def test_package_copy(tmp_path):
    site = copy_package(tmp_path, with_library=True)
    result = probe(pythonpath=site, cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    assert Path(result.stdout.strip()) == site / "tether" / PACKAGED_FILE


def test_nothing_found_lists_where_it_looked(tmp_path):
    if ctypes.util.find_library("tether"):
        pytest.skip("a libtether is installed on the system path")
    site = copy_package(tmp_path, with_library=False)
    result = probe(pythonpath=site, cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    out = result.stdout
    assert out.startswith("LibraryNotFoundError")
    assert "TETHER_LIBRARY (not set)" in out
    assert str(site / "tether" / PACKAGED_FILE) in out
    assert "build/lib/libtether.so" in out and "make build" in out


def test_explicit_load(tmp_path):
    copy = tmp_path / "libtether-copy.so"
    shutil.copy2(tether.library_path(), copy)
    body = (
        f"print(tether.load({str(copy)!r}))\n"
        f"    print(tether.library_version())\n"
        f"    try:\n"
        f"        tether.load({tether.library_path()!r})\n"
        f"    except RuntimeError as exc:\n"
        f"        print('refused:', exc)"
    )
    result = probe(body, TETHER_LIBRARY="/nonexistent/ignored-when-load-is-explicit.so")
    assert result.returncode == 0, result.stderr + result.stdout
    lines = result.stdout.splitlines()
    assert lines[0] == str(copy) and lines[1] == tether.__version__
    assert lines[2].startswith("refused:") and "already loaded" in lines[2]


def test_version_mismatch_is_refused(tmp_path):
    fake = compile_fake(tmp_path, 'const char *tether_version(void) { return "9.9.0"; }\n')
    result = probe(TETHER_LIBRARY=str(fake))
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith("VersionMismatchError")
    assert "9.9.0" in result.stdout and tether.__version__ in result.stdout


def test_binding_protocol_mismatch_is_refused(tmp_path):
    fake = compile_fake(tmp_path, f'const char *tether_version(void) {{ return "{tether.__version__}"; }}\n'
                                  'int tether_binding_open(void *b) { (void)b; return 2; }\n'
                                  'const char *tether_last_error(void) { return "it speaks 1"; }\n')
    result = probe(TETHER_LIBRARY=str(fake))
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith("VersionMismatchError")
    assert f"binding protocol {BINDING_API_VERSION}" in result.stdout and "(it speaks 1)" in result.stdout


def test_incomplete_library_is_refused(tmp_path):
    fake = compile_fake(tmp_path, f'const char *tether_version(void) {{ return "{tether.__version__}"; }}\n')
    result = probe(TETHER_LIBRARY=str(fake))
    assert result.returncode == 3, result.stderr
    assert "not a complete libtether" in result.stdout


def test_package_version_matches_the_header():
    binding_header = (REPO_ROOT / "include" / "tether_binding.h").read_text()
    assert f"#define TETHER_BINDING_API_VERSION {BINDING_API_VERSION}\n" in binding_header
    header = (REPO_ROOT / "include" / "tether.h").read_text()
    assert f'#define TETHER_VERSION "{tether.__version__}"' in header
    assert f'version = "{tether.__version__}"' in (PACKAGE_ROOT / "pyproject.toml").read_text()


@pytest.mark.skipif(os.environ.get("TETHER_SKIP_PIP") == "1", reason="TETHER_SKIP_PIP=1")
def test_pip_install_carries_the_library(tmp_path):
    """`pip install ./bindings/python` puts libtether.so inside the installed package."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE_ROOT, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "tests",
                                                                     ".pytest_cache", "*.so", "*.so.*"))
    target = tmp_path / "site"
    env = subprocess_env(TETHER_LIBRARY=tether.library_path())
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(src)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    if result.returncode != 0:
        text = result.stdout + result.stderr
        if any(s in text for s in ("No matching distribution", "Could not find a version", "connection", "Network")):
            pytest.skip(f"pip could not fetch the build backend: {text[-300:]}")
        raise AssertionError(text)
    assert (target / "tether" / PACKAGED_FILE).is_file()
    assert (target / "tether" / "py.typed").is_file()
    check = probe(pythonpath=target, cwd=tmp_path)
    assert check.returncode == 0, check.stderr + check.stdout
    assert Path(check.stdout.strip()) == target / "tether" / PACKAGED_FILE
