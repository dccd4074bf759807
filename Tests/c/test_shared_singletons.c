/* Graphs over cached singletons resolved from several threads while the caches let
 * go of them (issue 27: edges to cached singletons are split references, counted on
 * each CPU's own line while the cache holds the singleton; Runtime/SplitEdge.swift).
 *
 * Each round: worker threads resolve Svc(Repo(Db, Cache), Mailer(Settings)) and
 * Greeter(n, Settings) (one new node over a singleton) and hits of Db, keep some
 * handles, release others and hand some to other threads, while the main thread
 * empties the singleton cache (tether_reset), re-registers Settings and finally
 * frees the container; the handles still held then are released afterwards, some by
 * the main thread. Checks: every graph's leaves are live singletons of their kind;
 * two graphs resolved with no reset between them share their leaves; a held graph's
 * singletons stay alive after their cache let go and after the container is freed;
 * a destructor finds its dependencies alive (dependents first); and at the end of
 * every round each instance made was destroyed exactly once. Objects are freed only
 * at the round's end, so the checks read live memory in every build. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"
#include "thread_check.h"
#include "threaded_fixtures.h"

enum { WORKERS = 3, HELD = 6, POOL = 64 };
#ifndef SHARED_ROUNDS
#define SHARED_ROUNDS 60
#endif

static kind k_db = KIND("Db"), k_cache = KIND("Cache"), k_settings = KIND("Settings"), k_repo = KIND("Repo"),
            k_mailer = KIND("Mailer"), k_svc = KIND("Svc"), k_greeter = KIND("Greeter");
static kind *const kinds[] = {&k_db, &k_cache, &k_settings, &k_repo, &k_mailer, &k_svc, &k_greeter};


/* The round's list of every object (`obj_list`), freed at its end: destructors only mark them. */
static _Atomic(obj *) all_objects;
static void *make_greeter(kind *k, int64_t n, obj *settings) {
    obj *o = obj_new(k, settings, NULL);
    o->n = n;
    return o;
}

/* Dependents first: what an instance points at is still alive when it is destroyed. */
static void drop(void *instance, void *context) {
    obj *o = instance;
    (void)context;
    for (int i = 0; i < 2; i++) if (o->d[i]) T_CHECK(atomic_load(&o->d[i]->alive) == 1);
    T_CHECK(atomic_exchange(&o->alive, 0) == 1);   /* once */
    atomic_fetch_add(&o->k->dropped, 1);
}

static void reg(tether_container *c, kind *k, tether_scope scope, tether_fn factory, const tether_param *deps, size_t n) {
    tether_param params[3] = {TETHER_CONTEXT};
    for (size_t i = 0; i < n; i++) params[1 + i] = deps[i];
    reg_with_context(c, k->tag, factory, params, 1 + n, scope, k, drop);
}

static tether_container *make_container(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param repo[] = {TETHER_DEP("Db"), TETHER_DEP("Cache")}, mailer[] = {TETHER_DEP("Settings")},
                 svc[] = {TETHER_DEP("Repo"), TETHER_DEP("Mailer")}, greeter[] = {TETHER_I64, TETHER_DEP("Settings")};
    reg(c, &k_db, TETHER_SCOPE_SINGLETON, (tether_fn)make0, NULL, 0);
    reg(c, &k_cache, TETHER_SCOPE_SINGLETON, (tether_fn)make0, NULL, 0);
    reg(c, &k_settings, TETHER_SCOPE_SINGLETON, (tether_fn)make0, NULL, 0);
    reg(c, &k_repo, TETHER_SCOPE_GRAPH, (tether_fn)make2, repo, 2);
    reg(c, &k_mailer, TETHER_SCOPE_GRAPH, (tether_fn)make1, mailer, 1);
    reg(c, &k_svc, TETHER_SCOPE_GRAPH, (tether_fn)make2, svc, 2);
    reg(c, &k_greeter, TETHER_SCOPE_GRAPH, (tether_fn)make_greeter, greeter, 2);
    return c;
}

/* ---- the workers ---------------------------------------------------------- */

static _Atomic(tether_container *) current;
static uint32_t svc_id, greeter_id, db_id;
static atomic_int iterations;
/* Singleton caches the main thread began and finished emptying this round: a resolve
 * that saw both equal before and after itself ran in one epoch of the caches. */
static atomic_int resets_begun, resets_done;
static pthread_barrier_t round_start, round_end;
static atomic_int stop;

