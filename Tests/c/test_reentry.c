/* A factory that re-enters a key under construction on its thread (its own, or
 * one further down the path) through any entry point is a constructor cycle:
 * the re-entering call fails with TETHER_E_CYCLE naming the path, no factory
 * runs twice, and no second instance (of a singleton) is made. */
#include <unistd.h>
#include "fixtures.h"

enum entry { BY_RESOLVE, BY_KEY, BY_ARGS, BY_SLOT_PROVIDER, BY_MADE_PROVIDER, BY_RESOLVER, ENTRIES };
static const char *const entry_names[] = {"tether_resolve", "tether_resolve_key", "tether_resolve_args",
                                          "lazy slot provider", "tether_make_provider", "tether_resolver_get"};
static const char *const scope_names[] = {"graph", "transient", "singleton", "weak"};

static tether_container *container;
static enum entry entry;
static const char *target;              /* the key the factory re-enters */
static tether_provider made_provider;
static tether_status inner_status;
static char inner_message[1024];
static int inner_got_instance;

/* Re-enters `target` through `entry`; keeps the status and message. */
static void reenter(tether_provider slot, tether_resolver *r) {
    tether_ref *ref = NULL;
    void *got = NULL;
    switch (entry) {
    case BY_RESOLVE: inner_status = tether_resolve(container, target, &ref); break;
    case BY_KEY: inner_status = tether_resolve_key(container, key_of(container, target), &ref); break;
    case BY_ARGS: inner_status = tether_resolve_args(container, target, NULL, 0, &ref); break;
    case BY_SLOT_PROVIDER: got = slot(); inner_status = got ? TETHER_OK : tether_last_status(); break;
    case BY_MADE_PROVIDER: got = made_provider(); inner_status = got ? TETHER_OK : tether_last_status(); break;
    case BY_RESOLVER: inner_status = tether_resolver_get(r, target, &got); break;
    default: break;
    }
    snprintf(inner_message, sizeof inner_message, "%s", inner_status ? tether_last_error() : "");
    inner_got_instance = ref != NULL || got != NULL;
    if (ref) tether_ref_release(ref);
}

/* A factory that re-enters, then makes its node anyway (so the outer resolve succeeds). */
static void *make_reentering(kind *k, tether_provider slot, tether_resolver *r) {
    reenter(slot, r);
    return node_new(k, NULL, NULL);
}

/* Registers `key` made by make_reentering (its slot provider resolves `lazy_key`). */
static void reg_reentering(tether_container *c, const char *key, kind *k, tether_scope scope, const char *lazy_key) {
    tether_param p[] = {TETHER_CONTEXT, TETHER_LAZY(lazy_key), TETHER_RESOLVER};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, (tether_fn)make_reentering, p, 3, &r));
    CHECK_OK(tether_set_scope(r, scope));
    CHECK_OK(tether_set_context(r, k, drop_node));
}

/* Resolves root `key` of `c` (into *ref) while its factories re-enter `target` through `e`. */
static node *resolve_reentering(tether_container *c, const char *key, enum entry e, tether_ref **ref) {
    entry = e;
    target = "A";
    if (e == BY_MADE_PROVIDER) CHECK_OK(tether_make_provider(c, target, &made_provider));
    inner_status = TETHER_OK;
    return resolve(c, key, ref);
}

/* Whether `message` names the cycle `path` whole: "constructors: PATH; ..." (not a fragment of a longer one). */
static int names_path(const char *message, const char *path) {
    char whole[256];
    snprintf(whole, sizeof whole, "dependency cycle through constructors: %s; ", path);
    return strstr(message, whole) != NULL;
}

static int check_inner_cycle(const char *path, enum entry e, tether_scope scope) {
    int ok = inner_status == TETHER_E_CYCLE && names_path(inner_message, path) && !inner_got_instance;
    if (!ok) fprintf(stderr, "  %s, %s scope: %s \"%s\" (expected TETHER_E_CYCLE naming %s)\n", entry_names[e],
                     scope_names[scope], tether_status_name(inner_status), inner_message, path);
    return ok;
}

