#!/usr/bin/env python3
"""The README's quick start runs as printed: its compile line (`cc app.c ...`), run as printed at
the checkout's root, gives a program that starts with no LD_LIBRARY_PATH; its first ```c block is compiled with
-Wall -Wextra -Werror against the library (and again under ASan/LSan/UBSan, so a
destructor that never ran shows up as a leak) and run; its first ```python block
runs against the same library. Both must say the cycle closed and report the
missing key, and the C program its destructors, dependents first.

Usage: check_readme.py CC LIBDIR PYTHON   (`make test-readme`)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def first_block(text, lang):
    m = re.search(r"^```" + lang + r"\n(.*?)^```", text, re.S | re.M)
    if not m:
        sys.exit(f"FAIL README.md has no ```{lang} block")
    return m.group(1)


def expect(what, result, *fragments):
    out = result.stdout + result.stderr
    missing = [f for f in fragments if f not in result.stdout]
    if result.returncode != 0 or missing:
        print(f"FAIL {what}: exit {result.returncode}, missing {missing}\n{out}")
        return False
    print(f"ok   {what}")
    return True


def main():
    cc, libdir, python = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    readme = open(os.path.join(ROOT, "README.md")).read()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "quickstart.c")
        open(src, "w").write(first_block(readme, "c"))
        builds = [("plain", []),
                  ("asan", ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"])]
        for name, flags in builds:
            exe = os.path.join(tmp, f"quickstart_{name}")
            compiled = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *flags, f"-I{ROOT}/include", src,
                                       "-o", exe, f"-L{libdir}", "-ltether", f"-Wl,-rpath,{libdir}"],
                                      capture_output=True, text=True)
            if compiled.returncode != 0:
                print(f"FAIL README's first ```c block does not compile ({name}):\n{compiled.stderr}")
                ok = False
                continue
            env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1")
            ok &= expect(f"README's first ```c block compiles with -Wall -Wextra -Werror and runs ({name})",
                         subprocess.run([exe], capture_output=True, text=True, env=env, timeout=60),
                         "cycle closed: yes", 'as expected: no registration for "Logger"', "Parent freed\nChild freed\n")
        line = re.search(r"`(cc app\.c [^`]*)`", readme)
        if not line:
            print("FAIL README.md has no `cc app.c ...` compile line")
            ok = False
        else:
            exe = os.path.join(tmp, "a.out")
            shutil.copy(src, os.path.join(tmp, "app.c"))
            command = line.group(1).replace("app.c", shlex.quote(os.path.join(tmp, "app.c")), 1) + f" -o {shlex.quote(exe)}"
            compiled = subprocess.run(["sh", "-c", command], cwd=ROOT, capture_output=True, text=True,
                                      env=dict(os.environ, CC=cc))
            env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
            if compiled.returncode != 0:
                print(f"FAIL the README's compile line `{line.group(1)}`:\n{compiled.stderr}")
                ok = False
            else:
                ok &= expect(f"the README's compile line `{line.group(1)}` gives a program that runs",
                             subprocess.run([exe], capture_output=True, text=True, env=env, timeout=60),
                             "cycle closed: yes")
        script = os.path.join(tmp, "quickstart.py")
        open(script, "w").write(first_block(readme, "python"))
        env = dict(os.environ, TETHER_LIBRARY=os.path.join(libdir, "libtether.so"),
                   PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(ROOT, "bindings", "python"), os.environ.get("PYTHONPATH")])))
        ok &= expect("README's first ```python block runs",
                     subprocess.run([python, script], capture_output=True, text=True, env=env, timeout=60),
                     "cycle closed: True", 'as expected: "Logger" is not registered: register it first '
                     '(container.register("Logger", ...))')
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
