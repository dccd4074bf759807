/* tether_container_free racing resolves: each round makes a container, worker
 * threads resolve from it in a loop (cached singleton hits by id and by name, a
 * transient chain, a Parent/Child cycle closed by a completion callback, a
 * resolve whose factory calls a lazy provider, a shared provider) while the main
 * thread frees it (other workers' calls meanwhile: registering, interning,
 * validating), and a short-lived thread resolves and exits meanwhile. Every
 * call must return OK or TETHER_E_INVALID_HANDLE (saying the container was
 * freed), nothing may crash or be reported by ASan/LSan, and at the end of each
 * round every instance made has been destroyed exactly once. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"
#include "thread_check.h"
#include "threaded_fixtures.h"

/* Freed memory is overwritten under ASan, so a resolve reading a freed container
 * or registration crashes instead of reading stale bytes that still look right. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "max_free_fill_size=4096:free_fill_byte=165"; }

enum { WORKERS = 3 };
#ifndef FREE_RACE_ROUNDS
#define FREE_RACE_ROUNDS 300
#endif

/* ---- counted instances --------------------------------------------------- */

/* Child's `parent`: its weak back edge, taken by its completion callback; Lazy's `lazy`: its TETHER_LAZY slot. */
static kind k_single = KIND("Single"), k_head = KIND("Head"), k_mid = KIND("Mid"), k_tail = KIND("Tail"),
            k_parent = KIND("Parent"), k_child = KIND("Child"), k_lazy = KIND("Lazy");
static kind *const kinds[] = {&k_single, &k_head, &k_mid, &k_tail, &k_parent, &k_child, &k_lazy};


/* Calls its lazy provider at once: a provider call nested in a resolve. */
static void *make_lazy(kind *k, tether_provider single) {
    obj *s = single();
    if (!s) return NULL;   /* the container was freed meanwhile: the resolve fails */
    obj *o = obj_new(k, s, NULL);
    o->lazy = single;
    return o;
}

static tether_status child_completed(tether_resolver *r, void *instance, void *context) {
    (void)context;
    return tether_resolver_get_weak(r, "Parent", &((obj *)instance)->parent);
}

static void reg(tether_container *c, kind *k, tether_scope scope, tether_fn factory, tether_param second, size_t count,
                tether_complete_fn complete) {
    tether_param params[] = {TETHER_CONTEXT, second};
    tether_registration_options o = {0};
    o.scope = scope;
    o.context = k;
    o.drop = drop_obj;
    o.completions = complete ? &complete : NULL;
    o.completion_count = complete ? 1 : 0;
    CHECK_OK(TB.register_ex(c, k->tag, factory, params, count, &o, NULL));
}

static tether_container *make_container(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    reg(c, &k_single, TETHER_SCOPE_SINGLETON, (tether_fn)make0, TETHER_CONTEXT, 1, NULL);
    reg(c, &k_tail, TETHER_SCOPE_TRANSIENT, (tether_fn)make1, TETHER_DEP("Single"), 2, NULL);
    reg(c, &k_mid, TETHER_SCOPE_TRANSIENT, (tether_fn)make1, TETHER_DEP("Tail"), 2, NULL);
    reg(c, &k_head, TETHER_SCOPE_TRANSIENT, (tether_fn)make1, TETHER_DEP("Mid"), 2, NULL);
    reg(c, &k_child, TETHER_SCOPE_GRAPH, (tether_fn)make0, TETHER_CONTEXT, 1, child_completed);
    reg(c, &k_parent, TETHER_SCOPE_GRAPH, (tether_fn)make1, TETHER_DEP("Child"), 2, NULL);
    reg(c, &k_lazy, TETHER_SCOPE_TRANSIENT, (tether_fn)make_lazy, TETHER_LAZY("Single"), 2, NULL);
    return c;
}

/* ---- one round ----------------------------------------------------------- */

static _Atomic(tether_container *) current;
static _Atomic(tether_provider) shared_provider;
static atomic_int iterations;            /* resolves done this round, by all workers */
static uint32_t single_id;
static pthread_barrier_t round_start, round_end;
static atomic_int stop;

/* A failure may only say that the container is gone. */
static int freed_status(tether_status st) {
    if (st != TETHER_E_INVALID_HANDLE) return 0;
    return strstr(tether_last_error(), "freed") != NULL;
}

enum { OPS = 9 };

