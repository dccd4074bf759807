/* fork() while another thread is inside a singleton factory: the child process
 * can use the library (new singletons, the one the other thread was making,
 * requests' children on its threads),
 * and the parent finishes as if nothing happened. A hang is a failure: the
 * parent waits for the child with a timeout and kills it. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "fixtures.h"

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int inside, may_return;
static kind slow_kind = {"Slow", 0, 0}, other_kind = {"Other", 0, 0};

static pid_t parent_pid;

/* The singleton factory that sits until the test lets it return; in the child it
 * returns at once (the thread that would let it go does not exist there). */
static void *make_slow(kind *k) {
    if (getpid() != parent_pid) return node_new(k, NULL, NULL);
    pthread_mutex_lock(&gate);
    inside = 1;
    pthread_cond_broadcast(&changed);
    while (!may_return) pthread_cond_wait(&changed, &gate);
    pthread_mutex_unlock(&gate);
    return node_new(k, NULL, NULL);
}

static tether_container *shared_container;
static void *resolve_slow(void *arg) {
    (void)arg;
    tether_ref *ref = NULL;
    tether_status s = tether_resolve(shared_container, "Slow", &ref);
    if (s == TETHER_OK) tether_ref_release(ref);
    return (void *)(intptr_t)s;
}

/* In the child: a new singleton, the one the parent's thread was making (same
 * registration), a reset, a new container. Exit code 0 when everything worked. */
static int child_uses_the_library(tether_container *c) {
    tether_ref *ref = NULL;
    if (tether_resolve(c, "Other", &ref) != TETHER_OK) return 10;
    tether_ref *again = NULL;
    if (tether_resolve(c, "Other", &again) != TETHER_OK) return 11;
    if (tether_ref_get(ref) != tether_ref_get(again) || other_kind.made != 1) return 12;
    tether_ref_release(again);
    tether_ref_release(ref);
    if (tether_resolve(c, "Slow", &ref) != TETHER_OK) return 15;
    if (slow_kind.made != 1) return 14;
    tether_ref_release(ref);
    if (tether_reset(c, TETHER_SCOPE_SINGLETON) != TETHER_OK) return 16;
    tether_container *fresh = NULL;
    if (tether_container_new(NULL, &fresh) != TETHER_OK) return 17;
    if (tether_container_free(fresh) != TETHER_OK) return 18;
    return 0;
}

/* In the child: requests' children made and freed on a thread of the child's (more than a
 * reclaimer batch, so batches are sealed and run: the parent's thread that was inside a call at
 * the fork must delay nothing), then on the forking thread. Each value is dropped once, at its
 * child's free. 0 when everything worked. */
enum { CHILD_REQUESTS = 600 };
static kind request_kind = {"Request", 0, 0};
static void *child_requests(void *arg) {
    tether_container *c = arg;
    for (int i = 0; i < CHILD_REQUESTS; i++) {
        tether_container *child = NULL;
        if (tether_container_new(c, &child) != TETHER_OK) return (void *)1;
        if (tether_provide_value(child, "Request", node_new(&request_kind, NULL, NULL), drop_node, &request_kind) != TETHER_OK)
            return (void *)2;
        if (tether_container_free(child) != TETHER_OK) return (void *)3;
    }
    return NULL;
}
#if defined(__SANITIZE_THREAD__)
#define STARTS_THREADS_AFTER_FORK 0 /* ThreadSanitizer refuses threads started after a multi-threaded fork */
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STARTS_THREADS_AFTER_FORK 0
#endif
#endif
#ifndef STARTS_THREADS_AFTER_FORK
#define STARTS_THREADS_AFTER_FORK 1
#endif
static int child_frees_requests_children(tether_container *c) {
    int runs = 1;
    if (STARTS_THREADS_AFTER_FORK) {
        pthread_t t;
        void *result = (void *)4;
        if (pthread_create(&t, NULL, child_requests, c) != 0 || pthread_join(t, &result) != 0 || result) return 20;
        runs++;
    }
    if (child_requests(c)) return 21;
    if (request_kind.made != runs * CHILD_REQUESTS || request_kind.dropped != runs * CHILD_REQUESTS) return 22;
    return 0;
}

