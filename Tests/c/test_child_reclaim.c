/* A request's child freed with no grace period (no heavy barrier) when only the
 * thread that made it ever looked its handle up (and its registrations' handles,
 * if it registered), and with one in every other case: another thread looked up
 * the child or one of its registrations, a provider, lazy or FACTORY slot was made
 * over it, an override walked to it, its registrations have rare state (replaced,
 * overridden, decorated, listed, traced), it had a child.
 *
 * Which way a free went is seen through the child's version words: they go back
 * to the library's pool (last in, first out) when the child's memory is let go
 * of, so the next child that asks for its words gets the same ones if and only
 * if the first child was let go of at its free. Another thread holds a
 * reclamation record throughout (it made a call and waits), so the free cannot
 * take the "no other thread about" shortcut either.
 *
 * Then the race the shortcut must survive: per round, a child made (and used) by
 * the main thread while worker threads call into it (cached singleton hits
 * through it, a transient chain, its CONTAINER-scoped Session, interning, its
 * version words; in odd rounds the child has registrations of its own, which
 * the workers resolve through it or whose handle they use) and the main thread or
 * a worker frees it at varying points, some before any worker looked it up. Every call returns OK or
 * TETHER_E_INVALID_HANDLE saying the container was freed; every instance is
 * destroyed exactly once; nothing is reported by ASan (freed memory is
 * overwritten) or ThreadSanitizer (make test-c-asan, test-c-tsan). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "binding.h"
#include "thread_check.h"
#include "threaded_fixtures.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "max_free_fill_size=4096:free_fill_byte=165"; }

static kind k_single = KIND("Single"), k_head = KIND("Head"), k_tail = KIND("Tail"), k_session = KIND("Session"),
            k_own = KIND("Own"), k_holder = KIND("Holder"), k_deco = KIND("Decorated");
static kind *const kinds[] = {&k_single, &k_head, &k_tail, &k_session, &k_own, &k_holder, &k_deco};

static tether_container *root;
static uint32_t single_id;

static void reg(const char *key, tether_scope scope, tether_fn f, const tether_param *p, size_t n, kind *k) {
    reg_with_context(root, key, f, p, n, scope, k, drop_obj);
}

static void make_root(void) {
    CHECK_OK(tether_container_new(NULL, &root));
    tether_param ctx[] = {TETHER_CONTEXT}, on_single[] = {TETHER_CONTEXT, TETHER_DEP("Single")},
                 on_tail[] = {TETHER_CONTEXT, TETHER_DEP("Tail")};
    reg("Single", TETHER_SCOPE_SINGLETON, (tether_fn)make0, ctx, 1, &k_single);
    reg("Tail", TETHER_SCOPE_TRANSIENT, (tether_fn)make1, on_single, 2, &k_tail);
    reg("Head", TETHER_SCOPE_TRANSIENT, (tether_fn)make1, on_tail, 2, &k_head);
    reg("Session", TETHER_SCOPE_CONTAINER, (tether_fn)make1, on_single, 2, &k_session);
    CHECK_OK(tether_intern(root, "Single", &single_id));
}

/* The address of `c`'s own version words (they are made when first asked for). */
static const volatile size_t *words_of(tether_container *c) {
    const volatile size_t *words[4] = {0};
    size_t count = 0;
    if (TB.container_versions(c, words, 4, &count) != TETHER_OK || count != 2) return NULL;
    return words[0];
}

/* ---- which way a free went ----------------------------------------------- */

/* The other thread: holds a record (it made a call) and does what it is asked, one job at a time. */
typedef enum { JOB_NONE, JOB_LOOK_UP, JOB_MAKE, JOB_SET_CONTEXT, JOB_EXIT } job_kind;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_changed = PTHREAD_COND_INITIALIZER;
static job_kind job;
static tether_container *job_child;
static tether_registration *job_registration;
static const volatile size_t *job_words;

static void *other_thread(void *arg) {
    (void)arg;
    uint32_t id;
    T_CHECK(tether_intern(root, "Single", &id) == TETHER_OK);
    pthread_mutex_lock(&job_lock);
    for (;;) {
        while (job == JOB_NONE) pthread_cond_wait(&job_changed, &job_lock);
        if (job == JOB_EXIT) break;
        if (job == JOB_LOOK_UP) {
            T_CHECK(tether_intern(job_child, "Single", &id) == TETHER_OK);
        } else if (job == JOB_SET_CONTEXT) {
            T_CHECK(tether_set_context(job_registration, &k_own, drop_obj) == TETHER_OK);
        } else {
            T_CHECK(tether_container_new(root, &job_child) == TETHER_OK);
            job_words = words_of(job_child);
        }
        job = JOB_NONE;
        pthread_cond_broadcast(&job_changed);
    }
    pthread_mutex_unlock(&job_lock);
    return NULL;
}

