/* Shared instances are created under per-(container, key) cells, not one
 * process-wide lock: two threads creating different singletons (or the same
 * container-scoped key in two containers) overlap; a singleton raced for is
 * created once; a creator's failure leaves the key to the next thread; two
 * threads that would wait on each other's cells get TETHER_E_CYCLE naming both
 * paths instead of a hang. Overlap is proven with conditions, not timings: a
 * factory waits (bounded) for the other to have started, which a global lock
 * would never allow, and the test checks that it saw it. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "fixtures.h"

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int started[2];      /* factory i has begun */
static int saw_other[2];    /* factory i saw the other begin while it ran */

/* Marks `me` started and waits (up to 10 s) for `other`; true if it came. */
static int meet(int me, int other) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&gate);
    started[me] = 1;
    pthread_cond_broadcast(&changed);
    int rc = 0;
    while (!started[other] && rc == 0) rc = pthread_cond_timedwait(&changed, &gate, &until);
    int met = started[other];
    pthread_mutex_unlock(&gate);
    return met;
}

static void reset_meeting(void) {
    memset(started, 0, sizeof started);
    memset(saw_other, 0, sizeof saw_other);
}

static kind k_a = {"A", 0, 0}, k_b = {"B", 0, 0};

static void *make_meet_a(kind *k) { saw_other[0] = meet(0, 1); return node_new(k, NULL, NULL); }
static void *make_meet_b(kind *k) { saw_other[1] = meet(1, 0); return node_new(k, NULL, NULL); }

typedef struct job { tether_container *c; const char *key; tether_status status; void *instance; char error[512]; } job;

static void *resolve_job(void *arg) {
    job *j = arg;
    tether_ref *ref = NULL;
    j->status = tether_resolve(j->c, j->key, &ref);
    if (j->status == TETHER_OK) {
        j->instance = tether_ref_get(ref);
        tether_ref_release(ref);
    } else {
        snprintf(j->error, sizeof j->error, "%s", tether_last_error());
    }
    return NULL;
}

static void run_two(job *a, job *b) {
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, resolve_job, a) == 0);
    CHECK(pthread_create(&tb, NULL, resolve_job, b) == 0);
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK(pthread_join(tb, NULL) == 0);
}

static void register_singleton(tether_container *c, const char *key, tether_fn f, kind *k, tether_scope scope) {
    tether_param p[] = {TETHER_CONTEXT};
    reg_with_context(c, key, f, p, 1, scope, k, drop_node);
}

