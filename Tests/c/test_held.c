/* tether_resolve_key_collect with TETHER_RESOLVE_HELD: no handle when the instance the caller holds
 * is the published singleton, a handle otherwise, bad input, and a hit racing a thread that resets
 * the singleton. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include "fixtures.h"
#include "binding.h"

static uint32_t id(tether_container *c, const char *key) {
    uint32_t k = 0;
    CHECK_OK(tether_intern(c, key, &k));
    return k;
}

/* A node whose destructor marks it DEAD before freeing it (a later read is a use after free). */
static void drop_checked(void *instance, void *context) {
    node *o = instance;
    CHECK(o->magic == ALIVE && o->k == context);
    o->magic = DEAD;
    atomic_fetch_add((atomic_int *)&o->k->dropped, 1);
    free(o);
}

static void test_hit_on_the_held_instance_needs_no_handle(void) {
    kind ks = {"S", 0, 0}, ko = {"O", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(c, "O", &ko, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_ref *mine = NULL, *other = NULL;
    node *s = resolve(c, "S", &mine), *o = resolve(c, "O", &other);
    tether_drop d[2];
    tether_collect io = {d, 2, 9, s, (tether_ref *)1, 0, NULL};
    CHECK_OK(TB.resolve_key_collect(c, id(c, "S"), TETHER_RESOLVE_HELD | TETHER_RESOLVE_NO_WAIT, &io));
    CHECK(io.out == NULL && io.instance == s && io.count == 0 && ks.made == 1);
    /* another instance held: the result comes with a handle, as without the flag */
    io = (tether_collect){d, 2, 9, o, NULL, 0, NULL};
    CHECK_OK(TB.resolve_key_collect(c, id(c, "S"), TETHER_RESOLVE_HELD, &io));
    CHECK(io.out != NULL && io.instance == s && tether_ref_get(io.out) == s);
    CHECK_OK(tether_ref_release(io.out));
    /* unpublished, the held instance lives on with the caller's handle */
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    io = (tether_collect){d, 2, 9, s, NULL, 0, NULL};
    CHECK_OK(TB.resolve_key_collect(c, id(c, "S"), TETHER_RESOLVE_HELD, &io));
    CHECK(io.out != NULL && io.instance != s && ks.made == 2 && ks.dropped == 0 && s->magic == ALIVE);
    CHECK_OK(tether_ref_release(io.out));
    CHECK_OK(tether_ref_release(mine));
    CHECK_OK(tether_ref_release(other));
    CHECK(ks.dropped == 1 && ko.dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(ks.dropped == 2 && ko.dropped == 1);
}

/* A transient factory returning the same static node: a result other than a cached hit. */
static node fixed = {.magic = ALIVE};
static void *make_fixed(kind *k) { k->made++; return &fixed; }
static void drop_fixed(void *instance, void *context) { CHECK(instance == &fixed); ((kind *)context)->dropped++; }

/* Outer(S): while S, made by the same graph, is not published yet, a held resolve of S is refused
 * (its resolve may still fail), not answered as the published singleton. */
static tether_container *outer_container;
static int outer_saw_a_handle;
static void *make_outer(kind *k, node *s) {
    tether_collect io = {NULL, 0, 9, s, NULL, 0, NULL};
    CHECK_STATUS(TB.resolve_key_collect(outer_container, id(outer_container, "S"), TETHER_RESOLVE_HELD, &io), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("before the resolve that is making it on this thread finished");
    outer_saw_a_handle = io.out != NULL;
    return node_new(k, s, NULL);
}

static void test_other_held_results_come_as_without_the_flag(void) {
    kind kf = {"F", 0, 0}, kw = {"W", 0, 0}, ks = {"S", 0, 0}, ko = {"Outer", 0, 0};
    fixed.k = &kf;
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration_options o = {.scope = TETHER_SCOPE_TRANSIENT, .flags = TETHER_DEFER_DROP, .context = &kf, .drop = drop_fixed};
    CHECK_OK(TB.register_ex(c, "F", (tether_fn)make_fixed, p, 1, &o, NULL));
    reg_node(c, "W", &kw, TETHER_SCOPE_WEAK, NULL, NULL, drop_node);
    tether_drop d[2];
    /* the call's reference was the last one: released, its drop collected (as without the flag) */
    tether_collect io = {d, 2, 9, &fixed, (tether_ref *)1, 0, NULL};
    CHECK_OK(TB.resolve_key_collect(c, id(c, "F"), TETHER_RESOLVE_HELD, &io));
    CHECK(io.out == NULL && io.instance == &fixed && io.count == 1 && d[0].instance == &fixed);
    CHECK(kf.made == 1 && kf.dropped == 0);
    d[0].fn(d[0].instance, d[0].context);
    /* a weak-scoped instance the caller holds a handle to: not a published singleton, a handle */
    tether_ref *mine = NULL;
    node *w = resolve(c, "W", &mine);
    io = (tether_collect){d, 2, 9, w, NULL, 0, NULL};
    CHECK_OK(TB.resolve_key_collect(c, id(c, "W"), TETHER_RESOLVE_HELD, &io));
    CHECK(io.out != NULL && io.instance == w && io.count == 0 && kw.made == 1 && kw.dropped == 0);
    CHECK_OK(tether_ref_release(io.out));
    CHECK_OK(tether_ref_release(mine));
    CHECK(kf.dropped == 1 && kw.dropped == 1);
    /* a singleton its graph has not published yet: refused; once published, no handle */
    outer_container = c;
    reg_node(c, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_param op[] = {TETHER_CONTEXT, TETHER_DEP("S")};
    tether_registration *r;
    CHECK_OK(tether_register(c, "Outer", (tether_fn)make_outer, op, 2, &r));
    CHECK_OK(tether_set_context(r, &ko, drop_node));
    node *outer = resolve(c, "Outer", &mine);
    CHECK(!outer_saw_a_handle && ks.made == 1);
    io = (tether_collect){d, 2, 9, outer->a, NULL, 0, NULL};
    CHECK_OK(TB.resolve_key_collect(c, id(c, "S"), TETHER_RESOLVE_HELD, &io));
    CHECK(io.out == NULL && io.instance == outer->a && io.count == 0);
    CHECK_OK(tether_ref_release(mine));
    CHECK_OK(tether_container_free(c));
    CHECK(ks.dropped == 1 && ko.dropped == 1);
}

static void test_bad_arguments(void) {
    kind ks = {"S", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_collect io = {NULL, 0, 9, NULL, (tether_ref *)1, 0, NULL};
    CHECK_STATUS(TB.resolve_key_collect(c, id(c, "S"), TETHER_RESOLVE_HELD, &io), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("TETHER_RESOLVE_HELD with io->instance NULL");
    CHECK(io.out == NULL && io.instance == NULL && io.count == 0 && ks.made == 0);
    io = (tether_collect){NULL, 0, 9, &io, NULL, 0, NULL};
    CHECK_STATUS(TB.resolve_key_collect(c, id(c, "S"), 8 | TETHER_RESOLVE_HELD, &io), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("flags 0xa has bits other than TETHER_RESOLVE_NO_WAIT, TETHER_RESOLVE_HELD and TETHER_RESOLVE_MORE_DROPS");
    CHECK(io.instance == NULL && ks.made == 0);
    CHECK_STATUS(TB.resolve_key_collect(c, id(c, "S"), TETHER_RESOLVE_HELD, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("io is NULL");
    io = (tether_collect){NULL, 0, 9, &io, NULL, 0, NULL};
    CHECK_STATUS(TB.resolve_key_collect(NULL, id(c, "S"), TETHER_RESOLVE_HELD, &io), TETHER_E_INVALID_HANDLE);
    CHECK(io.instance == NULL && io.out == NULL);
    CHECK_OK(tether_container_free(c));
}

/* One thread resets the singleton and makes the next one, again and again, each time waiting for the
 * other to resolve it twice; the other re-resolves it holding a handle to the instance it saw last. A
 * call without a handle must answer exactly that (live) instance, so each new one comes with a handle. */
enum { RESETS = 300 };
static atomic_int resetting, resets, rounds;

static void *reset_loop(void *c) {
    while (atomic_load(&resetting)) {
        CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
        tether_ref *ref = NULL;
        CHECK_OK(tether_resolve(c, "S", &ref));
        CHECK_OK(tether_ref_release(ref));
        int seen = atomic_load(&rounds);
        while (atomic_load(&resetting) && atomic_load(&rounds) < seen + 2) sched_yield();
        atomic_fetch_add(&resets, 1);
    }
    return NULL;
}

static void test_race_with_resets(void) {
    static kind ks = {"S", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_checked);
    uint32_t key = id(c, "S");
    tether_ref *mine = NULL;
    node *held = resolve(c, "S", &mine);
    atomic_store(&resetting, 1);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reset_loop, c) == 0);
    int without = 0, with = 0, wrong = 0;
    while (atomic_load(&resets) < RESETS) {
        tether_collect io = {NULL, 0, 0, held, NULL, 0, NULL};
        CHECK_OK(TB.resolve_key_collect(c, key, TETHER_RESOLVE_HELD, &io));
        node *got = io.instance;
        if (got->magic != ALIVE || got->k != &ks) wrong++;
        if (io.out == NULL) {  /* must be ours: nothing else keeps it alive */
            if (got != held) wrong++;
            without++;
        } else {  /* a newer one: hold it instead */
            CHECK_OK(tether_ref_release(mine));
            mine = io.out;
            held = got;
            with++;
        }
        atomic_fetch_add(&rounds, 1);
    }
    atomic_store(&resetting, 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(wrong == 0 && without > 0 && with >= RESETS / 2);
    CHECK_OK(tether_ref_release(mine));
    CHECK_OK(tether_container_free(c));
    CHECK(ks.made >= with && ks.made == atomic_load((atomic_int *)&ks.dropped));
}

int main(void) {
    RUN(test_hit_on_the_held_instance_needs_no_handle);
    RUN(test_other_held_results_come_as_without_the_flag);
    RUN(test_bad_arguments);
    RUN(test_race_with_resets);
    return harness_finish();
}
