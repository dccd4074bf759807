#!/bin/sh
# Checks that the shipped libtether.so is self-contained and exports tether_* only:
#   - NEEDED lists only libc, libm, libstdc++, libgcc_s and the dynamic loader
#     (no libswift*, no libffi, no Foundation/dispatch);
#   - no RPATH/RUNPATH pointing into the Swift toolchain or the build tree;
#   - every defined dynamic FUNC/OBJECT symbol (GLOBAL or WEAK) starts with tether_,
#     and every function declared in include/tether.h and tether_binding.h is exported;
#   - a C program compiled on the fly loads it with LD_LIBRARY_PATH empty and the
#     toolchain (/opt/swift) off PATH, and uses it.
# Usage: sh Tests/abi/check_library.sh path/to/libtether.so
# Prints one line per check and "N passed, N failed"; exits non-zero on any failure.

LIB=${1:?usage: check_library.sh path/to/libtether.so}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HEADERS="$ROOT/include/tether.h $ROOT/include/tether_binding.h"
CC=${CC:-cc}
. "$ROOT/Tests/abi/checks.sh"

if [ ! -f "$LIB" ]; then
    fail "library exists: $LIB"
    echo "$passed passed, $failed failed"
    exit 1
fi
LIB=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")

# 1. It is a shared object.
if readelf -h "$LIB" 2>/dev/null | grep -q 'Type:.*DYN'; then ok "ELF shared object"
else fail "ELF shared object" "$(readelf -h "$LIB" 2>&1 | head -3)"; fi

# 1b. SONAME libtether.so.MAJOR (what programs record as NEEDED); beside a libtether.so (the link
#     name), that name is a symlink to the SONAME, itself one to libtether.so.VERSION.
version=$(sed -n 's/^#define TETHER_VERSION "\(.*\)"/\1/p' "$ROOT/include/tether.h")
soname=libtether.so.${version%%.*}
got=$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$got" = "$soname" ]; then ok "readelf -d: SONAME $soname"; else fail "readelf -d: SONAME $soname" "got: ${got:-none}"; fi
if [ "$(basename "$LIB")" = libtether.so ]; then
    dir=$(dirname "$LIB")
    if [ "$(readlink "$LIB")" = "$soname" ] && [ "$(readlink "$dir/$soname")" = "libtether.so.$version" ] && [ -f "$dir/libtether.so.$version" ]; then
        ok "libtether.so -> $soname -> libtether.so.$version"
    else fail "libtether.so -> $soname -> libtether.so.$version" "$(ls -l "$dir" | grep libtether)"; fi
fi

# 2. NEEDED: only the C/C++ runtime and the loader.
readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$tmp/needed"
bad_needed=$(grep -v -E '^(libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|ld-linux[-a-z0-9_.]*\.so\.[0-9]+)$' "$tmp/needed")
if [ -z "$bad_needed" ]; then ok "NEEDED only libc/libm/libstdc++/libgcc_s/ld-linux: $(tr '\n' ' ' < "$tmp/needed")"
else fail "NEEDED only libc/libm/libstdc++/libgcc_s/ld-linux" "unexpected: $bad_needed"; fi

if grep -q -i -E 'swift|dispatch|foundation' "$tmp/needed"; then fail "no Swift runtime library in NEEDED" "$(grep -i -E 'swift|dispatch|foundation' "$tmp/needed")"
else ok "no Swift runtime library in NEEDED"; fi

if grep -q 'ffi' "$tmp/needed"; then fail "libffi linked statically (not in NEEDED)" "$(grep ffi "$tmp/needed")"
else ok "libffi linked statically (not in NEEDED)"; fi

