/* Retain-cycle detection: a strong edge that would close a cycle of strong
 * edges (a guaranteed leak) is refused with TETHER_E_RETAIN_CYCLE, naming the
 * cycle and suggesting tether_resolver_get_weak. It must be exact: diamonds and
 * shared leaves are not cycles. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* Every object here is a node; its kind (the registration's context) counts
 * factory calls and destructor runs for one key. */
static void *make_lazy(tether_provider p, kind *k) { node *n = make0(k); n->lazy = p; return n; }

/* Registers `key` made by `factory` from `deps` plus a trailing TETHER_CONTEXT slot. */
static tether_registration *add(tether_container *c, const char *key, tether_fn factory, kind *k,
                                tether_scope scope, const tether_param *deps, size_t dep_count) {
    tether_param params[4];
    tether_registration *r = NULL;
    for (size_t i = 0; i < dep_count; i++) params[i] = deps[i];
    params[dep_count] = TETHER_CONTEXT;
    CHECK_OK(tether_register(c, key, factory, params, dep_count + 1, &r));
    CHECK_OK(tether_set_scope(r, scope));
    CHECK_OK(tether_set_context(r, k, drop_node_weak));
    return r;
}

/* ---- Parent strongly holds Child; Child's callback asks for Parent strongly -- */

static struct {
    tether_status status;   /* what tether_resolver_get answered */
    char error[512];
    void *out;              /* its *out after the refusal */
    int fall_back_to_weak;  /* then take the weak edge and succeed */
} cb;

static tether_status child_wants_parent(tether_resolver *r, void *instance, void *context) {
    (void)context;
    node *child = instance;
    void *parent = (void *)&cb;  /* sentinel: must not be a usable pointer afterwards */
    cb.status = tether_resolver_get(r, "Parent", &parent);
    cb.out = parent;
    snprintf(cb.error, sizeof cb.error, "%s", tether_last_error());
    if (cb.status == TETHER_OK) { child->got = parent; return TETHER_OK; }
    if (!cb.fall_back_to_weak) return cb.status;
    return tether_resolver_get_weak(r, "Parent", &child->weak);
}

static kind parent_k, child_k;

static tether_container *parent_child(int fall_back_to_weak) {
    memset(&cb, 0, sizeof cb);
    memset(&parent_k, 0, sizeof parent_k);
    memset(&child_k, 0, sizeof child_k);
    bad_release = 0;
    cb.fall_back_to_weak = fall_back_to_weak;
    tether_container *c = NULL;
    tether_param needs_child[] = { TETHER_DEP("Child") };
    CHECK_OK(tether_container_new(NULL, &c));
    add(c, "Parent", (tether_fn)make1_context_last, &parent_k, TETHER_SCOPE_GRAPH, needs_child, 1);
    tether_registration *rc = add(c, "Child", (tether_fn)make0, &child_k, TETHER_SCOPE_GRAPH, NULL, 0);
    CHECK_OK(tether_on_complete(rc, child_wants_parent, NULL));
    return c;
}

static void check_refusal_message(void) {
    CHECK(cb.status == TETHER_E_RETAIN_CYCLE);
    CHECK(cb.out == NULL);
    CHECK(strstr(cb.error, "strong edge \"Child\" -> \"Parent\"") != NULL);
    CHECK(strstr(cb.error, "retain cycle \"Parent\" -> \"Child\" -> \"Parent\"") != NULL);
    CHECK(strstr(cb.error, "tether_resolver_get_weak") != NULL);
    if (!strstr(cb.error, "tether_resolver_get_weak")) fprintf(stderr, "  message was: %s\n", cb.error);
}

static void test_retain_cycle_refused_and_failing_the_resolve(void) {
    tether_container *c = parent_child(0);
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Parent", &ref), TETHER_E_RETAIN_CYCLE);  /* what the callback returned: one status per kind */
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("completion callback #1 of \"Child\" failed");
    check_refusal_message();
    CHECK(parent_k.made == 1 && child_k.made == 1);
    CHECK(parent_k.dropped == 1 && child_k.dropped == 1);   /* nothing leaked, nothing twice */
    CHECK_OK(tether_container_free(c));
}

