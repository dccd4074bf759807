/* Resolver's cyclic-dependency scenarios, ported to Tether's C API.
 *
 * Resolver closes A(B) -> B(C) -> C{weak a} with `resolveProperties` on A, and
 * breaks the other cycle with `@LazyInjected` / `@WeakLazyInjected`. Here the
 * first is a completion callback (tether_on_complete) that reaches C through
 * the graph and hands it a weak back-reference; the second are TETHER_LAZY /
 * TETHER_WEAK_LAZY slots, plain `void *(*)(void)` providers. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* ---- CyclicA(B), CyclicB(C), CyclicC{weak a} ------------------------------ */

typedef struct CyclicC { tether_weak *a; } CyclicC;
typedef struct CyclicB { CyclicC *c; } CyclicB;
typedef struct CyclicA { CyclicB *b; } CyclicA;

static struct {
    int a_made, b_made, c_made;
    int a_dropped, b_dropped, c_dropped;
    int bad_release;          /* a tether_weak_release in a destructor failed */
    CyclicC *c_seen;          /* the C that A's completion callback got from the graph */
} n;

static CyclicA *make_a(CyclicB *b) { CyclicA *a = xcalloc(sizeof *a); a->b = b; n.a_made++; return a; }
static CyclicB *make_b(CyclicC *c) { CyclicB *b = xcalloc(sizeof *b); b->c = c; n.b_made++; return b; }
static CyclicC *make_c(void) { n.c_made++; return xcalloc(sizeof(CyclicC)); }

static void drop_a(void *instance, void *context) { (void)context; n.a_dropped++; free(instance); }
static void drop_b(void *instance, void *context) { (void)context; n.b_dropped++; free(instance); }
static void drop_c(void *instance, void *context) {
    (void)context;
    CyclicC *c = instance;
    if (c->a && tether_weak_release(c->a) != TETHER_OK) n.bad_release++;
    n.c_dropped++;
    free(c);
}

/* A's completion: C is already in this graph (A -> B -> C), so the resolver
 * hands out that very C; then C gets a weak back-reference to A. */
static tether_status complete_a(tether_resolver *r, void *instance, void *context) {
    (void)instance; (void)context;
    void *c = NULL;
    tether_status st = tether_resolver_get(r, "CyclicC", &c);
    if (st != TETHER_OK) return st;
    n.c_seen = c;
    return tether_resolver_get_weak(r, "CyclicA", &n.c_seen->a);
}

static tether_container *cyclic_abc(void) {
    memset(&n, 0, sizeof n);
    tether_container *c = NULL;
    tether_registration *ra = NULL, *rb = NULL, *rc = NULL;
    tether_param pa[] = { TETHER_DEP("CyclicB") };
    tether_param pb[] = { TETHER_DEP("CyclicC") };
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_register(c, "CyclicA", (tether_fn)make_a, pa, 1, &ra));
    CHECK_OK(tether_register(c, "CyclicB", (tether_fn)make_b, pb, 1, &rb));
    CHECK_OK(tether_register(c, "CyclicC", (tether_fn)make_c, NULL, 0, &rc));
    CHECK_OK(tether_set_context(ra, NULL, drop_a));
    CHECK_OK(tether_set_context(rb, NULL, drop_b));
    CHECK_OK(tether_set_context(rc, NULL, drop_c));
    CHECK_OK(tether_on_complete(ra, complete_a, NULL));
    return c; /* all three graph-scoped (the default) */
}

static void test_resolver_cycle_closes_through_weak_back_reference(void) {
    tether_container *c = cyclic_abc();
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "CyclicA", &ref));
    CyclicA *a = tether_ref_get(ref);
    CHECK(a && a->b && a->b->c && a->b->c->a);
    if (a && a->b && a->b->c && a->b->c->a) {
        tether_ref *back = NULL;
        CHECK_OK(tether_weak_upgrade(a->b->c->a, &back));
        CHECK(tether_ref_get(back) == a);          /* a->b->c->a == a */
        CHECK_OK(tether_ref_release(back));
    }
    CHECK(n.a_made == 1 && n.b_made == 1 && n.c_made == 1);
    CHECK(n.a_dropped == 0 && n.b_dropped == 0 && n.c_dropped == 0);

    CHECK_OK(tether_ref_release(ref));
    CHECK(n.a_dropped == 1 && n.b_dropped == 1 && n.c_dropped == 1);
    CHECK(n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(n.a_dropped == 1 && n.b_dropped == 1 && n.c_dropped == 1);
}

