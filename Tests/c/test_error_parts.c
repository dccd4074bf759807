/* tether_last_error_parts: the parts each kind of message is composed of (fix,
 * keys, path, reason, callback), so a binding can say the fix in its own
 * terms; and the caps that keep a message readable (long keys, reasons, paths). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include "binding.h"
#include "harness.h"
#include "fixtures.h"

static kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};

static tether_error_parts parts(void) {
    tether_error_parts p;
    memset(&p, 0xab, sizeof p);
    CHECK_OK(TB.last_error_parts(&p));
    return p;
}

#define CHECK_STR(actual, expected) do { const char *a_ = (actual), *e_ = (expected); \
    if (!(a_ == e_ || (a_ && e_ && strcmp(a_, e_) == 0))) { \
        fprintf(stderr, "  %s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, a_ ? a_ : "(null)", e_ ? e_ : "(null)"); \
        harness_current_failed = 1; } } while (0)

static void check_path(tether_error_parts p, const char *const *keys, size_t n) {
    CHECK(p.path_count == n);
    for (size_t i = 0; i < n && i < p.path_count; i++) CHECK_STR(p.path[i], keys[i]);
}

static void not_found_names_key_and_path(void) {
    tether_container *c = new_container();
    reg_node(c, "A", &ka, TETHER_SCOPE_GRAPH, "B", NULL, drop_node);
    reg_node(c, "B", &kb, TETHER_SCOPE_GRAPH, "Missing", NULL, drop_node);
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("tether_register");  /* C's own text keeps naming the C call */
    tether_error_parts p = parts();
    CHECK(p.status == TETHER_E_NOT_FOUND && p.fix == TETHER_FIX_REGISTER);
    CHECK_STR(p.key, "Missing");
    check_path(p, (const char *[]){"A", "B"}, 2);
    CHECK(p.path_omitted == 0 && p.reason == NULL && p.callback == 0 && p.callback_of == NULL && p.target == NULL);
    CHECK_STATUS(tether_resolve(c, "Nowhere", &r), TETHER_E_NOT_FOUND);
    p = parts();
    CHECK(p.fix == TETHER_FIX_REGISTER && p.path_count == 0 && p.path == NULL);
    CHECK_STR(p.key, "Nowhere");
    CHECK_OK(tether_container_free(c));
}

static void cycle_names_the_cycle(void) {
    tether_container *c = new_container();
    reg_node(c, "A", &ka, TETHER_SCOPE_GRAPH, "B", NULL, drop_node);
    reg_node(c, "B", &kb, TETHER_SCOPE_GRAPH, "C", NULL, drop_node);
    reg_node(c, "C", &kc, TETHER_SCOPE_GRAPH, "A", NULL, drop_node);
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &r), TETHER_E_CYCLE);
    tether_error_parts p = parts();
    CHECK(p.status == TETHER_E_CYCLE && p.fix == TETHER_FIX_BREAK_CYCLE);
    CHECK_STR(p.key, "A");
    check_path(p, (const char *[]){"A", "B", "C", "A"}, 4);
    CHECK_OK(tether_container_free(c));
}

static tether_status get_back(tether_resolver *r, void *instance, void *context) {
    (void)context;
    return tether_resolver_get(r, "A", (void **)&((node *)instance)->got);
}

static tether_status take_target(void *instance, void *const *args, size_t n, void *context) {
    (void)n; (void)context;
    ((node *)instance)->got = args[0];
    return TETHER_OK;
}

static void retain_cycle_names_the_edge(void) {
    tether_container *c = new_container();
    reg_node(c, "A", &ka, TETHER_SCOPE_GRAPH, "B", NULL, drop_node);
    tether_registration *b = reg_node(c, "B", &kb, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(b, get_back, NULL));
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &r), TETHER_E_RETAIN_CYCLE);  /* the callback returned it: one status per kind */
    tether_error_parts p = parts();
    CHECK(p.fix == TETHER_FIX_CALLBACK && p.callback == 1);
    CHECK_STR(p.callback_of, "B");
    CHECK(p.reason && strstr(p.reason, "retain cycle"));
    /* The resolver's own failure, as the callback saw it: */
    CHECK_OK(tether_container_free(c));
    c = new_container();
    reg_node(c, "A", &ka, TETHER_SCOPE_GRAPH, "B", NULL, drop_node);
    b = reg_node(c, "B", &kb, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    tether_param target = TETHER_DEP("A");
    CHECK_OK(tether_on_complete_params(b, take_target, &target, 1, NULL));
    CHECK_STATUS(tether_resolve(c, "A", &r), TETHER_E_RETAIN_CYCLE);
    p = parts();
    CHECK(p.status == TETHER_E_RETAIN_CYCLE && p.fix == TETHER_FIX_WEAK_TARGET && p.callback == 1);
    CHECK_STR(p.key, "B");
    CHECK_STR(p.target, "A");
    CHECK_STR(p.callback_of, "B");
    check_path(p, (const char *[]){"A", "B", "A"}, 3);
    CHECK_OK(tether_container_free(c));
}

static void *fail_with_reason(void) {
    tether_set_error("disk full");
    return NULL;
}

static void factory_failure_has_reason_and_path(void) {
    tether_container *c = new_container();
    reg_node(c, "A", &ka, TETHER_SCOPE_GRAPH, "Broken", NULL, drop_node);
    CHECK_OK(tether_register(c, "Broken", (tether_fn)fail_with_reason, NULL, 0, NULL));
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("returned NULL: disk full");
    tether_error_parts p = parts();
    CHECK(p.fix == TETHER_FIX_FACTORY);
    CHECK_STR(p.key, "Broken");
    CHECK_STR(p.reason, "disk full");
    check_path(p, (const char *[]){"A", "Broken"}, 2);
    CHECK_OK(tether_container_free(c));
}

