/* A request's first resolve from a fresh root (the RP shape: a child per request, its Request
 * provided as a value, a CONTAINER-scoped Session(Request, Db) over a root singleton Db not made
 * yet, a graph-scoped Handler(Session)): the creation plan over the request's steps (issue 28:
 * it was built before), then the warm plan for later requests. What must hold either way:
 *
 * - Db made once for the root, a Session once per child (the same one for each resolve from it),
 *   a Handler per resolve; the Handler dropped at its release, the Session then the Request at the
 *   child's free, Db at the root's free, each once.
 * - Two threads making the first request at once from their own children: one Db, both Sessions
 *   over it, each destructor once.
 * - Db's factory failing under the Session: the factory's status and message, nothing cached (no
 *   Session in the child, no Db: the next resolve calls both factories again), what was made dropped once.
 * Run plain and under ASan. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "harness.h"
#include "binding.h"
#include "registering.h"

typedef struct kind { const char *tag; int made, dropped, calls; } kind;
typedef struct obj { kind *k; struct obj *a, *b; } obj;
static kind k_db = {"Db", 0, 0, 0}, k_session = {"Session", 0, 0, 0}, k_handler = {"Handler", 0, 0, 0},
            k_request = {"Request", 0, 0, 0};
static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;

/* The order destructors ran in, as tags. */
static const char *order[32];
static int dropped;
static int fail_db, slow_db;

static obj *obj_new(kind *k, obj *a, obj *b) {
    obj *o = calloc(1, sizeof *o);
    if (!o) abort();
    o->k = k; o->a = a; o->b = b;
    pthread_mutex_lock(&counts);
    k->made++;
    pthread_mutex_unlock(&counts);
    return o;
}
static void drop_obj(void *instance, void *context) {
    obj *o = instance;
    pthread_mutex_lock(&counts);
    if (o->k == context) o->k->dropped++;
    if (dropped < 32) order[dropped] = o->k->tag;
    dropped++;
    pthread_mutex_unlock(&counts);
    free(o);
}
static void *make_db(kind *k) {
    pthread_mutex_lock(&counts);
    k->calls++;
    pthread_mutex_unlock(&counts);
    if (slow_db) {  /* the other thread reaches Db's cell meanwhile */
        struct timespec pause = {0, 3000000};
        nanosleep(&pause, NULL);
    }
    if (fail_db) { tether_set_error("no database today"); return NULL; }
    return obj_new(k, NULL, NULL);
}
static void *make_session(kind *k, obj *request, obj *db) {
    k->calls++;
    return obj_new(k, request, db);
}
static void *make_handler(kind *k, obj *session) { return obj_new(k, session, NULL); }

static tether_container *root;
static uint32_t handler_key;

/* A fresh root (nothing made yet), the counts reset. */
static void setup(void) {
    kind *all[] = {&k_db, &k_session, &k_handler, &k_request};
    for (int i = 0; i < 4; i++) all[i]->made = all[i]->dropped = all[i]->calls = 0;
    dropped = 0;
    fail_db = slow_db = 0;
    CHECK_OK(tether_container_new(NULL, &root));
    reg_request_shape(root, (tether_fn)make_db, &k_db, (tether_fn)make_session, &k_session, (tether_fn)make_handler,
                      &k_handler, drop_obj);
    CHECK_OK(tether_intern(root, "Handler", &handler_key));
}

/* A child with its Request provided (the request's value, destroyed by drop_obj). */
static tether_container *request_child(void) {
    return request_child_of(root, obj_new(&k_request, NULL, NULL), drop_obj, &k_request);
}

