/* A request's instances, one by one: what any change to how a request's child holds its
 * instances must keep (the RP shape: a child per request, its Request provided as a value,
 * a CONTAINER-scoped Session(Request, Db) over a root singleton Db, a graph-scoped
 * Handler(Session) resolved and held by a handle, the child freed).
 *
 * - Destructors run when an instance's last strong reference goes, dependents first, each
 *   once: the Handler at its handle's release even while the child lives; the Session,
 *   then the Request, at the child's free. A handle that outlives its child keeps the chain
 *   (the Handler's edges hold the Session, the Session's the Request), destroyed at its release.
 * - A weak handle to a request's instance goes stale exactly when that instance is destroyed.
 * - A factory failing mid-request lets go of what the request made for it (the Session the
 *   failed Handler was to hold), ends the Session's creation claim (the next resolve makes a
 *   new one), and leaves the child's value in place.
 * Run plain and under ASan. */
#include <stdlib.h>
#include "harness.h"
#include "binding.h"
#include "registering.h"

typedef struct kind { const char *tag; int made, dropped; } kind;
typedef struct obj { kind *k; struct obj *a, *b; } obj;
static kind k_db = {"Db", 0, 0}, k_session = {"Session", 0, 0}, k_handler = {"Handler", 0, 0},
            k_request = {"Request", 0, 0};

/* The order destructors ran in, as tags. */
static const char *order[16];
static int dropped;
static int fail_handler, fail_session;

static obj *obj_new(kind *k, obj *a, obj *b) {
    obj *o = calloc(1, sizeof *o);
    if (!o) abort();
    o->k = k; o->a = a; o->b = b;
    k->made++;
    return o;
}
static void drop_obj(void *instance, void *context) {
    obj *o = instance;
    if (o->k == context) o->k->dropped++;
    if (dropped < 16) order[dropped] = o->k->tag;
    dropped++;
    free(o);
}
static void *make_db(kind *k) { return obj_new(k, NULL, NULL); }
static void *make_session(kind *k, obj *request, obj *db) {
    if (fail_session) { tether_set_error("no session today"); return NULL; }
    return obj_new(k, request, db);
}
static void *make_handler(kind *k, obj *session) {
    if (fail_handler) { tether_set_error("no handler today"); return NULL; }
    return obj_new(k, session, NULL);
}

static tether_container *root;
static uint32_t handler_key;

static void setup(void) {
    CHECK_OK(tether_container_new(NULL, &root));
    reg_request_shape(root, (tether_fn)make_db, &k_db, (tether_fn)make_session, &k_session, (tether_fn)make_handler,
                      &k_handler, drop_obj);
    CHECK_OK(tether_intern(root, "Handler", &handler_key));
}

static void reset_counts(void) {
    kind *all[] = {&k_session, &k_handler, &k_request};
    for (int i = 0; i < 3; i++) all[i]->made = all[i]->dropped = 0;
    dropped = 0;
    fail_handler = fail_session = 0;
}

/* A child with its Request provided (the request's value, destroyed by drop_obj). */
static tether_container *request_child(void) {
    return request_child_of(root, obj_new(&k_request, NULL, NULL), drop_obj, &k_request);
}

static int order_is(const char *a, const char *b, const char *c) {
    return dropped == 3 && !strcmp(order[0], a) && !strcmp(order[1], b) && !strcmp(order[2], c);
}

static void the_handler_goes_at_its_release_the_rest_at_the_free(void) {
    reset_counts();
    tether_container *child = request_child();
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve_key(child, handler_key, &ref));
    obj *handler = tether_ref_get(ref);
    CHECK(handler && handler->k == &k_handler && handler->a->k == &k_session);
    CHECK(handler->a->a->k == &k_request && handler->a->b->k == &k_db);
    CHECK_OK(tether_ref_release(ref));
    CHECK(dropped == 1 && !strcmp(order[0], "Handler"));  /* the child still holds the Session */
    CHECK(k_session.dropped == 0 && k_request.dropped == 0);
    CHECK_OK(tether_container_free(child));
    CHECK(order_is("Handler", "Session", "Request"));
    CHECK(k_handler.made == 1 && k_handler.dropped == 1 && k_session.made == 1 && k_session.dropped == 1);
    CHECK(k_request.made == 1 && k_request.dropped == 1 && k_db.dropped == 0);
}

