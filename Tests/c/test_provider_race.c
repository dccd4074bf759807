/* A lazy slot's provider called on another thread while its owner's last handle goes:
 * each call answers the instance, or NULL + TETHER_E_INVALID_HANDLE once the owner is gone
 * (or goes during the call); every instance made is destroyed once. The trampoline serves
 * its cell unretained and takes it only while the cell's count is not zero
 * (Tether/FFI/LibFFI.swift): under ASan a call that reached a destroyed cell fails. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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

int main(void) {
    alarm(120);
    RUN(lazy_slot_provider_called_while_its_owner_is_released_elsewhere);
    RUN(weak_lazy_slot_provider_called_while_its_owner_is_released_elsewhere);
    return harness_finish();
}
