/* A resolver's request (a completion callback's tether_resolver_get) while the plan of another request of
 * the same graph runs: a factory of that plan asks an open resolver of the graph (the callback's, kept in a
 * global) for a graph-scoped key the plan made before it. The build would have that key's instance in the
 * graph by then (it enters each instance as its factory returns), so the inner request finds it: one
 * instance of a graph-scoped key per graph, whichever executor serves the outer request. */
#include <unistd.h>
#include "fixtures.h"

static tether_container *container;
static tether_resolver *open_resolver;   /* A's callback's, while it runs */
static node *w_saw;                      /* what W's factory got for G through it */
static tether_status inner_status, outer_status;
static char inner_message[1024];
static const char *w_asks;               /* the key W's factory asks for */
static node *x_got;                      /* what A's callback got for X */

/* W: asks A's callback's resolver (open: the callback runs) for G, which X's request made before W. */
static void *make_w(kind *k) {
    void *got = NULL;
    inner_status = tether_resolver_get(open_resolver, w_asks, &got);
    snprintf(inner_message, sizeof inner_message, "%s", inner_status ? tether_last_error() : "");
    w_saw = got;
    return node_new(k, NULL, NULL);
}

static tether_status complete_a(tether_resolver *r, void *instance, void *context) {
    (void)instance, (void)context;
    open_resolver = r;
    void *got = NULL;
    outer_status = tether_resolver_get(r, "X", &got);
    x_got = got;
    open_resolver = NULL;
    return TETHER_OK;
}

static tether_container *register_a_x_g_w(kind *A, kind *X, kind *G, kind *W) {
    tether_container *c = container = new_container();
    tether_registration *ra = reg_node(c, "A", A, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(ra, complete_a, NULL));
    reg_node(c, "X", X, TETHER_SCOPE_GRAPH, "G", "W", drop_node);   /* G made first, then W */
    reg_node(c, "G", G, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(reg_kind_factory(c, "W", (tether_fn)make_w, W, TETHER_SCOPE_GRAPH));
    return c;
}

static void a_request_made_while_a_requests_plan_runs_sees_what_that_plan_made(void) {
    kind A = {"A", 0, 0}, X = {"X", 0, 0}, G = {"G", 0, 0}, W = {"W", 0, 0};
    tether_container *c = register_a_x_g_w(&A, &X, &G, &W);
    w_asks = "G";
    for (int round = 1; round <= 3; round++) {  /* the first resolve records the plans, later ones replay them */
        w_saw = x_got = NULL;
        tether_ref *ref;
        resolve(c, "A", &ref);
        CHECK_STATUS(outer_status, TETHER_OK);
        CHECK_STATUS(inner_status, TETHER_OK);
        CHECK(x_got != NULL && w_saw != NULL && x_got->a == w_saw);  /* X's G is the one W found: one per graph */
        CHECK(G.made == round);
        CHECK_OK(tether_ref_release(ref));
        CHECK(A.made == A.dropped && X.made == X.dropped && G.made == G.dropped && W.made == W.dropped);
    }
    CHECK_OK(tether_container_free(c));
}

/* The same, W asking for X, which the request's plan constructs (W is its dependency): the build's cycle,
 * its path through the plan's steps under construction; X made once all the same (W's factory goes on). */
static void a_request_made_while_a_requests_plan_runs_meets_its_steps_under_construction(void) {
    kind A = {"A", 0, 0}, X = {"X", 0, 0}, G = {"G", 0, 0}, W = {"W", 0, 0};
    tether_container *c = register_a_x_g_w(&A, &X, &G, &W);
    w_asks = "X";
    for (int round = 1; round <= 3; round++) {
        w_saw = x_got = NULL;
        tether_ref *ref;
        resolve(c, "A", &ref);
        CHECK_STATUS(outer_status, TETHER_OK);
        CHECK_STATUS(inner_status, TETHER_E_CYCLE);
        CHECK(strstr(inner_message, "\"X\" -> \"W\" -> \"X\"") != NULL && w_saw == NULL);
        CHECK(x_got != NULL && X.made == round && G.made == round && W.made == round);
        CHECK_OK(tether_ref_release(ref));
        CHECK(A.made == A.dropped && X.made == X.dropped && G.made == G.dropped && W.made == W.dropped);
    }
    CHECK_OK(tether_container_free(c));
}

/* W asking for H, which the request's plan makes after W (X -> G, Y; Y -> W, H): the build makes it for W's
 * request and finds it where X's walk asks for it; the plan takes it from the graph there: one H per graph. */
static void a_request_made_while_a_requests_plan_runs_builds_what_that_plan_takes_later(void) {
    kind A = {"A", 0, 0}, X = {"X", 0, 0}, G = {"G", 0, 0}, W = {"W", 0, 0}, Y = {"Y", 0, 0}, H = {"H", 0, 0}, K = {"K", 0, 0};
    tether_container *c = container = new_container();
    tether_registration *ra = reg_node(c, "A", &A, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(ra, complete_a, NULL));
    reg_node(c, "X", &X, TETHER_SCOPE_GRAPH, "G", "Y", drop_node);
    reg_node(c, "G", &G, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    reg_node(c, "Y", &Y, TETHER_SCOPE_GRAPH, "W", "H", drop_node);
    CHECK_OK(reg_kind_factory(c, "W", (tether_fn)make_w, &W, TETHER_SCOPE_GRAPH));
    reg_node(c, "H", &H, TETHER_SCOPE_GRAPH, "K", NULL, drop_node);   /* K: asked for only under H */
    reg_node(c, "K", &K, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node);
    w_asks = "H";
    for (int round = 1; round <= 3; round++) {
        w_saw = x_got = NULL;
        tether_ref *ref;
        resolve(c, "A", &ref);
        CHECK_STATUS(outer_status, TETHER_OK);
        CHECK_STATUS(inner_status, TETHER_OK);
        CHECK(x_got != NULL && x_got->b != NULL && w_saw != NULL && x_got->b->b == w_saw);  /* Y's H is the one W got */
        CHECK(H.made == round && K.made == round && X.made == round);
        CHECK_OK(tether_ref_release(ref));
        CHECK(A.made == A.dropped && X.made == X.dropped && H.made == H.dropped && K.made == K.dropped && Y.made == Y.dropped);
    }
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    alarm(60);
    RUN(a_request_made_while_a_requests_plan_runs_sees_what_that_plan_made);
    RUN(a_request_made_while_a_requests_plan_runs_meets_its_steps_under_construction);
    RUN(a_request_made_while_a_requests_plan_runs_builds_what_that_plan_takes_later);
    return harness_finish();
}