static void test_resolver_cycle_walk_a_b_c_directly(void) {
    tether_container *c = cyclic_abc();
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "CyclicA", &ref));
    CyclicA *a = tether_ref_get(ref);
    /* The C the completion callback got is the one in the chain: one graph. */
    CHECK(a && a->b && a->b->c == n.c_seen);
    CHECK(n.c_seen && n.c_seen->a);

    /* A second resolve is a new graph: new A, B and C, closed onto the new A. */
    tether_ref *ref2 = NULL;
    CHECK_OK(tether_resolve(c, "CyclicA", &ref2));
    CyclicA *a2 = tether_ref_get(ref2);
    CHECK(a2 && a2 != a && a2->b != a->b && a2->b->c != a->b->c);
    CHECK(a2 && a2->b->c == n.c_seen);
    if (a2 && a2->b->c->a) {
        tether_ref *back = NULL;
        CHECK_OK(tether_weak_upgrade(a2->b->c->a, &back));
        CHECK(tether_ref_get(back) == a2);
        CHECK_OK(tether_ref_release(back));
    }
    CHECK(n.a_made == 2 && n.b_made == 2 && n.c_made == 2);

    CHECK_OK(tether_ref_release(ref));
    CHECK(n.a_dropped == 1 && n.b_dropped == 1 && n.c_dropped == 1);
    CHECK_OK(tether_ref_release(ref2));
    CHECK(n.a_dropped == 2 && n.b_dropped == 2 && n.c_dropped == 2);
    CHECK(n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

/* ---- Lazy variants: ClassP / ClassC ---------------------------------------- */

typedef struct ClassC { tether_provider p; } ClassC;     /* TETHER_WEAK_LAZY("ClassP") */
typedef struct ClassP { tether_provider c; } ClassP;     /* TETHER_LAZY("ClassC"), or none */

static struct { int p_made, c_made, p_dropped, c_dropped; int fail_next; } m;

static ClassP *make_p(void) { m.p_made++; return xcalloc(sizeof(ClassP)); }
static ClassP *make_p_lazy(tether_provider c) { ClassP *p = xcalloc(sizeof *p); p->c = c; m.p_made++; return p; }
static ClassC *make_c_weak_lazy(tether_provider p) { ClassC *c = xcalloc(sizeof *c); c->p = p; m.c_made++; return c; }
static ClassC *make_c_plain(void) {
    if (m.fail_next) { m.fail_next = 0; tether_set_error("not yet"); return NULL; }
    m.c_made++;
    return xcalloc(sizeof(ClassC));
}
static void drop_p(void *instance, void *context) { (void)context; m.p_dropped++; free(instance); }
static void drop_cc(void *instance, void *context) { (void)context; m.c_dropped++; free(instance); }

/* ClassP: weak scope, factory `p_factory` with `p_params`; ClassC: graph scope. */
static tether_container *class_pc(tether_fn p_factory, const tether_param *p_params, size_t p_count,
                                  tether_fn c_factory, const tether_param *c_params, size_t c_count) {
    memset(&m, 0, sizeof m);
    tether_container *c = NULL;
    tether_registration *rp = NULL, *rc = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_register(c, "ClassP", p_factory, p_params, p_count, &rp));
    CHECK_OK(tether_set_scope(rp, TETHER_SCOPE_WEAK));
    CHECK_OK(tether_set_context(rp, NULL, drop_p));
    CHECK_OK(tether_register(c, "ClassC", c_factory, c_params, c_count, &rc));
    CHECK_OK(tether_set_context(rc, NULL, drop_cc));
    return c;
}

static const tether_param weak_lazy_p[] = { TETHER_WEAK_LAZY("ClassP") };
static const tether_param lazy_c[] = { TETHER_LAZY("ClassC") };

