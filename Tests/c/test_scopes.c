/* Scopes: graph (one instance per top-level resolve), transient (new every time),
 * singleton (cached until reset), weak (shared exactly while a strong handle or a
 * strong edge holds it), and tether_reset for each. Every key counts its factory
 * calls and destructor calls. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* ---- counted nodes ------------------------------------------------------- */

/* Registers `k->tag` with 0, 1 or 2 DEP slots (NULL dep keys are omitted) in `scope`. */
static tether_registration *reg(tether_container *c, kind *k, tether_scope scope,
                                const char *dep_a, const char *dep_b) {
    return reg_node(c, k->tag, k, scope, dep_a, dep_b, drop_node);
}

static void release(tether_ref *r) { CHECK_OK(tether_ref_release(r)); }

/* ---- graph --------------------------------------------------------------- */

static void graph_scope_shared_within_one_resolve(void) {
    kind G = {"G", 0, 0}, A = {"A", 0, 0}, B = {"B", 0, 0}, Top = {"Top", 0, 0};
    tether_container *c = new_container();
    reg(c, &G, TETHER_SCOPE_GRAPH, NULL, NULL);
    reg(c, &A, TETHER_SCOPE_GRAPH, "G", NULL);
    reg(c, &B, TETHER_SCOPE_GRAPH, "G", NULL);
    reg(c, &Top, TETHER_SCOPE_GRAPH, "A", "B");

    tether_ref *r1, *r2;
    node *t1 = resolve(c, "Top", &r1);
    CHECK(G.made == 1 && A.made == 1 && B.made == 1);
    if (t1) CHECK(t1->a->a == t1->b->a); /* A and B share one G */

    node *t2 = resolve(c, "Top", &r2); /* next resolve: a new graph, a new G */
    CHECK(G.made == 2);
    if (t1 && t2) {
        CHECK(t2 != t1);
        CHECK(t2->a->a == t2->b->a);
        CHECK(t2->a->a != t1->a->a);
    }
    release(r1);
    CHECK(Top.dropped == 1 && A.dropped == 1 && B.dropped == 1 && G.dropped == 1);
    release(r2);
    CHECK(G.dropped == 2 && Top.dropped == 2);
    CHECK_OK(tether_container_free(c));
}

static void graph_scope_top_level_is_not_cached(void) {
    kind G = {"G", 0, 0};
    tether_container *c = new_container();
    reg(c, &G, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_ref *r1, *r2;
    node *g1 = resolve(c, "G", &r1);
    node *g2 = resolve(c, "G", &r2);
    CHECK(g1 != g2);
    CHECK(G.made == 2);
    release(r1);
    release(r2);
    CHECK(G.dropped == 2);
    CHECK_OK(tether_container_free(c));
}

/* ---- transient ----------------------------------------------------------- */

static void transient_differs_even_within_one_graph(void) {
    kind T = {"T", 0, 0}, A = {"A", 0, 0}, B = {"B", 0, 0}, Top = {"Top", 0, 0}, Twice = {"Twice", 0, 0};
    tether_container *c = new_container();
    reg(c, &T, TETHER_SCOPE_TRANSIENT, NULL, NULL);
    reg(c, &A, TETHER_SCOPE_GRAPH, "T", NULL);
    reg(c, &B, TETHER_SCOPE_GRAPH, "T", NULL);
    reg(c, &Top, TETHER_SCOPE_GRAPH, "A", "B");
    reg(c, &Twice, TETHER_SCOPE_GRAPH, "T", "T");

    tether_ref *r1, *r2;
    node *top = resolve(c, "Top", &r1);
    if (top) CHECK(top->a->a != top->b->a);
    CHECK(T.made == 2);
    node *tw = resolve(c, "Twice", &r2); /* two slots on the same transient key */
    if (tw) CHECK(tw->a != tw->b);
    CHECK(T.made == 4);
    release(r1);
    release(r2);
    CHECK(T.dropped == 4);
    CHECK_OK(tether_container_free(c));
}

/* ---- singleton ----------------------------------------------------------- */

static void singleton_identical_until_reset(void) {
    kind S = {"S", 0, 0};
    tether_container *c = new_container();
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);

    tether_ref *r1, *r2, *r3, *r4;
    node *s1 = resolve(c, "S", &r1);
    release(r1);
    CHECK(S.dropped == 0);                 /* the cache holds it */
    node *s2 = resolve(c, "S", &r2);
    CHECK(s1 == s2);
    CHECK(S.made == 1);

    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(S.dropped == 0);                 /* r2 still holds it */
    node *s3 = resolve(c, "S", &r3);
    CHECK(s3 != s2);                       /* s2 is alive, so the address cannot be reused */
    CHECK(S.made == 2);
    release(r2);
    CHECK(S.dropped == 1);                 /* the reset instance went with its last handle */

    release(r3);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(S.dropped == 2);                 /* nothing else held it: destroyed by the reset */
    resolve(c, "S", &r4);
    CHECK(S.made == 3);
    release(r4);
    CHECK(S.dropped == 2);
    CHECK_OK(tether_container_free(c));    /* the cache goes with the container */
    CHECK(S.dropped == 3);
}