/* A's factory re-enters A. */
static void factory_reentering_its_own_key_is_a_cycle(void) {
    for (int e = 0; e < ENTRIES; e++) {
        for (int s = TETHER_SCOPE_GRAPH; s <= TETHER_SCOPE_WEAK; s++) {
            kind A = {"A", 0, 0};
            tether_container *c = container = new_container();
            reg_reentering(c, "A", &A, s, "A");
            tether_ref *ref;
            node *a = resolve_reentering(c, "A", e, &ref);
            CHECK(check_inner_cycle("\"A\" -> \"A\"", e, s));
            CHECK(a && A.made == 1);                /* the factory ran once */
            if (s == TETHER_SCOPE_SINGLETON || s == TETHER_SCOPE_WEAK) {
                tether_ref *again;
                CHECK(resolve(c, "A", &again) == a);   /* the one instance is the cached one */
                CHECK_OK(tether_ref_release(again));
                CHECK(A.made == 1);
            }
            CHECK_OK(tether_ref_release(ref));
            if (e == BY_MADE_PROVIDER) CHECK_OK(tether_provider_free(made_provider));
            CHECK_OK(tether_container_free(c));
            CHECK(A.made == A.dropped);
        }
    }
}

/* A -> B (a constructor dependency), and B's factory re-enters A. */
static void factory_reentering_a_key_further_down_the_path_is_a_cycle(void) {
    for (int e = 0; e < ENTRIES; e++) {
        for (int s = TETHER_SCOPE_GRAPH; s <= TETHER_SCOPE_WEAK; s++) {
            kind A = {"A", 0, 0}, B = {"B", 0, 0};
            tether_container *c = container = new_container();
            reg_node(c, "A", &A, s, "B", NULL, drop_node);
            reg_reentering(c, "B", &B, TETHER_SCOPE_GRAPH, "A");
            tether_ref *ref;
            node *a = resolve_reentering(c, "A", e, &ref);
            CHECK(check_inner_cycle("\"A\" -> \"B\" -> \"A\"", e, s));
            CHECK(a && a->a && A.made == 1 && B.made == 1);
            CHECK_OK(tether_ref_release(ref));
            if (e == BY_MADE_PROVIDER) CHECK_OK(tether_provider_free(made_provider));
            CHECK_OK(tether_container_free(c));
            CHECK(A.made == A.dropped && B.made == B.dropped);
        }
    }
}

/* A plain graph (DEP slots only: resolved from a recorded
 * plan) whose innermost factory re-enters the root. */
static void *make_plain_reentering(kind *k) {
    entry = BY_RESOLVE;
    reenter(NULL, NULL);
    return node_new(k, NULL, NULL);
}

static void planned_graph_reentered_from_a_factory_is_a_cycle(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, C = {"C", 0, 0};
    tether_container *c = container = new_container();
    reg_node(c, "A", &A, TETHER_SCOPE_GRAPH, "B", NULL, drop_node);
    reg_node(c, "B", &B, TETHER_SCOPE_GRAPH, "C", NULL, drop_node);
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "C", (tether_fn)make_plain_reentering, p, 1, &r));
    CHECK_OK(tether_set_context(r, &C, drop_node));
    for (int round = 0; round < 3; round++) {  /* the first resolve records the plan, later ones replay it */
        for (int t = 0; t < 2; t++) {
            target = t == 0 ? "A" : "B";
            inner_status = TETHER_OK;
            tether_ref *ref;
            resolve(c, "A", &ref);
            CHECK(check_inner_cycle(t == 0 ? "\"A\" -> \"B\" -> \"C\" -> \"A\"" : "\"B\" -> \"C\" -> \"B\"",
                                    BY_RESOLVE, TETHER_SCOPE_GRAPH));
            CHECK_OK(tether_ref_release(ref));
        }
    }
    CHECK(A.made == 6 && B.made == 6 && C.made == 6);
    /* C's factory re-entering C itself */
    target = "C";
    inner_status = TETHER_E_NO_MEMORY;
    tether_ref *ref;
    resolve(c, "B", &ref);
    CHECK_STATUS(inner_status, TETHER_E_CYCLE);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(A.made == A.dropped && B.made == B.dropped && C.made == C.dropped);
}

