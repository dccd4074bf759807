/* Strong handles to cached singletons (hits hand out handles that share the
 * cache's reference until the cache lets go): they outlive tether_reset, a
 * scope change, re-registration and tether_container_free; the destructor runs
 * exactly once, when the last of cache and handles goes; released twice they
 * are stale. Handles made on one thread and released on another or after their
 * thread exited stay valid, and their slots are reused. A hit racing with
 * resets keeps every handle valid (exact destructor counts), also while the
 * handles are held across resets, re-registrations and scope changes and
 * released by other threads, and with more lent singletons let go at once
 * than the library tracks without a lock. The whole file runs twice: with
 * membarrier(2) where the system has it, then (re-executed) with
 * TETHER_NO_MEMBARRIER=1, the fence-only fallback. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "harness.h"

extern char **environ;

static atomic_int made, dropped;

static void *make_obj(void) {
    atomic_fetch_add(&made, 1);
    int *p = malloc(sizeof *p);
    *p = 42;
    return p;
}

static void drop_obj(void *instance, void *context) {
    (void)context;
    CHECK(*(int *)instance == 42);
    *(int *)instance = 0;
    atomic_fetch_add(&dropped, 1);
    free(instance);
}

static tether_container *singleton_container(tether_registration **out) {
    tether_container *c = NULL;
    tether_registration *r = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_register(c, "S", (tether_fn)make_obj, NULL, 0, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_context(r, NULL, drop_obj));
    if (out) *out = r;
    atomic_store(&made, 0);
    atomic_store(&dropped, 0);
    return c;
}

/* The first resolve creates; later ones are cache hits. */
static tether_ref *hit(tether_container *c) {
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "S", &ref));
    return ref;
}

static void test_hit_handles_outlive_reset(void) {
    tether_container *c = singleton_container(NULL);
    tether_ref *first = hit(c), *second = hit(c);
    CHECK(tether_ref_get(first) == tether_ref_get(second));
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(atomic_load(&dropped) == 0);
    CHECK(*(int *)tether_ref_get(second) == 42);
    CHECK_OK(tether_ref_release(first));
    CHECK(atomic_load(&dropped) == 0);
    CHECK_OK(tether_ref_release(second));
    CHECK(atomic_load(&dropped) == 1);
    tether_ref *fresh = hit(c);
    CHECK(atomic_load(&made) == 2);
    CHECK_OK(tether_ref_release(fresh));
    CHECK_OK(tether_container_free(c));
    CHECK(atomic_load(&dropped) == 2);
}

static void test_hit_handles_outlive_container_free(void) {
    tether_container *c = singleton_container(NULL);
    tether_ref *created = hit(c), *cached = hit(c);
    CHECK_OK(tether_container_free(c));
    CHECK(atomic_load(&dropped) == 0);
    tether_ref *clone = NULL;
    tether_weak *weak = NULL;
    CHECK_OK(tether_ref_clone(cached, &clone));
    CHECK_OK(tether_ref_downgrade(cached, &weak));
    CHECK_OK(tether_ref_release(cached));
    CHECK_OK(tether_ref_release(created));
    CHECK(atomic_load(&dropped) == 0);
    CHECK(*(int *)tether_ref_get(clone) == 42);
    CHECK_OK(tether_ref_release(clone));
    CHECK(atomic_load(&dropped) == 1);
    tether_ref *up = NULL;
    CHECK_STATUS(tether_weak_upgrade(weak, &up), TETHER_E_EXPIRED);
    CHECK_OK(tether_weak_release(weak));
}