static void *make_leaf(void) { return malloc(1); }
static void free_leaf(void *instance, void *context) { (void)context; free(instance); }

/* A chain K0 -> K1 -> ... -> K19 -> Missing: the path keeps its first 3 and last 3 keys. */
static void long_paths_keys_and_reasons_are_capped(void) {
    tether_container *c = new_container();
    char key[32], dep[32];
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "K%d", i);
        if (i < 19) snprintf(dep, sizeof dep, "K%d", i + 1); else snprintf(dep, sizeof dep, "Missing");
        tether_param p = TETHER_DEP(dep);
        CHECK_OK(tether_register(c, key, (tether_fn)make_leaf, &p, 1, NULL));
    }
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(c, "K0", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"K0\" -> \"K1\" -> \"K2\" -> ... (14 more) -> \"K17\" -> \"K18\" -> \"K19\")");
    tether_error_parts p = parts();
    check_path(p, (const char *[]){"K0", "K1", "K2", "K17", "K18", "K19"}, 6);
    CHECK(p.path_omitted == 14);

    char long_key[300];
    memset(long_key, 'x', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = 0;
    CHECK_STATUS(tether_resolve(c, long_key, &r), TETHER_E_NOT_FOUND);
    p = parts();
    CHECK(p.key && strlen(p.key) == 83 && strncmp(p.key + 40, "...x", 4) == 0);
    CHECK(strlen(tether_last_error()) < 200);

    char long_reason[2000];
    memset(long_reason, 'r', sizeof long_reason - 1);
    long_reason[sizeof long_reason - 1] = 0;
    tether_set_error(long_reason);  /* a reason given outside a callback: the last error, no parts */
    p = parts();
    CHECK(p.fix == TETHER_FIX_NONE && p.status == TETHER_E_FACTORY_FAILED);
    (void)free_leaf;
    CHECK_OK(tether_container_free(c));
}

static const char *huge_reason;
static void *fail_hugely(void) { tether_set_error(huge_reason); return NULL; }

static void long_reasons_are_capped(void) {
    char *text = malloc(5000);
    memset(text, 'r', 4999);
    text[4999] = 0;
    huge_reason = text;
    tether_container *c = new_container();
    CHECK_OK(tether_register(c, "Huge", (tether_fn)fail_hugely, NULL, 0, NULL));
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(c, "Huge", &r), TETHER_E_FACTORY_FAILED);
    tether_error_parts p = parts();
    CHECK(p.reason && strlen(p.reason) == 403 && strncmp(p.reason + 200, "...r", 4) == 0);
    CHECK(strlen(tether_last_error()) < 500);
    CHECK_OK(tether_container_free(c));
    free(text);
}

static void null_out_is_refused(void) {
    CHECK_STATUS(TB.last_error_parts(NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("tether_last_error_parts");
}

/* Root -> Sib, Mid; Mid -> Single (a singleton), Logger (not registered) or Root (a cycle): every
 * resolve (the first records the plan, later ones run it) makes Sib and
 * Single, lets go of them and reports the same status, message and parts; Single is never cached. */
static void an_error_after_made_steps_is_the_same_every_resolve(void) {
    for (int cyclic = 0; cyclic < 2; cyclic++) {
        kind root = {"Root", 0, 0}, sib = {"Sib", 0, 0}, mid = {"Mid", 0, 0}, single = {"Single", 0, 0};
        tether_container *c = new_container();
        reg_node(c, "Root", &root, TETHER_SCOPE_TRANSIENT, "Sib", "Mid", drop_node);
        reg_node(c, "Sib", &sib, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node);
        reg_node(c, "Mid", &mid, TETHER_SCOPE_GRAPH, "Single", cyclic ? "Root" : "Logger", drop_node);
        reg_node(c, "Single", &single, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
        for (int round = 1; round <= 3; round++) {
            tether_ref *r = NULL;
            CHECK_STATUS(tether_resolve(c, "Root", &r), cyclic ? TETHER_E_CYCLE : TETHER_E_NOT_FOUND);
            CHECK(r == NULL);
            CHECK_ERROR_HAS(cyclic ? "dependency cycle through constructors: \"Root\" -> \"Mid\" -> \"Root\"; "
                                   : "no registration for \"Logger\" (needed by \"Root\" -> \"Mid\")");
            tether_error_parts p = parts();
            CHECK(p.fix == (cyclic ? TETHER_FIX_BREAK_CYCLE : TETHER_FIX_REGISTER));
            CHECK_STR(p.key, cyclic ? "Root" : "Logger");
            if (cyclic) check_path(p, (const char *[]){"Root", "Mid", "Root"}, 3);
            else check_path(p, (const char *[]){"Root", "Mid"}, 2);
            CHECK(sib.made == round && sib.dropped == round && single.made == round && single.dropped == round);
            CHECK(root.made == 0 && mid.made == 0);
        }
        CHECK_OK(tether_container_free(c));
    }
}

int main(void) {
    RUN(not_found_names_key_and_path);
    RUN(cycle_names_the_cycle);
    RUN(an_error_after_made_steps_is_the_same_every_resolve);
    RUN(retain_cycle_names_the_edge);
    RUN(factory_failure_has_reason_and_path);
    RUN(long_paths_keys_and_reasons_are_capped);
    RUN(long_reasons_are_capped);
    RUN(null_out_is_refused);
    return harness_finish();
}
