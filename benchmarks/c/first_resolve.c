/* First resolves, in instructions (callgrind): `fresh` makes a container, registers
 * Root(S, B), S(G, W) singleton, W(G) weak, G, B(S, W) graph-scoped, resolves Root once (recording
 * its plans, creating S and W) and frees the container; `weak` keeps one container whose S and W
 * are weak, so every resolve creates them again (a creation plan replayed, or a build).
 *   sh benchmarks/c/first_resolve.sh      # instructions an iteration, plans on and off */
#include <stdio.h>
#include <stdlib.h>
#include "tether.h"
static int made;
static void *mk(void *k, void *a, void *b) { (void)k; (void)a; (void)b; made++; return malloc(16); }
static void drop(void *p, void *c) { (void)c; free(p); }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    int weak = argc > 2 && argv[2][0] == 'w';   /* else `fresh` */
    tether_param p0[] = {TETHER_CONTEXT}, pS[] = {TETHER_CONTEXT, TETHER_DEP("G"), TETHER_DEP("W")},
                 pW[] = {TETHER_CONTEXT, TETHER_DEP("G")}, pB[] = {TETHER_CONTEXT, TETHER_DEP("S"), TETHER_DEP("W")},
                 pR[] = {TETHER_CONTEXT, TETHER_DEP("S"), TETHER_DEP("B")};
    tether_container *c = NULL;
    if (weak) tether_container_new(NULL, &c);
    for (int i = 0; i < n; i++) {
        if (!weak || i == 0) {
            if (!weak) tether_container_new(NULL, &c);
            tether_registration *r;
            tether_register(c, "Root", (tether_fn)mk, pR, 3, &r); tether_set_scope(r, TETHER_SCOPE_TRANSIENT); tether_set_context(r, NULL, drop);
            tether_register(c, "S", (tether_fn)mk, pS, 3, &r); tether_set_scope(r, weak ? TETHER_SCOPE_WEAK : TETHER_SCOPE_SINGLETON); tether_set_context(r, NULL, drop);
            tether_register(c, "W", (tether_fn)mk, pW, 2, &r); tether_set_scope(r, TETHER_SCOPE_WEAK); tether_set_context(r, NULL, drop);
            tether_register(c, "G", (tether_fn)mk, p0, 1, &r); tether_set_context(r, NULL, drop);
            tether_register(c, "B", (tether_fn)mk, pB, 3, &r); tether_set_context(r, NULL, drop);
        }
        tether_ref *ref = NULL;
        if (tether_resolve(c, "Root", &ref) != TETHER_OK) { fprintf(stderr, "%s\n", tether_last_error()); return 1; }
        tether_ref_release(ref);   /* weak: S and W die with it */
        if (!weak) tether_container_free(c);
    }
    if (weak) tether_container_free(c);
    printf("made %d\n", made);
    return 0;
}