static void singleton_shared_by_dependents_across_resolves(void) {
    kind S = {"S", 0, 0}, D = {"D", 0, 0};
    tether_container *c = new_container();
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &D, TETHER_SCOPE_GRAPH, "S", "S");
    tether_ref *r1, *r2;
    node *d1 = resolve(c, "D", &r1);
    node *d2 = resolve(c, "D", &r2);
    if (d1 && d2) {
        CHECK(d1 != d2);
        CHECK(d1->a == d1->b && d1->a == d2->a);
    }
    CHECK(S.made == 1 && D.made == 2);
    release(r1);
    release(r2);
    CHECK(D.dropped == 2 && S.dropped == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 1);
}

static void changing_the_scope_drops_the_cached_instance(void) {
    kind S = {"S", 0, 0};
    tether_container *c = new_container();
    tether_registration *r = reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    tether_ref *h1, *h2, *h3;
    node *s1 = resolve(c, "S", &h1);
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));
    CHECK(S.dropped == 0);                 /* h1 still holds it */
    node *s2 = resolve(c, "S", &h2);
    node *s3 = resolve(c, "S", &h3);
    CHECK(s1 != s2 && s2 != s3 && s1 != s3);
    CHECK(S.made == 3);
    release(h1);
    CHECK(S.dropped == 1);                 /* no longer cached */
    release(h2);
    release(h3);
    CHECK(S.dropped == 3);
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 3);
}

/* ---- weak ---------------------------------------------------------------- */

static void weak_scope_reused_while_a_handle_holds_it(void) {
    kind W = {"W", 0, 0};
    tether_container *c = new_container();
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    tether_ref *r1, *r2, *r3, *r4;
    node *w1 = resolve(c, "W", &r1);
    node *w2 = resolve(c, "W", &r2);
    CHECK(w1 == w2);
    release(r1);
    CHECK(W.dropped == 0);
    node *w3 = resolve(c, "W", &r3);       /* r2 still holds it */
    CHECK(w3 == w1);
    CHECK(W.made == 1);
    release(r2);
    release(r3);
    CHECK(W.dropped == 1);                 /* the last holder went */
    resolve(c, "W", &r4);
    CHECK(W.made == 2);                    /* a new one after the last release */
    release(r4);
    CHECK(W.dropped == 2);
    CHECK_OK(tether_container_free(c));
    CHECK(W.dropped == 2);
}

static void weak_scope_reused_while_a_strong_edge_holds_it(void) {
    kind W = {"W", 0, 0}, D = {"D", 0, 0};
    tether_container *c = new_container();
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    reg(c, &D, TETHER_SCOPE_GRAPH, "W", NULL);
    tether_ref *rd, *rw, *rw2, *rw3;
    node *d = resolve(c, "D", &rd);        /* W is held only by D's edge */
    CHECK(W.made == 1 && W.dropped == 0);
    node *w = resolve(c, "W", &rw);
    if (d) CHECK(w == d->a);
    release(rw);
    CHECK(W.dropped == 0);
    node *w2 = resolve(c, "W", &rw2);
    CHECK(w2 == w);
    CHECK(W.made == 1);
    release(rw2);
    release(rd);                           /* D dies, its edge goes, W has no holder left */
    CHECK(D.dropped == 1 && W.dropped == 1);
    resolve(c, "W", &rw3);
    CHECK(W.made == 2);
    release(rw3);
    CHECK(W.dropped == 2);
    CHECK_OK(tether_container_free(c));
}

