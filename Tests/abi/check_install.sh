#!/bin/sh
# Installs Tether into a temporary prefix (`make install PREFIX=...`): libtether.so.VERSION with
# its SONAME libtether.so.MAJOR and the usual symlinks; then builds a C program against the
# *installed* copy with `pkg-config --cflags --libs tether` (examples/c/cycles.c, or a small inline
# program while that example is absent): without an rpath unless asked for (`--variable=rpath`),
# run with LD_LIBRARY_PATH empty, then under valgrind with only the installed suppression file (no
# leak, definite or possible); finally moves the prefix: pkg-config's flags follow it.
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

version=$(sed -n 's/^#define TETHER_VERSION "\(.*\)"/\1/p' "$ROOT/include/tether.h")
soname=libtether.so.${version%%.*}
for f in lib/libtether.so.$version include/tether.h include/tether_binding.h include/tether_cdef.h lib/pkgconfig/tether.pc share/tether/tether.supp; do
    if [ -f "$prefix/$f" ]; then ok "installed $f"; else fail "installed $f"; fi
done
# The usual names: libtether.so -> libtether.so.MAJOR -> libtether.so.VERSION, whose SONAME is the middle one.
if [ "$(readlink "$prefix/lib/libtether.so")" = "$soname" ] && [ "$(readlink "$prefix/lib/$soname")" = "libtether.so.$version" ]; then
    ok "symlinks libtether.so -> $soname -> libtether.so.$version"
else fail "symlinks libtether.so -> $soname -> libtether.so.$version" "$(ls -l "$prefix/lib" | grep libtether)"; fi
got_soname=$(readelf -d "$prefix/lib/libtether.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$got_soname" = "$soname" ]; then ok "readelf -d: SONAME $soname"
else fail "readelf -d: SONAME $soname" "got: ${got_soname:-none}"; fi
if grep -q "$prefix" "$prefix/lib/pkgconfig/tether.pc"; then fail "tether.pc names no absolute prefix" "$(cat "$prefix/lib/pkgconfig/tether.pc")"
else ok "tether.pc names no absolute prefix (relative to \${pcfiledir})"; fi
if cmp -s "$ROOT/include/tether.h" "$prefix/include/tether.h"; then ok "installed header is include/tether.h"
else fail "installed header is include/tether.h"; fi

# 2. pkg-config finds it, with the header's version and paths into the prefix
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pc_version=$(pkg-config --modversion tether 2>&1)
if [ "$pc_version" = "$version" ]; then ok "pkg-config --modversion tether = $pc_version"
else fail "pkg-config --modversion tether = $version" "got: $pc_version"; fi
# pkg_config_points_into PREFIX: the -I and -L directories of `pkg-config --cflags --libs tether`
# are PREFIX/include and PREFIX/lib (${pcfiledir} leaves them as .../lib/pkgconfig/../..).
pkg_config_points_into() {
    flags=$(pkg-config --cflags --libs tether 2>&1)
    inc=$(printf '%s\n' $flags | sed -n 's/^-I//p') libdir=$(printf '%s\n' $flags | sed -n 's/^-L//p')
    if [ -n "$inc" ] && [ -n "$libdir" ] && [ "$(cd "$inc" 2>/dev/null && pwd -P)" = "$(cd "$1/include" && pwd -P)" ] \
       && [ "$(cd "$libdir" 2>/dev/null && pwd -P)" = "$(cd "$1/lib" && pwd -P)" ]; then
        ok "pkg-config --cflags --libs tether points into $1: $flags"
    else fail "pkg-config --cflags --libs tether points into $1" "$flags"; fi
}
pkg_config_points_into "$prefix"
flags=$(pkg-config --cflags --libs tether)
rpath=$(pkg-config --variable=rpath tether)

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
# -I/-L only from pkg-config: nothing points at the source tree or build/. --libs alone forces no
# rpath (the program then finds the library as ld.so is told: LD_LIBRARY_PATH here); with the
# `rpath` variable it finds it by itself.
if $CC -std=c11 -Wall -Wextra "$src" -o "$tmp/plain" $flags -lm -pthread > "$tmp/cc.log" 2>&1 \
   && $CC -std=c11 -Wall -Wextra "$src" -o "$tmp/prog" $flags $rpath -lm -pthread >> "$tmp/cc.log" 2>&1; then
    ok "compile $(basename "$src") with pkg-config flags (and with \$(pkg-config --variable=rpath tether))"