static void test_hit_handles_outlive_scope_change_and_reregistration(void) {
    tether_registration *r = NULL;
    tether_container *c = singleton_container(&r);
    tether_ref *a = hit(c), *b = hit(c);
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));
    CHECK(atomic_load(&dropped) == 0);
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
    tether_ref *c1 = hit(c), *c2 = hit(c);
    CHECK(atomic_load(&made) == 2);
    CHECK(tether_ref_get(c1) != tether_ref_get(a));
    CHECK_OK(tether_register(c, "S", (tether_fn)make_obj, NULL, 0, NULL));  /* replaces: transient now */
    CHECK(atomic_load(&dropped) == 0);
    CHECK(*(int *)tether_ref_get(b) == 42 && *(int *)tether_ref_get(c2) == 42);
    tether_ref *refs[] = {a, b, c1, c2};
    for (int i = 0; i < 4; i++) CHECK_OK(tether_ref_release(refs[i]));
    CHECK(atomic_load(&dropped) == 2);
    CHECK_OK(tether_container_free(c));
}

static void test_hit_handle_released_twice_is_stale(void) {
    tether_container *c = singleton_container(NULL);
    tether_ref *created = hit(c), *cached = hit(c);
    CHECK_OK(tether_ref_release(cached));
    CHECK_STATUS(tether_ref_release(cached), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("already released");
    CHECK(tether_ref_get(cached) == NULL);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK_STATUS(tether_ref_release(cached), TETHER_E_INVALID_HANDLE);
    CHECK(atomic_load(&dropped) == 0);
    CHECK_OK(tether_ref_release(created));
    CHECK(atomic_load(&dropped) == 1);
    CHECK_OK(tether_container_free(c));
}

/* ---- handles across threads ---------------------------------------------- */

enum { PER_THREAD = 3000 };

typedef struct { tether_container *c; tether_ref **refs; int count; } batch;

static void *resolve_batch(void *p) {
    batch *b = p;
    for (int i = 0; i < b->count; i++) {
        if (tether_resolve(b->c, "S", &b->refs[i]) != TETHER_OK) b->refs[i] = NULL;
    }
    return NULL;
}

static void *release_batch(void *p) {
    batch *b = p;
    for (int i = 0; i < b->count; i++) {
        if (tether_ref_release(b->refs[i]) != TETHER_OK) b->refs[i] = (tether_ref *)1;  /* marks a failure */
    }
    return NULL;
}

static void test_handles_made_by_exited_threads(void) {
    tether_container *c = singleton_container(NULL);
    tether_ref **refs = calloc(2 * PER_THREAD, sizeof *refs);
    batch made_here = {c, refs, PER_THREAD}, made_there = {c, refs + PER_THREAD, PER_THREAD};
    pthread_t t;
    /* made on a thread that then exits, released here */
    pthread_create(&t, NULL, resolve_batch, &made_there);
    pthread_join(t, NULL);
    resolve_batch(&made_here);
    int valid = 0;
    for (int i = 0; i < 2 * PER_THREAD; i++) valid += refs[i] && tether_ref_get(refs[i]) != NULL;
    CHECK(valid == 2 * PER_THREAD);
    CHECK(atomic_load(&made) == 1);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    /* released by a thread that did not make them, and by one that did */
    pthread_create(&t, NULL, release_batch, &made_here);
    pthread_join(t, NULL);
    release_batch(&made_there);
    int failures = 0;
    for (int i = 0; i < 2 * PER_THREAD; i++) failures += refs[i] == (tether_ref *)1;
    CHECK(failures == 0);
    CHECK(atomic_load(&dropped) == 1);
    /* slots freed across threads are reused: many more rounds than one page holds */
    for (int round = 0; round < 20; round++) {
        pthread_create(&t, NULL, resolve_batch, &made_there);
        pthread_join(t, NULL);
        release_batch(&made_there);
    }
    for (int i = PER_THREAD; i < 2 * PER_THREAD; i++) failures += refs[i] == (tether_ref *)1;
    CHECK(failures == 0);
    free(refs);
    CHECK_OK(tether_container_free(c));
    CHECK(atomic_load(&made) == 2 && atomic_load(&dropped) == 2);
}

/* ---- hits racing with resets ---------------------------------------------- */

enum { RACERS = 3, RACE_ROUNDS = 20000 };
static atomic_int race_failures;
static atomic_int racing;

static void *hit_loop(void *p) {
    tether_container *c = p;
    while (atomic_load(&racing)) {
        tether_ref *ref = NULL;
        if (tether_resolve(c, "S", &ref) != TETHER_OK) { atomic_fetch_add(&race_failures, 1); continue; }
        int *value = tether_ref_get(ref);
        if (!value || *value != 42) atomic_fetch_add(&race_failures, 1);
        if (tether_ref_release(ref) != TETHER_OK) atomic_fetch_add(&race_failures, 1);
    }
    return NULL;
}

static void test_hits_racing_with_resets(void) {
    tether_container *c = singleton_container(NULL);
    atomic_store(&race_failures, 0);
    atomic_store(&racing, 1);
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++) pthread_create(&t[i], NULL, hit_loop, c);
    for (int i = 0; i < RACE_ROUNDS; i++) {
        tether_ref *held = hit(c);
        if (i % 2) CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
        CHECK(*(int *)tether_ref_get(held) == 42);
        CHECK_OK(tether_ref_release(held));
    }
    atomic_store(&racing, 0);
    for (int i = 0; i < RACERS; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&race_failures) == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(atomic_load(&made) > 1);
    CHECK(atomic_load(&made) == atomic_load(&dropped));
}