/* One call of kind `op`; 1 if it failed because the container was freed. */
static int resolve_once(tether_container *c, int op) {
    tether_ref *r = NULL;
    tether_status st;
    op %= OPS;
    switch (op) {
    case 0: st = tether_resolve_key(c, single_id, &r); break;
    case 1: st = tether_resolve(c, "Single", &r); break;
    case 2: st = tether_resolve(c, "Head", &r); break;
    case 3: st = tether_resolve(c, "Parent", &r); break;
    case 4: st = tether_resolve(c, "Lazy", &r); break;
    case 5: {
        tether_provider p = atomic_load(&shared_provider);
        obj *s = p();
        if (s) { T_CHECK(s->k == &k_single); return 0; }
        st = tether_last_status();
        break;
    }
    case 6: st = tether_register(c, "Extra", (tether_fn)make0, NULL, 0, NULL); break;
    case 7: st = tether_validate(c); break;
    default: { uint32_t id; st = tether_intern(c, "Single", &id); break; }
    }
    if (st != TETHER_OK) {
        T_CHECK(freed_status(st) || (op == 4 && st == TETHER_E_FACTORY_FAILED));
        return 1;
    }
    if (op > 5) return 0;
    obj *o = tether_ref_get(r);
    T_CHECK(o != NULL);
    if (o && op == 2) T_CHECK(o->k == &k_head && o->dep->dep->dep->k == &k_single);
    if (o && op == 3) {
        tether_ref *back = NULL;
        T_CHECK(tether_weak_upgrade(o->dep->parent, &back) == TETHER_OK && tether_ref_get(back) == o);
        if (back) tether_ref_release(back);
    }
    if (o && op == 4) {
        obj *again = o->lazy();   /* after a free: NULL, TETHER_E_INVALID_HANDLE */
        T_CHECK(again == o->dep || (again == NULL && freed_status(tether_last_status())));
    }
    T_CHECK(tether_ref_release(r) == TETHER_OK);
    return 0;
}

/* Calls into the round's container until a call says it was freed. */
static void resolve_until_freed(int seed) {
    tether_container *c = atomic_load(&current);
    for (int i = seed;; i++) {
        int failed = resolve_once(c, i);
        atomic_fetch_add(&iterations, 1);
        if (failed && i % OPS != 4 && i % OPS != 5) return;   /* a call on the container itself said it is gone */
    }
}

static void *worker(void *arg) {
    int index = (int)(intptr_t)arg;
    for (int round = 0;; round++) {
        pthread_barrier_wait(&round_start);
        if (atomic_load(&stop)) return NULL;
        resolve_until_freed(index + round);
        pthread_barrier_wait(&round_end);
    }
}

/* Starts resolving and exits, possibly in the middle of the free. */
static void *short_lived(void *arg) {
    tether_container *c = atomic_load(&current);
    for (int i = 0; i < 20; i++) resolve_once(c, (int)(intptr_t)arg + i);
    return NULL;
}

static void container_free_races_resolves(void) {
    pthread_t threads[WORKERS];
    rounds_begin(threads, WORKERS, &round_start, &round_end, worker);

    for (int round = 0; round < FREE_RACE_ROUNDS; round++) {
        tether_container *c = make_container();
        if (round == 0) CHECK_OK(tether_intern(c, "Single", &single_id));
        tether_provider p = NULL;
        CHECK_OK(tether_make_provider(c, "Single", &p));
        atomic_store(&current, c);
        atomic_store(&shared_provider, p);
        atomic_store(&iterations, 0);
        pthread_barrier_wait(&round_start);
        pthread_t extra;
        CHECK(pthread_create(&extra, NULL, short_lived, (void *)(intptr_t)round) == 0);
        int wait_for = round % 60;           /* free at varying points of the workers' loops */
        while (atomic_load(&iterations) < wait_for) sched_yield();
        CHECK_OK(tether_container_free(c));
        pthread_barrier_wait(&round_end);
        pthread_join(extra, NULL);
        CHECK_STATUS(tether_resolve(c, "Single", &(tether_ref *){NULL}), TETHER_E_INVALID_HANDLE);
        CHECK_ERROR_HAS("freed");
        CHECK_OK(tether_provider_free(p));
        check_balanced(kinds, sizeof kinds / sizeof *kinds, round);
        if (atomic_load(&thread_failures)) break;
    }
    rounds_finish(threads, WORKERS, &round_start, &round_end, &stop);
    CHECK(atomic_load(&thread_failures) == 0);
    CHECK(atomic_load(&k_single.made) >= FREE_RACE_ROUNDS / 2);   /* the rounds did resolve */
}

int main(void) {
    RUN(container_free_races_resolves);
    return harness_finish();
}