/* A factory that gives up after the failed re-entry fails the resolve, which
 * names the cycle; nothing is cached. */
static void *make_failing_reentering(kind *k) {
    (void)k;
    entry = BY_RESOLVE;
    reenter(NULL, NULL);
    return NULL;
}

static void failed_reentry_fails_the_resolve_naming_the_cycle(void) {
    kind A = {"A", 0, 0};
    tether_container *c = container = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "A", (tether_fn)make_failing_reentering, p, 1, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_context(r, &A, drop_node));
    target = "A";
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &ref), TETHER_E_FACTORY_FAILED);
    CHECK(names_path(tether_last_error(), "\"A\" -> \"A\""));
    CHECK(strlen(tether_last_error()) < 600);
    CHECK(ref == NULL);
    CHECK_OK(tether_container_free(c));
}

/* A completion callback of a shared A resolving A (or a key that depends on A) through the
 * container: A is made but its resolve has not finished (this or a later callback may still
 * fail it), so the nested resolve is refused rather than handing out an instance that could
 * outlive a failed resolve. The callback's resolver reaches it. */
static tether_status callback_status;
static char callback_message[1024];
static const char *callback_target;
static int fail_second_callback;
static tether_status complete_by_resolving(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    tether_ref *ref = NULL;
    callback_status = tether_resolve(container, callback_target, &ref);
    snprintf(callback_message, sizeof callback_message, "%s", callback_status ? tether_last_error() : "");
    if (ref) tether_ref_release(ref);
    return TETHER_OK;
}
static tether_status complete_by_resolver(tether_resolver *r, void *instance, void *context) {
    (void)context;
    (void)instance;
    tether_weak *self = NULL;
    callback_status = tether_resolver_get_weak(r, "A", &self);
    if (self) tether_weak_release(self);
    return callback_status;
}
static tether_status complete_second(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    if (!fail_second_callback) return TETHER_OK;
    tether_set_error("second callback gives up");
    return TETHER_E_FACTORY_FAILED;
}

static void resolving_an_unfinished_instance_from_a_completion_callback_is_refused(void) {
    for (int s = TETHER_SCOPE_SINGLETON; s <= TETHER_SCOPE_WEAK; s++) {
        for (int via_dependent = 0; via_dependent < 2; via_dependent++) {
            for (int fail = 0; fail < 2; fail++) {
                kind A = {"A", 0, 0}, X = {"X", 0, 0};
                tether_container *c = container = new_container();
                tether_registration *r = reg_node(c, "A", &A, s, NULL, NULL, drop_node);
                reg_node(c, "X", &X, TETHER_SCOPE_TRANSIENT, "A", NULL, drop_node);
                CHECK_OK(tether_on_complete(r, complete_by_resolving, NULL));
                CHECK_OK(tether_on_complete(r, complete_second, NULL));
                callback_target = via_dependent ? "X" : "A";
                fail_second_callback = fail;
                callback_status = TETHER_E_NO_MEMORY;
                tether_ref *ref = NULL;
                tether_status st = tether_resolve(c, "A", &ref);
                CHECK_STATUS(callback_status, TETHER_E_CYCLE);
                CHECK(strstr(callback_message, via_dependent ? "\"X\" -> \"A\"" : "\"A\"") != NULL);
                CHECK(strstr(callback_message, "tether_resolver_get") != NULL);
                CHECK(A.made == 1 && X.made == 0);
                if (fail) {
                    CHECK_STATUS(st, TETHER_E_FACTORY_FAILED);
                    CHECK(ref == NULL && A.dropped == 1);   /* nothing it made outlives the failed resolve */
                } else {
                    CHECK_STATUS(st, TETHER_OK);
                    tether_ref *again = NULL;
                    CHECK_OK(tether_resolve(c, "A", &again));   /* finished: an ordinary hit */
                    CHECK(tether_ref_get(again) == tether_ref_get(ref) && A.made == 1);
                    CHECK_OK(tether_ref_release(again));
                    CHECK_OK(tether_ref_release(ref));
                }
                CHECK_OK(tether_container_free(c));
                CHECK(A.made == A.dropped && X.made == X.dropped);
            }
        }
    }
}