# 3. No RPATH/RUNPATH into the toolchain or the build tree ($ORIGIN is harmless).
runpath=$(readelf -d "$LIB" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p' | tr ':' '\n' | grep -v '^\$ORIGIN' | grep -v '^$')
if [ -z "$runpath" ]; then ok "no RPATH/RUNPATH outside \$ORIGIN"
else fail "no RPATH/RUNPATH outside \$ORIGIN" "$runpath"; fi

# 4. Exports: tether_* only (defined FUNC/OBJECT symbols, global or weak).
readelf --dyn-syms -W "$LIB" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && ($4 == "FUNC" || $4 == "OBJECT" || $4 == "IFUNC") && ($5 == "GLOBAL" || $5 == "WEAK" || $5 == "UNIQUE") { sub(/@.*/, "", $8); print $8 }' \
    | sort -u > "$tmp/exports"
nm -D --defined-only "$LIB" | awk '$2 ~ /^[TDBRVWiu]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u > "$tmp/nm_exports"
cat "$tmp/exports" "$tmp/nm_exports" | sort -u > "$tmp/all_exports"
foreign=$(grep -v '^tether_' "$tmp/all_exports")
count=$(wc -l < "$tmp/all_exports" | tr -d ' ')
if [ "$count" -gt 0 ] && [ -z "$foreign" ]; then ok "all $count exported symbols start with tether_"
else fail "all exported symbols start with tether_" "$(printf '%s\n' "$foreign" | head -20) ($(printf '%s\n' "$foreign" | grep -c .) foreign of $count)"; fi

# 5. Every function the header declares is exported.
cat $HEADERS | sed -n 's/^[a-z_ ]*[ *]\(tether_[a-z0-9_]*\)(.*/\1/p' | sort -u > "$tmp/declared"
missing=$(comm -23 "$tmp/declared" "$tmp/all_exports")
if [ -s "$tmp/declared" ] && [ -z "$missing" ]; then ok "all $(wc -l < "$tmp/declared" | tr -d ' ') functions of tether.h and tether_binding.h are exported"
else fail "all functions of tether.h and tether_binding.h are exported" "missing: $(printf '%s' "$missing" | tr '\n' ' ')"; fi

# 6. It loads and works with the toolchain out of sight.
cat > "$tmp/load.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "tether.h"

static int destroyed;
static void *make(void) { static int instance; return &instance; }
static void drop(void *instance, void *context) { (void)instance; (void)context; destroyed++; }

/* Resolves via dlopen/dlsym so that the check covers loading the file itself. */
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
#define SYM(name) __typeof__(&name) p_##name = (__typeof__(&name))dlsym(h, #name); \
    if (!p_##name) { fprintf(stderr, "missing %s\n", #name); return 1; }
    SYM(tether_version) SYM(tether_container_new) SYM(tether_register) SYM(tether_set_context)
    SYM(tether_resolve) SYM(tether_ref_get) SYM(tether_ref_release) SYM(tether_container_free)
    if (strcmp(p_tether_version(), TETHER_VERSION) != 0) { fprintf(stderr, "version %s\n", p_tether_version()); return 1; }
    tether_container *c = NULL;
    tether_registration *r = NULL;
    tether_ref *ref = NULL;
    if (p_tether_container_new(NULL, &c) != TETHER_OK) return 1;
    if (p_tether_register(c, "X", (tether_fn)make, NULL, 0, &r) != TETHER_OK) return 1;
    if (p_tether_set_context(r, NULL, drop) != TETHER_OK) return 1;
    if (p_tether_resolve(c, "X", &ref) != TETHER_OK || !p_tether_ref_get(ref)) return 1;
    if (p_tether_ref_release(ref) != TETHER_OK || destroyed != 1) return 1;
    if (p_tether_container_free(c) != TETHER_OK) return 1;
    /* nothing from the Swift toolchain got mapped */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "libswift") || strstr(line, "/opt/swift") || strstr(line, "libffi.so")) {
            fprintf(stderr, "mapped: %s", line); return 1;
        }
    if (maps) fclose(maps);
    printf("loaded %s\n", p_tether_version());
    return 0;
}
EOF
if $CC -std=c11 -Wall -Wextra -I"$ROOT/include" "$tmp/load.c" -o "$tmp/load" -ldl 2> "$tmp/cc.err"; then
    # PATH without the toolchain, no LD_LIBRARY_PATH at all
    clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -i swift | paste -sd: -)
    if env -i PATH="$clean_path" LD_LIBRARY_PATH= sh -c 'command -v swift' > /dev/null 2>&1; then
        echo "note: a swift executable is still on the cleaned PATH"
    fi
    if out=$(env -i PATH="$clean_path" LD_LIBRARY_PATH= "$tmp/load" "$LIB" 2>&1); then ok "loads and resolves without the toolchain ($out)"
    else fail "loads and resolves without the toolchain" "$out"; fi
    # ldd sees every dependency too
    unresolved=$(env -i PATH="$clean_path" LD_LIBRARY_PATH= ldd "$LIB" 2>&1 | grep -E 'not found|swift')
    if [ -z "$unresolved" ]; then ok "ldd: every dependency found outside the toolchain"
    else fail "ldd: every dependency found outside the toolchain" "$unresolved"; fi
else
    fail "compile the loader program" "$(cat "$tmp/cc.err")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
