/* A 10,000-deep acyclic chain K0(K1), K1(K2), ..., K9999(): no recursion limit,
 * no stack overflow when resolving, validating or releasing it, every factory
 * once, every destructor once, dependents destroyed before their dependencies.
 * And the same chain closed into a cycle (K9999(K0)) is reported, not recursed. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"

enum { DEPTH = 10000 };

typedef struct Slot { int index, made, dropped, drop_order; } Slot;
typedef struct K { struct K *next; Slot *slot; } K;

static Slot slots[DEPTH];
static int drops;

static K *k_new(K *next, Slot *slot) {
    K *k = malloc(sizeof *k);
    if (!k) abort();
    k->next = next;
    k->slot = slot;
    slot->made++;
    return k;
}
static K *make_link(K *next, Slot *slot) { return k_new(next, slot); }  /* Ki(Ki+1) */
static K *make_end(Slot *slot) { return k_new(NULL, slot); }            /* K9999() */
static void drop_k(void *instance, void *context) {
    Slot *slot = context;
    slot->dropped++;
    slot->drop_order = drops++;
    free(instance);
}

/* K0..K{DEPTH-1} in `scope`; the last one depends on K0 when `closed`. */
static tether_container *chain(int closed, tether_scope scope) {
    memset(slots, 0, sizeof slots);
    drops = 0;
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    for (int i = 0; i < DEPTH; i++) {
        char key[16], next[16];
        snprintf(key, sizeof key, "K%d", i);
        snprintf(next, sizeof next, "K%d", (i + 1) % DEPTH);
        slots[i].index = i;
        tether_registration *r = NULL;
        tether_status st;
        if (i < DEPTH - 1 || closed) {
            tether_param params[] = { TETHER_DEP(next), TETHER_CONTEXT };
            st = tether_register(c, key, (tether_fn)make_link, params, 2, &r);
        } else {
            tether_param params[] = { TETHER_CONTEXT };
            st = tether_register(c, key, (tether_fn)make_end, params, 1, &r);
        }
        if (st != TETHER_OK) { CHECK_OK(st); break; }
        CHECK_OK(tether_set_scope(r, scope));
        CHECK_OK(tether_set_context(r, &slots[i], drop_k));
    }
    return c;
}

static void test_deep_chain_resolves_and_releases(void) {
    tether_container *c = chain(0, TETHER_SCOPE_GRAPH);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "K0", &ref));
    K *k = tether_ref_get(ref);
    int length = 0, in_order = 1;
    for (; k; k = k->next, length++)
        if (k->slot != &slots[length]) in_order = 0;
    CHECK(length == DEPTH);
    CHECK(in_order);

    int made_once = 1, none_dropped = 1;
    for (int i = 0; i < DEPTH; i++) {
        if (slots[i].made != 1) made_once = 0;
        if (slots[i].dropped != 0) none_dropped = 0;
    }
    CHECK(made_once);
    CHECK(none_dropped);

    CHECK_OK(tether_ref_release(ref));       /* 10,000 destructors, one release */
    int dropped_once = 1, dependents_first = 1;
    for (int i = 0; i < DEPTH; i++) {
        if (slots[i].dropped != 1) dropped_once = 0;
        if (slots[i].drop_order != i) dependents_first = 0;
    }
    CHECK(dropped_once);
    CHECK(dependents_first);
    CHECK(drops == DEPTH);
    CHECK_OK(tether_container_free(c));
}

/* Singletons: the container's cache holds the chain; freeing the container
 * releases it. A resolve from the middle makes only the tail; one from the top
 * makes the rest and reuses the tail. */
static void test_deep_singleton_chain_released_with_the_container(void) {
    tether_container *c = chain(0, TETHER_SCOPE_SINGLETON);
    tether_ref *mid = NULL, *top = NULL;
    CHECK_OK(tether_resolve(c, "K5000", &mid));
    CHECK(slots[4999].made == 0 && slots[5000].made == 1 && slots[DEPTH - 1].made == 1);
    CHECK_OK(tether_resolve(c, "K0", &top));
    K *k0 = tether_ref_get(top);
    int length = 0;
    for (K *k = k0; k; k = k->next) length++;
    CHECK(length == DEPTH);
    int made_once = 1;
    for (int i = 0; i < DEPTH; i++) if (slots[i].made != 1) made_once = 0;
    CHECK(made_once);
    CHECK(k0 && k0->slot == &slots[0]);
    CHECK_OK(tether_ref_release(mid));
    CHECK_OK(tether_ref_release(top));
    CHECK(drops == 0);                       /* still cached */

    CHECK_OK(tether_container_free(c));
    int dropped_once = 1, dependents_first = 1;
    for (int i = 0; i < DEPTH; i++) {
        if (slots[i].dropped != 1) dropped_once = 0;
        if (i > 0 && slots[i].drop_order < slots[i - 1].drop_order) dependents_first = 0;
    }
    CHECK(dropped_once);
    CHECK(dependents_first);
}

static void test_deep_chain_validates(void) {
    tether_container *c = chain(0, TETHER_SCOPE_GRAPH);
    CHECK_OK(tether_validate(c));
    CHECK(slots[0].made == 0 && slots[DEPTH - 1].made == 0);
    CHECK_OK(tether_container_free(c));
}

static void test_deep_cycle_is_reported_not_recursed(void) {
    tether_container *c = chain(1, TETHER_SCOPE_GRAPH);
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "K0", &ref), TETHER_E_CYCLE);
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("dependency cycle through constructors: \"K0\" -> \"K1\" -> \"K2\"");
    CHECK_ERROR_HAS("\"K9998\" -> \"K9999\" -> \"K0\"");
    int made = 0;
    for (int i = 0; i < DEPTH; i++) made += slots[i].made;
    CHECK(made == 0);                        /* no factory ran: every one waits on K0 */
    CHECK_STATUS(tether_validate(c), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"K9999\" -> \"K0\"");
    CHECK_OK(tether_container_free(c));
    tether_set_error("(none since the 10,000-key cycle message)");   /* keep later reports short */
}

/* The same on a 256 KB thread stack (32 times less than the main thread's
 * usual 8 MB): stack use must not grow with the chain, in resolve or release.
 * Run in a child process, so an overflow is reported as a failure of this test. */
static void *resolve_and_release(void *failed) {
    tether_container *c = chain(0, TETHER_SCOPE_GRAPH);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "K0", &ref));
    CHECK_OK(tether_validate(c));
    CHECK_OK(tether_ref_release(ref));
    CHECK(drops == DEPTH);
    CHECK_OK(tether_container_free(c));
    *(int *)failed = harness_current_failed;
    return NULL;
}

static void test_deep_chain_on_a_small_stack(void) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid < 0) return;
    if (pid == 0) {
        int failed = 1;
        pthread_attr_t attr;
        pthread_t thread;
        if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 256 * 1024) != 0 ||
            pthread_create(&thread, &attr, resolve_and_release, &failed) != 0 ||
            pthread_join(thread, NULL) != 0)
            _exit(2);
        fflush(NULL);
        _exit(failed ? 1 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        fprintf(stderr, "  the child died of signal %d (stack overflow?)\n", WTERMSIG(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
    RUN(test_deep_chain_resolves_and_releases);
    RUN(test_deep_singleton_chain_released_with_the_container);
    RUN(test_deep_chain_validates);
    RUN(test_deep_cycle_is_reported_not_recursed);
    RUN(test_deep_chain_on_a_small_stack);
    return harness_finish();
}