static void a_handle_outlives_its_child(void) {
    reset_counts();
    tether_container *child = request_child();
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve_key(child, handler_key, &ref));
    CHECK_OK(tether_container_free(child));
    CHECK(dropped == 0);  /* the Handler's edge holds the Session, whose edge holds the Request */
    obj *handler = tether_ref_get(ref);
    CHECK(handler && handler->a->k == &k_session && handler->a->a->k == &k_request);
    CHECK_OK(tether_ref_release(ref));
    CHECK(order_is("Handler", "Session", "Request"));
    CHECK(k_db.dropped == 0);
}

static void a_second_handler_shares_the_childs_session(void) {
    reset_counts();
    tether_container *child = request_child();
    tether_ref *a = NULL, *b = NULL;
    CHECK_OK(tether_resolve_key(child, handler_key, &a));
    CHECK_OK(tether_resolve_key(child, handler_key, &b));
    obj *ha = tether_ref_get(a), *hb = tether_ref_get(b);
    CHECK(ha != hb && ha->a == hb->a && k_session.made == 1 && k_handler.made == 2);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_ref_release(a));
    CHECK(dropped == 1 && k_handler.dropped == 1);
    CHECK_OK(tether_ref_release(b));
    CHECK(dropped == 4 && !strcmp(order[1], "Handler") && !strcmp(order[2], "Session") && !strcmp(order[3], "Request"));
}

static void weak_handles_to_a_requests_instances_go_stale_when_they_go(void) {
    reset_counts();
    tether_container *child = request_child();
    tether_ref *handler = NULL, *session = NULL, *request = NULL, *up = NULL;
    tether_weak *w_handler = NULL, *w_session = NULL, *w_request = NULL;
    CHECK_OK(tether_resolve_key(child, handler_key, &handler));
    CHECK_OK(tether_resolve(child, "Session", &session));
    CHECK_OK(tether_resolve(child, "Request", &request));
    CHECK(((obj *)tether_ref_get(handler))->a == tether_ref_get(session));
    CHECK(((obj *)tether_ref_get(session))->a == tether_ref_get(request));
    CHECK_OK(tether_ref_downgrade(handler, &w_handler));
    CHECK_OK(tether_ref_downgrade(session, &w_session));
    CHECK_OK(tether_ref_downgrade(request, &w_request));
    CHECK_OK(tether_ref_release(session));
    CHECK_OK(tether_ref_release(request));
    /* The Handler: stale at its handle's release, while the child lives. */
    CHECK_OK(tether_ref_release(handler));
    CHECK(k_handler.dropped == 1);
    CHECK_STATUS(tether_weak_upgrade(w_handler, &up), TETHER_E_EXPIRED);
    /* The Session and the Request: cached by the child until its free. */
    CHECK_OK(tether_weak_upgrade(w_session, &up));
    CHECK(((obj *)tether_ref_get(up))->k == &k_session);
    CHECK_OK(tether_ref_release(up));
    CHECK_OK(tether_weak_upgrade(w_request, &up));
    CHECK(((obj *)tether_ref_get(up))->k == &k_request);
    CHECK_OK(tether_ref_release(up));
    CHECK_OK(tether_container_free(child));
    CHECK(order_is("Handler", "Session", "Request"));
    CHECK_STATUS(tether_weak_upgrade(w_session, &up), TETHER_E_EXPIRED);
    CHECK_STATUS(tether_weak_upgrade(w_request, &up), TETHER_E_EXPIRED);
    CHECK_OK(tether_weak_release(w_handler));
    CHECK_OK(tether_weak_release(w_session));
    CHECK_OK(tether_weak_release(w_request));
}

