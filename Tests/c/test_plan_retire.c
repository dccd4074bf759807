/* Replaced plans are retired, not kept (Registration+Plans.swift): a configuration that keeps
 * changing between resolves (a key registered before each), on one thread and while another
 * resolves, and per-request children with many different components, each resolve served by a
 * plan (checked in a forked process with TETHER_PLAN_STATS=1), with the same identities, factory
 * counts and destructor order as ever; and nested children with registrations of their own (a
 * component plan stacking both children's registrations). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "fixtures.h"

enum { CHANGES = 10000 };

/* Destructor order: each drop appends its kind's first letter. */
static char order[64];
static size_t ordered;
static void drop_logged(void *instance, void *context) {
    node *o = instance;
    kind *k = context;
    CHECK(o->k == k);
    if (ordered + 1 < sizeof order) { order[ordered++] = k->tag[0]; order[ordered] = 0; }
    k->dropped++;
    free(o);
}
static void order_reset(void) { ordered = 0; order[0] = 0; }

static void register_extra(tether_container *c, int n) {
    char name[32];
    snprintf(name, sizeof name, "X%d", n);
    CHECK_OK(tether_register(c, name, (tether_fn)make0, NULL, 0, NULL));
}

/* A(B, S): B graph-scoped, S a singleton; a new key registered before each resolve. */
static void configuration_changes_in_a_loop_runs(int changes) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, S = {"S", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "A", &A, TETHER_SCOPE_GRAPH, "B", "S", drop_logged);
    reg_node(c, "B", &B, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
    reg_node(c, "S", &S, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_logged);
    node *first_s = NULL;
    int wrong = 0, wrong_order = 0;
    for (int n = 0; n < changes; n++) {
        register_extra(c, n);
        tether_ref *r;
        node *a = resolve(c, "A", &r);
        if (!a) break;
        if (!first_s) first_s = a->b;
        if (a->k != &A || a->a->k != &B || a->b != first_s) wrong++;
        order_reset();
        CHECK_OK(tether_ref_release(r));
        if (strcmp(order, "AB") != 0) wrong_order++;  /* the dependent first; the singleton stays */
    }
    CHECK(wrong == 0 && wrong_order == 0);
    CHECK(A.made == changes && B.made == changes && S.made == 1);
    CHECK(A.dropped == changes && B.dropped == changes && S.dropped == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 1);
}

static void configuration_changes_in_a_loop(void) { configuration_changes_in_a_loop_runs(CHANGES); }

/* Per-request children, each registering a key of its own (one of 40 components) and every third
 * a B of its own: A(B) from each, twice. */
static void many_components_runs(int requests) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, Own = {"Own", 0, 0}, ChildB = {"b", 0, 0};
    tether_container *root = new_container();
    reg_node(root, "A", &A, TETHER_SCOPE_GRAPH, "B", NULL, drop_logged);
    reg_node(root, "B", &B, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
    int wrong = 0;
    for (int n = 0; n < requests; n++) {
        tether_container *child = new_container_in(root);
        char name[32];
        snprintf(name, sizeof name, "Own%d", n % 40);
        reg_node(child, name, &Own, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
        int own_b = n % 3 == 2;
        if (own_b) reg_node(child, "B", &ChildB, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
        for (int i = 0; i < 2; i++) {
            tether_ref *r;
            node *a = resolve(child, "A", &r);
            if (!a || a->a->k != (own_b ? &ChildB : &B)) wrong++;
            order_reset();
            CHECK_OK(tether_ref_release(r));
            if (strcmp(order, own_b ? "Ab" : "AB") != 0) wrong++;
        }
        CHECK_OK(tether_container_free(child));
    }
    CHECK(wrong == 0);
    CHECK(A.made == 2 * requests && A.dropped == A.made && B.dropped == B.made && ChildB.dropped == ChildB.made);
    CHECK(ChildB.made == 2 * (requests / 3) && B.made + ChildB.made == 2 * requests && Own.made == 0);
    CHECK_OK(tether_container_free(root));
}

static void many_components(void) { many_components_runs(1000); }

static void nested_children_runs(int rounds);

/* The loops above and nested children (below) in a process counting paths (TETHER_PLAN_STATS=1, read when its first thread
 * state is made: hence a fork before this process calls the library): every resolve served by a plan. */
static void every_resolve_is_served_by_a_plan(void) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        setenv("TETHER_PLAN_STATS", "1", 1);
        configuration_changes_in_a_loop_runs(2000);
        many_components_runs(300);
        nested_children_runs(20);
        exit(harness_current_failed);  /* the counts are printed at exit */
    }
    close(fds[1]);
    char text[8192] = {0};
    size_t used = 0;
    ssize_t got;
    while (used + 1 < sizeof text && (got = read(fds[0], text + used, sizeof text - 1 - used)) > 0) used += (size_t)got;
    close(fds[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    long resolves = -1, planned = -2;
    const char *line = strstr(text, "tether-plan-stats: resolves ");
    if (line) resolves = strtol(line + strlen("tether-plan-stats: resolves "), NULL, 10);
    line = strstr(text, "tether-plan-stats: plan ");
    if (line) planned = strtol(line + strlen("tether-plan-stats: plan "), NULL, 10);
    CHECK(resolves == 2000 + 600 + 60);
    CHECK(planned == resolves);
    CHECK(strstr(text, "planLimit") == NULL);
    if (planned != resolves) fprintf(stderr, "%s", text);
}

/* A thread resolves A(B, S) in a loop while the main thread registers a new key before each
 * of its own resolves: plans the resolving thread may be replaying are retired, never freed under it. */
static atomic_int stop;
static atomic_int resolved, wrong_seen;
static tether_container *shared;
static node *shared_s;
static void *resolver_loop(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        tether_ref *r = NULL;
        if (tether_resolve(shared, "A", &r) != TETHER_OK) { atomic_fetch_add(&wrong_seen, 1); continue; }
        node *a = tether_ref_get(r);
        if (!a || a->magic != ALIVE || a->a->magic != ALIVE || a->b != shared_s) atomic_fetch_add(&wrong_seen, 1);
        tether_ref_release(r);
        atomic_fetch_add(&resolved, 1);
    }
    return NULL;
}

/* Counts kept atomically: two threads make and drop A and B (`kind`'s counts are plain ints). */
typedef struct atomic_kind { kind k; atomic_int made, dropped; } atomic_kind;
static void *make_counted2(atomic_kind *k, node *a, node *b) {
    atomic_fetch_add(&k->made, 1);
    node *o = xcalloc(sizeof *o);
    o->magic = ALIVE; o->k = &k->k; o->a = a; o->b = b;
    return o;
}
static void *make_counted0(atomic_kind *k) { return make_counted2(k, NULL, NULL); }
static void drop_counted(void *instance, void *context) {
    node *o = instance;
    atomic_kind *k = context;
    if (o->k != &k->k) atomic_fetch_add(&wrong_seen, 1);
    o->magic = DEAD;
    atomic_fetch_add(&k->dropped, 1);
    free(o);
}
static void reg_counted(tether_container *c, const char *key, atomic_kind *k, tether_scope scope, const char *a, const char *b) {
    tether_param p[3] = {TETHER_CONTEXT, TETHER_DEP(a), TETHER_DEP(b)};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, a ? (tether_fn)make_counted2 : (tether_fn)make_counted0, p, a ? 3 : 1, &r));
    CHECK_OK(tether_set_scope(r, scope));
    CHECK_OK(tether_set_context(r, k, drop_counted));
}