static void weak_scope_shared_within_one_resolve(void) {
    kind W = {"W", 0, 0}, A = {"A", 0, 0}, B = {"B", 0, 0}, Top = {"Top", 0, 0};
    tether_container *c = new_container();
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    reg(c, &A, TETHER_SCOPE_GRAPH, "W", NULL);
    reg(c, &B, TETHER_SCOPE_GRAPH, "W", NULL);
    reg(c, &Top, TETHER_SCOPE_GRAPH, "A", "B");
    tether_ref *r1, *r2;
    node *t1 = resolve(c, "Top", &r1);
    if (t1) CHECK(t1->a->a == t1->b->a);
    node *t2 = resolve(c, "Top", &r2);     /* t1 still holds W through edges */
    if (t1 && t2) CHECK(t2->a->a == t1->a->a);
    CHECK(W.made == 1);
    release(r1);
    release(r2);
    CHECK(W.dropped == 1 && Top.dropped == 2 && A.dropped == 2 && B.dropped == 2);
    CHECK_OK(tether_container_free(c));
}

static void weak_handle_does_not_hold_weak_scope(void) {
    kind W = {"W", 0, 0};
    tether_container *c = new_container();
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    tether_ref *r1, *r2, *up = (tether_ref *)&W;
    tether_weak *wk = NULL;
    resolve(c, "W", &r1);
    CHECK_OK(tether_ref_downgrade(r1, &wk));
    release(r1);
    CHECK(W.dropped == 1);
    CHECK_STATUS(tether_weak_upgrade(wk, &up), TETHER_E_EXPIRED);
    CHECK(up == NULL);
    resolve(c, "W", &r2);
    CHECK(W.made == 2);
    release(r2);
    CHECK_OK(tether_weak_release(wk));
    CHECK(W.dropped == 2);
    CHECK_OK(tether_container_free(c));
}

/* WEAK slot: the factory gets a weak handle it owns. */
typedef struct watcher { kind *k; tether_weak *w; } watcher;
static void *make_watcher(kind *k, tether_weak *w) {
    watcher *x = malloc(sizeof *x);
    x->k = k; x->w = w;
    k->made++;
    return x;
}
static void drop_watcher(void *instance, void *context) {
    watcher *x = instance;
    (void)context;
    CHECK_OK(tether_weak_release(x->w));
    x->k->dropped++;
    free(x);
}

static void weak_edge_does_not_hold_weak_scope(void) {
    kind W = {"W", 0, 0}, V = {"V", 0, 0};
    tether_container *c = new_container();
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    tether_param p[] = {TETHER_CONTEXT, TETHER_WEAK("W")};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "V", (tether_fn)make_watcher, p, 2, &r));
    CHECK_OK(tether_set_context(r, &V, drop_watcher));
    tether_ref *rv, *up = NULL;
    CHECK_OK(tether_resolve(c, "V", &rv));
    /* W lived through the resolve, then nothing held it strongly */
    CHECK(W.made == 1 && W.dropped == 1);
    watcher *v = tether_ref_get(rv);
    if (v) {
        CHECK_STATUS(tether_weak_upgrade(v->w, &up), TETHER_E_EXPIRED);
        CHECK(up == NULL);
    }
    CHECK_OK(tether_ref_release(rv));
    CHECK(V.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void singleton_edge_holds_weak_scope(void) {
    kind W = {"W", 0, 0}, S = {"S", 0, 0};
    tether_container *c = new_container();
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    reg(c, &S, TETHER_SCOPE_SINGLETON, "W", NULL);
    tether_ref *rs, *rw, *rw2;
    node *s = resolve(c, "S", &rs);
    CHECK_OK(tether_ref_release(rs));
    node *w = resolve(c, "W", &rw);        /* held by the cached singleton's edge */
    if (s) CHECK(w == s->a);
    CHECK(W.made == 1);
    CHECK_OK(tether_ref_release(rw));
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(S.dropped == 1 && W.dropped == 1);
    resolve(c, "W", &rw2);
    CHECK(W.made == 2);
    CHECK_OK(tether_ref_release(rw2));
    CHECK_OK(tether_container_free(c));
    CHECK(W.dropped == 2 && S.dropped == 1);
}

static void reset_weak_forgets_the_instance(void) {
    kind W = {"W", 0, 0};
    tether_container *c = new_container();
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    tether_ref *r1, *r2, *r3;
    node *w1 = resolve(c, "W", &r1);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));
    CHECK(W.dropped == 0);                 /* forgotten, not destroyed: r1 holds it */
    node *w2 = resolve(c, "W", &r2);
    CHECK(w2 != w1);
    CHECK(W.made == 2);
    node *w3 = resolve(c, "W", &r3);       /* the new one is cached as usual */
    CHECK(w3 == w2);
    release(r1);
    CHECK(W.dropped == 1);
    release(r2);
    release(r3);
    CHECK(W.dropped == 2);
    CHECK_OK(tether_container_free(c));
}