static void test_two_singletons_are_created_at_once(void) {
    reset_meeting();
    k_a = (kind){"A", 0, 0};
    k_b = (kind){"B", 0, 0};
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    register_singleton(c, "A", (tether_fn)make_meet_a, &k_a, TETHER_SCOPE_SINGLETON);
    register_singleton(c, "B", (tether_fn)make_meet_b, &k_b, TETHER_SCOPE_SINGLETON);
    job a = {c, "A", -1, NULL, ""}, b = {c, "B", -1, NULL, ""};
    run_two(&a, &b);
    CHECK_OK(a.status);
    CHECK_OK(b.status);
    /* each factory ran while the other did */
    CHECK(saw_other[0] && saw_other[1]);
    CHECK(k_a.made == 1 && k_b.made == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(k_a.dropped == 1 && k_b.dropped == 1);
}

/* One container-scoped registration in a root, created in two children at once. */
static int session_calls;
static void *make_session(kind *k) {
    int me = __atomic_fetch_add(&session_calls, 1, __ATOMIC_SEQ_CST);
    saw_other[me & 1] = meet(me & 1, !(me & 1));
    pthread_mutex_lock(&gate);  /* both factories count on one kind at once */
    node *made = node_new(k, NULL, NULL);
    pthread_mutex_unlock(&gate);
    return made;
}

static void test_one_container_scoped_key_in_two_children_at_once(void) {
    reset_meeting();
    session_calls = 0;
    kind k_s = {"Session", 0, 0};
    tether_container *root = NULL, *x = NULL, *y = NULL;
    CHECK_OK(tether_container_new(NULL, &root));
    register_singleton(root, "Session", (tether_fn)make_session, &k_s, TETHER_SCOPE_CONTAINER);
    CHECK_OK(tether_container_new(root, &x));
    CHECK_OK(tether_container_new(root, &y));
    job a = {x, "Session", -1, NULL, ""}, b = {y, "Session", -1, NULL, ""};
    run_two(&a, &b);
    CHECK_OK(a.status);
    CHECK_OK(b.status);
    CHECK(saw_other[0] && saw_other[1]);
    CHECK(k_s.made == 2 && a.instance != b.instance);
    CHECK_OK(tether_container_free(x));
    CHECK_OK(tether_container_free(y));
    CHECK(k_s.dropped == 2);
    CHECK_OK(tether_container_free(root));
}

/* Many threads racing for one singleton: one factory call, one instance for all. */
enum { RACERS = 8 };
static int arrived;
static kind k_s;
static void *make_racer(kind *k) {
    /* give the others time to arrive at the cell (not needed for correctness) */
    for (int i = 0; i < 1000 && __atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < RACERS; i++)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    return node_new(k, NULL, NULL);
}
static pthread_barrier_t line_up;
static void *race(void *arg) {
    pthread_barrier_wait(&line_up);
    __atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
    return resolve_job(arg);
}

static void test_a_singleton_raced_for_is_created_once(void) {
    k_s = (kind){"S", 0, 0};
    arrived = 0;
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    register_singleton(c, "S", (tether_fn)make_racer, &k_s, TETHER_SCOPE_SINGLETON);
    pthread_barrier_init(&line_up, NULL, RACERS);
    pthread_t t[RACERS];
    job j[RACERS];
    for (int i = 0; i < RACERS; i++) {
        j[i] = (job){c, "S", -1, NULL, ""};
        CHECK(pthread_create(&t[i], NULL, race, &j[i]) == 0);
    }
    for (int i = 0; i < RACERS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    pthread_barrier_destroy(&line_up);
    for (int i = 0; i < RACERS; i++) {
        CHECK_OK(j[i].status);
        CHECK(j[i].instance == j[0].instance);
    }
    CHECK(k_s.made == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(k_s.dropped == 1);
}

/* The creator fails: nothing is cached, and the thread waiting for it creates the instance. */
static int failing_calls;
static void *make_fails_first(kind *k) {
    if (__atomic_fetch_add(&failing_calls, 1, __ATOMIC_SEQ_CST) == 0) {
        meet(0, 1);  /* the other thread is about to resolve */
        nanosleep(&(struct timespec){0, 20000000}, NULL);
        return NULL;
    }
    return node_new(k, NULL, NULL);
}
static void *second_resolver(void *arg) {
    pthread_mutex_lock(&gate);
    while (!started[0]) pthread_cond_wait(&changed, &gate);
    started[1] = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&gate);
    return resolve_job(arg);
}

static void test_a_failed_creation_leaves_the_key_to_the_next_thread(void) {
    reset_meeting();
    failing_calls = 0;
    k_s = (kind){"S", 0, 0};
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    register_singleton(c, "S", (tether_fn)make_fails_first, &k_s, TETHER_SCOPE_SINGLETON);
    job a = {c, "S", -1, NULL, ""}, b = {c, "S", -1, NULL, ""};
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, resolve_job, &a) == 0);
    CHECK(pthread_create(&tb, NULL, second_resolver, &b) == 0);
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK(pthread_join(tb, NULL) == 0);
    CHECK_STATUS(a.status, TETHER_E_FACTORY_FAILED);
    CHECK_OK(b.status);
    CHECK(failing_calls == 2 && k_s.made == 1);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "S", &ref));
    CHECK(tether_ref_get(ref) == b.instance && k_s.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(k_s.dropped == 1);
}

/* A's factory (thread 1) resolves B while B's factory (thread 2) resolves A:
 * each holds the cell the other waits for. */