static void ask(job_kind what) {
    pthread_mutex_lock(&job_lock);
    job = what;
    pthread_cond_broadcast(&job_changed);
    while (job != JOB_NONE && what != JOB_EXIT) pthread_cond_wait(&job_changed, &job_lock);
    pthread_mutex_unlock(&job_lock);
}

/* Frees `first` (whose words are `words`), then says whether a new child gets the same words. */
static int freed_at_once(tether_container *first, const volatile size_t *words) {
    CHECK_OK(tether_container_free(first));
    tether_container *next = NULL;
    CHECK_OK(tether_container_new(root, &next));
    const volatile size_t *again = words_of(next);
    CHECK(again != NULL);
    CHECK_OK(tether_container_free(next));
    return again == words;
}

static void a_child_only_its_maker_reached_is_let_go_of_at_its_free(void) {
    tether_container *child = NULL;
    CHECK_OK(tether_container_new(root, &child));
    const volatile size_t *words = words_of(child);
    CHECK(words != NULL);
    tether_ref *r = NULL;
    CHECK_OK(tether_resolve(child, "Head", &r));                 /* used by its maker: still its own */
    CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_resolve(child, "Session", &r));
    CHECK_OK(tether_ref_release(r));
    CHECK(freed_at_once(child, words));
    CHECK(atomic_load(&k_session.made) == atomic_load(&k_session.dropped));
}

static void a_child_another_thread_looked_up_waits(void) {
    tether_container *child = NULL;
    CHECK_OK(tether_container_new(root, &child));
    const volatile size_t *words = words_of(child);
    CHECK(words != NULL);
    job_child = child;
    ask(JOB_LOOK_UP);                                              /* a call of the other thread's, ended */
    CHECK(!freed_at_once(child, words));
}

static void a_child_freed_by_another_thread_than_its_maker_waits(void) {
    ask(JOB_MAKE);
    CHECK(job_words != NULL);
    CHECK(!freed_at_once(job_child, job_words));
}

static void a_child_that_had_a_child_waits(void) {
    tether_container *child = NULL, *grandchild = NULL;
    CHECK_OK(tether_container_new(root, &child));
    const volatile size_t *words = words_of(child);
    CHECK(words != NULL);
    CHECK_OK(tether_container_new(child, &grandchild));          /* a child's calls reach their parent */
    CHECK_OK(tether_container_free(grandchild));
    CHECK(!freed_at_once(child, words));
}

/* ---- a child with registrations of its own (a request's, RQ1) ---------------- */

static void *make_holder(kind *k, tether_provider lazy) {
    obj *o = obj_new(k, NULL, NULL);
    o->lazy = lazy;
    return o;
}
static void *make_with_factory(kind *k, tether_factory *f) {
    T_CHECK(tether_factory_release(f) == TETHER_OK);
    return obj_new(k, NULL, NULL);
}
static void *decorate_own(obj *inner, kind *k) { return obj_new(k, inner, NULL); }
static void trace_nothing(const tether_trace_event *event, void *context) { (void)event; (void)context; }

/* A child with "Own" (CONTAINER scope, over the root's Single) registered, its handle used by
 * this thread (its context set through it), and "Uses" (over Own) registered with no handle. */
static tether_container *child_with_own(const volatile size_t **words, tether_registration **own) {
    tether_container *child = NULL;
    CHECK_OK(tether_container_new(root, &child));
    *words = words_of(child);
    CHECK(*words != NULL);
    tether_registration *r = NULL;
    CHECK_OK(tether_register(child, "Own", (tether_fn)make1, (tether_param[]){TETHER_CONTEXT, TETHER_DEP("Single")}, 2, &r));
    CHECK_OK(tether_set_context(r, &k_own, drop_obj));
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &k_head;
    o.drop = drop_obj;
    CHECK_OK(tether_register_with(child, "Uses", (tether_fn)make1, (tether_param[]){TETHER_CONTEXT, TETHER_DEP("Own")}, 2, &o, NULL));
    if (own) *own = r;
    return child;
}