static void reset_graph_and_transient_are_no_ops(void) {
    kind S = {"S", 0, 0}, W = {"W", 0, 0}, G = {"G", 0, 0};
    tether_container *c = new_container();
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    reg(c, &G, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_ref *rs, *rw, *rg, *rs2, *rw2;
    node *s = resolve(c, "S", &rs);
    node *w = resolve(c, "W", &rw);
    resolve(c, "G", &rg);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_GRAPH));
    CHECK_OK(tether_reset(c, TETHER_SCOPE_TRANSIENT));
    CHECK(S.dropped == 0 && W.dropped == 0 && G.dropped == 0);
    CHECK(resolve(c, "S", &rs2) == s);     /* caches untouched */
    CHECK(resolve(c, "W", &rw2) == w);
    CHECK(S.made == 1 && W.made == 1);
    CHECK(tether_ref_get(rg) != NULL);
    release(rs); release(rs2); release(rw); release(rw2); release(rg);
    CHECK(S.dropped == 0 && W.dropped == 1 && G.dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 1);
}

static void reset_singleton_leaves_weak_alone_and_back(void) {
    kind S = {"S", 0, 0}, W = {"W", 0, 0};
    tether_container *c = new_container();
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);
    tether_ref *rs, *rw, *rs2, *rw2;
    node *s = resolve(c, "S", &rs);
    node *w = resolve(c, "W", &rw);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(resolve(c, "W", &rw2) == w);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));
    CHECK(resolve(c, "S", &rs2) != s);     /* reset above; s is still held by rs */
    CHECK(S.made == 2 && W.made == 1);
    release(rs); release(rs2); release(rw); release(rw2);
    CHECK(S.dropped == 1 && W.dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 2);
}

/* ---- what the library tells a binding about each scope (scope_traits) ---- */

static void scope_traits_describe_each_scope_as_the_header_does(void) {
    enum { SH = TETHER_SCOPE_TRAIT_SHARED, STRONG = TETHER_SCOPE_TRAIT_KEPT_STRONGLY, WEAK = TETHER_SCOPE_TRAIT_KEPT_WEAKLY,
           PER = TETHER_SCOPE_TRAIT_PER_CONTAINER, KEYED = TETHER_SCOPE_TRAIT_KEYED_IN_GRAPH, OWN = TETHER_SCOPE_TRAIT_OWN_CONTAINER };
    const unsigned expected[] = {
        [TETHER_SCOPE_GRAPH] = KEYED,
        [TETHER_SCOPE_TRANSIENT] = 0,
        [TETHER_SCOPE_SINGLETON] = SH | STRONG | KEYED | OWN,
        [TETHER_SCOPE_WEAK] = SH | WEAK | KEYED,
        [TETHER_SCOPE_CONTAINER] = SH | PER | KEYED,
    };
    for (int s = TETHER_SCOPE_GRAPH; s <= TETHER_SCOPE_CONTAINER; s++) {
        unsigned traits = 0xdead;
        CHECK_OK(TB.scope_traits((tether_scope)s, &traits));
        CHECK(traits == expected[s]);
    }
    unsigned untouched = 7;
    CHECK(TB.scope_traits((tether_scope)(TETHER_SCOPE_CONTAINER + 1), &untouched) == TETHER_E_INVALID_ARGUMENT);
    CHECK(untouched == 7 && strstr(tether_last_error(), "is not a tether_scope") != NULL);
    CHECK(TB.scope_traits(TETHER_SCOPE_GRAPH, NULL) == TETHER_E_INVALID_ARGUMENT);
}

int main(void) {
    RUN(scope_traits_describe_each_scope_as_the_header_does);
    RUN(graph_scope_shared_within_one_resolve);
    RUN(graph_scope_top_level_is_not_cached);
    RUN(transient_differs_even_within_one_graph);
    RUN(singleton_identical_until_reset);
    RUN(singleton_shared_by_dependents_across_resolves);
    RUN(changing_the_scope_drops_the_cached_instance);
    RUN(weak_scope_reused_while_a_handle_holds_it);
    RUN(weak_scope_reused_while_a_strong_edge_holds_it);
    RUN(weak_scope_shared_within_one_resolve);
    RUN(weak_handle_does_not_hold_weak_scope);
    RUN(weak_edge_does_not_hold_weak_scope);
    RUN(singleton_edge_holds_weak_scope);
    RUN(reset_weak_forgets_the_instance);
    RUN(reset_graph_and_transient_are_no_ops);
    RUN(reset_singleton_leaves_weak_alone_and_back);
    return harness_finish();
}
