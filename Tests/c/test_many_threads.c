/* Many threads at once, each on its first calls into the library: 64 live
 * threads (so some share an entry of the library's direct-mapped table of
 * threads) resolve, clone and release behind a barrier, in several rounds of
 * fresh threads. Exact factory and destructor counts; under ThreadSanitizer
 * (`make test-tsan`) it also checks that a thread looking up its own entry
 * never reads a word another thread claims or clears at the same moment. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "harness.h"

enum { THREADS = 64, ROUNDS = 4, RESOLVES = 20 };

typedef struct kind { atomic_int made, dropped; } kind;

static void *make(kind *k) {
    atomic_fetch_add(&k->made, 1);
    return malloc(1);
}

static void drop(void *instance, void *context) {
    atomic_fetch_add(&((kind *)context)->dropped, 1);
    free(instance);
}

typedef struct shared {
    tether_container *c;
    pthread_barrier_t start;
    atomic_int failures;
    void *singleton;
} shared;

static void *worker(void *arg) {
    shared *s = arg;
    pthread_barrier_wait(&s->start);  /* every thread's first call comes after this */
    for (int i = 0; i < RESOLVES; i++) {
        tether_ref *g = NULL, *one = NULL, *copy = NULL;
        if (tether_resolve(s->c, "G", &g) != TETHER_OK || tether_resolve(s->c, "S", &one) != TETHER_OK ||
            tether_ref_clone(one, &copy) != TETHER_OK || tether_ref_get(copy) != s->singleton ||
            tether_ref_release(copy) != TETHER_OK || tether_ref_release(one) != TETHER_OK ||
            tether_ref_release(g) != TETHER_OK)
            atomic_fetch_add(&s->failures, 1);
    }
    return NULL;
}

static void reg(tether_container *c, const char *key, kind *k, tether_scope scope) {
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, (tether_fn)make, p, 1, &r));
    CHECK_OK(tether_set_scope(r, scope));
    CHECK_OK(tether_set_context(r, k, drop));
}

static void fresh_threads_resolve_at_once(void) {
    kind G = {0}, S = {0};
    shared s = {.c = NULL};
    CHECK_OK(tether_container_new(NULL, &s.c));
    reg(s.c, "G", &G, TETHER_SCOPE_GRAPH);
    reg(s.c, "S", &S, TETHER_SCOPE_SINGLETON);
    tether_ref *held = NULL;
    CHECK_OK(tether_resolve(s.c, "S", &held));
    s.singleton = tether_ref_get(held);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_init(&s.start, NULL, THREADS);
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, worker, &s) == 0);
        for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&s.start);
    }
    CHECK(atomic_load(&s.failures) == 0);
    CHECK(atomic_load(&G.made) == ROUNDS * THREADS * RESOLVES);
    CHECK(atomic_load(&G.dropped) == ROUNDS * THREADS * RESOLVES);
    CHECK(atomic_load(&S.made) == 1 && atomic_load(&S.dropped) == 0);
    CHECK_OK(tether_ref_release(held));
    CHECK_OK(tether_container_free(s.c));
    CHECK(atomic_load(&S.dropped) == 1);
}

int main(void) {
    RUN(fresh_threads_resolve_at_once);
    return harness_finish();
}
