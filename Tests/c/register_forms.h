/* What the tests of the one-call registration forms share (test_register_ex.c: the binding protocol's
 * register_ex; test_register_with.c: tether_register_with and TETHER_REGISTERn): counted factories,
 * destructors and completion callbacks, and the test that registering under load is never seen half done.
 * Include after harness.h. */
#ifndef TETHER_TEST_REGISTER_FORMS_H
#define TETHER_TEST_REGISTER_FORMS_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "harness.h"

static atomic_int made, dropped, completed;

static void *make(void) { atomic_fetch_add(&made, 1); return malloc(8); }
static void drop(void *instance, void *context) { (void)context; atomic_fetch_add(&dropped, 1); free(instance); }
/* Adds its context's int to `completed`. */
static tether_status complete(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance;
    atomic_fetch_add(&completed, *(int *)context);
    return TETHER_OK;
}

static void reset_counts(void) { made = dropped = completed = 0; }

static tether_container *shared;
static atomic_int stop;

static void *resolver_thread(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        tether_ref *ref;
        if (tether_resolve(shared, "K", &ref) == TETHER_OK) tether_ref_release(ref);
    }
    return NULL;
}

/* `register_k` registers "K" (made by `make`, destroyed by `drop`) in `shared`, once, then 2000 times
 * again while another thread resolves K: every instance made has its destructor (never half configured). */
static void registered_under_load(tether_status (*register_k)(void)) {
    reset_counts();
    CHECK_OK(tether_container_new(NULL, &shared));
    CHECK_OK(register_k());
    stop = 0;
    pthread_t t;
    pthread_create(&t, NULL, resolver_thread, NULL);
    for (int i = 0; i < 2000; i++) CHECK_OK(register_k());
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    CHECK_OK(tether_container_free(shared));
    CHECK(made == dropped);
}
#endif
