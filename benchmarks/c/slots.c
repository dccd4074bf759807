/* Multibindings and factory slots against their plain equivalents (issue 26):
 *   ALL of 3 items vs 3 DEP slots (recorded plans; without them too, TETHER_NO_PLANS=1, before branch noplansoff);
 *   tether_factory_call vs tether_resolve_args of the same key.
 * ns per resolve + release, best of 5 runs of 200,000. Usage: slots [extra registrations]
 *   cc -O2 -Iinclude benchmarks/c/slots.c -o build/slots -Lbuild/lib -ltether -Wl,-rpath,$PWD/build/lib */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tether.h"

static void *leaf(void) { return malloc(16); }
static void *host3(void *a, void *b, void *c) { (void)a; (void)b; (void)c; return malloc(16); }
static void *host_all(const tether_list *l) { return l->count == 3 ? malloc(16) : NULL; }
static tether_factory *kept;
static void *host_factory(tether_factory *f) { kept = f; return malloc(16); }
static void *greeter(int64_t n, void *pool) { (void)n; (void)pool; return malloc(16); }
static void drop(void *p, void *c) { (void)c; free(p); }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

enum { N = 200000 };
static double best_of(int which, tether_container *c, const char *key) {
    double best = 1e18;
    tether_value arg = TETHER_VAL_I64(7);
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int i = 0; i < N; i++) {
            tether_ref *ref = NULL;
            tether_status st = which == 0 ? tether_resolve(c, key, &ref)
                             : which == 1 ? tether_factory_call(kept, &arg, 1, &ref)
                                          : tether_resolve_args(c, key, &arg, 1, &ref);
            if (st != TETHER_OK) { fprintf(stderr, "%s\n", tether_last_error()); exit(1); }
            tether_ref_release(ref);
        }
        double ns = (now() - t0) / N;
        if (ns < best) best = ns;
    }
    return best;
}

int main(int argc, char **argv) {
    int extra = argc > 1 ? atoi(argv[1]) : 0;
    tether_container *c = NULL;
    tether_container_new(NULL, &c);
    tether_options o = TETHER_OPTIONS_INIT;
    o.drop = drop;
    const char *items[] = {"Codec#a", "Codec#b", "Codec#c"};
    for (int i = 0; i < 3; i++) TETHER_REGISTER0(c, items[i], &o, NULL, leaf);
    char name[32];
    for (int i = 0; i < extra; i++) {
        snprintf(name, sizeof name, "Other%d", i);
        TETHER_REGISTER0(c, name, &o, NULL, leaf);
    }
    TETHER_REGISTER3(c, "Host3", &o, NULL, host3, TETHER_DEP("Codec#a"), TETHER_DEP("Codec#b"), TETHER_DEP("Codec#c"));
    TETHER_REGISTER1(c, "HostAll", &o, NULL, host_all, TETHER_ALL("Codec"));
    TETHER_REGISTER2(c, "Greeter", &o, NULL, greeter, TETHER_I64, TETHER_DEP("Codec#a"));
    TETHER_REGISTER1(c, "Greetings", &o, NULL, host_factory, TETHER_FACTORY("Greeter"));
    tether_ref *keep = NULL;
    if (tether_resolve(c, "Greetings", &keep) != TETHER_OK) return 1;
    printf("| %d registrations | DEP x3 | ALL of 3 | resolve_args | factory_call |\n|---|---|---|---|---|\n", extra + 7);
    printf("| ns | %.0f | %.0f | %.0f | %.0f |\n", best_of(0, c, "Host3"), best_of(0, c, "HostAll"),
           best_of(2, c, "Greeter"), best_of(1, c, NULL));
    tether_factory_release(kept);
    tether_ref_release(keep);
    tether_container_free(c);
    return 0;
}