/* ---- loans held across resets, released elsewhere ----------------------- */

enum { HOLDERS = 3, HELD = 8, HOLD_ROUNDS = 20000, EXCHANGE = 64 };
static atomic_int holding;
/* Handles passed from one thread to another (released by the receiver). */
static _Atomic(tether_ref *) exchange_slots[EXCHANGE];

typedef struct { tether_container *c; uint32_t key; int seed; } holder;

static void *hold_loop(void *p) {
    holder *h = p;
    tether_ref *held[HELD] = {0};
    unsigned x = (unsigned)h->seed * 2654435761u + 1;
    for (int n = 0; atomic_load(&holding) || n < 1000; n++) {
        x = x * 1103515245u + 12345u;
        int i = (int)(x >> 16) % HELD;
        if (held[i]) {
            int *value = tether_ref_get(held[i]);
            if (!value || *value != 42) atomic_fetch_add(&race_failures, 1);
            /* hand every fourth one to whichever thread comes next, release the rest here */
            if ((x >> 8) % 4 == 0) {
                tether_ref *passed = atomic_exchange(&exchange_slots[(x >> 4) % EXCHANGE], held[i]);
                if (passed && tether_ref_release(passed) != TETHER_OK) atomic_fetch_add(&race_failures, 1);
            } else if (tether_ref_release(held[i]) != TETHER_OK) {
                atomic_fetch_add(&race_failures, 1);
            }
            held[i] = NULL;
        }
        tether_status st = (x >> 20) % 2 ? tether_resolve_key(h->c, h->key, &held[i]) : tether_resolve(h->c, "S", &held[i]);
        if (st != TETHER_OK) { atomic_fetch_add(&race_failures, 1); held[i] = NULL; }
    }
    for (int i = 0; i < HELD; i++) {
        if (held[i] && tether_ref_release(held[i]) != TETHER_OK) atomic_fetch_add(&race_failures, 1);
    }
    return NULL;
}

/* Re-registration configures the new registration after it is visible: until
 * its context is set it hands out an uncounted static object. */
static int uncounted = 42;
static void *make_obj_once_configured(void *context) { return context ? make_obj() : &uncounted; }

/* Several threads keep a few hit handles each for a while (some released by
 * another thread) while this one resets the cache, changes the scope and
 * re-registers the key: every get sees a live object, every release succeeds,
 * and every object made is destroyed exactly once. */