static void the_first_request_from_a_fresh_root_then_later_ones(void) {
    setup();
    obj *db = NULL;
    for (int n = 0; n < 3; n++) {
        tether_container *child = request_child();
        obj *session = NULL;
        for (int r = 0; r < 2; r++) {
            tether_ref *ref = NULL;
            CHECK_OK(tether_resolve_key(child, handler_key, &ref));
            obj *handler = tether_ref_get(ref);
            CHECK(handler && handler->k == &k_handler && handler->a->k == &k_session);
            CHECK(handler->a->a->k == &k_request && handler->a->b->k == &k_db);
            if (!db) db = handler->a->b;
            CHECK(handler->a->b == db);  /* one Db for every request */
            if (r == 0) session = handler->a;
            CHECK(handler->a == session);  /* one Session per child */
            int before = dropped;
            CHECK_OK(tether_ref_release(ref));
            CHECK(dropped == before + 1 && !strcmp(order[before], "Handler"));
        }
        int before = dropped;
        CHECK_OK(tether_container_free(child));
        CHECK(dropped == before + 2 && !strcmp(order[before], "Session") && !strcmp(order[before + 1], "Request"));
    }
    CHECK(k_db.calls == 1 && k_db.made == 1 && k_db.dropped == 0);
    CHECK(k_session.made == 3 && k_session.dropped == 3 && k_handler.made == 6 && k_handler.dropped == 6);
    CHECK(k_request.made == 3 && k_request.dropped == 3);
    CHECK_OK(tether_container_free(root));
    CHECK(k_db.dropped == 1 && !strcmp(order[dropped - 1], "Db"));
}

typedef struct racer { pthread_barrier_t *gate; obj *db; int status; } racer;

static void *first_request(void *arg) {
    racer *r = arg;
    tether_container *child = NULL;
    r->status = tether_container_new(root, &child);
    if (r->status != TETHER_OK) return NULL;
    tether_provide_value(child, "Request", obj_new(&k_request, NULL, NULL), drop_obj, &k_request);
    pthread_barrier_wait(r->gate);
    tether_ref *ref = NULL;
    r->status = tether_resolve_key(child, handler_key, &ref);
    if (r->status == TETHER_OK) {
        obj *handler = tether_ref_get(ref);
        r->db = handler->a->b;
        tether_ref_release(ref);
    }
    tether_container_free(child);
    return NULL;
}

static void two_threads_make_the_first_request_at_once(void) {
    for (int round = 0; round < 20; round++) {
        setup();
        slow_db = 1;
        pthread_barrier_t gate;
        pthread_barrier_init(&gate, NULL, 2);
        racer rs[2] = {{&gate, NULL, -1}, {&gate, NULL, -1}};
        pthread_t ts[2];
        for (int i = 0; i < 2; i++) pthread_create(&ts[i], NULL, first_request, &rs[i]);
        for (int i = 0; i < 2; i++) pthread_join(ts[i], NULL);
        pthread_barrier_destroy(&gate);
        CHECK(rs[0].status == TETHER_OK && rs[1].status == TETHER_OK);
        CHECK(rs[0].db && rs[0].db == rs[1].db);
        CHECK(k_db.calls == 1 && k_db.made == 1 && k_session.made == 2 && k_session.dropped == 2);
        CHECK(k_handler.made == 2 && k_handler.dropped == 2 && k_request.dropped == 2);
        CHECK_OK(tether_container_free(root));
        CHECK(k_db.dropped == 1);
    }
}

static void a_failing_singleton_under_the_session_caches_nothing(void) {
    setup();
    fail_db = 1;
    tether_container *child = request_child();
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve_key(child, handler_key, &ref), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("no database today");
    CHECK_ERROR_HAS("Db");
    CHECK(ref == NULL && k_db.calls == 1 && k_db.made == 0 && k_session.calls == 0 && dropped == 0);
    fail_db = 0;
    /* Nothing cached: the child's Session and the root's Db made now. */
    CHECK_OK(tether_resolve_key(child, handler_key, &ref));
    obj *handler = tether_ref_get(ref);
    CHECK(handler && handler->a->k == &k_session && handler->a->b->k == &k_db);
    CHECK(k_db.calls == 2 && k_db.made == 1 && k_session.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(child));
    CHECK(k_session.dropped == 1 && k_request.dropped == 1);
    CHECK_OK(tether_container_free(root));
    CHECK(k_db.dropped == 1 && k_handler.dropped == 1);
}

int main(void) {
    RUN(the_first_request_from_a_fresh_root_then_later_ones);
    RUN(two_threads_make_the_first_request_at_once);
    RUN(a_failing_singleton_under_the_session_caches_nothing);
    return harness_finish();
}
