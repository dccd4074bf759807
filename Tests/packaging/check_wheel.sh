#!/bin/sh
# The Python wheel as a user gets it:
#   - `pip wheel ./bindings/python` gives one py3-none-<platform> wheel (no Python ABI in its tag),
#     manylinux when `auditwheel show` agrees, holding the stripped library (<= 10 MB: stripped it is 8.0 MB on 2026-11-30, the plan VM's run modes
#     specialized, 9.3 MB on 2026-12-01, the run's step masks a type too: `WordMask` and `StepBits`, branch largemasks, 7.9 MB
#     on 2026-12-01 since branch shrink, the rare run modes sharing one unspecialized step loop, `Plan.executeRare`; unstripped it is several times that) and both headers;
#   - installed into a fresh venv and used from another directory, with no TETHER_LIBRARY and no
#     checkout on the path: it resolves, tether.include_dir() compiles C against the package;
#   - a build with no library to be had fails at install time, saying what to do;
#   - a source newer than the built library makes the next `pip wheel` rebuild it;
#   - `pip wheel` and `pip install ./bindings/python` leave the source tree as it was
#     (`git status --ignored` of bindings/python unchanged: no build/, no tether.egg-info/).
# Usage: sh Tests/packaging/check_wheel.sh   (after `make build`)
# Prints one line per check and "N passed, N failed"; exits non-zero on any failure.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
CC=${CC:-cc}
. "$ROOT/Tests/abi/checks.sh"
unset TETHER_LIBRARY
version=$(sed -n 's/^#define TETHER_VERSION "\(.*\)"/\1/p' "$ROOT/include/tether.h")
packaged=libtether.so.${version%%.*}  # the package's copy is named by the SONAME
tree_state() { git -C "$ROOT" status --ignored --porcelain -- bindings/python 2>/dev/null | grep -v '__pycache__/$'; }
tree_before=$(tree_state)

# 1. pip wheel
if (cd "$tmp" && "$PYTHON" -m pip wheel -q --no-deps -w "$tmp/dist" "$ROOT/bindings/python") > "$tmp/wheel.log" 2>&1; then
    ok "pip wheel ./bindings/python"
else fail "pip wheel ./bindings/python" "$(tail -20 "$tmp/wheel.log")"; finish; fi
wheel=$(ls "$tmp"/dist/tether-*.whl 2>/dev/null)
case "$(basename "$wheel")" in
    tether-*-py3-none-manylinux_*.whl|tether-*-py3-none-linux_*.whl) ok "one wheel for every Python 3: $(basename "$wheel")" ;;
    *) fail "wheel tagged py3-none-<platform>" "got: $(ls "$tmp/dist")" ;;
esac

# 2. auditwheel agrees with the platform tag (manylinux when the library qualifies).
tag=$(basename "$wheel" .whl | sed 's/.*-py3-none-//')
if "$PYTHON" -m auditwheel --version > /dev/null 2>&1; then
    show=$("$PYTHON" -m auditwheel show "$wheel" 2>&1 | tr '\n' ' ')
    case "$tag:$show" in
        manylinux_*:*"consistent with the following platform tag: \"$tag\""*) ok "auditwheel show: consistent with $tag" ;;
        linux_*:*) ok "not manylinux (auditwheel: $(printf '%s' "$show" | cut -c1-160))" ;;
        *) fail "auditwheel show agrees with $tag" "$show" ;;
    esac
else fail "auditwheel is installed (pip install auditwheel)"; fi

# 3. What is inside.
"$PYTHON" - "$wheel" > "$tmp/contents" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        print(info.filename, info.file_size)
EOF
size=$(sed -n "s|^tether/$packaged \([0-9]*\)\$|\1|p" "$tmp/contents")
if [ -n "$size" ] && [ "$size" -le 10000000 ]; then ok "tether/$packaged inside, stripped: $size bytes"
else fail "tether/$packaged inside, <= 10 MB" "size: ${size:-absent}"; fi
for h in tether.h tether_binding.h; do
    if grep -q "^tether/include/$h " "$tmp/contents"; then ok "tether/include/$h inside"; else fail "tether/include/$h inside"; fi
done

# 4. A fresh venv, used from another directory.
if "$PYTHON" -m venv "$tmp/venv" > "$tmp/venv.log" 2>&1 \
   && "$tmp/venv/bin/python" -m pip install -q --no-index --no-deps "$wheel" >> "$tmp/venv.log" 2>&1; then ok "pip install of the wheel into a fresh venv"
else fail "pip install of the wheel into a fresh venv" "$(tail -10 "$tmp/venv.log")"; finish; fi
mkdir -p "$tmp/elsewhere"
cat > "$tmp/elsewhere/use.py" <<'EOF'
import os, tether
class Child:
    parent = None
class Parent:
    def __init__(self, child: Child):
        self.child = child