static void test_retain_cycle_refused_callback_uses_weak_instead(void) {
    tether_container *c = parent_child(1);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Parent", &ref));
    check_refusal_message();
    node *parent = tether_ref_get(ref);
    node *child = parent ? parent->dep[0] : NULL;
    CHECK(child && child->weak && child->got == NULL);
    if (child && child->weak) {
        tether_ref *back = NULL;
        CHECK_OK(tether_weak_upgrade(child->weak, &back));
        CHECK(tether_ref_get(back) == parent);
        CHECK_OK(tether_ref_release(back));
    }
    CHECK(parent_k.made == 1 && child_k.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK(parent_k.dropped == 1 && child_k.dropped == 1 && bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

/* From Child: its callback makes Parent (which takes this child through its
 * constructor), then the strong edge Child -> Parent would close the cycle. */
static void test_retain_cycle_refused_when_resolving_child(void) {
    tether_container *c = parent_child(1);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Child", &ref));
    check_refusal_message();
    CHECK(parent_k.made == 1 && child_k.made == 1);
    CHECK(parent_k.dropped == 1 && child_k.dropped == 0);   /* only the weak edge pointed at it */
    CHECK_OK(tether_ref_release(ref));
    CHECK(child_k.dropped == 1 && bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

/* ---- No false positives ------------------------------------------------------ */

static struct { tether_status get_d, b_gets_c; node *d_from_a; node *c_from_b; } dia;

/* A's completion takes D (A -> D, besides A -> B -> D and A -> C -> D). */
static tether_status a_gets_d(tether_resolver *r, void *instance, void *context) {
    (void)context;
    void *d = NULL;
    dia.get_d = tether_resolver_get(r, "D", &d);
    dia.d_from_a = d;
    ((node *)instance)->got = d;
    return dia.get_d;
}
/* B's completion takes its sibling C (B -> C): a cross edge, not a cycle. */
static tether_status b_gets_c(tether_resolver *r, void *instance, void *context) {
    (void)context;
    void *c = NULL;
    dia.b_gets_c = tether_resolver_get(r, "C", &c);
    dia.c_from_b = c;
    ((node *)instance)->got = c;
    return dia.b_gets_c;
}

static void test_diamond_is_not_a_retain_cycle(void) {
    static kind ka, kb, kc, kd;
    memset(&ka, 0, sizeof ka); memset(&kb, 0, sizeof kb);
    memset(&kc, 0, sizeof kc); memset(&kd, 0, sizeof kd);
    memset(&dia, 0, sizeof dia);
    tether_container *c = NULL;
    tether_param a_deps[] = { TETHER_DEP("B"), TETHER_DEP("C") };
    tether_param needs_d[] = { TETHER_DEP("D") };
    CHECK_OK(tether_container_new(NULL, &c));
    tether_registration *ra = add(c, "A", (tether_fn)make2_context_last, &ka, TETHER_SCOPE_GRAPH, a_deps, 2);
    tether_registration *rb = add(c, "B", (tether_fn)make1_context_last, &kb, TETHER_SCOPE_GRAPH, needs_d, 1);
    add(c, "C", (tether_fn)make1_context_last, &kc, TETHER_SCOPE_GRAPH, needs_d, 1);
    add(c, "D", (tether_fn)make0, &kd, TETHER_SCOPE_GRAPH, NULL, 0);
    CHECK_OK(tether_on_complete(ra, a_gets_d, NULL));
    CHECK_OK(tether_on_complete(rb, b_gets_c, NULL));

    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "A", &ref));
    CHECK(dia.get_d == TETHER_OK && dia.b_gets_c == TETHER_OK);
    node *a = tether_ref_get(ref);
    CHECK(a && a->dep[0] && a->dep[1]);
    if (a && a->dep[0] && a->dep[1]) {
        node *b = a->dep[0], *cc = a->dep[1];
        CHECK(b->dep[0] == cc->dep[0]);              /* one D in the graph */
        CHECK(dia.d_from_a == b->dep[0]);
        CHECK(dia.c_from_b == cc);
    }
    CHECK(ka.made == 1 && kb.made == 1 && kc.made == 1 && kd.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK(ka.dropped == 1 && kb.dropped == 1 && kc.dropped == 1 && kd.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static struct { tether_status a_gets_b, b_gets_leaf; } leaf;

static tether_status x_gets_b(tether_resolver *r, void *instance, void *context) {
    (void)context;
    void *b = NULL;
    leaf.a_gets_b = tether_resolver_get(r, "B", &b);
    ((node *)instance)->got = b;
    return leaf.a_gets_b;
}
static tether_status b_gets_leaf(tether_resolver *r, void *instance, void *context) {
    (void)context;
    void *l = NULL;
    leaf.b_gets_leaf = tether_resolver_get(r, "Leaf", &l);   /* a second B -> Leaf edge */
    ((node *)instance)->got = l;
    return leaf.b_gets_leaf;
}

/* A(Leaf) and B(Leaf) share a singleton Leaf; A's callback takes B, B's takes
 * Leaf again; across several resolves every graph points at the same Leaf. */
static void test_shared_leaf_is_not_a_retain_cycle(void) {
    static kind ka, kb, kl;
    memset(&ka, 0, sizeof ka); memset(&kb, 0, sizeof kb); memset(&kl, 0, sizeof kl);
    memset(&leaf, 0, sizeof leaf);
    tether_container *c = NULL;
    tether_param needs_leaf[] = { TETHER_DEP("Leaf") };
    CHECK_OK(tether_container_new(NULL, &c));
    tether_registration *ra = add(c, "A", (tether_fn)make1_context_last, &ka, TETHER_SCOPE_GRAPH, needs_leaf, 1);
    tether_registration *rb = add(c, "B", (tether_fn)make1_context_last, &kb, TETHER_SCOPE_GRAPH, needs_leaf, 1);
    add(c, "Leaf", (tether_fn)make0, &kl, TETHER_SCOPE_SINGLETON, NULL, 0);
    CHECK_OK(tether_on_complete(ra, x_gets_b, NULL));
    CHECK_OK(tether_on_complete(rb, b_gets_leaf, NULL));

    enum { ROUNDS = 3 };
    tether_ref *refs[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_OK(tether_resolve(c, "A", &refs[i]));
        CHECK(leaf.a_gets_b == TETHER_OK && leaf.b_gets_leaf == TETHER_OK);
        node *a = tether_ref_get(refs[i]);
        node *first = tether_ref_get(refs[0]);
        CHECK(a && a->got && a->dep[0] == a->got->dep[0] && a->got->got == a->dep[0]);
        CHECK(a && first && a->dep[0] == first->dep[0]);
    }
    CHECK(ka.made == ROUNDS && kb.made == ROUNDS && kl.made == 1);
    for (int i = 0; i < ROUNDS; i++) CHECK_OK(tether_ref_release(refs[i]));
    CHECK(ka.dropped == ROUNDS && kb.dropped == ROUNDS && kl.dropped == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(kl.dropped == 1);
}

/* ---- A strong lazy edge that would close a strong cycle ---------------------- */

/* P (weak scope) holds a lazy provider to C; C(P) takes P through its
 * constructor. P's first call of the provider makes C -> P, and the lazy edge
 * P -> C would close P -> C -> P: refused, NULL, and the C it made is gone. */
static void test_strong_lazy_closing_a_cycle_returns_null(void) {
    static kind kp, kc;
    memset(&kp, 0, sizeof kp); memset(&kc, 0, sizeof kc);
    tether_container *c = NULL;
    tether_param p_deps[] = { TETHER_LAZY("C") };
    tether_param c_deps[] = { TETHER_DEP("P") };
    CHECK_OK(tether_container_new(NULL, &c));
    add(c, "P", (tether_fn)make_lazy, &kp, TETHER_SCOPE_WEAK, p_deps, 1);
    add(c, "C", (tether_fn)make1_context_last, &kc, TETHER_SCOPE_GRAPH, c_deps, 1);

    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "P", &ref));
    node *p = tether_ref_get(ref);
    CHECK(p && p->lazy);
    if (p && p->lazy) {
        CHECK(p->lazy() == NULL);
        CHECK(tether_last_status() == TETHER_E_RETAIN_CYCLE);
        CHECK_ERROR_HAS("lazy dependency \"P\" -> \"C\"");
        CHECK_ERROR_HAS("retain cycle \"P\" -> \"C\" -> \"P\"");
        CHECK_ERROR_HAS("TETHER_WEAK_LAZY(\"C\")");
        CHECK(kc.made == 1 && kc.dropped == 1);      /* the C it built did not stay */
        CHECK(kp.made == 1 && kp.dropped == 0);
    }
    CHECK_OK(tether_ref_release(ref));
    CHECK(kp.dropped == 1 && kc.dropped == kc.made);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_retain_cycle_refused_and_failing_the_resolve);
    RUN(test_retain_cycle_refused_callback_uses_weak_instead);
    RUN(test_retain_cycle_refused_when_resolving_child);
    RUN(test_diamond_is_not_a_retain_cycle);
    RUN(test_shared_leaf_is_not_a_retain_cycle);
    RUN(test_strong_lazy_closing_a_cycle_returns_null);
    return harness_finish();
}
