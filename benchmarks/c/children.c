/* A child container per request: make it (with `held` other children open meanwhile), resolve a
 * root singleton through it, free it. ns per request, minimum of 7 runs of 200,000.
 *   cc -O2 -Iinclude benchmarks/c/children.c -o build/children -Lbuild/lib -ltether -Wl,-rpath,$PWD/build/lib
 *   build/children            # or LD_LIBRARY_PATH=... with another libtether.so to compare */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tether.h"

static void *make(void) { static int x; return &x; }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void) {
    tether_container *root;
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_SINGLETON;
    if (tether_container_new(NULL, &root) || tether_register_with(root, "S", (tether_fn)make, NULL, 0, &o, NULL)) return 1;
    for (int held = 0; held <= 100; held += 100) {
        tether_container *kept[100];
        for (int i = 0; i < held; i++) tether_container_new(root, &kept[i]);
        double best = 1e18;
        for (int run = 0; run < 7; run++) {
            double t0 = now();
            for (int i = 0; i < 200000; i++) {
                tether_container *c;
                tether_ref *r;
                if (tether_container_new(root, &c) || tether_resolve(c, "S", &r)) return 1;
                tether_ref_release(r);
                tether_container_free(c);
            }
            double ns = (now() - t0) / 200000;
            if (ns < best) best = ns;
        }
        printf("child per request, %3d other children open: %.0f ns\n", held, best);
        for (int i = 0; i < held; i++) tether_container_free(kept[i]);
    }
    tether_container_free(root);
    return 0;
}
