#!/bin/sh
# The CMake package as a C or C++ user meets it: `make install` into a temporary prefix, then a
# tiny CMake project does find_package(Tether 0.1 REQUIRED) + target_link_libraries(app PRIVATE
# Tether::tether), builds and runs. Also: a version the install cannot satisfy is refused, the
# prefix can be moved, and KEEP_SYMBOLS=1 installs the library unstripped.
# Usage: sh Tests/packaging/check_cmake.sh   (needs cmake; after `make build`)
# Prints one line per check and "N passed, N failed"; exits non-zero on any failure.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAKE=${MAKE:-make}
. "$ROOT/Tests/abi/checks.sh"
prefix=$tmp/prefix

if ! command -v cmake > /dev/null 2>&1; then fail "cmake is installed (apt-get install cmake)"; finish; fi

if $MAKE -C "$ROOT" --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1; then ok "make install PREFIX=$prefix"
else fail "make install" "$(tail -20 "$tmp/install.log")"; finish; fi
for f in lib/cmake/Tether/TetherConfig.cmake lib/cmake/Tether/TetherConfigVersion.cmake; do
    if [ -f "$prefix/$f" ]; then ok "installed $f"; else fail "installed $f"; fi
done

version=$(sed -n 's/^#define TETHER_VERSION "\(.*\)"/\1/p' "$ROOT/include/tether.h")
line=$(printf '%s' "$version" | cut -d. -f1-2)
project() {  # project DIR REQUESTED-VERSION
    mkdir -p "$1"
    cat > "$1/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(uses_tether C)
find_package(Tether $2 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE Tether::tether)
EOF
    cat > "$1/app.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tether.h>

static int drops;
static void *make_logger(void) { return malloc(1); }
static void *make_service(void *logger) { void **s = malloc(sizeof *s); *s = logger; return s; }
static void drop(void *instance, void *context) { (void)context; drops++; free(instance); }

int main(void) {
    tether_container *c;
    tether_registration *r;
    tether_ref *ref;
    if (strcmp(tether_version(), TETHER_VERSION) != 0 || tether_container_new(NULL, &c) != TETHER_OK) return 1;
    tether_register(c, "Logger", (tether_fn)make_logger, NULL, 0, &r);
    tether_set_context(r, NULL, drop);
    tether_param deps[] = {TETHER_DEP("Logger")};
    tether_register(c, "Service", (tether_fn)make_service, deps, 1, &r);
    tether_set_context(r, NULL, drop);
    if (tether_resolve(c, "Service", &ref) != TETHER_OK) { fprintf(stderr, "%s\n", tether_last_error()); return 1; }
    tether_ref_release(ref);
    tether_container_free(c);
    printf("tether %s, %d destructors\n", tether_version(), drops);
    return drops == 2 ? 0 : 1;
}
EOF
}

# 1. find_package + Tether::tether, built and run.
project "$tmp/app" "$line"
if cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/configure.log" 2>&1; then
    ok "find_package(Tether $line REQUIRED) against the install"
else fail "find_package(Tether $line REQUIRED)" "$(tail -15 "$tmp/configure.log")"; finish; fi
if cmake --build "$tmp/app/build" > "$tmp/build.log" 2>&1; then ok "target_link_libraries(app PRIVATE Tether::tether) builds"
else fail "app builds" "$(tail -15 "$tmp/build.log")"; finish; fi
if out=$(env LD_LIBRARY_PATH= "$tmp/app/build/app" 2>&1) && [ "$out" = "tether $version, 2 destructors" ]; then ok "app runs against the installed library: $out"
else fail "app runs" "$out"; fi
linked=$(LD_LIBRARY_PATH= ldd "$tmp/app/build/app" | sed -n 's/.*libtether\.so[.0-9]* => \([^ ]*\).*/\1/p')
if [ -n "$linked" ] && [ "$(readlink -f "$linked")" = "$(readlink -f "$prefix/lib/libtether.so")" ]; then ok "it links the installed libtether.so ($linked)"
else fail "it links the installed libtether.so" "ldd: ${linked:-not found}"; fi

# 2. The version file refuses what the install cannot satisfy.
project "$tmp/newer" "99.0"
if cmake -S "$tmp/newer" -B "$tmp/newer/build" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/newer.log" 2>&1; then
    fail "find_package(Tether 99.0) is refused"
elif grep -q "$version" "$tmp/newer.log"; then ok "find_package(Tether 99.0 REQUIRED) is refused, naming $version"
else fail "the refusal names the installed version" "$(tail -10 "$tmp/newer.log")"; fi

# 3. A moved prefix still works (paths are relative to the config file).
mv "$prefix" "$tmp/moved"
project "$tmp/moved-app" "$version"
if cmake -S "$tmp/moved-app" -B "$tmp/moved-app/build" -DCMAKE_PREFIX_PATH="$tmp/moved" > "$tmp/moved.log" 2>&1 \
   && cmake --build "$tmp/moved-app/build" >> "$tmp/moved.log" 2>&1 && "$tmp/moved-app/build/app" > /dev/null; then
    ok "a moved prefix is found and used (exact version $version)"
else fail "a moved prefix" "$(tail -10 "$tmp/moved.log")"; fi

# 4. KEEP_SYMBOLS=1 keeps the library's symbol table; the default strips it but for the
#    few Swift runtime symbols share/tether.supp (valgrind) names.
if $MAKE -C "$ROOT" --no-print-directory install PREFIX="$tmp/debug" KEEP_SYMBOLS=1 > "$tmp/debug.log" 2>&1 \
   && [ "$(nm "$tmp/debug/lib/libtether.so" 2>/dev/null | wc -l)" -gt 1000 ] \
   && [ "$(nm "$tmp/moved/lib/libtether.so" 2>/dev/null | wc -l)" -le 100 ]; then
    ok "make install KEEP_SYMBOLS=1 keeps symbols (.symtab); the default strips them (but those tether.supp names)"
else fail "KEEP_SYMBOLS=1 keeps symbols" "$(tail -5 "$tmp/debug.log")"; fi

finish