else fail "compile $(basename "$src") with pkg-config flags" "$(cat "$tmp/cc.log")"; finish; fi
if readelf -d "$tmp/plain" | grep -q -E 'RPATH|RUNPATH'; then fail "pkg-config --libs forces no rpath" "$(readelf -d "$tmp/plain" | grep -E 'RPATH|RUNPATH')"
elif out=$(env LD_LIBRARY_PATH="$prefix/lib" "$tmp/plain" 2>&1); then ok "pkg-config --libs forces no rpath; the program runs with LD_LIBRARY_PATH=<prefix>/lib"
else fail "the program without rpath runs with LD_LIBRARY_PATH" "$out"; fi
needed=$(readelf -d "$tmp/prog" | sed -n 's/.*(NEEDED).*\[\(libtether[^]]*\)\]/\1/p')
if [ "$needed" = "$soname" ]; then ok "the program records NEEDED $soname"
else fail "the program records NEEDED $soname" "got: ${needed:-none}"; fi

resolved=$(LD_LIBRARY_PATH= ldd "$tmp/prog" | sed -n "s/.*$soname => \([^ ]*\).*/\1/p")
if [ -n "$resolved" ] && [ "$(readlink -f "$resolved")" = "$(readlink -f "$prefix/lib/$soname")" ]; then ok "the program links the installed $soname"
else fail "the program links the installed $soname" "ldd says: ${resolved:-not found}"; fi

if out=$(env LD_LIBRARY_PATH= "$tmp/prog" 2>&1); then ok "run $(basename "$src") against the installed copy"
else fail "run $(basename "$src") against the installed copy" "$(printf '%s\n' "$out" | tail -10)"; fi

# 4. valgrind out of the box: what `make install` ships is enough to pass.
if ! command -v valgrind > /dev/null; then fail "valgrind over $(basename "$src")" "valgrind is not installed (apt-get install valgrind)"
elif out=$(env LD_LIBRARY_PATH= valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible \
              --suppressions="$prefix/share/tether/tether.supp" "$tmp/prog" 2>&1 > /dev/null); then
    ok "valgrind --leak-check=full --errors-for-leak-kinds=definite,possible over $(basename "$src") with the installed suppressions"
else fail "valgrind over $(basename "$src") with the installed suppressions" "$(printf '%s\n' "$out" | tail -30)"; fi

# 5. A moved prefix: pkg-config's flags follow it, and a program built with them runs from there.
mv "$prefix" "$tmp/moved"
export PKG_CONFIG_PATH="$tmp/moved/lib/pkgconfig"
pkg_config_points_into "$tmp/moved"
if $CC -std=c11 "$src" -o "$tmp/moved-prog" $(pkg-config --cflags --libs tether) $(pkg-config --variable=rpath tether) -lm -pthread > "$tmp/moved.log" 2>&1 \
   && env LD_LIBRARY_PATH= "$tmp/moved-prog" > "$tmp/moved.log" 2>&1 \
   && moved=$(LD_LIBRARY_PATH= ldd "$tmp/moved-prog" | sed -n "s/.*$soname => \([^ ]*\).*/\1/p") \
   && [ "$(readlink -f "$moved")" = "$(readlink -f "$tmp/moved/lib/$soname")" ]; then
    ok "a program built against the moved prefix runs with its library"
else fail "a program built against the moved prefix" "$(tail -10 "$tmp/moved.log")"; fi

finish