static tether_container *cycle_c;
static int cycle_calls[2];
static char cycle_error[1024];
static tether_status nested_status[2][2];

static void *make_cyclic(int me, kind *k, const char *other) {
    int call = __atomic_fetch_add(&cycle_calls[me], 1, __ATOMIC_SEQ_CST);
    if (call == 0) meet(me, !me);
    tether_ref *ref = NULL;
    tether_status s = tether_resolve(cycle_c, other, &ref);
    if (call < 2) nested_status[me][call] = s;
    if (s == TETHER_E_CYCLE && strstr(tether_last_error(), "cross-thread")) {
        pthread_mutex_lock(&gate);
        if (!cycle_error[0]) snprintf(cycle_error, sizeof cycle_error, "%s", tether_last_error());
        pthread_mutex_unlock(&gate);
    }
    if (s != TETHER_OK) return NULL;
    tether_ref_release(ref);
    return node_new(k, NULL, NULL);
}
static void *make_cyclic_a(kind *k) { return make_cyclic(0, k, "B"); }
static void *make_cyclic_b(kind *k) { return make_cyclic(1, k, "A"); }

static void test_a_cross_thread_cycle_fails_naming_both_paths(void) {
    reset_meeting();
    memset(cycle_calls, 0, sizeof cycle_calls);
    memset(nested_status, 0xff, sizeof nested_status);
    cycle_error[0] = 0;
    k_a = (kind){"A", 0, 0};
    k_b = (kind){"B", 0, 0};
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    cycle_c = c;
    register_singleton(c, "A", (tether_fn)make_cyclic_a, &k_a, TETHER_SCOPE_SINGLETON);
    register_singleton(c, "B", (tether_fn)make_cyclic_b, &k_b, TETHER_SCOPE_SINGLETON);
    job a = {c, "A", -1, NULL, ""}, b = {c, "B", -1, NULL, ""};
    run_two(&a, &b);
    /* neither could be made: each needs the other while being constructed */
    CHECK(a.status != TETHER_OK && b.status != TETHER_OK);
    CHECK(k_a.made == 0 && k_b.made == 0);
    /* one of the nested resolves found the cross-thread cycle; its message names both threads' paths */
    CHECK(nested_status[0][0] == TETHER_E_CYCLE || nested_status[1][0] == TETHER_E_CYCLE);
    CHECK(strstr(cycle_error, "cross-thread dependency cycle") != NULL);
    CHECK(strstr(cycle_error, "\"A\" -> \"B\"") != NULL);
    CHECK(strstr(cycle_error, "\"B\" -> \"A\"") != NULL);
    if (getenv("SHOW")) fprintf(stderr, "  message: %s\n", cycle_error);
    /* nothing half-built was cached: once the cycle is broken... nothing cached either */
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &ref), TETHER_E_FACTORY_FAILED);
    CHECK(k_a.made == 0 && k_b.made == 0);
    CHECK_OK(tether_container_free(c));
}

/* Two roots needing two singletons in opposite orders, on many threads: no cyclic
 * dependency, so no cycle reported and no hang (a graph claims the cells its edges
 * reach in one order); each singleton made once. */
static kind k_x = {"X", 0, 0}, k_y = {"Y", 0, 0}, k_xy = {"XY", 0, 0};
static void *make_counted(kind *k) {
    pthread_mutex_lock(&gate);
    node *n = node_new(k, NULL, NULL);
    pthread_mutex_unlock(&gate);
    return n;
}
static void *make_pair(kind *k, node *a, node *b) {
    pthread_mutex_lock(&gate);
    node *n = node_new(k, a, b);
    pthread_mutex_unlock(&gate);
    return n;
}
static void drop_counted(void *instance, void *context) {
    pthread_mutex_lock(&gate);  /* resets on several threads drop at once */
    drop_node(instance, context);
    pthread_mutex_unlock(&gate);
}
static tether_container *order_c;
static atomic_int order_failures;
static void *resolve_in_order(void *arg) {
    const char *key = (intptr_t)arg % 2 ? "XY" : "YX";
    for (int i = 0; i < 50; i++) {
        tether_ref *ref = NULL;
        if (tether_resolve(order_c, key, &ref) != TETHER_OK) { atomic_fetch_add(&order_failures, 1); continue; }
        tether_ref_release(ref);
        if (i % 10 == 9) tether_reset(order_c, TETHER_SCOPE_SINGLETON);
    }
    return NULL;
}

