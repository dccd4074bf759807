/* A lazy slot's provider called on another thread while its owner's last handle goes:
 * each call answers the instance, or NULL + TETHER_E_INVALID_HANDLE once the owner is gone
 * (or goes during the call); every instance made is destroyed once. The trampoline serves
 * its cell unretained and takes it only while the cell's count is not zero
 * (Tether/FFI/LibFFI.swift): under ASan a call that reached a destroyed cell fails. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "thread_check.h"
#include "threaded_fixtures.h"

enum { ROUNDS = 1500 };                          /* past the 1,024 quarantined: addresses are reused meanwhile */

static void *make_owner(kind *k, tether_provider lazy) {
    obj *o = obj_new(k, NULL, NULL);
    o->lazy = lazy;
    return o;
}

static _Atomic(tether_provider) published;
static atomic_int stop, calls, answers;

/* Calls the provider published last, over and over. */
static void *caller(void *unused) {
    (void)unused;
    while (!atomic_load(&stop)) {
        tether_provider p = atomic_load(&published);
        if (!p) { sched_yield(); continue; }
        void *got = p();
        atomic_fetch_add(&calls, 1);
        if (got) atomic_fetch_add(&answers, 1);
        else T_CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    }
    return NULL;
}

static void race(tether_param_kind slot, tether_scope b_scope) {
    kind A = KIND("A"), B = KIND("B");
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_registration *r = NULL;
    tether_param a_params[] = {TETHER_CONTEXT, {slot, "B"}};
    CHECK_OK(tether_register(c, "A", (tether_fn)make_owner, a_params, 2, &r));
    CHECK_OK(tether_set_context(r, &A, drop_obj));
    tether_param b_params[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register(c, "B", (tether_fn)make0, b_params, 1, &r));
    CHECK_OK(tether_set_scope(r, b_scope));
    CHECK_OK(tether_set_context(r, &B, drop_obj));
    atomic_store(&published, NULL);
    atomic_store(&stop, 0);
    atomic_store(&calls, 0);
    atomic_store(&answers, 0);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, caller, NULL) == 0);
    for (int i = 0; i < ROUNDS; i++) {
        tether_ref *ref = NULL;
        CHECK_OK(tether_resolve(c, "A", &ref));
        obj *a = ref ? tether_ref_get(ref) : NULL;
        CHECK(a && a->lazy);
        atomic_store(&published, a ? a->lazy : NULL);
        /* Every other round the release waits (bounded) for a call: both orders, and the race between. */
        int before = atomic_load(&calls);
        for (int spin = 0; i % 2 && spin < 1000 && atomic_load(&calls) == before; spin++) sched_yield();
        CHECK_OK(tether_ref_release(ref));      /* the caller keeps calling it: stale from here on */
    }
    atomic_store(&stop, 1);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(atomic_load(&thread_failures) == 0);
    CHECK(atomic_load(&calls) > 0 && atomic_load(&answers) > 0);
    CHECK(atomic_load(&A.made) == ROUNDS && atomic_load(&A.dropped) == ROUNDS);
    kind *const kinds[] = {&A, &B};
    if (b_scope == TETHER_SCOPE_GRAPH) check_balanced(kinds, 2, ROUNDS);
    CHECK_OK(tether_container_free(c));
    check_balanced(kinds, 2, ROUNDS);
}

static void lazy_slot_provider_called_while_its_owner_is_released_elsewhere(void) {
    race(TETHER_PARAM_LAZY, TETHER_SCOPE_GRAPH);
}

static void weak_lazy_slot_provider_called_while_its_owner_is_released_elsewhere(void) {
    race(TETHER_PARAM_WEAK_LAZY, TETHER_SCOPE_SINGLETON);
}

/* ---- The trampoline pool across threads (TrampolineCache, per thread) ------------------ */
enum { POOL_THREADS = 8, POOL_ROUNDS = 1500 };  /* each thread holds more than the 1,024 quarantined */

static kind PA = KIND("A"), PB = KIND("B");
static tether_container *pool_c;
static tether_ref *held[POOL_THREADS][POOL_ROUNDS];
static pthread_barrier_t pool_barrier;

/* A holds the graph's B and a lazy slot for B: a call answers that same B, so a trampoline
 * serving two live cells at once (or the wrong one) shows. */
static void *make_owner_dep(kind *k, obj *b, tether_provider lazy) {
    obj *o = obj_new(k, b, NULL);
    o->lazy = lazy;
    return o;
}

static void resolve_all(tether_ref **refs) {
    for (int i = 0; i < POOL_ROUNDS; i++) {
        T_CHECK(tether_resolve(pool_c, "A", &refs[i]) == TETHER_OK);
        obj *a = refs[i] ? tether_ref_get(refs[i]) : NULL;
        T_CHECK(a && a->lazy && a->dep && a->lazy() == a->dep);
    }
}