static void resolve_and_release(tether_container *c, const char *key) {
    tether_ref *r = NULL;
    CHECK_OK(tether_resolve(c, key, &r));
    CHECK_OK(tether_ref_release(r));
}

static void a_child_with_registrations_only_its_maker_used_is_let_go_of_at_its_free(void) {
    const volatile size_t *words;
    tether_registration *own;
    int dropped = atomic_load(&k_own.dropped);
    tether_container *child = child_with_own(&words, &own);
    resolve_and_release(child, "Uses");
    resolve_and_release(child, "Head");                         /* the root's keys through it */
    CHECK(freed_at_once(child, words));
    CHECK(atomic_load(&k_own.dropped) == dropped + 1);           /* its CONTAINER-scoped Own, at the free */
    CHECK_STATUS(tether_set_context(own, &k_own, drop_obj), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("freed");
}

static void a_child_whose_registration_another_thread_looked_up_waits(void) {
    const volatile size_t *words;
    tether_container *child = child_with_own(&words, &job_registration);
    ask(JOB_SET_CONTEXT);                                          /* the registration's handle, not the child's */
    resolve_and_release(child, "Uses");
    CHECK(!freed_at_once(child, words));
}

/* A cell over the child holds it (its memory stays while the cell does): let go of first, the
 * child's free must still wait (`kept`: 0), and a cell kept past the free answers "freed". */
static void a_child_a_provider_was_made_over_waits(void) {
    for (int kept = 0; kept < 2; kept++) {
        const volatile size_t *words;
        tether_container *child = child_with_own(&words, NULL);
        tether_provider p = NULL;
        CHECK_OK(tether_make_provider(child, "Own", &p));
        obj *got = p();
        CHECK(got != NULL && got->k == &k_own);
        if (!kept) CHECK_OK(tether_provider_free(p));
        CHECK(!freed_at_once(child, words));
        if (!kept) continue;
        CHECK(p() == NULL);
        CHECK_STATUS(tether_last_status(), TETHER_E_INVALID_HANDLE);
        CHECK_OK(tether_provider_free(p));
    }
}

/* Registers `key` in `child`, a Holder (kind k_holder) made by `factory` over `slot` (a slot made per resolve). */
static void reg_holder(tether_container *child, const char *key, tether_fn factory, tether_param slot) {
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &k_holder;
    o.drop = drop_obj;
    CHECK_OK(tether_register_with(child, key, factory, (tether_param[]){TETHER_CONTEXT, slot}, 2, &o, NULL));
}

static void a_child_a_lazy_slot_was_made_over_waits(void) {
    for (int kept = 0; kept < 2; kept++) {
        const volatile size_t *words;
        tether_container *child = child_with_own(&words, NULL);
        reg_holder(child, "Holder", (tether_fn)make_holder, TETHER_LAZY("Own"));
        tether_ref *r = NULL;
        CHECK_OK(tether_resolve(child, "Holder", &r));
        obj *holder = tether_ref_get(r);
        CHECK(holder != NULL && holder->lazy != NULL);
        if (!kept) CHECK_OK(tether_ref_release(r));                /* the slot goes with its instance */
        CHECK(!freed_at_once(child, words));
        if (!kept) continue;
        CHECK(holder->lazy() == NULL);
        CHECK_OK(tether_ref_release(r));
    }
}

static void a_child_a_factory_slot_was_made_over_waits(void) {
    const volatile size_t *words;
    tether_container *child = child_with_own(&words, NULL);
    reg_holder(child, "Maker", (tether_fn)make_with_factory, TETHER_FACTORY("Own"));
    resolve_and_release(child, "Maker");
    CHECK(!freed_at_once(child, words));
}

/* Rare state of its registrations: each reaches them otherwise than through their handles. */
static void a_child_with_rare_state_waits(void) {
    for (int variant = 0; variant < 5; variant++) {
        const volatile size_t *words;
        tether_registration *own = NULL;
        tether_container *child = child_with_own(&words, NULL);
        switch (variant) {
        case 0:                                                    /* replaced: the old one retired */
            CHECK_OK(tether_register(child, "Own", (tether_fn)make1, (tether_param[]){TETHER_CONTEXT, TETHER_DEP("Single")}, 2, &own));
            CHECK_OK(tether_set_context(own, &k_own, drop_obj));
            break;
        case 1: {                                                  /* overridden, then cleared */
            static obj instead;
            CHECK_OK(tether_override(child, "Own", &instead, NULL, NULL));
            CHECK_OK(tether_override_clear(child, "Own"));
            break;
        }
        case 2: {                                                  /* decorated */
            tether_options o = TETHER_OPTIONS_INIT;
            o.flags = TETHER_DECORATE;
            o.context = &k_deco;
            o.drop = drop_obj;
            CHECK_OK(tether_register_with(child, "Own", (tether_fn)decorate_own, (tether_param[]){TETHER_DEP("Own"), TETHER_CONTEXT}, 2, &o, NULL));
            break;
        }
        case 3: {                                                  /* listed */
            tether_ref *r = NULL;
            const tether_list *list = NULL;
            CHECK_OK(tether_resolve_all(child, "Own", &r, &list));
            CHECK_OK(tether_ref_release(r));
            break;
        }
        default:                                                   /* traced */
            CHECK_OK(tether_set_trace(child, trace_nothing, NULL));
            CHECK_OK(tether_set_trace(child, NULL, NULL));
            break;
        }
        resolve_and_release(child, "Uses");
        if (!freed_at_once(child, words)) continue;
        fprintf(stderr, "  rare state %d: let go of at its free\n", variant);
        CHECK(0);
    }
}

/* An override in the root walks its open children (and reads their tables) with no handle. */
static void a_child_an_override_walked_to_waits(void) {
    const volatile size_t *words;
    tether_container *child = child_with_own(&words, NULL);
    resolve_and_release(child, "Uses");
    static obj instead;
    CHECK_OK(tether_override(root, "Tail", &instead, NULL, NULL));
    CHECK_OK(tether_override_clear(root, "Tail"));
    CHECK(!freed_at_once(child, words));
}

/* ---- the race --------------------------------------------------------------- */

enum { WORKERS = 3, OPS = 6, OWN_OPS = 8 };
#ifndef CHILD_RACE_ROUNDS
#define CHILD_RACE_ROUNDS 400
#endif

static _Atomic(tether_container *) current;
/* Rounds with a registration of the child's own (odd rounds): its handle, else NULL. Workers
 * resolve it through the child (every third round) or use its handle (the others, then no
 * resolve of it races the context's change). */
static _Atomic(tether_registration *) current_own;
static atomic_int own_by_handle;
static atomic_int iterations, stop, freer;      /* freer: -1 the main thread, else that worker */
static pthread_barrier_t round_start, round_end;

static int freed_status(tether_status st) {
    return st == TETHER_E_INVALID_HANDLE && strstr(tether_last_error(), "freed") != NULL;
}

/* One call into `c`; 1 if it said the container was freed. */
static int call_once(tether_container *c, int op) {
    tether_ref *r = NULL;
    tether_status st;
    uint32_t id;
    tether_registration *own = atomic_load(&current_own);
    if (own && op % OWN_OPS >= OPS) {
        if (atomic_load(&own_by_handle)) {
            st = tether_set_context(own, &k_own, drop_obj);  /* the same context: only the lookup matters */
        } else {
            st = tether_resolve(c, "Uses", &r);
        }
        if (st != TETHER_OK) {
            T_CHECK(freed_status(st));
            return 1;
        }
        if (r) {
            obj *o = tether_ref_get(r);
            T_CHECK(o != NULL && o->k == &k_head && o->dep->k == &k_own && o->dep->dep->k == &k_single);
            T_CHECK(tether_ref_release(r) == TETHER_OK);
        }
        return 0;
    }
    switch (op % OPS) {
    case 0: st = tether_resolve_key(c, single_id, &r); break;
    case 1: st = tether_resolve(c, "Head", &r); break;
    case 2: st = tether_resolve(c, "Session", &r); break;
    case 3: st = tether_intern(c, "Single", &id); break;
    case 4: {
        const volatile size_t *words[4];
        size_t count = 0;
        st = TB.container_versions(c, words, 4, &count);
        break;
    }
    default: st = tether_resolve(c, "Single", &r); break;
    }
    if (st != TETHER_OK) {
        T_CHECK(freed_status(st));
        return 1;
    }
    if (r) {
        obj *o = tether_ref_get(r);
        T_CHECK(o != NULL);
        if (o && op % OPS == 1) T_CHECK(o->k == &k_head && o->dep->k == &k_tail && o->dep->dep->k == &k_single);
        if (o && op % OPS == 2) T_CHECK(o->k == &k_session && o->dep->k == &k_single);
        T_CHECK(tether_ref_release(r) == TETHER_OK);
    }
    return 0;
}

static void *race_worker(void *arg) {
    int index = (int)(intptr_t)arg;
    for (int round = 0;; round++) {
        pthread_barrier_wait(&round_start);
        if (atomic_load(&stop)) return NULL;
        tether_container *c = atomic_load(&current);
        int frees = atomic_load(&freer) == index, wait_for = round % 40;
        for (int i = index + round;; i++) {
            if (frees && atomic_load(&iterations) >= wait_for) {
                T_CHECK(tether_container_free(c) == TETHER_OK);
                break;
            }
            int gone = call_once(c, i);
            atomic_fetch_add(&iterations, 1);
            if (gone) break;
        }
        pthread_barrier_wait(&round_end);
    }
}

static void a_child_freed_while_other_threads_call_into_it(void) {
    pthread_t threads[WORKERS];
    rounds_begin(threads, WORKERS, &round_start, &round_end, race_worker);
    for (int round = 0; round < CHILD_RACE_ROUNDS; round++) {
        tether_container *c = NULL;
        tether_registration *own = NULL;
        const volatile size_t *words;
        if (round % 2) {
            c = child_with_own(&words, &own);
            if (round % 4 == 1) resolve_and_release(c, "Uses");   /* its maker's own calls first, sometimes */
        } else {
            atomic_store(&current_own, NULL);
            CHECK_OK(tether_container_new(root, &c));
            if (round % 4 == 2) call_once(c, round);
        }
        atomic_store(&current_own, own);
        atomic_store(&own_by_handle, round % 3 != 0);
        atomic_store(&current, c);
        atomic_store(&iterations, 0);
        /* Mostly the maker frees it (the shortcut's case); every fourth round a worker does. */
        atomic_store(&freer, round % 4 == 3 ? round % WORKERS : -1);
        pthread_barrier_wait(&round_start);
        if (atomic_load(&freer) < 0) {
            int wait_for = round % 40;                          /* 0: before any worker looked it up */
            while (atomic_load(&iterations) < wait_for) sched_yield();
            CHECK_OK(tether_container_free(c));
        }
        pthread_barrier_wait(&round_end);
        CHECK_STATUS(tether_intern(c, "Single", &(uint32_t){0}), TETHER_E_INVALID_HANDLE);
        CHECK_ERROR_HAS("freed");
        CHECK(atomic_load(&k_session.made) == atomic_load(&k_session.dropped));
        CHECK(atomic_load(&k_own.made) == atomic_load(&k_own.dropped));
        if (own) {
            CHECK_STATUS(tether_set_context(own, &k_own, drop_obj), TETHER_E_INVALID_HANDLE);
            CHECK_ERROR_HAS("freed");
        }
        if (atomic_load(&thread_failures)) break;
    }
    rounds_finish(threads, WORKERS, &round_start, &round_end, &stop);
    CHECK(atomic_load(&thread_failures) == 0);
    CHECK(atomic_load(&k_session.made) >= CHILD_RACE_ROUNDS / 4);   /* the rounds did call into their child */
}

int main(void) {
    alarm(600);   /* a call spinning on a freed container's lock (a free that did not wait) fails, not hangs */
    make_root();
    pthread_t other;
    CHECK(pthread_create(&other, NULL, other_thread, NULL) == 0);
    RUN(a_child_only_its_maker_reached_is_let_go_of_at_its_free);
    RUN(a_child_another_thread_looked_up_waits);
    RUN(a_child_freed_by_another_thread_than_its_maker_waits);
    RUN(a_child_that_had_a_child_waits);
    RUN(a_child_with_registrations_only_its_maker_used_is_let_go_of_at_its_free);
    RUN(a_child_whose_registration_another_thread_looked_up_waits);
    RUN(a_child_a_provider_was_made_over_waits);
    RUN(a_child_a_lazy_slot_was_made_over_waits);
    RUN(a_child_a_factory_slot_was_made_over_waits);
    RUN(a_child_with_rare_state_waits);
    RUN(a_child_an_override_walked_to_waits);
    RUN(a_child_with_registrations_only_its_maker_used_is_let_go_of_at_its_free);   /* again, after the others */
    RUN(a_child_only_its_maker_reached_is_let_go_of_at_its_free);   /* again, after the others */
    ask(JOB_EXIT);
    pthread_join(other, NULL);
    RUN(a_child_freed_while_other_threads_call_into_it);
    CHECK_OK(tether_container_free(root));
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        CHECK(atomic_load(&kinds[k]->made) == atomic_load(&kinds[k]->dropped));
    CHECK(atomic_load(&thread_failures) == 0);
    return harness_finish();
}