static void test_two_singletons_needed_in_opposite_orders(void) {
    k_x = (kind){"X", 0, 0};
    k_y = (kind){"Y", 0, 0};
    k_xy = (kind){"XY", 0, 0};
    atomic_store(&order_failures, 0);
    CHECK_OK(tether_container_new(NULL, &order_c));
    tether_param p[] = {TETHER_CONTEXT};
    reg_with_context(order_c, "X", (tether_fn)make_counted, p, 1, TETHER_SCOPE_SINGLETON, &k_x, drop_counted);
    reg_with_context(order_c, "Y", (tether_fn)make_counted, p, 1, TETHER_SCOPE_SINGLETON, &k_y, drop_counted);
    tether_param xy[] = {TETHER_CONTEXT, TETHER_DEP("X"), TETHER_DEP("Y")}, yx[] = {TETHER_CONTEXT, TETHER_DEP("Y"), TETHER_DEP("X")};
    reg_with_context(order_c, "XY", (tether_fn)make_pair, xy, 3, TETHER_SCOPE_GRAPH, &k_xy, drop_counted);
    reg_with_context(order_c, "YX", (tether_fn)make_pair, yx, 3, TETHER_SCOPE_GRAPH, &k_xy, drop_counted);
    pthread_t t[8];
    for (intptr_t i = 0; i < 8; i++) CHECK(pthread_create(&t[i], NULL, resolve_in_order, (void *)i) == 0);
    for (int i = 0; i < 8; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(atomic_load(&order_failures) == 0);
    CHECK(k_xy.made == 400 && k_xy.dropped == 400);
    CHECK_OK(tether_container_free(order_c));
    CHECK(k_x.made == k_x.dropped && k_y.made == k_y.dropped);
}

/* Root(A, S), A and S singletons, A's factory resolving S itself: the graph claimed both
 * cells ahead (they are needed in one order), and the nested resolve on the same thread
 * makes S under the outer claim; the graph then takes that S. S is made once. */
static tether_container *nest_c;
static kind k_nest_a = {"A", 0, 0}, k_nest_s = {"S", 0, 0}, k_nest_root = {"Root", 0, 0};
static void *nested_s;
static void *make_a_resolving_s(kind *k) {
    tether_ref *ref = NULL;
    if (tether_resolve(nest_c, "S", &ref) != TETHER_OK) return NULL;
    nested_s = tether_ref_get(ref);
    tether_ref_release(ref);
    return node_new(k, NULL, NULL);
}

static void test_a_nested_resolve_makes_what_the_graph_claimed_ahead(void) {
    nested_s = NULL;
    CHECK_OK(tether_container_new(NULL, &nest_c));
    register_singleton(nest_c, "A", (tether_fn)make_a_resolving_s, &k_nest_a, TETHER_SCOPE_SINGLETON);
    register_singleton(nest_c, "S", (tether_fn)make0, &k_nest_s, TETHER_SCOPE_SINGLETON);
    tether_param root[] = {TETHER_CONTEXT, TETHER_DEP("A"), TETHER_DEP("S")};
    tether_registration_options o = {0};
    o.context = &k_nest_root;
    o.drop = drop_node;
    CHECK_OK(TB.register_ex(nest_c, "Root", (tether_fn)make2, root, 3, &o, NULL));
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(nest_c, "Root", &ref));
    node *r = tether_ref_get(ref);
    CHECK(r->b == nested_s && k_nest_s.made == 1 && k_nest_a.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(nest_c));
    CHECK(k_nest_s.dropped == 1 && k_nest_a.dropped == 1 && k_nest_root.dropped == 1);
}