with tether.Container() as c:
    c.register(Parent)
    c.register(Child, on_complete=lambda r, child: setattr(child, "parent", r.weak(Parent)))
    p = c.resolve(Parent)
    assert p.child.parent() is p
print(tether.library_path())
print(tether.include_dir())
EOF
if out=$(cd "$tmp/elsewhere" && env -u PYTHONPATH "$tmp/venv/bin/python" use.py 2>&1); then
    lib=$(printf '%s\n' "$out" | sed -n 1p)
    inc=$(printf '%s\n' "$out" | sed -n 2p)
    case "$lib" in "$tmp/venv/"*) ok "resolves a cycle with the venv's own library" ;; *) fail "uses the venv's own library" "$lib" ;; esac
    case "$inc" in "$tmp/venv/"*) ok "tether.include_dir() is inside the venv" ;; *) fail "tether.include_dir() inside the venv" "$inc" ;; esac
    cat > "$tmp/elsewhere/part.c" <<'EOF'
#include <string.h>
#include <tether.h>
#include <tether_binding.h>
int main(void) {
    tether_binding binding = TETHER_BINDING_INIT;
    return strcmp(tether_version(), TETHER_VERSION) == 0 && tether_binding_open(&binding) == TETHER_OK ? 0 : 1;
}
EOF
    if $CC -std=c11 -Wall -Wextra -Werror -I"$inc" "$tmp/elsewhere/part.c" -o "$tmp/elsewhere/part" "$lib" -Wl,-rpath,"$(dirname "$lib")" > "$tmp/cc.log" 2>&1 \
       && "$tmp/elsewhere/part"; then ok "a C part compiles against tether.include_dir() and runs with the package's library"
    else fail "a C part compiles against tether.include_dir()" "$(cat "$tmp/cc.log")"; fi
else fail "resolve from the installed wheel in another directory" "$out"; fi

# 4b. `pip install ./bindings/python` straight from the source tree, into another fresh venv.
if "$PYTHON" -m venv "$tmp/venv2" > "$tmp/venv2.log" 2>&1 \
   && (cd "$tmp" && "$tmp/venv2/bin/python" -m pip install -q --no-deps "$ROOT/bindings/python") >> "$tmp/venv2.log" 2>&1 \
   && (cd "$tmp/elsewhere" && env -u PYTHONPATH "$tmp/venv2/bin/python" use.py) >> "$tmp/venv2.log" 2>&1; then
    ok "pip install ./bindings/python into a fresh venv, then used"
else fail "pip install ./bindings/python into a fresh venv" "$(tail -10 "$tmp/venv2.log")"; fi

# 5. No library to be had: the install fails, saying what to do.
cp -r "$ROOT/bindings/python" "$tmp/lonely"
rm -f "$tmp/lonely/tether/libtether.so"*
if (cd "$tmp" && "$PYTHON" -m pip wheel --no-deps -w "$tmp/lonely-dist" "$tmp/lonely") > "$tmp/lonely.log" 2>&1; then
    fail "a build with no library fails" "$(tail -5 "$tmp/lonely.log")"
elif grep -q "TETHER_LIBRARY" "$tmp/lonely.log" && grep -q "make build" "$tmp/lonely.log"; then ok "no library to build or find: pip fails at install time and says what to do"
else fail "the failure says what to do" "$(tail -15 "$tmp/lonely.log")"; fi
if TETHER_LIBRARY=$tmp/missing.so "$PYTHON" -m pip wheel --no-deps -w "$tmp/missing-dist" "$ROOT/bindings/python" > "$tmp/missing.log" 2>&1; then
    fail "TETHER_LIBRARY naming no file fails"
elif grep -q "missing.so does not exist" "$tmp/missing.log"; then ok "TETHER_LIBRARY naming no file: pip fails and names it"
else fail "TETHER_LIBRARY naming no file: message" "$(tail -10 "$tmp/missing.log")"; fi

# 6. A source newer than the built library: the next wheel rebuilds it.
lib=$ROOT/build/lib/libtether.so
before=$(stat -c %Y "$lib")
sleep 1
touch "$ROOT/include/tether_binding.h"
if (cd "$tmp" && "$PYTHON" -m pip wheel -q --no-deps -w "$tmp/dist2" "$ROOT/bindings/python") > "$tmp/wheel2.log" 2>&1 \
   && [ "$(stat -c %Y "$lib")" -gt "$before" ]; then ok "a source newer than build/lib/libtether.so: pip wheel rebuilt it"
else fail "pip wheel rebuilds a stale library" "$(tail -10 "$tmp/wheel2.log")"; fi

# 7. The source tree is as it was: setup.py builds in a temporary folder.
if ! git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then echo "SKIP the source tree stays clean: $ROOT is not a git checkout"
elif [ "$(tree_state)" = "$tree_before" ]; then ok "pip wheel and pip install leave bindings/python clean (git status --ignored unchanged)"
else fail "pip wheel and pip install leave bindings/python clean" "$(tree_state)"; fi

finish