/* Handles one thread hands to another, which releases them. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static tether_ref *pool[POOL];
static int pool_count;

static int alive(obj *o, kind *k) { return o && o->k == k && atomic_load(&o->alive) == 1; }

/* The graph under a handle is whole and its singletons alive (also after their cache let go). */
static void check_graph(obj *o) {
    if (o->k == &k_svc) {
        obj *repo = o->d[0], *mailer = o->d[1];
        T_CHECK(alive(repo, &k_repo) && alive(mailer, &k_mailer));
        T_CHECK(alive(repo->d[0], &k_db) && alive(repo->d[1], &k_cache) && alive(mailer->d[0], &k_settings));
    } else if (o->k == &k_greeter) {
        T_CHECK(alive(o->d[0], &k_settings));
    } else {
        T_CHECK(alive(o, &k_db));
    }
}

static void release_checked(tether_ref *r) {
    check_graph(tether_ref_get(r));
    T_CHECK(tether_ref_release(r) == TETHER_OK);
}

static void pool_put(tether_ref *r) {
    pthread_mutex_lock(&pool_lock);
    if (pool_count < POOL) { pool[pool_count++] = r; r = NULL; }
    pthread_mutex_unlock(&pool_lock);
    if (r) release_checked(r);
}

static tether_ref *pool_take(void) {
    tether_ref *r = NULL;
    pthread_mutex_lock(&pool_lock);
    if (pool_count > 0) r = pool[--pool_count];
    pthread_mutex_unlock(&pool_lock);
    return r;
}

static void resolve_until_freed(int seed) {
    tether_container *c = atomic_load(&current);
    tether_ref *held[HELD] = {0};
    obj *last_db = NULL;
    int last_epoch = -1;
    for (int i = seed;; i++) {
        tether_ref *r = NULL;
        int done = atomic_load(&resets_done), begun = atomic_load(&resets_begun);
        tether_status st;
        int64_t n = i;
        tether_value arg = TETHER_VAL_I64(n);
        switch (i % 4) {
        case 0: case 1: st = tether_resolve_key(c, svc_id, &r); break;
        case 2: st = tether_resolve_key_args(c, greeter_id, &arg, 1, &r); break;
        default: st = tether_resolve_key(c, db_id, &r); break;
        }
        atomic_fetch_add(&iterations, 1);
        if (st != TETHER_OK) {
            T_CHECK(st == TETHER_E_INVALID_HANDLE && strstr(tether_last_error(), "freed"));
            break;
        }
        obj *o = tether_ref_get(r);
        check_graph(o);
        if (o->k == &k_greeter) T_CHECK(o->n == n);
        if (o->k == &k_svc && done == begun && atomic_load(&resets_begun) == begun) {
            /* Resolved within one epoch of the caches: the same Db as the last such graph of it. */
            if (last_epoch == begun) T_CHECK(o->d[0]->d[0] == last_db);
            last_db = o->d[0]->d[0];
            last_epoch = begun;
        }
        /* Keep it a while (the oldest goes), or hand it to another thread, or release it now. */
        if (i % 5 == 0) {
            pool_put(r);
        } else if (i % 3 == 0) {
            int slot = (i / 3) % HELD;
            if (held[slot]) release_checked(held[slot]);
            held[slot] = r;
        } else {
            release_checked(r);
        }
        if (i % 7 == 0 && (r = pool_take())) release_checked(r);
    }
    /* The container is gone; what is held still holds its singletons. */
    for (int k = 0; k < HELD; k++) if (held[k]) release_checked(held[k]);
}

static void *worker(void *arg) {
    int index = (int)(intptr_t)arg;
    for (int round = 0;; round++) {
        pthread_barrier_wait(&round_start);
        if (atomic_load(&stop)) return NULL;
        resolve_until_freed(index * 1000 + round);
        pthread_barrier_wait(&round_end);
    }
}

/* Lets the workers resolve `count` more times. */
static void wait_for(int count) {
    int until = atomic_load(&iterations) + count;
    while (atomic_load(&iterations) < until) sched_yield();
}

