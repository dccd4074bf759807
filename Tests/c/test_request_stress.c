/* Per-request children under load: 8 threads, each making a child container
 * per request from one root, providing the request as a value, resolving a
 * graph-scoped Handler over a CONTAINER-scoped Session(Request, Db) and a root
 * singleton Db, twice, then freeing the child. Every identity and every
 * factory and destructor count is checked: one Db for all, one Session per
 * request (shared by its two Handlers), each value and instance dropped once,
 * by the child's free. Then what a parent must know of children made on
 * every thread (each thread's children are counted in its own stripe of the
 * parent: Children.swift): a parent with children open on 8 threads refuses to
 * be freed, naming how many; an override in the parent reaches the caches of
 * children made on every thread; freeing the parent while 8 threads make and
 * free children either refuses or stops them all. Also run under
 * ThreadSanitizer (make test-c-tsan). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include "harness.h"
#include "threaded_fixtures.h"

enum { THREADS = 8, REQUESTS = 1000 };

/* A Session's `a` is its request, `b` its Db; a Handler's `a` its Session; a request's `n` its number. */
static kind k_db = KIND("Db"), k_session = KIND("Session"), k_handler = KIND("Handler"), k_request = KIND("Request");



static tether_container *root;
static atomic_int wrong;        /* a request that saw something it should not have */
static atomic_int failures;     /* a call that failed */

static void *serve(void *arg) {
    int base = (int)(intptr_t)arg * REQUESTS;
    for (int i = 0; i < REQUESTS; i++) {
        tether_container *child = NULL;
        if (tether_container_new(root, &child) != TETHER_OK) { atomic_fetch_add(&failures, 1); continue; }
        obj *request = obj_new(&k_request, NULL, NULL);
        request->n = base + i;
        if (tether_provide_value(child, "Request", request, drop_obj, &k_request) != TETHER_OK) atomic_fetch_add(&failures, 1);
        tether_ref *h1 = NULL, *h2 = NULL, *db = NULL;
        if (tether_resolve(child, "Handler", &h1) != TETHER_OK || tether_resolve(child, "Handler", &h2) != TETHER_OK ||
            tether_resolve(root, "Db", &db) != TETHER_OK) {
            atomic_fetch_add(&failures, 1);
        } else {
            obj *a = tether_ref_get(h1), *b = tether_ref_get(h2);
            /* two Handlers over the request's one Session, over this request's value and the one Db */
            if (a == b || a->a != b->a || a->a->a != request || a->a->b != tether_ref_get(db) ||
                a->a->a->n != base + i)
                atomic_fetch_add(&wrong, 1);
        }
        if (h1) tether_ref_release(h1);
        if (h2) tether_ref_release(h2);
        if (db) tether_ref_release(db);
        if (tether_container_free(child) != TETHER_OK) atomic_fetch_add(&failures, 1);
    }
    return NULL;
}