static void a_weak_handle_to_a_value_held_past_the_free_goes_stale_with_its_holder(void) {
    reset_counts();
    tether_container *child = request_child();
    tether_ref *handler = NULL, *request = NULL, *up = NULL;
    tether_weak *w_request = NULL;
    CHECK_OK(tether_resolve_key(child, handler_key, &handler));
    CHECK_OK(tether_resolve(child, "Request", &request));
    CHECK_OK(tether_ref_downgrade(request, &w_request));
    CHECK_OK(tether_ref_release(request));
    CHECK_OK(tether_container_free(child));
    /* Held by the Session's edge, which the Handler's holds. */
    CHECK_OK(tether_weak_upgrade(w_request, &up));
    CHECK(((obj *)tether_ref_get(up))->k == &k_request && k_request.dropped == 0);
    CHECK_OK(tether_ref_release(up));
    CHECK_OK(tether_ref_release(handler));
    CHECK(order_is("Handler", "Session", "Request"));
    CHECK_STATUS(tether_weak_upgrade(w_request, &up), TETHER_E_EXPIRED);
    CHECK_OK(tether_weak_release(w_request));
}

static void a_failing_handler_lets_go_of_the_session_made_for_it(void) {
    reset_counts();
    tether_container *child = request_child();
    tether_ref *ref = NULL;
    fail_handler = 1;
    CHECK_STATUS(tether_resolve_key(child, handler_key, &ref), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("no handler today");
    CHECK(ref == NULL);
    CHECK(k_session.made == 1 && k_session.dropped == 1 && k_handler.made == 0);
    CHECK(dropped == 1 && !strcmp(order[0], "Session") && k_request.dropped == 0);
    /* The claim ended: the next resolve makes a new Session over the same value. */
    fail_handler = 0;
    CHECK_OK(tether_resolve_key(child, handler_key, &ref));
    obj *handler = tether_ref_get(ref);
    CHECK(handler && handler->a->a->k == &k_request && k_session.made == 2);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(child));
    CHECK(dropped == 4 && !strcmp(order[1], "Handler") && !strcmp(order[2], "Session") && !strcmp(order[3], "Request"));
    CHECK(k_session.dropped == 2 && k_request.dropped == 1 && k_handler.dropped == 1);
}

static void a_failing_session_leaves_the_key_to_the_next_resolve(void) {
    reset_counts();
    tether_container *child = request_child();
    tether_ref *ref = NULL;
    fail_session = 1;
    CHECK_STATUS(tether_resolve_key(child, handler_key, &ref), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("no session today");
    CHECK(ref == NULL && k_session.made == 0 && k_handler.made == 0 && dropped == 0);
    fail_session = 0;
    CHECK_OK(tether_resolve_key(child, handler_key, &ref));
    CHECK(k_session.made == 1 && k_handler.made == 1);
    CHECK_OK(tether_container_free(child));
    CHECK(dropped == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK(order_is("Handler", "Session", "Request"));
}

static void the_roots_free_lets_go_of_its_one_db(void) {
    CHECK(k_db.made == 1 && k_db.dropped == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(k_db.made == 1 && k_db.dropped == 1);
}

int main(void) {
    setup();
    /* Twice: the first round records the plans, the second runs them. */
    for (int round = 0; round < 2; round++) {
        RUN(the_handler_goes_at_its_release_the_rest_at_the_free);
        RUN(a_handle_outlives_its_child);
        RUN(a_second_handler_shares_the_childs_session);
        RUN(weak_handles_to_a_requests_instances_go_stale_when_they_go);
        RUN(a_weak_handle_to_a_value_held_past_the_free_goes_stale_with_its_holder);
        RUN(a_failing_handler_lets_go_of_the_session_made_for_it);
        RUN(a_failing_session_leaves_the_key_to_the_next_resolve);
    }
    RUN(the_roots_free_lets_go_of_its_one_db);
    return harness_finish();
}