/* Waits up to `seconds` for `pid`; kills it on timeout. Its exit code, or -1. */
static int wait_with_timeout(pid_t pid, int seconds) {
    for (int i = 0; i < seconds * 100; i++) {
        int status = 0;
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void fork_while_another_thread_is_in_a_singleton_factory(void) {
    parent_pid = getpid();
    tether_container *c = shared_container = new_container();
    reg_node(c, "Other", &other_kind, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    CHECK_OK(reg_kind_factory(c, "Slow", (tether_fn)make_slow, &slow_kind, TETHER_SCOPE_SINGLETON));

    pthread_t t;
    CHECK(pthread_create(&t, NULL, resolve_slow, NULL) == 0);
    pthread_mutex_lock(&gate);
    while (!inside) pthread_cond_wait(&changed, &gate);
    pthread_mutex_unlock(&gate);

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int code = child_uses_the_library(c);
        _exit(code ? code : child_frees_requests_children(c));
    }
    CHECK(pid > 0);
    int code = wait_with_timeout(pid, 20);
    if (code != 0) fprintf(stderr, "  child exit code %d (-1: hung, killed after 20 s)\n", code);
    CHECK(code == 0);

    /* The parent is unaffected: the slow singleton is made once and cached. */
    pthread_mutex_lock(&gate);
    may_return = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&gate);
    void *result = NULL;
    pthread_join(t, &result);
    CHECK((tether_status)(intptr_t)result == TETHER_OK);
    tether_ref *ref = NULL;
    resolve(c, "Slow", &ref);
    CHECK(slow_kind.made == 1);
    CHECK_OK(tether_ref_release(ref));
    resolve(c, "Other", &ref);
    CHECK(other_kind.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(slow_kind.dropped == 1 && other_kind.dropped == 1);
}

/* fork() from inside a singleton factory (the forking thread holds the
 * creation cell): the child finishes that resolve and more. */
static tether_container *inner_container;
static int inner_child_code = -2;
static void *make_forking(kind *k) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        /* Still inside the factory in the child: a nested singleton resolve works. */
        tether_ref *ref = NULL;
        int code = tether_resolve(inner_container, "Other", &ref) == TETHER_OK ? 0 : 20;
        if (code == 0) tether_ref_release(ref);
        /* Returning would finish the parent's test in the child: end here. */
        _exit(code);
    }
    inner_child_code = wait_with_timeout(pid, 20);
    return node_new(k, NULL, NULL);
}

