/* Counted objects for the threaded C tests: fixtures.h's `kind` and objects, with atomic counters
 * (factories and destructors run on every thread). Include after harness.h, instead of fixtures.h;
 * all static inline, so a test uses what it needs. */
#ifndef TETHER_TEST_THREADED_FIXTURES_H
#define TETHER_TEST_THREADED_FIXTURES_H
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"
#include "registering.h"  /* the registrations tests share, whatever their object type */
#include "thread_check.h"

/* One registration's identity and counters, passed as its context. */
typedef struct kind { const char *tag; atomic_int made, dropped; } kind;
#define KIND(tag) {tag, 0, 0}

/* What a factory made. */
typedef struct obj {
    kind *k;
    union {                      /* constructor dependencies (strong), by name or by index; `dep` is the first */
        struct { struct obj *a, *b; };
        struct obj *d[2];
        struct obj *dep;
    };
    atomic_int alive;            /* 1 from its factory on; a checking destructor sets 0 (once) */
    int64_t n;                   /* a runtime argument, or the request it stands for */
    tether_weak *parent;         /* a weak back edge a completion callback took, released by drop_obj */
    tether_provider lazy;        /* a TETHER_LAZY slot */
    struct obj *all_next;        /* with obj_list: the object made before it */
} obj;

/* Set before any thread makes objects: each one is pushed on this list too (for a test that
 * frees them itself, its destructor only marking them). */
static _Atomic(obj *) *obj_list __attribute__((unused));

static inline obj *obj_new(kind *k, obj *a, obj *b) {
    obj *o = calloc(1, sizeof *o);
    if (!o) abort();
    o->k = k;
    o->a = a;
    o->b = b;
    atomic_init(&o->alive, 1);
    if (obj_list) {
        obj *head = atomic_load(obj_list);
        do o->all_next = head; while (!atomic_compare_exchange_weak(obj_list, &head, o));
    }
    atomic_fetch_add(&k->made, 1);
    return o;
}
/* Factories for slots {TETHER_CONTEXT, DEP...}. */
static inline void *make0(kind *k) { return obj_new(k, NULL, NULL); }
static inline void *make1(kind *k, obj *a) { return obj_new(k, a, NULL); }
static inline void *make2(kind *k, obj *a, obj *b) { return obj_new(k, a, b); }

/* Destructor: releases the object's weak back edge (a failure is a T_CHECK), counts the drop when
 * its context is the object's kind, frees. */
static inline void drop_obj(void *instance, void *context) {
    obj *o = instance;
    if (o->parent) T_CHECK(tether_weak_release(o->parent) == TETHER_OK);
    if (o->k == context) atomic_fetch_add(&o->k->dropped, 1);
    free(o);
}

/* Checks that each of `kinds` was dropped as often as made, naming any that was not (after `round`). */
static inline void check_balanced(kind *const *kinds, size_t count, int round) {
    for (size_t i = 0; i < count; i++) {
        int made = atomic_load(&kinds[i]->made), dropped = atomic_load(&kinds[i]->dropped);
        if (made != dropped) {
            fprintf(stderr, "  round %d: %s made %d, destroyed %d\n", round, kinds[i]->tag, made, dropped);
            CHECK(made == dropped);
        }
    }
}

/* Workers that run in rounds with the main thread: each round both sides meet at `start` and at
 * `end`. `rounds_begin` starts `n` workers (thread_failures cleared); `rounds_finish` sets `*stop`,
 * lets them see it at one more `start`, joins them and destroys the barriers. */
#include <pthread.h>
static inline void rounds_begin(pthread_t *threads, int n, pthread_barrier_t *start, pthread_barrier_t *end,
                                void *(*worker)(void *)) {
    atomic_store(&thread_failures, 0);
    pthread_barrier_init(start, NULL, (unsigned)n + 1);
    pthread_barrier_init(end, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++) CHECK(pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i) == 0);
}
static inline void rounds_finish(pthread_t *threads, int n, pthread_barrier_t *start, pthread_barrier_t *end,
                                 atomic_int *stop) {
    atomic_store(stop, 1);
    pthread_barrier_wait(start);
    for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(start);
    pthread_barrier_destroy(end);
}

#endif
