#!/bin/sh
# Installs Tether into a temporary prefix (`make install PREFIX=...`), then builds a
# C program against the *installed* copy with `pkg-config --cflags --libs tether`
# (examples/c/cycles.c, or a small inline program while that example is absent)
# and runs it with LD_LIBRARY_PATH empty, then under valgrind with only the
# installed suppression file: no leak, definite or possible.
# Usage: sh Tests/abi/check_install.sh
# Prints one line per check and "N passed, N failed"; exits non-zero on any failure.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAKE=${MAKE:-make}
CC=${CC:-cc}
. "$ROOT/Tests/abi/checks.sh"
prefix=$tmp/prefix

# 1. make install
if $MAKE -C "$ROOT" --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1; then ok "make install PREFIX=$prefix"
else fail "make install PREFIX=..." "$(tail -20 "$tmp/install.log")"; finish; fi

for f in lib/libtether.so include/tether.h include/tether_binding.h include/tether_cdef.h lib/pkgconfig/tether.pc share/tether/tether.supp; do
    if [ -f "$prefix/$f" ]; then ok "installed $f"; else fail "installed $f"; fi
done
if cmp -s "$ROOT/include/tether.h" "$prefix/include/tether.h"; then ok "installed header is include/tether.h"
else fail "installed header is include/tether.h"; fi

# 2. pkg-config finds it, with the header's version and paths into the prefix
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
header_version=$(sed -n 's/^#define TETHER_VERSION "\(.*\)"/\1/p' "$ROOT/include/tether.h")
pc_version=$(pkg-config --modversion tether 2>&1)
if [ "$pc_version" = "$header_version" ]; then ok "pkg-config --modversion tether = $pc_version"
else fail "pkg-config --modversion tether = $header_version" "got: $pc_version"; fi
flags=$(pkg-config --cflags --libs tether 2>&1)
case "$flags" in
    *"-I$prefix/include"*"-L$prefix/lib"*) ok "pkg-config --cflags --libs tether points into the prefix: $flags" ;;
    *) fail "pkg-config --cflags --libs tether points into the prefix" "$flags" ;;
esac

# 3. Build and run a program against the installed copy.
src=$ROOT/examples/c/cycles.c
if [ ! -f "$src" ]; then
    src=$tmp/inline.c
    cat > "$src" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tether.h>

typedef struct logger { int lines; } logger;
typedef struct service { logger *log; } service;
static void *make_logger(void) { return calloc(1, sizeof(logger)); }
static void *make_service(logger *log) { service *s = malloc(sizeof *s); s->log = log; return s; }
static void drop(void *instance, void *context) { (void)context; free(instance); }

int main(void) {
    if (strcmp(tether_version(), TETHER_VERSION) != 0) return 1;
    tether_container *c;
    tether_registration *r;
    if (tether_container_new(NULL, &c) != TETHER_OK) return 1;
    tether_register(c, "Logger", (tether_fn)make_logger, NULL, 0, &r);
    tether_set_scope(r, TETHER_SCOPE_SINGLETON);
    tether_set_context(r, NULL, drop);
    tether_param deps[] = {TETHER_DEP("Logger")};
    tether_register(c, "Service", (tether_fn)make_service, deps, 1, &r);
    tether_set_context(r, NULL, drop);
    tether_ref *ref;
    if (tether_resolve(c, "Service", &ref) != TETHER_OK) { fprintf(stderr, "%s\n", tether_last_error()); return 1; }
    service *s = tether_ref_get(ref);
    printf("service %p uses logger %p (tether %s)\n", (void *)s, (void *)s->log, tether_version());
    tether_ref_release(ref);
    return tether_container_free(c) == TETHER_OK ? 0 : 1;
}
EOF
    echo "note: examples/c/cycles.c is absent; using an inline program"
fi
# -I/-L only from pkg-config: nothing points at the source tree or build/.
if $CC -std=c11 -Wall -Wextra "$src" -o "$tmp/prog" $flags -lm -pthread > "$tmp/cc.log" 2>&1; then ok "compile $(basename "$src") with pkg-config flags"
else fail "compile $(basename "$src") with pkg-config flags" "$(cat "$tmp/cc.log")"; finish; fi

resolved=$(LD_LIBRARY_PATH= ldd "$tmp/prog" | sed -n 's/.*libtether\.so => \([^ ]*\).*/\1/p')
if [ "$resolved" = "$prefix/lib/libtether.so" ]; then ok "the program links the installed libtether.so"
else fail "the program links the installed libtether.so" "ldd says: ${resolved:-not found}"; fi

if out=$(env LD_LIBRARY_PATH= "$tmp/prog" 2>&1); then ok "run $(basename "$src") against the installed copy"
else fail "run $(basename "$src") against the installed copy" "$(printf '%s\n' "$out" | tail -10)"; fi

# 4. valgrind out of the box: what `make install` ships is enough to pass.
if ! command -v valgrind > /dev/null; then fail "valgrind over $(basename "$src")" "valgrind is not installed (apt-get install valgrind)"
elif out=$(env LD_LIBRARY_PATH= valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible \
              --suppressions="$prefix/share/tether/tether.supp" "$tmp/prog" 2>&1 > /dev/null); then
    ok "valgrind --leak-check=full --errors-for-leak-kinds=definite,possible over $(basename "$src") with the installed suppressions"
else fail "valgrind over $(basename "$src") with the installed suppressions" "$(printf '%s\n' "$out" | tail -30)"; fi

finish
