/* A completion callback that asks for a key whose making makes a new instance of the
 * callback's own key (transient all the way) would build the cycle anew forever: X(Y),
 * Y's callback takes "Z" weakly, Z(X). The resolve fails with TETHER_E_CYCLE before the
 * second lap's factories run, naming the path through the callback and two fixes; each
 * fix, applied, resolves with every factory run once. A lap that keeps something in the
 * graph ends by itself and is not refused. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include "binding.h"
#include "harness.h"
#include "fixtures.h"

static kind kx = {"X", 0, 0}, ky = {"Y", 0, 0}, kz = {"Z", 0, 0}, kg = {"G", 0, 0};

static void reset(void) {
    kind *all[] = {&kx, &ky, &kz, &kg};
    for (size_t i = 0; i < 4; i++) all[i]->made = all[i]->dropped = 0;
}

static tether_status complete_y(tether_resolver *r, void *instance, void *context) {
    (void)context;
    node *y = instance;
    return tether_resolver_get_weak(r, "Z", &y->weak);
}

static tether_status complete_self(tether_resolver *r, void *instance, void *context) {
    (void)context;
    node *y = instance;
    return tether_resolver_get_weak(r, "Y", &y->weak);
}

/* Z with a weak-lazy slot on X: Z is made without an X. */
static void *make_lazy(kind *k, tether_provider x) {
    node *o = node_new(k, NULL, NULL);
    o->lazy = x;
    return o;
}

enum fix { NO_FIX, X_GRAPH, Z_WEAK_LAZY };

static tether_container *lap_container(enum fix fix) {
    tether_container *c = new_container();
    reg_node(c, "X", &kx, fix == X_GRAPH ? TETHER_SCOPE_GRAPH : TETHER_SCOPE_TRANSIENT, "Y", NULL, drop_node);
    tether_registration *y = reg_node(c, "Y", &ky, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node_weak);
    CHECK_OK(tether_on_complete(y, complete_y, NULL));
    if (fix == Z_WEAK_LAZY) {
        tether_param p[] = {TETHER_CONTEXT, TETHER_WEAK_LAZY("X")};
        tether_registration *z = NULL;
        CHECK_OK(tether_register(c, "Z", (tether_fn)make_lazy, p, 2, &z));
        CHECK_OK(tether_set_scope(z, TETHER_SCOPE_TRANSIENT));
        CHECK_OK(tether_set_context(z, &kz, drop_node));
    } else {
        reg_node(c, "Z", &kz, TETHER_SCOPE_TRANSIENT, "X", NULL, drop_node);
    }
    return c;
}

static void transient_lap_is_a_cycle_error(void) {
    reset();
    tether_container *c = lap_container(NO_FIX);
    for (int round = 1; round <= 2; round++) {  /* nothing cached: the second resolve fails the same */
        tether_ref *ref = NULL;
        CHECK_STATUS(tether_resolve(c, "X", &ref), TETHER_E_CYCLE);
        CHECK(ref == NULL);
        CHECK_ERROR_HAS("\"Y\" (completion) -> \"Z\" -> \"X\" -> \"Y\"");
        CHECK_ERROR_HAS("make \"X\" graph-scoped (TETHER_SCOPE_GRAPH)");
        CHECK_ERROR_HAS("declare the slot of \"Z\" on \"X\" TETHER_WEAK_LAZY(\"X\")");
        /* the first lap (X, Y; Y's callback: Z, X, Y) ran, the second's Z did not; each made one destroyed once */
        CHECK(kx.made == 2 * round && ky.made == 2 * round && kz.made == round);
        CHECK(kx.dropped == kx.made && ky.dropped == ky.made && kz.dropped == kz.made);
        CHECK(bad_release == 0);
        tether_error_parts p;
        CHECK_OK(TB.last_error_parts(&p));
        CHECK(p.status == TETHER_E_CYCLE && p.fix == TETHER_FIX_CALLBACK_LAP);
        CHECK(p.callback_of && strcmp(p.callback_of, "Y") == 0);
        CHECK(p.key && strcmp(p.key, "Z") == 0 && p.target && strcmp(p.target, "X") == 0);
        const char *path[] = {"Y", "Z", "X", "Y"};
        CHECK(p.path_count == 4);
        for (size_t i = 0; i < 4 && i < p.path_count; i++) CHECK(strcmp(p.path[i], path[i]) == 0);
    }
    CHECK_OK(tether_container_free(c));
}

