/* Calls into the library while a thread exits, from another pthread key's destructor that runs
 * after the library's own has let go of the thread's state (glibc runs a thread's key
 * destructors in the order the keys were made: this test's key is made after the library's).
 * The thread's state is found through a word of static TLS (ThreadState.currentReference); the
 * library's destructor clears it before letting go of the state, so a later call makes a new
 * state (freed by the destructors' next round) instead of using the freed one. Every instance
 * made there is destroyed once; ASan (make test-c-asan) sees no use after free. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "harness.h"
#include "thread_check.h"
#include "registering.h"

typedef struct kind { atomic_int made, dropped; } kind;
static kind k_thing, k_db;
typedef struct obj { kind *k; struct obj *dep; } obj;

static obj *obj_new(kind *k, obj *dep) {
    obj *o = calloc(1, sizeof *o);
    if (!o) abort();
    o->k = k; o->dep = dep;
    atomic_fetch_add(&k->made, 1);
    return o;
}
static void *make_db(kind *k) { return obj_new(k, NULL); }
static void *make_thing(kind *k, obj *db) { return obj_new(k, db); }
static void drop(void *instance, void *context) {
    obj *o = instance;
    if (o->k == context) atomic_fetch_add(&o->k->dropped, 1);
    free(o);
}

static tether_container *root;
static pthread_key_t late_key;
static atomic_int late_calls, late_ok;

/* Runs at thread exit, after the library's destructor: a resolve (a graph, a destructor run by
 * the release, a request's child made and freed). */
static void late_destructor(void *value) {
    (void)value;
    atomic_fetch_add(&late_calls, 1);
    tether_ref *ref = NULL;
    tether_container *child = NULL;
    int ok = tether_resolve(root, "Thing", &ref) == TETHER_OK && ref && ((obj *)tether_ref_get(ref))->k == &k_thing
             && tether_ref_release(ref) == TETHER_OK
             && tether_container_new(root, &child) == TETHER_OK
             && tether_resolve(child, "Thing", &ref) == TETHER_OK && tether_ref_release(ref) == TETHER_OK
             && tether_container_free(child) == TETHER_OK;
    if (ok) atomic_fetch_add(&late_ok, 1);
}

static void *worker(void *arg) {
    (void)arg;
    tether_ref *ref = NULL;
    T_CHECK(tether_resolve(root, "Thing", &ref) == TETHER_OK);  /* the thread has a state */
    T_CHECK(tether_ref_release(ref) == TETHER_OK);
    T_CHECK(pthread_setspecific(late_key, (void *)1) == 0);
    return NULL;
}

static void reg(const char *key, tether_scope scope, tether_fn f, const tether_param *p, size_t n, kind *k) {
    reg_with_context(root, key, f, p, n, scope, k, drop);
}

static void a_call_from_a_later_thread_exit_destructor_gets_a_new_state(void) {
    CHECK_OK(tether_container_new(NULL, &root));
    tether_param ctx[] = {TETHER_CONTEXT}, on_db[] = {TETHER_CONTEXT, TETHER_DEP("Db")};
    reg("Db", TETHER_SCOPE_SINGLETON, (tether_fn)make_db, ctx, 1, &k_db);
    reg("Thing", TETHER_SCOPE_TRANSIENT, (tether_fn)make_thing, on_db, 2, &k_thing);
    /* A resolve on this thread first: the library's key exists before this test's. */
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(root, "Thing", &ref));
    CHECK_OK(tether_ref_release(ref));
    CHECK(pthread_key_create(&late_key, late_destructor) == 0);
    for (int round = 0; round < 8; round++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
        CHECK(pthread_join(t, NULL) == 0);
    }
    CHECK(atomic_load(&thread_failures) == 0);
    CHECK(atomic_load(&late_calls) == 8 && atomic_load(&late_ok) == 8);
    /* 1 on this thread, then per round 1 in the worker and 2 at its exit. */
    CHECK(atomic_load(&k_thing.made) == 1 + 8 * 3 && atomic_load(&k_thing.dropped) == 1 + 8 * 3);
    CHECK(atomic_load(&k_db.made) == 1 && atomic_load(&k_db.dropped) == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&k_db.dropped) == 1);
    pthread_key_delete(late_key);
}

int main(void) {
    RUN(a_call_from_a_later_thread_exit_destructor_gets_a_new_state);
    return harness_finish();
}