/* A request's child: its container-scoped instance's cell is the child's own (claimed under the
 * lock of its cache lookup by the root's plan). Threads racing for one child's Session through a
 * graph-scoped Handler: one Session, made once; a creator's failure leaves it to the next. */
static kind k_h = {"Handler", 0, 0}, k_sess = {"Session", 0, 0};
static int session_fails;  /* the next this many Session factory calls fail */
static void *make_child_session(kind *k) {
    for (int i = 0; i < 1000 && __atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < RACERS; i++)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    if (__atomic_load_n(&session_fails, __ATOMIC_SEQ_CST) > 0) {
        __atomic_fetch_sub(&session_fails, 1, __ATOMIC_SEQ_CST);
        return NULL;
    }
    return node_new(k, NULL, NULL);
}
static void *make_handler(kind *k, node *session) {
    pthread_mutex_lock(&gate);  /* racers' handlers count on one kind */
    node *made = node_new(k, session, NULL);
    pthread_mutex_unlock(&gate);
    return made;
}

static tether_container *request_root(void) {
    tether_container *root = NULL;
    CHECK_OK(tether_container_new(NULL, &root));
    register_singleton(root, "Session", (tether_fn)make_child_session, &k_sess, TETHER_SCOPE_CONTAINER);
    tether_param p[] = {TETHER_CONTEXT, TETHER_DEP("Session")};
    reg_with_context(root, "Handler", (tether_fn)make_handler, p, 2, TETHER_SCOPE_GRAPH, &k_h, drop_node);
    /* A first request records the root's plan (with the Session as its container step). */
    tether_container *first = NULL;
    tether_ref *ref = NULL;
    arrived = RACERS;
    CHECK_OK(tether_container_new(root, &first));
    CHECK_OK(tether_resolve(first, "Handler", &ref));
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(first));
    return root;
}

/* `race`, keeping the handler's Session (`instance`) rather than the handler, which its release frees. */
static void *race_for_session(void *arg) {
    job *j = arg;
    pthread_barrier_wait(&line_up);
    __atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
    tether_ref *ref = NULL;
    j->status = tether_resolve(j->c, j->key, &ref);
    if (j->status != TETHER_OK) return NULL;
    j->instance = ((node *)tether_ref_get(ref))->a;
    tether_ref_release(ref);
    return NULL;
}

static void race_for_handlers(tether_container *child, job *j) {
    arrived = 0;
    pthread_barrier_init(&line_up, NULL, RACERS);
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++) {
        j[i] = (job){child, "Handler", -1, NULL, ""};
        CHECK(pthread_create(&t[i], NULL, race_for_session, &j[i]) == 0);
    }
    for (int i = 0; i < RACERS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    pthread_barrier_destroy(&line_up);
}

static void test_a_childs_container_scoped_key_raced_for_is_created_once(void) {
    k_h = (kind){"Handler", 0, 0};
    k_sess = (kind){"Session", 0, 0};
    session_fails = 0;
    tether_container *root = request_root(), *child = NULL;
    CHECK(k_sess.made == 1 && k_sess.dropped == 1);
    CHECK_OK(tether_container_new(root, &child));
    job j[RACERS];
    race_for_handlers(child, j);
    for (int i = 0; i < RACERS; i++) {
        CHECK_OK(j[i].status);
        CHECK(j[i].instance != NULL && j[i].instance == j[0].instance);
    }
    CHECK(k_sess.made == 2 && k_h.made == 1 + RACERS);
    CHECK(k_h.dropped == 1 + RACERS && k_sess.dropped == 1);
    CHECK_OK(tether_container_free(child));
    CHECK(k_sess.dropped == 2);
    CHECK_OK(tether_container_free(root));
}