static void check_and_release_all(tether_ref **refs) {
    for (int i = 0; i < POOL_ROUNDS; i++) {
        obj *a = tether_ref_get(refs[i]);
        T_CHECK(a && a->lazy() == a->dep);    /* still its own B, after every thread took trampolines */
        T_CHECK(tether_ref_release(refs[i]) == TETHER_OK);
        refs[i] = NULL;
    }
}

/* Round 1: each thread resolves POOL_ROUNDS As; all wait; each releases its neighbour's (its
 * trampolines are freed on another thread: that thread's FIFO passes the quarantine and hands
 * batches to the shared list); each resolves POOL_ROUNDS again (from its own FIFO and the shared
 * batches) and releases them. The threads then exit with full FIFOs (the orphans), which the
 * next round's threads reuse. */
static void *pool_worker(void *arg) {
    int me = (int)(intptr_t)arg;
    resolve_all(held[me]);
    pthread_barrier_wait(&pool_barrier);
    check_and_release_all(held[(me + 1) % POOL_THREADS]);
    pthread_barrier_wait(&pool_barrier);
    resolve_all(held[me]);
    check_and_release_all(held[me]);
    return NULL;
}

static int compare_words(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static void lazy_resolves_from_8_threads_never_share_a_live_trampoline(void) {
    CHECK_OK(tether_container_new(NULL, &pool_c));
    tether_registration *r = NULL;
    tether_param a_params[] = {TETHER_CONTEXT, TETHER_DEP("B"), TETHER_LAZY("B")};
    CHECK_OK(tether_register(pool_c, "A", (tether_fn)make_owner_dep, a_params, 3, &r));
    CHECK_OK(tether_set_context(r, &PA, drop_obj));
    tether_param b_params[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register(pool_c, "B", (tether_fn)make0, b_params, 1, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_GRAPH));
    CHECK_OK(tether_set_context(r, &PB, drop_obj));

    /* A stale provider of this thread: it stays stale through everything below (it waits in
     * this thread's quarantine, which the other threads never take from). */
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(pool_c, "A", &ref));
    tether_provider stale = ((obj *)tether_ref_get(ref))->lazy;
    CHECK_OK(tether_ref_release(ref));

    for (int round = 1; round <= 2; round++) {
        pthread_t threads[POOL_THREADS];
        CHECK(pthread_barrier_init(&pool_barrier, NULL, POOL_THREADS) == 0);
        for (int t = 0; t < POOL_THREADS; t++)
            CHECK(pthread_create(&threads[t], NULL, pool_worker, (void *)(intptr_t)t) == 0);
        for (int t = 0; t < POOL_THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
        CHECK(pthread_barrier_destroy(&pool_barrier) == 0);
        CHECK(atomic_load(&thread_failures) == 0);
        int expected = 1 + round * 2 * POOL_THREADS * POOL_ROUNDS;
        CHECK(atomic_load(&PA.made) == expected && atomic_load(&PA.dropped) == expected);
        CHECK(atomic_load(&PB.made) == expected && atomic_load(&PB.dropped) == expected);
    }

    /* Every live provider distinct, here on one thread after the others exited (reusing their orphans). */
    static uintptr_t codes[POOL_ROUNDS];
    resolve_all(held[0]);
    CHECK(atomic_load(&thread_failures) == 0);
    for (int i = 0; i < POOL_ROUNDS; i++) codes[i] = (uintptr_t)((obj *)tether_ref_get(held[0][i]))->lazy;
    qsort(codes, POOL_ROUNDS, sizeof codes[0], compare_words);
    int repeated = 0;
    for (int i = 1; i < POOL_ROUNDS; i++) repeated += codes[i] == codes[i - 1];
    CHECK(repeated == 0);
    for (int i = 0; i < POOL_ROUNDS; i++) CHECK((uintptr_t)stale != codes[i]);
    check_and_release_all(held[0]);
    CHECK(atomic_load(&thread_failures) == 0);

    CHECK(stale() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("stale provider");
    CHECK_OK(tether_container_free(pool_c));
    kind *const kinds[] = {&PA, &PB};
    check_balanced(kinds, 2, 0);
    CHECK(atomic_load(&PA.made) == 1 + 4 * POOL_THREADS * POOL_ROUNDS + POOL_ROUNDS);
}

int main(void) {
    alarm(120);
    RUN(lazy_slot_provider_called_while_its_owner_is_released_elsewhere);
    RUN(weak_lazy_slot_provider_called_while_its_owner_is_released_elsewhere);
    RUN(lazy_resolves_from_8_threads_never_share_a_live_trampoline);
    return harness_finish();
}