static void test_resolver_weak_lazy_provider_returns_p_while_held(void) {
    tether_container *c = class_pc((tether_fn)make_p, NULL, 0, (tether_fn)make_c_weak_lazy, weak_lazy_p, 1);
    tether_ref *rp = NULL, *rc = NULL;
    CHECK_OK(tether_resolve(c, "ClassP", &rp));
    CHECK_OK(tether_resolve(c, "ClassC", &rc));
    ClassP *p = tether_ref_get(rp);
    ClassC *cc = tether_ref_get(rc);
    CHECK(p && cc && cc->p);
    if (cc && cc->p) {
        CHECK(cc->p() == p);                 /* the weak-scoped P everybody shares */
        CHECK(cc->p() == p);
        CHECK(m.p_made == 1);

        CHECK_OK(tether_ref_release(rp));    /* P's last strong reference */
        CHECK(m.p_dropped == 1);
        CHECK(cc->p() == NULL);
        CHECK(tether_last_status() == TETHER_E_EXPIRED);
        CHECK_ERROR_HAS("the instance is gone");
        CHECK(m.p_made == 1);                /* expired means gone, not "make another" */
    }
    CHECK_OK(tether_ref_release(rc));
    CHECK(m.c_made == 1 && m.c_dropped == 1 && m.p_dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_resolver_weak_lazy_first_call_with_nobody_holding_p(void) {
    tether_container *c = class_pc((tether_fn)make_p, NULL, 0, (tether_fn)make_c_weak_lazy, weak_lazy_p, 1);
    tether_ref *rc = NULL;
    CHECK_OK(tether_resolve(c, "ClassC", &rc));
    ClassC *cc = tether_ref_get(rc);
    CHECK(m.p_made == 0);                    /* lazy: nothing resolved yet */
    CHECK(cc && cc->p);
    if (cc && cc->p) {
        CHECK(cc->p() == NULL);              /* resolved, but nobody holds it strongly */
        CHECK(tether_last_status() == TETHER_E_EXPIRED);
        CHECK(m.p_made == 1 && m.p_dropped == 1);
    }
    CHECK_OK(tether_ref_release(rc));
    CHECK(m.c_dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_resolver_lazy_and_weak_lazy_cycle(void) {
    /* @LazyInjected var c on P, @WeakLazyInjected var p on C. */
    tether_container *c = class_pc((tether_fn)make_p_lazy, lazy_c, 1, (tether_fn)make_c_weak_lazy, weak_lazy_p, 1);
    tether_ref *rp = NULL;
    CHECK_OK(tether_resolve(c, "ClassP", &rp));
    ClassP *p = tether_ref_get(rp);
    CHECK(p && p->c);
    CHECK(m.p_made == 1 && m.c_made == 0);
    if (p && p->c) {
        ClassC *cc = p->c();
        CHECK(cc != NULL);
        CHECK(m.c_made == 1);
        CHECK(cc && cc->p && cc->p() == p);  /* closes P -> C -> P */
        CHECK(p->c() == cc);
        CHECK(m.p_made == 1 && m.c_made == 1);
    }
    CHECK_OK(tether_ref_release(rp));        /* P goes, and C with it (held by P's lazy edge) */
    CHECK(m.p_dropped == 1 && m.c_dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_resolver_strong_lazy_resolves_on_first_call_only(void) {
    /* Here ClassP holds a strong lazy provider to a graph-scoped ClassC. */
    tether_container *c = class_pc((tether_fn)make_p_lazy, lazy_c, 1, (tether_fn)make_c_plain, NULL, 0);
    tether_ref *rp = NULL;
    CHECK_OK(tether_resolve(c, "ClassP", &rp));
    ClassP *p = tether_ref_get(rp);
    CHECK(m.c_made == 0);
    CHECK(p && p->c);
    if (p && p->c) {
        ClassC *first = p->c();
        CHECK(first != NULL);
        CHECK(m.c_made == 1);
        CHECK(p->c() == first);
        CHECK(p->c() == first);
        CHECK(m.c_made == 1 && m.c_dropped == 0);
    }
    CHECK_OK(tether_ref_release(rp));
    CHECK(m.p_dropped == 1 && m.c_dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_resolver_lazy_after_container_freed_is_invalid_handle(void) {
    tether_container *c = class_pc((tether_fn)make_p_lazy, lazy_c, 1, (tether_fn)make_c_plain, NULL, 0);
    tether_ref *rp = NULL;
    CHECK_OK(tether_resolve(c, "ClassP", &rp));
    ClassP *p = tether_ref_get(rp);
    CHECK_OK(tether_container_free(c));      /* P stays alive through its handle */
    CHECK(p && p->c);
    if (p && p->c) {
        CHECK(p->c() == NULL);
        CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
        CHECK(p->c() == NULL);               /* and keeps saying so, never crashes */
        CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    }
    CHECK(m.c_made == 0);
    CHECK_OK(tether_ref_release(rp));
    CHECK(m.p_dropped == 1);
}

static void test_resolver_lazy_resolved_before_container_freed(void) {
    tether_container *c = class_pc((tether_fn)make_p_lazy, lazy_c, 1, (tether_fn)make_c_plain, NULL, 0);
    tether_ref *rp = NULL;
    CHECK_OK(tether_resolve(c, "ClassP", &rp));
    ClassP *p = tether_ref_get(rp);
    CHECK(p && p->c && p->c() != NULL);
    CHECK_OK(tether_container_free(c));
    if (p && p->c) {
        CHECK(p->c() == NULL);               /* "from now on", per tether_container_free */
        CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    }
    CHECK(m.c_dropped == 0);                 /* still held by P's lazy edge */
    CHECK_OK(tether_ref_release(rp));
    CHECK(m.p_dropped == 1 && m.c_made == 1 && m.c_dropped == 1);
}

/* ---- tether_make_provider --------------------------------------------------- */

static void test_provider_resolves_once_and_holds(void) {
    tether_container *c = class_pc((tether_fn)make_p, NULL, 0, (tether_fn)make_c_plain, NULL, 0);
    tether_provider get_c = NULL;
    CHECK_OK(tether_make_provider(c, "ClassC", &get_c));
    CHECK(get_c != NULL);
    CHECK(m.c_made == 0);
    if (get_c) {
        void *first = get_c();
        CHECK(first != NULL);
        CHECK(get_c() == first);
        CHECK(m.c_made == 1 && m.c_dropped == 0);
        CHECK_OK(tether_provider_free(get_c));
        CHECK(m.c_dropped == 1);             /* the provider was the only holder */
        CHECK_STATUS(tether_provider_free(get_c), TETHER_E_INVALID_HANDLE);
    }
    CHECK_STATUS(tether_provider_free(NULL), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
    CHECK(m.c_made == 1 && m.c_dropped == 1);
}

static void test_provider_failure_then_retry(void) {
    tether_container *c = class_pc((tether_fn)make_p, NULL, 0, (tether_fn)make_c_plain, NULL, 0);
    tether_provider get_c = NULL;
    CHECK_OK(tether_make_provider(c, "ClassC", &get_c));
    CHECK(get_c != NULL);
    if (get_c) {
        m.fail_next = 1;
        CHECK(get_c() == NULL);
        CHECK(tether_last_status() == TETHER_E_FACTORY_FAILED);
        CHECK_ERROR_HAS("not yet");
        void *made = get_c();                /* the next call tries again */
        CHECK(made != NULL);
        CHECK(get_c() == made);
        CHECK(m.c_made == 1);
        CHECK_OK(tether_provider_free(get_c));
    }
    CHECK(m.c_dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_provider_after_container_freed(void) {
    tether_container *c = class_pc((tether_fn)make_p, NULL, 0, (tether_fn)make_c_plain, NULL, 0);
    tether_provider get_c = NULL, never_called = NULL;
    CHECK_OK(tether_make_provider(c, "ClassC", &get_c));
    CHECK_OK(tether_make_provider(c, "ClassC", &never_called));
    CHECK(get_c && get_c() != NULL);
    CHECK_OK(tether_container_free(c));
    CHECK(m.c_dropped == 0);                 /* the provider still holds its C */
    if (get_c && never_called) {
        CHECK(get_c() == NULL);
        CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
        CHECK(never_called() == NULL);
        CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
        CHECK_OK(tether_provider_free(get_c));
        CHECK_OK(tether_provider_free(never_called));
        CHECK_STATUS(tether_provider_free(get_c), TETHER_E_INVALID_HANDLE);
    }
    CHECK(m.c_made == 1 && m.c_dropped == 1);
}

static void test_provider_free_refuses_lazy_slot_providers(void) {
    tether_container *c = class_pc((tether_fn)make_p_lazy, lazy_c, 1, (tether_fn)make_c_plain, NULL, 0);
    tether_ref *rp = NULL;
    CHECK_OK(tether_resolve(c, "ClassP", &rp));
    ClassP *p = tether_ref_get(rp);
    CHECK(p && p->c);
    if (p && p->c) {
        CHECK_STATUS(tether_provider_free(p->c), TETHER_E_INVALID_HANDLE);
        CHECK(p->c() != NULL);               /* untouched: freed with P, not here */
    }
    CHECK_OK(tether_ref_release(rp));
    CHECK(m.p_dropped == 1 && m.c_dropped == 1);
    CHECK_OK(tether_container_free(c));
}

/* ---- Completion order ------------------------------------------------------- */

/* Top(L, R), L(Leaf), R(Leaf): created Leaf, L, R, Top (dependencies first).
 * Top has two callbacks; the second takes Extra(Leaf), whose callback takes
 * More: instances made by callbacks are appended to the queue. */
static struct { char log[256]; int log_len_when_top_built; } o;

static void log_word(const char *word) {
    size_t len = strlen(o.log);
    snprintf(o.log + len, sizeof o.log - len, "%s%s", len ? " " : "", word);
}
static void *make_leaf_o(void) { return xcalloc(1); }
static void *make_side_o(void *leaf) { (void)leaf; return xcalloc(1); }
static void *make_top_o(void *l, void *r) {
    (void)l; (void)r;
    o.log_len_when_top_built = (int)strlen(o.log);   /* no callback has run yet */
    return xcalloc(1);
}
static void drop_o(void *instance, void *context) { (void)context; free(instance); }
static tether_status log_cb(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance;
    log_word(context);
    return TETHER_OK;
}
static tether_status log_and_get_cb(tether_resolver *r, void *instance, void *context) {
    (void)instance;
    const char *const *words = context;   /* { word to log, key to take } */
    void *got = NULL;
    log_word(words[0]);
    return tether_resolver_get(r, words[1], &got);
}

static void test_completion_callbacks_run_in_documented_order(void) {
    static const char *const top2[] = { "Top#2", "Extra" };
    static const char *const extra[] = { "Extra", "More" };
    memset(&o, 0, sizeof o);
    tether_container *c = NULL;
    tether_registration *r = NULL;
    tether_param top_p[] = { TETHER_DEP("L"), TETHER_DEP("R") };
    tether_param side_p[] = { TETHER_DEP("Leaf") };
    CHECK_OK(tether_container_new(NULL, &c));
#define ADD(key, factory, params, count) do { \
        CHECK_OK(tether_register(c, key, (tether_fn)factory, params, count, &r)); \
        CHECK_OK(tether_set_context(r, NULL, drop_o)); } while (0)
    ADD("Top", make_top_o, top_p, 2);
    CHECK_OK(tether_on_complete(r, log_cb, "Top#1"));
    CHECK_OK(tether_on_complete(r, log_and_get_cb, (void *)top2));
    ADD("L", make_side_o, side_p, 1);
    CHECK_OK(tether_on_complete(r, log_cb, "L"));
    ADD("R", make_side_o, side_p, 1);
    CHECK_OK(tether_on_complete(r, log_cb, "R"));
    ADD("Leaf", make_leaf_o, NULL, 0);
    CHECK_OK(tether_on_complete(r, log_cb, "Leaf"));
    ADD("Extra", make_side_o, side_p, 1);
    CHECK_OK(tether_on_complete(r, log_and_get_cb, (void *)extra));
    ADD("More", make_leaf_o, NULL, 0);
    CHECK_OK(tether_on_complete(r, log_cb, "More"));
#undef ADD
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Top", &ref));
    CHECK(o.log_len_when_top_built == 0);
    CHECK(strcmp(o.log, "Leaf L R Top#1 Top#2 Extra More") == 0);
    if (strcmp(o.log, "Leaf L R Top#1 Top#2 Extra More") != 0) fprintf(stderr, "  order: %s\n", o.log);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_resolver_cycle_closes_through_weak_back_reference);
    RUN(test_resolver_cycle_walk_a_b_c_directly);
    RUN(test_resolver_weak_lazy_provider_returns_p_while_held);
    RUN(test_resolver_weak_lazy_first_call_with_nobody_holding_p);
    RUN(test_resolver_lazy_and_weak_lazy_cycle);
    RUN(test_resolver_strong_lazy_resolves_on_first_call_only);
    RUN(test_resolver_lazy_after_container_freed_is_invalid_handle);
    RUN(test_resolver_lazy_resolved_before_container_freed);
    RUN(test_provider_resolves_once_and_holds);
    RUN(test_provider_failure_then_retry);
    RUN(test_provider_after_container_freed);
    RUN(test_provider_free_refuses_lazy_slot_providers);
    RUN(test_completion_callbacks_run_in_documented_order);
    return harness_finish();
}
