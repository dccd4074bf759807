/* tether_set_trace: the exact events of a resolve closing a cycle, a cache hit,
 * a failure and destructions (instances named by order of first appearance:
 * B#1 is the first instance the hook saw), and that a hook once removed, or
 * of another container, hears nothing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

static const char *const kinds[] = {"start", "end", "call", "return", "hit", "complete", "destroy", "edge", "weak"};

typedef struct recorder {
    char log[4096];
    void *seen[32];
    int count;
} recorder;

static int id_of(recorder *r, void *instance) {
    for (int i = 0; i < r->count; i++) if (r->seen[i] == instance) return i + 1;
    if (r->count == 32) abort();
    r->seen[r->count++] = instance;
    return r->count;
}

/* Appends "kind key[#n][ -> key#m][ STATUS]; " to the log. */
static void record(const tether_trace_event *e, void *context) {
    recorder *r = context;
    char line[200];
    int n = snprintf(line, sizeof line, "%s %s", kinds[e->kind], e->key);
    if (e->instance) n += snprintf(line + n, sizeof line - n, "#%d", id_of(r, e->instance));
    if (e->target) n += snprintf(line + n, sizeof line - n, " -> %s#%d", e->target_key, id_of(r, e->target));
    if (e->status != TETHER_OK) n += snprintf(line + n, sizeof line - n, " %s", tether_status_name(e->status));
    strncat(r->log, line, sizeof r->log - strlen(r->log) - 3);
    strcat(r->log, "; ");
}

#define CHECK_LOG(r, expected) do { if (strcmp((r)->log, (expected)) != 0) { \
    fprintf(stderr, "  %s:%d: trace\n    %s\n  expected\n    %s\n", __FILE__, __LINE__, (r)->log, (expected)); \
    harness_current_failed = 1; } (r)->log[0] = 0; } while (0)

static kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0}, ks = {"S", 0, 0};

static tether_status weak_back(tether_resolver *r, void *instance, void *context) {
    (void)context;
    return tether_resolver_get_weak(r, "A", &((node *)instance)->weak);
}

/* A -> B by constructor, B -> A weakly from B's completion callback. */
static void cycle_closed_by_a_callback(void) {
    recorder rec = {0};
    tether_container *c = new_container();
    CHECK_OK(tether_set_trace(c, record, &rec));
    reg_node(c, "A", &ka, TETHER_SCOPE_GRAPH, "B", NULL, drop_node);
    tether_registration *b = reg_node(c, "B", &kb, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node_weak);
    CHECK_OK(tether_on_complete(b, weak_back, NULL));
    tether_ref *a = NULL;
    CHECK_OK(tether_resolve(c, "A", &a));
    CHECK_LOG(&rec, "start A; call B; return B#1; call A; return A#2; edge A#2 -> B#1; "
                    "weak B#1 -> A#2; complete B#1; end A#2; ");
    CHECK_OK(tether_ref_release(a));
    CHECK_LOG(&rec, "destroy A#2; destroy B#1; ");
    CHECK_OK(tether_container_free(c));
    CHECK(rec.log[0] == 0 && bad_release == 0);
}

/* A singleton made once, then hit at the top and inside a graph; freeing the
 * container destroys it, reported; nothing after. */
static void cache_hits_and_destruction_on_free(void) {
    recorder rec = {0};
    tether_container *c = new_container();
    CHECK_OK(tether_set_trace(c, record, &rec));
    reg_node(c, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(c, "C", &kc, TETHER_SCOPE_GRAPH, "S", NULL, drop_node);
    tether_ref *s = NULL, *s2 = NULL, *x = NULL;
    CHECK_OK(tether_resolve(c, "S", &s));
    CHECK_LOG(&rec, "start S; call S; return S#1; end S#1; ");
    CHECK_OK(tether_resolve(c, "S", &s2));
    CHECK_LOG(&rec, "start S; hit S#1; end S#1; ");
    CHECK_OK(tether_resolve(c, "C", &x));
    CHECK_LOG(&rec, "start C; hit S#1; call C; return C#2; edge C#2 -> S#1; end C#2; ");
    CHECK_OK(tether_ref_release(s));
    CHECK_OK(tether_ref_release(s2));
    CHECK_OK(tether_ref_release(x));
    CHECK_LOG(&rec, "destroy C#2; ");  /* S stays cached */
    CHECK_OK(tether_container_free(c));
    CHECK_LOG(&rec, "destroy S#1; ");
    CHECK(ks.made == ks.dropped && kc.made == kc.dropped);
}

static void *fail_now(void) { tether_set_error("out of luck"); return NULL; }

/* A needs B and C; C fails after B was made: B is destroyed before the resolve ends. */
static void failure_destroys_what_was_made(void) {
    recorder rec = {0};
    tether_container *c = new_container();
    CHECK_OK(tether_set_trace(c, record, &rec));
    reg_node(c, "A", &ka, TETHER_SCOPE_GRAPH, "B", "C", drop_node);
    reg_node(c, "B", &kb, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_register(c, "C", (tether_fn)fail_now, NULL, 0, NULL));
    tether_ref *a = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &a), TETHER_E_FACTORY_FAILED);
    CHECK_LOG(&rec, "start A; call B; return B#1; call C; return C TETHER_E_FACTORY_FAILED; destroy B#1; "
                    "end A TETHER_E_FACTORY_FAILED; ");
    CHECK_STATUS(tether_resolve(c, "Nope", &a), TETHER_E_NOT_FOUND);  /* no registration: no resolve to trace */
    CHECK_LOG(&rec, "");
    CHECK_OK(tether_container_free(c));
}

/* Removing the hook, or tracing another container, leaves this one's resolves unheard. */
static void removed_or_foreign_hooks_hear_nothing(void) {
    recorder rec = {0}, other = {0};
    tether_container *c = new_container(), *d = new_container();
    CHECK_OK(tether_set_trace(d, record, &other));
    reg_node(c, "B", &kb, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_set_trace(c, record, &rec));
    tether_ref *b = NULL;
    CHECK_OK(tether_resolve(c, "B", &b));
    CHECK_OK(tether_ref_release(b));
    CHECK_LOG(&rec, "start B; call B; return B#1; end B#1; destroy B#1; ");
    CHECK_OK(tether_set_trace(c, NULL, NULL));
    CHECK_OK(tether_resolve(c, "B", &b));
    CHECK_OK(tether_ref_release(b));
    CHECK_LOG(&rec, "");
    CHECK_LOG(&other, "");
    CHECK_STATUS(tether_set_trace(NULL, record, &rec), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
    CHECK_OK(tether_container_free(d));
}

int main(void) {
    RUN(cycle_closed_by_a_callback);
    RUN(cache_hits_and_destruction_on_free);
    RUN(failure_destroys_what_was_made);
    RUN(removed_or_foreign_hooks_hear_nothing);
    return harness_finish();
}