static void configuration_changes_while_another_thread_resolves(void) {
    static atomic_kind A = {{"A", 0, 0}, 0, 0}, B = {{"B", 0, 0}, 0, 0}, S = {{"S", 0, 0}, 0, 0};
    shared = new_container();
    reg_counted(shared, "A", &A, TETHER_SCOPE_TRANSIENT, "B", "S");
    reg_counted(shared, "B", &B, TETHER_SCOPE_TRANSIENT, NULL, NULL);
    reg_counted(shared, "S", &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    tether_ref *sr;
    shared_s = resolve(shared, "S", &sr);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, resolver_loop, NULL) == 0);
    int wrong = 0;
    for (int n = 0; n < 2000; n++) {
        register_extra(shared, n);
        tether_ref *r;
        node *a = resolve(shared, "A", &r);
        if (!a || a->b != shared_s) wrong++;
        CHECK_OK(tether_ref_release(r));
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    CHECK(wrong == 0 && atomic_load(&wrong_seen) == 0);
    CHECK(atomic_load(&A.made) == 2000 + atomic_load(&resolved) && atomic_load(&B.made) == atomic_load(&A.made));
    CHECK(atomic_load(&A.dropped) == atomic_load(&A.made) && atomic_load(&B.dropped) == atomic_load(&B.made));
    CHECK_OK(tether_ref_release(sr));
    CHECK_OK(tether_container_free(shared));
    CHECK(atomic_load(&S.made) == 1 && atomic_load(&S.dropped) == 1);
}

/* A(B, C) registered in the root; a child registers B, a child of that child C (a child with
 * registrations of its own under another such child: one component plan stacks both). Each resolve
 * from the grandchild takes B from the child and C from the grandchild; drops: A, then its edges last first. */
static void nested_children_runs(int rounds) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, C = {"C", 0, 0}, RootB = {"r", 0, 0}, RootC = {"s", 0, 0};
    tether_container *root = new_container();
    reg_node(root, "A", &A, TETHER_SCOPE_GRAPH, "B", "C", drop_logged);
    reg_node(root, "B", &RootB, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
    reg_node(root, "C", &RootC, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
    int wrong = 0;
    for (int n = 0; n < rounds; n++) {
        tether_container *child = new_container_in(root);
        reg_node(child, "B", &B, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
        tether_container *grandchild = new_container_in(child);
        reg_node(grandchild, "C", &C, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
        for (int i = 0; i < 2; i++) {
            tether_ref *r;
            node *a = resolve(grandchild, "A", &r);
            if (!a || a->a->k != &B || a->b->k != &C) wrong++;
            order_reset();
            CHECK_OK(tether_ref_release(r));
            if (strcmp(order, "ACB") != 0) wrong++;
        }
        tether_ref *r;
        node *a = resolve(child, "A", &r);  /* from the child: its B, the root's C */
        if (!a || a->a->k != &B || a->b->k != &RootC) wrong++;
        CHECK_OK(tether_ref_release(r));
        CHECK_OK(tether_container_free(grandchild));
        CHECK_OK(tether_container_free(child));
    }
    CHECK(wrong == 0);
    CHECK(A.made == 3 * rounds && B.made == 3 * rounds && C.made == 2 * rounds && RootC.made == rounds && RootB.made == 0);
    CHECK(A.dropped == A.made && B.dropped == B.made && C.dropped == C.made && RootC.dropped == RootC.made);
    CHECK_OK(tether_container_free(root));
}

static void nested_children(void) { nested_children_runs(50); }

int main(void) {
    RUN(every_resolve_is_served_by_a_plan);  /* first: it forks before this process uses the library */
    RUN(configuration_changes_in_a_loop);
    RUN(many_components);
    RUN(configuration_changes_while_another_thread_resolves);
    RUN(nested_children);
    return harness_finish();
}