static void singletons_shared_by_threads_outlive_their_caches(void) {
    pthread_t threads[WORKERS];
    rounds_begin(threads, WORKERS, &round_start, &round_end, worker);
    int settings_replaced = 0;
    for (int round = 0; round < SHARED_ROUNDS; round++) {
        tether_container *c = make_container();
        CHECK_OK(tether_intern(c, "Svc", &svc_id));
        CHECK_OK(tether_intern(c, "Greeter", &greeter_id));
        CHECK_OK(tether_intern(c, "Db", &db_id));
        atomic_store(&current, c);
        atomic_store(&iterations, 0);
        atomic_store(&resets_begun, 0);
        atomic_store(&resets_done, 0);
        pthread_barrier_wait(&round_start);
        int step = 20 + round % 40;   /* let go at varying points of the workers' loops */
        wait_for(step);
        atomic_fetch_add(&resets_begun, 1);
        CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
        atomic_fetch_add(&resets_done, 1);
        wait_for(step);
        if (round % 2) {   /* the old Settings goes with its registration */
            reg(c, &k_settings, TETHER_SCOPE_SINGLETON, (tether_fn)make0, NULL, 0);
            settings_replaced++;
        }
        wait_for(step);
        atomic_fetch_add(&resets_begun, 1);   /* the free lets go of the caches too */
        CHECK_OK(tether_container_free(c));
        pthread_barrier_wait(&round_end);
        for (tether_ref *r; (r = pool_take());) release_checked(r);
        check_balanced(kinds, sizeof kinds / sizeof *kinds, round);
        for (obj *o = atomic_exchange(&all_objects, NULL), *next; o; o = next) {
            next = o->all_next;
            free(o);
        }
        if (atomic_load(&thread_failures) || harness_current_failed) break;
    }
    rounds_finish(threads, WORKERS, &round_start, &round_end, &stop);
    CHECK(atomic_load(&thread_failures) == 0);
    /* The rounds did resolve, and each reset made new singletons. */
    CHECK(atomic_load(&k_svc.made) >= SHARED_ROUNDS * 3 * 20 / 4);
    CHECK(atomic_load(&k_db.made) >= 2 * SHARED_ROUNDS);
    CHECK(atomic_load(&k_settings.made) >= 2 * SHARED_ROUNDS + settings_replaced);
}

/* One thread, exact order: a graph held past its container's free keeps its
 * singletons; releasing it destroys the graph dependents first, then the singletons
 * (the cache let go of them already), each once. */
static int order_len;
static const char *order[16];
static void drop_ordered(void *instance, void *context) {
    drop(instance, context);
    if (order_len < 16) order[order_len++] = ((obj *)instance)->k->tag;
}

static void held_graph_outlives_its_container_in_order(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param repo[] = {TETHER_CONTEXT, TETHER_DEP("Db"), TETHER_DEP("Cache")}, one[] = {TETHER_CONTEXT};
    reg_with_context(c, "Db", (tether_fn)make0, one, 1, TETHER_SCOPE_SINGLETON, &k_db, drop_ordered);
    reg_with_context(c, "Cache", (tether_fn)make0, one, 1, TETHER_SCOPE_SINGLETON, &k_cache, drop_ordered);
    reg_with_context(c, "Repo", (tether_fn)make2, repo, 3, TETHER_SCOPE_GRAPH, &k_repo, drop_ordered);
    tether_ref *a = NULL, *b = NULL, *db = NULL;
    CHECK_OK(tether_resolve(c, "Repo", &a));
    CHECK_OK(tether_resolve(c, "Repo", &b));   /* the second from a recorded plan: split references */
    CHECK_OK(tether_resolve(c, "Db", &db));
    obj *ra = tether_ref_get(a), *rb = tether_ref_get(b);
    CHECK(ra != rb && ra->d[0] == rb->d[0] && ra->d[1] == rb->d[1] && ra->d[0] == tether_ref_get(db));
    CHECK_OK(tether_ref_release(db));
    CHECK_OK(tether_ref_release(a));
    CHECK(order_len == 1 && strcmp(order[0], "Repo") == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(order_len == 1);   /* b holds both singletons */
    CHECK(atomic_load(&rb->d[0]->alive) == 1 && atomic_load(&rb->d[1]->alive) == 1);
    CHECK_OK(tether_ref_release(b));
    /* Repo, then its edges last first (Cache, then Db), as separate instances would go. */
    CHECK(order_len == 4 && strcmp(order[1], "Repo") == 0 && strcmp(order[2], "Cache") == 0 && strcmp(order[3], "Db") == 0);
    for (obj *x = atomic_exchange(&all_objects, NULL), *next; x; x = next) {
        next = x->all_next;
        free(x);
    }
}

int main(void) {
    obj_list = &all_objects;
    RUN(held_graph_outlives_its_container_in_order);
    RUN(singletons_shared_by_threads_outlive_their_caches);
    return harness_finish();
}
