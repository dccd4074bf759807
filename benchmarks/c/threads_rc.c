/* RC (a child made and freed) from N threads on one root, counted rather than timed: under
 * callgrind the threads run one at a time, as threads sharing a core do, so the counts show what a
 * second thread makes each request cost (children made new when the reclaimer cannot hand freed
 * ones back: benchmarks/README.md, "A request's edges to the root's singletons"). From the
 * repository root after `make build`:
 *   cc -O2 -g -Iinclude benchmarks/c/threads_rc.c -o build/bench/threads_rc -Lbuild/lib -ltether \
 *      -Wl,-rpath,$PWD/build/lib -pthread
 *   valgrind --tool=callgrind --callgrind-out-file=build/bench/cg.threads_rc build/bench/threads_rc 20000 2
 *   callgrind_annotate --tree=caller build/bench/cg.threads_rc | grep -E "ContainerC6parent6bridge|9ContainerCfd" */
#include <pthread.h>
#include <stdlib.h>
#include "tether.h"

static tether_container *root;
static long requests;

static void *serve(void *arg) {
    (void)arg;
    for (long i = 0; i < requests; i++) {
        tether_container *child;
        if (tether_container_new(root, &child) || tether_container_free(child)) abort();
    }
    return NULL;
}

int main(int argc, char **argv) {
    requests = argc > 1 ? atol(argv[1]) : 20000;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (threads < 1 || threads > 16) threads = 2;
    if (tether_container_new(NULL, &root)) abort();
    pthread_t t[16];
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, serve, NULL);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    return tether_container_free(root) ? 1 : 0;
}