static void test_loans_held_across_resets_and_reregistration(void) {
    tether_container *c = singleton_container(NULL);
    uint32_t key = 0;
    CHECK_OK(tether_intern(c, "S", &key));
    tether_ref_release(hit(c));
    atomic_store(&race_failures, 0);
    atomic_store(&holding, 1);
    pthread_t t[HOLDERS];
    holder h[HOLDERS];
    for (int i = 0; i < HOLDERS; i++) {
        h[i] = (holder){c, key, i + 1};
        pthread_create(&t[i], NULL, hold_loop, &h[i]);
    }
    for (int i = 0; i < HOLD_ROUNDS; i++) {
        if (i % 7 == 0) {
            tether_registration *r = NULL;
            tether_param p[] = {TETHER_CONTEXT};
            CHECK_OK(tether_register(c, "S", (tether_fn)make_obj_once_configured, p, 1, &r));
            CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
            CHECK_OK(tether_set_context(r, &uncounted, drop_obj));
        } else if (i % 3 == 0) {
            CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
        } else {
            tether_ref_release(hit(c));
        }
    }
    atomic_store(&holding, 0);
    for (int i = 0; i < HOLDERS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < EXCHANGE; i++) {
        tether_ref *left = atomic_exchange(&exchange_slots[i], NULL);
        if (left) CHECK_OK(tether_ref_release(left));
    }
    CHECK(atomic_load(&race_failures) == 0);
    CHECK(atomic_load(&made) > 1);
    CHECK_OK(tether_container_free(c));
    if (atomic_load(&made) != atomic_load(&dropped))
        fprintf(stderr, "  made %d, dropped %d\n", atomic_load(&made), atomic_load(&dropped));
    CHECK(atomic_load(&made) == atomic_load(&dropped));
}

/* More lent singletons let go of at once than the lock-free list of retired
 * singletons holds: each still stays valid until its last handle goes. */
enum { MANY = 150 };
static void test_many_lent_singletons_let_go_at_once(void) {
    tether_container *c = singleton_container(NULL);
    char name[32];
    tether_ref *first[MANY], *second[MANY];
    for (int i = 0; i < MANY; i++) {
        tether_registration *r = NULL;
        snprintf(name, sizeof name, "S%d", i);
        CHECK_OK(tether_register(c, name, (tether_fn)make_obj, NULL, 0, &r));
        CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
        CHECK_OK(tether_set_context(r, NULL, drop_obj));
        CHECK_OK(tether_resolve(c, name, &first[i]));   /* creates */
        CHECK_OK(tether_resolve(c, name, &second[i]));  /* a hit: lent */
    }
    CHECK(atomic_load(&made) == MANY);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(atomic_load(&dropped) == 0);
    for (int i = 0; i < MANY; i++) CHECK_OK(tether_ref_release(first[i]));
    CHECK(atomic_load(&dropped) == 0);
    for (int i = 0; i < MANY; i++) {
        CHECK(*(int *)tether_ref_get(second[i]) == 42);
        CHECK_OK(tether_ref_release(second[i]));
        CHECK(atomic_load(&dropped) == i + 1);
    }
    CHECK_OK(tether_container_free(c));
    CHECK(atomic_load(&made) == MANY && atomic_load(&dropped) == MANY);
}

/* Runs this program again with the fence-only fallback; its exit status. */
static int run_with_fences(const char *self) {
    if (setenv("TETHER_NO_MEMBARRIER", "1", 1) != 0) return 1;
    pid_t pid;
    char *argv[] = {(char *)self, NULL};
    if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0) return 1;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv) {
    (void)argc;
    int fences = getenv("TETHER_NO_MEMBARRIER") != NULL;
    if (fences) printf("-- again with TETHER_NO_MEMBARRIER=1 (fences only)\n");
    RUN(test_hit_handles_outlive_reset);
    RUN(test_hit_handles_outlive_container_free);
    RUN(test_hit_handles_outlive_scope_change_and_reregistration);
    RUN(test_hit_handle_released_twice_is_stale);
    RUN(test_handles_made_by_exited_threads);
    RUN(test_hits_racing_with_resets);
    RUN(test_loans_held_across_resets_and_reregistration);
    RUN(test_many_lent_singletons_let_go_at_once);
    int status = harness_finish();
    if (!fences) {
        fflush(stdout);
        status |= run_with_fences(argv[0]);
    }
    return status;
}