/* Each advised fix: one resolve, every factory once, every instance destroyed once. */
static void each_advised_fix_resolves_with_each_factory_once(void) {
    enum fix fixes[] = {X_GRAPH, Z_WEAK_LAZY};
    for (size_t i = 0; i < 2; i++) {
        reset();
        tether_container *c = lap_container(fixes[i]);
        tether_ref *ref = NULL;
        node *x = resolve(c, "X", &ref);
        CHECK(kx.made == 1 && ky.made == 1 && kz.made == 1);
        CHECK(x->a && x->a->weak);
        tether_ref_release(ref);
        CHECK_OK(tether_container_free(c));
        CHECK(kx.dropped == 1 && ky.dropped == 1 && kz.dropped == 1 && bad_release == 0);
    }
}

/* X(Y), Y's callback takes Z, Z(G), G graph-scoped (Y): the second Y's request finds the
 * graph's G, so the lap ends there; it is not refused. */
static void lap_through_a_graph_key_ends_and_is_not_refused(void) {
    reset();
    tether_container *c = new_container();
    reg_node(c, "X", &kx, TETHER_SCOPE_TRANSIENT, "Y", NULL, drop_node);
    tether_registration *y = reg_node(c, "Y", &ky, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node_weak);
    CHECK_OK(tether_on_complete(y, complete_y, NULL));
    reg_node(c, "Z", &kz, TETHER_SCOPE_TRANSIENT, "G", NULL, drop_node);
    reg_node(c, "G", &kg, TETHER_SCOPE_GRAPH, "Y", NULL, drop_node);
    tether_ref *ref = NULL;
    resolve(c, "X", &ref);
    CHECK(kx.made == 1 && ky.made == 2 && kz.made == 2 && kg.made == 1);
    tether_ref_release(ref);
    CHECK_OK(tether_container_free(c));
    CHECK(kx.dropped == 1 && ky.dropped == 2 && kz.dropped == 2 && kg.dropped == 1 && bad_release == 0);
}

/* A transient key whose callback asks for its own key: a lap of one, whose fix is the graph's instance. */
static void callback_asking_its_own_transient_key_is_a_lap_of_one(void) {
    tether_scope scopes[] = {TETHER_SCOPE_TRANSIENT, TETHER_SCOPE_GRAPH};
    for (size_t i = 0; i < 2; i++) {
        reset();
        tether_container *c = new_container();
        tether_registration *y = reg_node(c, "Y", &ky, scopes[i], NULL, NULL, drop_node_weak);
        CHECK_OK(tether_on_complete(y, complete_self, NULL));
        tether_ref *ref = NULL;
        if (i == 0) {
            CHECK_STATUS(tether_resolve(c, "Y", &ref), TETHER_E_CYCLE);
            CHECK_ERROR_HAS("\"Y\" (completion) -> \"Y\"; ");
            CHECK_ERROR_HAS("make \"Y\" graph-scoped");
            CHECK(strstr(tether_last_error(), "TETHER_WEAK_LAZY") == NULL);  /* no constructor edge to make lazy */
            tether_error_parts p;
            CHECK_OK(TB.last_error_parts(&p));
            CHECK(p.fix == TETHER_FIX_CALLBACK_LAP && p.key == NULL && p.target == NULL && p.path_count == 2);
            CHECK(ky.made == 2 && ky.dropped == 2);
        } else {
            node *made = resolve(c, "Y", &ref);  /* the graph's Y: its callback takes itself weakly */
            CHECK(ky.made == 1 && made->weak);
            tether_ref_release(ref);
        }
        CHECK_OK(tether_container_free(c));
        CHECK(ky.dropped == ky.made && bad_release == 0);
    }
}

int main(void) {
    RUN(transient_lap_is_a_cycle_error);
    RUN(each_advised_fix_resolves_with_each_factory_once);
    RUN(lap_through_a_graph_key_ends_and_is_not_refused);
    RUN(callback_asking_its_own_transient_key_is_a_lap_of_one);
    return harness_finish();
}