static void test_per_request_children_on_8_threads(void) {
    CHECK_OK(tether_container_new(NULL, &root));
    reg_request_shape(root, (tether_fn)make0, &k_db, (tether_fn)make2, &k_session, (tether_fn)make1, &k_handler, drop_obj);
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

/* ---- children made on every thread, seen by their parent ---- */

static pthread_barrier_t opened, decided, resolved, closed_all;
static kind k_db2 = KIND("Db2"), k_session2 = KIND("Session2"), k_replacement = KIND("Db override");

/* Each thread: a child with Session cached, held open while the main thread checks; after the
 * override, Session again (made anew over the override), then the child freed. */
static void *hold_child(void *arg) {
    (void)arg;
    tether_container *child = NULL;
    tether_ref *s1 = NULL, *s2 = NULL;
    if (tether_container_new(root, &child) != TETHER_OK || tether_resolve(child, "Session", &s1) != TETHER_OK)
        atomic_fetch_add(&failures, 1);
    pthread_barrier_wait(&opened);     /* the main thread tries to free the root, then overrides Db */
    pthread_barrier_wait(&decided);
    if (s1) {
        obj *before = tether_ref_get(s1);
        if (!child || tether_resolve(child, "Session", &s2) != TETHER_OK) atomic_fetch_add(&failures, 1);
        else if (tether_ref_get(s2) == before || ((obj *)tether_ref_get(s2))->a->k != &k_replacement)
            atomic_fetch_add(&wrong, 1);  /* the child's cache was not let go of, or not rebuilt over the override */
        tether_ref_release(s1);
    }
    if (s2) tether_ref_release(s2);
    pthread_barrier_wait(&resolved);
    if (child && tether_container_free(child) != TETHER_OK) atomic_fetch_add(&failures, 1);
    pthread_barrier_wait(&closed_all);
    return NULL;
}

static void test_the_parent_sees_children_of_every_thread(void) {
    atomic_store(&failures, 0);
    atomic_store(&wrong, 0);
    CHECK_OK(tether_container_new(NULL, &root));
    tether_param db[] = {TETHER_CONTEXT}, session_db[] = {TETHER_CONTEXT, TETHER_DEP("Db")};
    reg_with_context(root, "Db", (tether_fn)make0, db, 1, TETHER_SCOPE_SINGLETON, &k_db2, drop_obj);
    /* Session(Db), one per child: its one dependency in `a` */
    reg_with_context(root, "Session", (tether_fn)make1, session_db, 2, TETHER_SCOPE_CONTAINER, &k_session2,
                     drop_obj);
    CHECK(pthread_barrier_init(&opened, NULL, THREADS + 1) == 0);
    CHECK(pthread_barrier_init(&decided, NULL, THREADS + 1) == 0);
    CHECK(pthread_barrier_init(&resolved, NULL, THREADS + 1) == 0);
    CHECK(pthread_barrier_init(&closed_all, NULL, THREADS + 1) == 0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, hold_child, NULL) == 0);
    pthread_barrier_wait(&opened);
    CHECK(atomic_load(&k_session2.made) == THREADS);
    /* every thread's child counts, wherever it was made */
    CHECK_STATUS(tether_container_free(root), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("8 child container");
    /* an override of Db lets go of every child's Session (each built over Db) */
    obj *replacement = obj_new(&k_replacement, NULL, NULL);
    CHECK_OK(tether_override(root, "Db", replacement, drop_obj, &k_replacement));
    CHECK(atomic_load(&k_session2.dropped) == 0);  /* each thread still holds its Session */
    pthread_barrier_wait(&decided);
    pthread_barrier_wait(&resolved);
    pthread_barrier_wait(&closed_all);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(atomic_load(&failures) == 0);
    CHECK(atomic_load(&wrong) == 0);
    CHECK(atomic_load(&k_session2.made) == 2 * THREADS && atomic_load(&k_session2.dropped) == 2 * THREADS);
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&k_db2.made) == 1 && atomic_load(&k_db2.dropped) == 1);
    CHECK(atomic_load(&k_replacement.made) == 1 && atomic_load(&k_replacement.dropped) == 1);
    pthread_barrier_destroy(&opened);
    pthread_barrier_destroy(&decided);
    pthread_barrier_destroy(&resolved);
    pthread_barrier_destroy(&closed_all);
}

/* 8 threads make and free children of the root until the root is gone; the main thread frees the
 * root meanwhile, retrying while it is refused. Every child made is freed, none after the root. */
static atomic_int made_children, freed_children, stop_making;

static void *churn(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_making)) {
        tether_container *child = NULL;
        tether_status st = tether_container_new(root, &child);
        if (st == TETHER_E_INVALID_HANDLE) break;  /* the root was freed: its stale handle says so */
        if (st != TETHER_OK) { atomic_fetch_add(&failures, 1); break; }
        atomic_fetch_add(&made_children, 1);
        tether_ref *db = NULL;
        if (tether_resolve(child, "Db", &db) != TETHER_OK) atomic_fetch_add(&failures, 1);
        else tether_ref_release(db);
        if (tether_container_free(child) == TETHER_OK) atomic_fetch_add(&freed_children, 1);
        else atomic_fetch_add(&failures, 1);
    }
    return NULL;
}

static void test_freeing_the_parent_while_threads_make_children(void) {
    atomic_store(&failures, 0);
    static kind k_db3 = KIND("Db3");
    CHECK_OK(tether_container_new(NULL, &root));
    tether_param db[] = {TETHER_CONTEXT};
    reg_with_context(root, "Db", (tether_fn)make0, db, 1, TETHER_SCOPE_SINGLETON, &k_db3, drop_obj);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, churn, NULL) == 0);
    while (atomic_load(&made_children) < 2000) sched_yield();
    /* Refused while a child is open (as documented), else done: the threads' next child is then refused.
       After 200 tries the threads stop making children, so the free goes through either way. */
    int tries = 0;
    tether_status st;
    while ((st = tether_container_free(root)) == TETHER_E_INVALID_ARGUMENT) {
        CHECK_ERROR_HAS("child container");
        if (++tries == 200) atomic_store(&stop_making, 1);
        sched_yield();
    }
    CHECK(st == TETHER_OK);
    atomic_store(&stop_making, 1);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(atomic_load(&failures) == 0);
    CHECK(atomic_load(&made_children) == atomic_load(&freed_children));
    CHECK(atomic_load(&k_db3.made) == 1 && atomic_load(&k_db3.dropped) == 1);
}

int main(void) {
    RUN(test_per_request_children_on_8_threads);
    RUN(test_the_parent_sees_children_of_every_thread);
    RUN(test_freeing_the_parent_while_threads_make_children);
    return harness_finish();
}