static void fork_inside_a_singleton_factory(void) {
    kind forking = {"Forking", 0, 0}, other = {"Other", 0, 0};
    tether_container *c = inner_container = new_container();
    CHECK_OK(reg_kind_factory(c, "Forking", (tether_fn)make_forking, &forking, TETHER_SCOPE_SINGLETON));
    reg_node(c, "Other", &other, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_ref *ref = NULL;
    resolve(c, "Forking", &ref);
    CHECK(inner_child_code == 0);
    CHECK(forking.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(forking.dropped == 1);
}

/* Handles, weak handles and caches made before the fork: in the child process each answers
 * what it answered before (no second instance), and each destructor runs once there when the
 * child lets go; the parent, untouched, does the same. 0 when everything worked. */
static kind db_kind = {"Db", 0, 0}, weakling_kind = {"Weakling", 0, 0}, session_kind = {"Session", 0, 0};
typedef struct before_fork {
    tether_container *root, *request;
    tether_ref *db, *weakling, *session;
    tether_weak *weak;
    node *db_node, *weakling_node, *session_node;
} before_fork;

static int lets_go_of_what_was_made_before_the_fork(before_fork *b) {
    tether_ref *again = NULL;
    if (tether_resolve(b->root, "Db", &again) != TETHER_OK || tether_ref_get(again) != b->db_node) return 30;
    tether_ref_release(again);
    if (tether_resolve(b->request, "Session", &again) != TETHER_OK || tether_ref_get(again) != b->session_node) return 31;
    tether_ref_release(again);
    if (tether_resolve(b->root, "Weakling", &again) != TETHER_OK || tether_ref_get(again) != b->weakling_node) return 32;
    tether_ref_release(again);
    tether_ref *upgraded = NULL;
    if (tether_weak_upgrade(b->weak, &upgraded) != TETHER_OK || tether_ref_get(upgraded) != b->weakling_node) return 33;
    if (db_kind.made != 1 || weakling_kind.made != 1 || session_kind.made != 1) return 34;
    /* The weak-scoped instance goes with its last strong handle; the weak handle then says so. */
    if (tether_ref_release(upgraded) != TETHER_OK || tether_ref_release(b->weakling) != TETHER_OK) return 35;
    if (weakling_kind.dropped != 1 || tether_weak_upgrade(b->weak, &upgraded) != TETHER_E_EXPIRED) return 36;
    if (tether_weak_release(b->weak) != TETHER_OK) return 37;
    /* The request's child, then the root: dependents first, each destructor once. */
    if (tether_ref_release(b->session) != TETHER_OK || tether_container_free(b->request) != TETHER_OK) return 38;
    if (session_kind.dropped != 1 || db_kind.dropped != 0) return 39;
    if (tether_ref_release(b->db) != TETHER_OK || tether_container_free(b->root) != TETHER_OK) return 40;
    if (db_kind.dropped != 1 || weakling_kind.dropped != 1 || session_kind.dropped != 1) return 41;
    return 0;
}

static void fork_keeps_handles_weak_handles_and_caches(void) {
    before_fork b = {0};
    b.root = new_container();
    reg_node(b.root, "Db", &db_kind, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(b.root, "Weakling", &weakling_kind, TETHER_SCOPE_WEAK, "Db", NULL, drop_node);
    reg_node(b.root, "Session", &session_kind, TETHER_SCOPE_CONTAINER, "Db", NULL, drop_node);
    b.request = new_container_in(b.root);
    b.db_node = resolve(b.root, "Db", &b.db);
    b.weakling_node = resolve(b.root, "Weakling", &b.weakling);
    b.session_node = resolve(b.request, "Session", &b.session);
    CHECK_OK(tether_ref_downgrade(b.weakling, &b.weak));

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) _exit(lets_go_of_what_was_made_before_the_fork(&b));
    CHECK(pid > 0);
    int code = wait_with_timeout(pid, 20);
    if (code != 0) fprintf(stderr, "  child exit code %d (-1: hung, killed after 20 s)\n", code);
    CHECK(code == 0);
    CHECK(lets_go_of_what_was_made_before_the_fork(&b) == 0);
}

/* fork() while another thread is inside tether_container_free (in a destructor it runs): in the
 * child process that container is gone (its calls fail, none hangs), and the rest of the library
 * works: another container's handles and caches, requests' children made and freed. */
static int drop_entered, drop_may_return;
static kind victim_kind = {"Victim", 0, 0};
static void drop_slowly(void *instance, void *context) {
    if (getpid() == parent_pid) {
        pthread_mutex_lock(&gate);
        drop_entered = 1;
        pthread_cond_broadcast(&changed);
        while (!drop_may_return) pthread_cond_wait(&changed, &gate);
        pthread_mutex_unlock(&gate);
    }
    drop_node(instance, context);
}
static void *free_victim(void *arg) { return (void *)(intptr_t)tether_container_free(arg); }

static int child_after_a_fork_during_a_free(tether_container *victim, tether_container *other, tether_ref *kept,
                                             node *kept_node) {
    tether_ref *ref = NULL;
    if (tether_resolve(victim, "Victim", &ref) != TETHER_E_INVALID_HANDLE || ref) return 50;
    if (tether_ref_get(kept) != kept_node) return 51;
    if (tether_resolve(other, "Other", &ref) != TETHER_OK || tether_ref_get(ref) != kept_node) return 52;
    tether_ref_release(ref);
    int code = child_frees_requests_children(other);
    if (code) return code;
    if (tether_ref_release(kept) != TETHER_OK || tether_container_free(other) != TETHER_OK) return 53;
    return other_kind.dropped == 1 ? 0 : 54;
}

static void fork_while_another_thread_frees_a_container(void) {
    parent_pid = getpid();
    other_kind.made = other_kind.dropped = 0;
    request_kind.made = request_kind.dropped = 0;
    tether_container *victim = new_container(), *other = new_container();
    reg_node(victim, "Victim", &victim_kind, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_slowly);
    reg_node(other, "Other", &other_kind, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_ref *ref = NULL, *kept = NULL;
    resolve(victim, "Victim", &ref);
    CHECK_OK(tether_ref_release(ref));
    node *kept_node = resolve(other, "Other", &kept);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, free_victim, victim) == 0);
    pthread_mutex_lock(&gate);
    while (!drop_entered) pthread_cond_wait(&changed, &gate);
    pthread_mutex_unlock(&gate);

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) _exit(child_after_a_fork_during_a_free(victim, other, kept, kept_node));
    CHECK(pid > 0);
    int code = wait_with_timeout(pid, 20);
    if (code != 0) fprintf(stderr, "  child exit code %d (-1: hung, killed after 20 s)\n", code);
    CHECK(code == 0);

    pthread_mutex_lock(&gate);
    drop_may_return = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&gate);
    void *result = NULL;
    pthread_join(t, &result);
    CHECK((tether_status)(intptr_t)result == TETHER_OK);
    CHECK(victim_kind.made == 1 && victim_kind.dropped == 1);
    CHECK_OK(tether_ref_release(kept));
    CHECK_OK(tether_container_free(other));
    CHECK(other_kind.made == 1 && other_kind.dropped == 1);
}

int main(void) {
    RUN(fork_while_another_thread_is_in_a_singleton_factory);
    RUN(fork_inside_a_singleton_factory);
    RUN(fork_keeps_handles_weak_handles_and_caches);
    RUN(fork_while_another_thread_frees_a_container);
    return harness_finish();
}