static void test_a_childs_failed_creation_leaves_the_key_to_the_next_thread(void) {
    k_h = (kind){"Handler", 0, 0};
    k_sess = (kind){"Session", 0, 0};
    tether_container *root = request_root(), *child = NULL;
    CHECK_OK(tether_container_new(root, &child));
    session_fails = 1;
    job j[RACERS];
    race_for_handlers(child, j);
    int failed = 0;
    void *session = NULL;
    for (int i = 0; i < RACERS; i++) {
        if (j[i].status == TETHER_OK) {
            if (!session) session = j[i].instance;
            CHECK(j[i].instance == session);
        } else {
            CHECK_STATUS(j[i].status, TETHER_E_FACTORY_FAILED);
            failed++;
        }
    }
    CHECK(failed == 1 && session != NULL);
    CHECK(k_sess.made == 2 && k_h.made == 1 + RACERS - 1);
    CHECK_OK(tether_container_free(child));
    CHECK(k_sess.dropped == 2 && k_h.dropped == k_h.made);
    CHECK_OK(tether_container_free(root));
}

/* fork() while another thread creates a child's container-scoped instance: the forked process
 * (only the forking thread in it) creates its own instance in that child, not waiting forever
 * for a thread it does not have. */
static int fork_gate_open;
static void *make_blocking_session(kind *k) {
    pthread_mutex_lock(&gate);
    started[0] = 1;
    pthread_cond_broadcast(&changed);
    while (!fork_gate_open) pthread_cond_wait(&changed, &gate);
    pthread_mutex_unlock(&gate);
    return node_new(k, NULL, NULL);
}
static int forked_child_resolves(tether_container *child) {
    fork_gate_open = 1;  /* this process's factory calls do not block (no thread would open the gate) */
    tether_ref *ref = NULL;
    if (tether_resolve(child, "Session", &ref) != TETHER_OK) return 10;
    if (k_sess.made != 1) return 11;
    tether_ref *again = NULL;
    if (tether_resolve(child, "Session", &again) != TETHER_OK || tether_ref_get(again) != tether_ref_get(ref)) return 12;
    tether_ref_release(again);
    tether_ref_release(ref);
    if (tether_container_free(child) != TETHER_OK || k_sess.dropped != 1) return 13;
    return 0;
}

static void test_fork_while_a_child_creates_its_container_scoped_key(void) {
    reset_meeting();
    fork_gate_open = 0;
    k_sess = (kind){"Session", 0, 0};
    tether_container *root = NULL, *child = NULL;
    CHECK_OK(tether_container_new(NULL, &root));
    register_singleton(root, "Session", (tether_fn)make_blocking_session, &k_sess, TETHER_SCOPE_CONTAINER);
    CHECK_OK(tether_container_new(root, &child));
    job a = {child, "Session", -1, NULL, ""};
    pthread_t ta;
    CHECK(pthread_create(&ta, NULL, resolve_job, &a) == 0);
    pthread_mutex_lock(&gate);
    while (!started[0]) pthread_cond_wait(&changed, &gate);
    pthread_mutex_unlock(&gate);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(30);  /* a wait for the thread fork() left behind would never end: fail instead */
        _exit(forked_child_resolves(child));
    }
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    pthread_mutex_lock(&gate);
    fork_gate_open = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&gate);
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK_OK(a.status);
    CHECK(k_sess.made == 1);
    CHECK_OK(tether_container_free(child));
    CHECK(k_sess.dropped == 1);
    CHECK_OK(tether_container_free(root));
}

int main(void) {
    RUN(test_a_nested_resolve_makes_what_the_graph_claimed_ahead);
    RUN(test_two_singletons_needed_in_opposite_orders);
    RUN(test_two_singletons_are_created_at_once);
    RUN(test_one_container_scoped_key_in_two_children_at_once);
    RUN(test_a_singleton_raced_for_is_created_once);
    RUN(test_a_failed_creation_leaves_the_key_to_the_next_thread);
    RUN(test_a_cross_thread_cycle_fails_naming_both_paths);
    RUN(test_a_childs_container_scoped_key_raced_for_is_created_once);
    RUN(test_a_childs_failed_creation_leaves_the_key_to_the_next_thread);
    RUN(test_fork_while_a_child_creates_its_container_scoped_key);
    return harness_finish();
}
