/* Per-request children under load: 8 threads, each making a child container
 * per request from one root, providing the request as a value, resolving a
 * graph-scoped Handler over a CONTAINER-scoped Session(Request, Db) and a root
 * singleton Db, twice, then freeing the child. Every identity and every
 * factory and destructor count is checked: one Db for all, one Session per
 * request (shared by its two Handlers), each value and instance dropped once,
 * by the child's free. Also run under ThreadSanitizer (make test-c-tsan). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "harness.h"

enum { THREADS = 8, REQUESTS = 1000 };

typedef struct counted { const char *tag; atomic_int made, dropped; } counted;
static counted k_db = {"Db", 0, 0}, k_session = {"Session", 0, 0}, k_handler = {"Handler", 0, 0},
               k_request = {"Request", 0, 0};

typedef struct obj { counted *k; struct obj *a, *b; int request; } obj;

static obj *obj_new(counted *k, obj *a, obj *b) {
    obj *o = calloc(1, sizeof *o);
    if (!o) abort();
    o->k = k; o->a = a; o->b = b;
    atomic_fetch_add(&k->made, 1);
    return o;
}
static void drop_obj(void *instance, void *context) {
    obj *o = instance;
    if (o->k == context) atomic_fetch_add(&o->k->dropped, 1);
    free(o);
}
static void *make_db(counted *k) { return obj_new(k, NULL, NULL); }
static void *make_session(counted *k, obj *request, obj *db) { return obj_new(k, request, db); }
static void *make_handler(counted *k, obj *session) { return obj_new(k, session, NULL); }

static tether_container *root;
static atomic_int wrong;        /* a request that saw something it should not have */
static atomic_int failures;     /* a call that failed */

static void *serve(void *arg) {
    int base = (int)(intptr_t)arg * REQUESTS;
    for (int i = 0; i < REQUESTS; i++) {
        tether_container *child = NULL;
        if (tether_container_new(root, &child) != TETHER_OK) { atomic_fetch_add(&failures, 1); continue; }
        obj *request = obj_new(&k_request, NULL, NULL);
        request->request = base + i;
        if (tether_provide_value(child, "Request", request, drop_obj, &k_request) != TETHER_OK) atomic_fetch_add(&failures, 1);
        tether_ref *h1 = NULL, *h2 = NULL, *db = NULL;
        if (tether_resolve(child, "Handler", &h1) != TETHER_OK || tether_resolve(child, "Handler", &h2) != TETHER_OK ||
            tether_resolve(root, "Db", &db) != TETHER_OK) {
            atomic_fetch_add(&failures, 1);
        } else {
            obj *a = tether_ref_get(h1), *b = tether_ref_get(h2);
            /* two Handlers over the request's one Session, over this request's value and the one Db */
            if (a == b || a->a != b->a || a->a->a != request || a->a->b != tether_ref_get(db) ||
                a->a->a->request != base + i)
                atomic_fetch_add(&wrong, 1);
        }
        if (h1) tether_ref_release(h1);
        if (h2) tether_ref_release(h2);
        if (db) tether_ref_release(db);
        if (tether_container_free(child) != TETHER_OK) atomic_fetch_add(&failures, 1);
    }
    return NULL;
}

static void reg(const char *key, tether_fn f, const tether_param *p, size_t n, counted *k, tether_scope scope) {
    tether_registration_options o = {0};
    o.scope = scope;
    o.context = k;
    o.drop = drop_obj;
    CHECK_OK(TB.register_ex(root, key, f, p, n, &o, NULL));
}

static void test_per_request_children_on_8_threads(void) {
    CHECK_OK(tether_container_new(NULL, &root));
    tether_param db[] = {TETHER_CONTEXT}, session[] = {TETHER_CONTEXT, TETHER_DEP("Request"), TETHER_DEP("Db")},
                 handler[] = {TETHER_CONTEXT, TETHER_DEP("Session")};
    CHECK_OK(tether_declare_value(root, "Request"));
    reg("Db", (tether_fn)make_db, db, 1, &k_db, TETHER_SCOPE_SINGLETON);
    reg("Session", (tether_fn)make_session, session, 3, &k_session, TETHER_SCOPE_CONTAINER);
    reg("Handler", (tether_fn)make_handler, handler, 2, &k_handler, TETHER_SCOPE_GRAPH);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, serve, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    int requests = THREADS * REQUESTS;
    CHECK(atomic_load(&failures) == 0);
    CHECK(atomic_load(&wrong) == 0);
    CHECK(atomic_load(&k_db.made) == 1);
    CHECK(atomic_load(&k_request.made) == requests && atomic_load(&k_request.dropped) == requests);
    CHECK(atomic_load(&k_session.made) == requests && atomic_load(&k_session.dropped) == requests);
    CHECK(atomic_load(&k_handler.made) == 2 * requests && atomic_load(&k_handler.dropped) == 2 * requests);
    CHECK(atomic_load(&k_db.dropped) == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&k_db.dropped) == 1);
}

int main(void) {
    RUN(test_per_request_children_on_8_threads);
    return harness_finish();
}
