/* RC (a child made and freed) with a second thread registered and idle: the path every free takes
 * in a service (the reclaimer's batches; alone, a free reclaims at once). With a second argument
 * `rq1`, RQ1's request instead (a child, "Request" registered in it and its context set through
 * its handle, Handler(Request) resolved and released, free; `--toggle-collect=rq1_loop`).
 * Instructions per operation under callgrind, from the repository root after `make build`:
 *   cc -O2 -g -Iinclude benchmarks/c/idle_rc.c -o build/bench/idle_rc -Lbuild/lib -ltether \
 *      -Wl,-rpath,$PWD/build/lib -pthread
 *   valgrind --tool=callgrind --callgrind-out-file=build/bench/cg.idle_rc --toggle-collect=rc_loop \
 *      build/bench/idle_rc 20000
 *   callgrind_annotate build/bench/cg.idle_rc | grep "PROGRAM TOTALS"    (divide by 21,000) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "tether.h"
static tether_container *root;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, done;
static void *idle(void *arg) {
    (void)arg;
    tether_container *x; tether_container_new(NULL, &x); tether_container_free(x);
    pthread_mutex_lock(&m); ready = 1; pthread_cond_broadcast(&c);
    while (!done) pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}
static void *make_request(void) { return malloc(16); }
static void *make_handler(void *request) { return request; }
static void drop(void *instance, void *context) { (void)context; free(instance); }
__attribute__((noinline)) void rq1_loop(long n) {
    for (long i = 0; i < n; i++) {
        tether_container *child;
        tether_registration *r;
        tether_ref *ref;
        if (tether_container_new(root, &child) || tether_register(child, "Request", (tether_fn)make_request, NULL, 0, &r)
            || tether_set_context(r, NULL, drop) || tether_resolve(child, "Handler", &ref) || tether_ref_release(ref)
            || tether_container_free(child)) abort();
    }
}
__attribute__((noinline)) void rc_loop(long n) {
    for (long i = 0; i < n; i++) {
        tether_container *child;
        if (tether_container_new(root, &child) || tether_container_free(child)) abort();
    }
}
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    tether_container_new(NULL, &root);
    pthread_t t; pthread_create(&t, NULL, idle, NULL);
    pthread_mutex_lock(&m); while (!ready) pthread_cond_wait(&c, &m); pthread_mutex_unlock(&m);
    if (argc > 2 && argv[2][0] == 'r') {
        tether_param p[] = {TETHER_DEP("Request")};
        if (tether_register(root, "Handler", (tether_fn)make_handler, p, 1, NULL)) abort();
        rq1_loop(1000);
        rq1_loop(n);
    } else {
        rc_loop(1000);  /* warm-up: spares made */
        rc_loop(n);
    }
    pthread_mutex_lock(&m); done = 1; pthread_cond_broadcast(&c); pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    return 0;
}
