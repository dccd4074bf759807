/* registration_revive (tether_binding.h): a binding whose objects outlive the library's instances of
 * them (Python's) gets a weak-scoped object handed out again by the library, which decides when: no
 * factory of the key or its dependencies runs, no completion callback runs again, and a reset, a scope
 * change or no object held means a new one is built. (The weak epoch it decides by: CacheWordsTests.swift.) */
#include <string.h>
#include "harness.h"
#include "fixtures.h"
#include "binding.h"

/* The binding's side: the last object it made, whether it still holds it, how often it was asked. */
typedef struct side { kind k; node *last, *published; int holds, asked, completed; } side;

static void *revive(void *context, void *instance) {
    side *s = context;
    s->asked++;
    CHECK(instance == s->published);  /* the last one published, whatever was made since */
    return s->holds && instance == s->last ? s->last : NULL;
}

/* The instance's drop: the binding's object lives on while the binding holds it. */
static void drop_box(void *instance, void *context) {
    side *s = context;
    s->k.dropped++;
    if (!(s->holds && instance == s->last)) free(instance);
}

static void *make_w(side *s, node *d) {
    node *o = node_new(&s->k, d, NULL);
    o->a = NULL;  /* the object keeps no pointer to a dependency it does not own */
    s->last = o;
    return o;
}

static tether_status completed(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance;
    ((side *)context)->completed++;
    return TETHER_OK;
}

static node *get_w(tether_container *c, tether_ref **ref) { return resolve(c, "W", ref); }

/* Registers W(D) in `c`: WEAK-scoped, made by make_w with `s` as its context (destroyed by `drop`), counted
 * in s->completed by a completion callback, and revived by `revive` (the binding's hook). */
static tether_registration *reg_revivable_w(tether_container *c, side *s, tether_drop_fn drop) {
    tether_param p[] = {TETHER_CONTEXT, TETHER_DEP("D")};
    tether_registration *rw = NULL;
    CHECK_OK(tether_register(c, "W", (tether_fn)make_w, p, 2, &rw));
    CHECK_OK(tether_set_scope(rw, TETHER_SCOPE_WEAK));
    CHECK_OK(tether_set_context(rw, s, drop));
    CHECK_OK(tether_on_complete(rw, completed, s));
    CHECK_OK(TB.registration_revive(rw, revive, s));
    return rw;
}

static void test_a_weak_scoped_object_the_binding_holds_is_handed_out_again(void) {
    kind kd = {"D", 0, 0};
    side s = {{"W", 0, 0}, NULL, NULL, 0, 0, 0};
    tether_container *c = new_container();
    reg_node(c, "D", &kd, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_STATUS(TB.registration_revive(NULL, revive, &s), TETHER_E_INVALID_HANDLE);
    tether_registration *rw = reg_revivable_w(c, &s, drop_box);

    tether_ref *ref;
    node *w1 = get_w(c, &ref);
    CHECK(s.asked == 0 && s.k.made == 1 && kd.made == 1 && s.completed == 1);  /* nothing was published yet */
    s.holds = 1;
    s.published = w1;
    CHECK_OK(tether_ref_release(ref));
    CHECK(s.k.dropped == 1 && kd.dropped == 1);  /* the instance went; the binding's object did not */

    /* its box died, the cache was not emptied otherwise: asked first, before any factory */
    CHECK(get_w(c, &ref) == w1);
    CHECK(s.asked == 1 && s.k.made == 1 && kd.made == 1 && s.completed == 1);
    tether_ref *again;
    CHECK(get_w(c, &again) == w1 && s.asked == 1);  /* published: served from the cache */
    CHECK_OK(tether_ref_release(again));
    CHECK_OK(tether_ref_release(ref));
    CHECK(s.k.dropped == 2);

    /* the binding no longer holds it: built anew */
    s.holds = 0;
    free(w1);
    node *w2 = get_w(c, &ref);
    CHECK(w2 != NULL && s.asked == 2 && s.k.made == 2 && kd.made == 2 && s.completed == 2);
    s.holds = 1;
    s.published = w2;
    CHECK_OK(tether_ref_release(ref));

    /* a reset empties the cache: not asked, built anew */
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));
    s.holds = 0;
    free(w2);
    get_w(c, &ref);
    CHECK(s.asked == 2 && s.k.made == 3 && s.completed == 3);
    CHECK_OK(tether_ref_release(ref));

    /* no reviver: built anew */
    CHECK_OK(TB.registration_revive(rw, NULL, NULL));
    get_w(c, &ref);
    CHECK(s.asked == 2 && s.k.made == 4);
    CHECK_OK(tether_ref_release(ref));

    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(TB.registration_revive(rw, revive, &s), TETHER_E_INVALID_HANDLE);
    CHECK(s.k.made + 1 == s.k.dropped && kd.made == kd.dropped);  /* one box was the revived object's */
}

/* W a dependency of R (graph-scoped): R's first resolve after W's box died gets the object the binding holds,
 * no factory of W or its D runs, no callback again; drops in the build's order (a plan's creation step revives it
 * where the build's walk reaches W, branch revive). */
static char order[64];
static void drop_logged(void *instance, void *context) {
    kind *k = context;
    size_t n = strlen(order);
    if (n + 1 < sizeof order) { order[n] = k->tag[0]; order[n + 1] = 0; }
    drop_node(instance, context);
}
static void drop_box_logged(void *instance, void *context) {
    size_t n = strlen(order);
    if (n + 1 < sizeof order) { order[n] = 'W'; order[n + 1] = 0; }
    drop_box(instance, context);
}

static void test_a_revived_dependency_spares_its_own_dependencies(void) {
    kind kd = {"D", 0, 0}, kr = {"R", 0, 0};
    side s = {{"W", 0, 0}, NULL, NULL, 0, 0, 0};
    tether_container *c = new_container();
    reg_node(c, "D", &kd, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
    reg_revivable_w(c, &s, drop_box_logged);
    reg_node(c, "R", &kr, TETHER_SCOPE_GRAPH, "W", NULL, drop_logged);

    for (int round = 0; round < 2; round++) {  /* the second: W's first graph was a plan's too */
        tether_ref *ref;
        order[0] = 0;
        node *r1 = resolve(c, "R", &ref);
        node *w1 = r1->a;
        s.holds = 1;
        s.published = w1;
        CHECK_OK(tether_ref_release(ref));
        CHECK(strcmp(order, "RWD") == 0);  /* R, W's box (the object lives on), D */
        int made_w = s.k.made, made_d = kd.made, completed_w = s.completed, asked = s.asked;

        order[0] = 0;
        node *r2 = resolve(c, "R", &ref);
        CHECK(r2->a == w1 && s.asked == asked + 1);  /* the object the binding held */
        CHECK(s.k.made == made_w && kd.made == made_d && s.completed == completed_w && kr.made == 2 * round + 2);
        tether_ref *again;
        CHECK(get_w(c, &again) == w1 && s.asked == asked + 1);  /* published */
        CHECK_OK(tether_ref_release(again));
        CHECK_OK(tether_ref_release(ref));
        CHECK(strcmp(order, "RW") == 0);  /* its box had no edges: D was never made again */

        s.holds = 0;  /* let go of by the binding: the next round makes W anew */
        free(w1);
    }
    CHECK_OK(tether_container_free(c));
    CHECK(kd.made == kd.dropped && kr.made == kr.dropped && s.k.made + 2 == s.k.dropped);
}

int main(void) {
    RUN(test_a_weak_scoped_object_the_binding_holds_is_handed_out_again);
    RUN(test_a_revived_dependency_spares_its_own_dependencies);
    return harness_finish();
}
