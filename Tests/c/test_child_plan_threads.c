/* Requests on four threads at once, each a child with registrations of its own that a plan of
 * its per-request component serves (issue 28 item 1): the child's container-scoped Session (made
 * once per child, published there) under the root's Handler, and its Worker with a completion
 * callback that takes a weak back edge to the graph's Job (replayed into each thread's graph).
 * Per request: one Session for its two Handlers, the callback once per Worker with its own Job;
 * after all: every object destroyed once, the root's Db made once. Run plain, under ASan
 * and TSan.
 *
 *   root:  Db (singleton), Handler(CONTEXT, DEP Session, DEP Db), Job(CONTEXT, DEP Worker)
 *   child: Session (container, CONTEXT, DEP Db), Worker (CONTEXT), on_complete(Worker) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include "harness.h"
#include "threaded_fixtures.h"

enum { THREADS = 4, REQUESTS = 300 };

static kind kdb = KIND("Db"), khandler = KIND("Handler"), kjob = KIND("Job"), ksession = KIND("Session"), kworker = KIND("Worker");
static atomic_int completions;
static tether_container *root;

static tether_status worker_completes(tether_resolver *r, void *instance, void *context) {
    obj *w = instance;
    T_CHECK(context == &kworker && w->k == &kworker);
    T_CHECK(tether_resolver_get_weak(r, "Job", &w->parent) == TETHER_OK);
    atomic_fetch_add(&completions, 1);
    return TETHER_OK;
}

static void reg_in(tether_container *c, const char *key, kind *k, tether_scope scope, const char *dep_a, const char *dep_b,
                   tether_registration **out) {
    tether_param p[3];
    size_t n = context_and_deps(p, dep_a, dep_b);
    tether_registration *r = NULL;
    T_CHECK(tether_register(c, key, n == 1 ? (tether_fn)make0 : n == 2 ? (tether_fn)make1 : (tether_fn)make2, p, n, &r) == TETHER_OK);
    T_CHECK(tether_set_scope(r, scope) == TETHER_OK);
    T_CHECK(tether_set_context(r, k, drop_obj) == TETHER_OK);
    if (out) *out = r;
}

static void *requests(void *arg) {
    (void)arg;
    for (int i = 0; i < REQUESTS; i++) {
        tether_container *child = NULL;
        T_CHECK(tether_container_new(root, &child) == TETHER_OK);
        if (!child) return NULL;
        tether_registration *worker = NULL;
        reg_in(child, "Session", &ksession, TETHER_SCOPE_CONTAINER, "Db", NULL, NULL);
        reg_in(child, "Worker", &kworker, TETHER_SCOPE_GRAPH, NULL, NULL, &worker);
        T_CHECK(tether_on_complete(worker, worker_completes, &kworker) == TETHER_OK);
        tether_ref *h1 = NULL, *h2 = NULL, *job = NULL;
        T_CHECK(tether_resolve(child, "Handler", &h1) == TETHER_OK);
        T_CHECK(tether_resolve(child, "Handler", &h2) == TETHER_OK);
        T_CHECK(tether_resolve(child, "Job", &job) == TETHER_OK);
        if (h1 && h2) {
            obj *a = tether_ref_get(h1), *b = tether_ref_get(h2);
            T_CHECK(a != b && a->a == b->a && a->a->k == &ksession && a->a->a == a->b && a->b->k == &kdb);
        }
        if (job) {
            obj *j = tether_ref_get(job);
            T_CHECK(j->a->k == &kworker && j->a->parent);
            tether_ref *back = NULL;
            T_CHECK(j->a->parent && tether_weak_upgrade(j->a->parent, &back) == TETHER_OK && back && tether_ref_get(back) == j);
            if (back) T_CHECK(tether_ref_release(back) == TETHER_OK);
            T_CHECK(tether_ref_release(job) == TETHER_OK);
        }
        if (h1) T_CHECK(tether_ref_release(h1) == TETHER_OK);
        T_CHECK(tether_container_free(child) == TETHER_OK);  /* h2 keeps its Session past the child */
        if (h2) T_CHECK(tether_ref_release(h2) == TETHER_OK);
    }
    return NULL;
}

static void requests_on_four_threads(void) {
    root = NULL;
    CHECK_OK(tether_container_new(NULL, &root));
    reg_in(root, "Db", &kdb, TETHER_SCOPE_SINGLETON, NULL, NULL, NULL);
    reg_in(root, "Handler", &khandler, TETHER_SCOPE_GRAPH, "Session", "Db", NULL);
    reg_in(root, "Job", &kjob, TETHER_SCOPE_GRAPH, "Worker", NULL, NULL);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, requests, NULL) == 0);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    CHECK(atomic_load(&thread_failures) == 0);
    enum { N = THREADS * REQUESTS };
    CHECK(atomic_load(&ksession.made) == N && atomic_load(&ksession.dropped) == N);
    CHECK(atomic_load(&kworker.made) == N && atomic_load(&kworker.dropped) == N && atomic_load(&completions) == N);
    CHECK(atomic_load(&kjob.made) == N && atomic_load(&kjob.dropped) == N);
    CHECK(atomic_load(&khandler.made) == 2 * N && atomic_load(&khandler.dropped) == 2 * N);
    CHECK(atomic_load(&kdb.made) == 1 && atomic_load(&kdb.dropped) == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&kdb.dropped) == 1);
}

int main(void) {
    RUN(requests_on_four_threads);
    return harness_finish();
}