static void a_completion_callbacks_resolver_reaches_its_own_unfinished_instance(void) {
    kind A = {"A", 0, 0};
    tether_container *c = container = new_container();
    tether_registration *r = reg_node(c, "A", &A, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(r, complete_by_resolver, NULL));
    tether_ref *ref;
    resolve(c, "A", &ref);
    CHECK_STATUS(callback_status, TETHER_OK);
    CHECK(A.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(A.dropped == 1);
}

/* A completion callback of A keeps its resolver open while it resolves F; F's factory asks that
 * (older) resolver for F: F is under construction further in on this thread, so a cycle too. */
static tether_resolver *open_resolver;
static int f_calls;

static void *make_f_through_outer_resolver(kind *k) {
    f_calls++;
    void *got = NULL;
    inner_status = tether_resolver_get(open_resolver, "F", &got);
    snprintf(inner_message, sizeof inner_message, "%s", inner_status ? tether_last_error() : "");
    inner_got_instance = got != NULL;
    return node_new(k, NULL, NULL);
}

static tether_status complete_by_resolving_f(tether_resolver *r, void *instance, void *context) {
    (void)instance, (void)context;
    open_resolver = r;
    tether_ref *ref = NULL;
    callback_status = tether_resolve(container, "F", &ref);
    if (ref) tether_ref_release(ref);
    return TETHER_OK;
}

static void older_resolver_reentering_a_factory_further_in_is_a_cycle(void) {
    kind A = {"A", 0, 0}, F = {"F", 0, 0};
    tether_container *c = container = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = reg_node(c, "A", &A, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(r, complete_by_resolving_f, NULL));
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &F, o.drop = drop_node;
    CHECK_OK(tether_register_with(c, "F", (tether_fn)make_f_through_outer_resolver, p, 1, &o, NULL));
    f_calls = 0;
    tether_ref *ref;
    resolve(c, "A", &ref);
    CHECK_STATUS(callback_status, TETHER_OK);
    CHECK_STATUS(inner_status, TETHER_E_CYCLE);
    CHECK(names_path(inner_message, "\"F\" -> \"F\"") && !inner_got_instance);
    CHECK(f_calls == 1 && F.made == 1 && F.dropped == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(A.dropped == 1);
}

/* A's completion callback keeps its resolver open while it resolves B (a nested graph); B's
 * callback asks A's (older) resolver for F, which A's graph starts constructing; F's factory
 * then asks B's resolver for F. B's graph began before A's constructed anything, yet F is
 * under construction on this thread now: a cycle, not a second run of F's factory. */
static tether_resolver *a_resolver, *b_resolver;

static void *make_f_through_inner_resolver(kind *k) {
    f_calls++;
    void *got = NULL;
    inner_status = tether_resolver_get(b_resolver, "F", &got);
    snprintf(inner_message, sizeof inner_message, "%s", inner_status ? tether_last_error() : "");
    inner_got_instance = got != NULL;
    return node_new(k, NULL, NULL);
}

static tether_status complete_a_by_resolving_b(tether_resolver *r, void *instance, void *context) {
    (void)instance, (void)context;
    a_resolver = r;
    tether_ref *ref = NULL;
    callback_status = tether_resolve(container, "B", &ref);
    if (ref) tether_ref_release(ref);
    return TETHER_OK;
}

static tether_status complete_b_through_a(tether_resolver *r, void *instance, void *context) {
    (void)instance, (void)context;
    b_resolver = r;
    void *got = NULL;
    return tether_resolver_get(a_resolver, "F", &got);
}

static void inner_resolver_reentering_a_factory_an_older_resolver_runs_is_a_cycle(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, F = {"F", 0, 0};
    tether_container *c = container = new_container();
    tether_registration *ra = reg_node(c, "A", &A, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(ra, complete_a_by_resolving_b, NULL));
    tether_registration *rb = reg_node(c, "B", &B, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(rb, complete_b_through_a, NULL));
    tether_param p[] = {TETHER_CONTEXT};
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &F, o.drop = drop_node, o.scope = TETHER_SCOPE_TRANSIENT;
    CHECK_OK(tether_register_with(c, "F", (tether_fn)make_f_through_inner_resolver, p, 1, &o, NULL));
    f_calls = 0;
    inner_status = TETHER_OK;
    tether_ref *ref;
    resolve(c, "A", &ref);
    CHECK_STATUS(callback_status, TETHER_OK);
    CHECK_STATUS(inner_status, TETHER_E_CYCLE);
    CHECK(names_path(inner_message, "\"F\" -> \"F\"") && !inner_got_instance);
    CHECK(f_calls == 1 && F.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(A.made == A.dropped && B.made == B.dropped && F.made == F.dropped);
}

/* A's factory resolves X, a resolve nested in it (served by X's plan: X -> Y), and Y's factory
 * re-enters `target`: A, under construction in the outer resolve, or X, in the nested one (a
 * cycle through both resolves, each factory once), or nothing (NULL). */
static void *make_resolving_x(kind *k) {
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(container, "X", &ref));
    CHECK(ref && ((node *)tether_ref_get(ref))->a != NULL);
    CHECK_OK(tether_ref_release(ref));
    return node_new(k, NULL, NULL);
}

static void *make_y_reentering(kind *k) {
    if (target) {
        entry = BY_RESOLVE;
        reenter(NULL, NULL);
    }
    return node_new(k, NULL, NULL);
}

static void nested_resolve_sees_what_every_resolve_further_out_constructs(void) {
    kind A = {"A", 0, 0}, X = {"X", 0, 0}, Y = {"Y", 0, 0};
    tether_container *c = container = new_container();
    CHECK_OK(reg_kind_factory(c, "A", (tether_fn)make_resolving_x, &A, TETHER_SCOPE_TRANSIENT));
    reg_node(c, "X", &X, TETHER_SCOPE_GRAPH, "Y", NULL, drop_node);
    CHECK_OK(reg_kind_factory(c, "Y", (tether_fn)make_y_reentering, &Y, TETHER_SCOPE_GRAPH));
    for (int round = 0; round < 3; round++) {  /* the first resolve records the plans, later ones replay them */
        for (int t = 0; t < 3; t++) {
            target = t == 0 ? "A" : t == 1 ? "X" : NULL;
            inner_status = TETHER_OK;
            tether_ref *ref;
            resolve(c, "A", &ref);
            if (t == 0) CHECK(check_inner_cycle("\"A\" -> \"X\" -> \"Y\" -> \"A\"", BY_RESOLVE, TETHER_SCOPE_GRAPH));
            if (t == 1) CHECK(check_inner_cycle("\"X\" -> \"Y\" -> \"X\"", BY_RESOLVE, TETHER_SCOPE_GRAPH));
            if (t == 2) CHECK_STATUS(inner_status, TETHER_OK);
            CHECK_OK(tether_ref_release(ref));
        }
    }
    CHECK(A.made == 9 && X.made == 9 && Y.made == 9);
    CHECK(A.dropped == 9 && X.dropped == 9 && Y.dropped == 9);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    alarm(60);
    RUN(factory_reentering_its_own_key_is_a_cycle);
    RUN(factory_reentering_a_key_further_down_the_path_is_a_cycle);
    RUN(planned_graph_reentered_from_a_factory_is_a_cycle);
    RUN(failed_reentry_fails_the_resolve_naming_the_cycle);
    RUN(resolving_an_unfinished_instance_from_a_completion_callback_is_refused);
    RUN(a_completion_callbacks_resolver_reaches_its_own_unfinished_instance);
    RUN(older_resolver_reentering_a_factory_further_in_is_a_cycle);
    RUN(inner_resolver_reentering_a_factory_an_older_resolver_runs_is_a_cycle);
    RUN(nested_resolve_sees_what_every_resolve_further_out_constructs);
    return harness_finish();
}
