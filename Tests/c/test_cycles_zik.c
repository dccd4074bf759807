/* ZIKRouter-style circular dependency, ported to Tether's C API.
 *
 * ZIKRouter breaks A <-> B in `prepareDestination`: each side's router fills
 * the other side's reference only if it is still unset, so whichever side is
 * prepared second finds the work done. Here each side has a completion
 * callback with that guard; both references end up set exactly once, and no
 * extra instance is made (every factory runs once). A holds B strongly, B holds
 * A weakly (the strong way round would be a retain cycle). */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

typedef struct B { tether_weak *a; } B;
typedef struct A { B *b; } A;

static struct {
    int a_made, b_made, a_dropped, b_dropped;
    int a_b_set, b_a_set;       /* how often each reference was filled */
    int a_callbacks, b_callbacks;
    int bad_release;
} n;

static A *make_a(void) { n.a_made++; return xcalloc(sizeof(A)); }
static B *make_b(void) { n.b_made++; return xcalloc(sizeof(B)); }
static void drop_a(void *instance, void *context) { (void)context; n.a_dropped++; free(instance); }
static void drop_b(void *instance, void *context) {
    (void)context;
    B *b = instance;
    if (b->a && tether_weak_release(b->a) != TETHER_OK) n.bad_release++;
    n.b_dropped++;
    free(b);
}

/* A's side: take B (strong edge A -> B); give B its back-reference if unset. */
static tether_status prepare_a(tether_resolver *r, void *instance, void *context) {
    (void)context;
    A *a = instance;
    tether_status st = TETHER_OK;
    n.a_callbacks++;
    if (!a->b) {
        void *b = NULL;
        if ((st = tether_resolver_get(r, "B", &b)) != TETHER_OK) return st;
        a->b = b;
        n.a_b_set++;
    }
    if (!a->b->a) {
        st = tether_resolver_get_weak(r, "A", &a->b->a);
        if (st == TETHER_OK) n.b_a_set++;
    }
    return st;
}

/* B's side: take a weak reference to A if unset (A then fills its own b). */
static tether_status prepare_b(tether_resolver *r, void *instance, void *context) {
    (void)context;
    B *b = instance;
    tether_status st = TETHER_OK;
    n.b_callbacks++;
    if (!b->a) {
        st = tether_resolver_get_weak(r, "A", &b->a);
        if (st == TETHER_OK) n.b_a_set++;
    }
    return st;
}

static tether_container *zik(void) {
    memset(&n, 0, sizeof n);
    tether_container *c = NULL;
    tether_registration *ra = NULL, *rb = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_register(c, "A", (tether_fn)make_a, NULL, 0, &ra));
    CHECK_OK(tether_register(c, "B", (tether_fn)make_b, NULL, 0, &rb));
    CHECK_OK(tether_set_context(ra, NULL, drop_a));
    CHECK_OK(tether_set_context(rb, NULL, drop_b));
    CHECK_OK(tether_on_complete(ra, prepare_a, NULL));
    CHECK_OK(tether_on_complete(rb, prepare_b, NULL));
    return c;
}

static void test_zik_from_a_both_sides_set_once(void) {
    tether_container *c = zik();
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "A", &ref));
    A *a = tether_ref_get(ref);
    CHECK(a && a->b && a->b->a);
    if (a && a->b && a->b->a) {
        tether_ref *back = NULL;
        CHECK_OK(tether_weak_upgrade(a->b->a, &back));
        CHECK(tether_ref_get(back) == a);
        CHECK_OK(tether_ref_release(back));
    }
    CHECK(n.a_b_set == 1 && n.b_a_set == 1);
    CHECK(n.a_callbacks == 1 && n.b_callbacks == 1);
    CHECK(n.a_made == 1 && n.b_made == 1);      /* no extra instances */
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.a_dropped == 1 && n.b_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

/* From B: B's callback makes A (weakly), A's callback finds B in the graph and
 * the back-reference already set. A is held by nobody once the resolve returns. */
static void test_zik_from_b_both_sides_set_once(void) {
    tether_container *c = zik();
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "B", &ref));
    B *b = tether_ref_get(ref);
    CHECK(n.a_b_set == 1 && n.b_a_set == 1);
    CHECK(n.a_callbacks == 1 && n.b_callbacks == 1);
    CHECK(n.a_made == 1 && n.b_made == 1);
    CHECK(n.a_dropped == 1 && n.b_dropped == 0);
    if (b && b->a) {
        tether_ref *back = NULL;
        CHECK_STATUS(tether_weak_upgrade(b->a, &back), TETHER_E_EXPIRED);
    }
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.b_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

static void test_zik_repeated_resolves_make_one_pair_each(void) {
    enum { ROUNDS = 20 };
    tether_container *c = zik();
    tether_ref *refs[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_OK(tether_resolve(c, "A", &refs[i]));
        A *a = tether_ref_get(refs[i]);
        CHECK(a && a->b);
        for (int j = 0; j < i; j++) {
            A *older = tether_ref_get(refs[j]);
            CHECK(a && older && a != older && a->b != older->b);
        }
    }
    CHECK(n.a_made == ROUNDS && n.b_made == ROUNDS);
    CHECK(n.a_b_set == ROUNDS && n.b_a_set == ROUNDS);
    for (int i = 0; i < ROUNDS; i++) CHECK_OK(tether_ref_release(refs[i]));
    CHECK(n.a_dropped == ROUNDS && n.b_dropped == ROUNDS && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_zik_from_a_both_sides_set_once);
    RUN(test_zik_from_b_both_sides_set_once);
    RUN(test_zik_repeated_resolves_make_one_pair_each);
    return harness_finish();
}
