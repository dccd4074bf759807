/* The constructor-cycle error of a nested re-entry (a key asked for again while its
 * factory, further out on this thread, has not returned) names the real path, the
 * outer constructions then the nested resolve's chain back to the key, and a fix
 * for where the request came from (TETHER_FIX_NESTED_RESOLVE): a completion callback
 * run inside the factory's nested resolve, that nested key's own construction, or the
 * nested resolve itself. Each fix is applied here and every factory then runs once. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#include "binding.h"
#include "harness.h"
#include "fixtures.h"

static tether_container *container;
static tether_status seen_status;
static char seen_message[1024];
static tether_fix seen_fix;
static char seen_key[32], seen_target[32], seen_callback_of[32];
static void *seen_instance;

static void copy_key(char *to, const char *from) { snprintf(to, 32, "%s", from ? from : "(null)"); }

/* Keeps `status`, and the last error's message and parts when it failed. */
static void keep(tether_status status, void *got) {
    seen_status = status;
    seen_instance = got;
    seen_message[0] = 0;
    copy_key(seen_key, NULL), copy_key(seen_target, NULL), copy_key(seen_callback_of, NULL);
    if (status == TETHER_OK) return;
    snprintf(seen_message, sizeof seen_message, "%s", tether_last_error());
    tether_error_parts p;
    CHECK_OK(TB.last_error_parts(&p));
    seen_fix = p.fix;
    copy_key(seen_key, p.key), copy_key(seen_target, p.target), copy_key(seen_callback_of, p.callback_of);
}

static void reset(void) {
    seen_status = TETHER_E_NO_MEMORY;  /* "not run" */
    seen_instance = NULL;
    seen_message[0] = 0;
}

static void check_message(const char *path, const char *fix, const char *key, const char *target,
                          const char *callback_of) {
    CHECK_STATUS(seen_status, TETHER_E_CYCLE);
    if (!strstr(seen_message, path) || !strstr(seen_message, fix))
        fprintf(stderr, "  message: %s\n  expected: %s ... %s\n", seen_message, path, fix);
    CHECK(strstr(seen_message, path) != NULL);
    CHECK(strstr(seen_message, fix) != NULL);
    CHECK(strstr(seen_message, "\"X\" -> \"X\"") == NULL);
    CHECK(seen_fix == TETHER_FIX_NESTED_RESOLVE);
    CHECK(strcmp(seen_key, key) == 0 && strcmp(seen_target, target) == 0 && strcmp(seen_callback_of, callback_of) == 0);
}

/* A completion callback asking its resolver for "X". */
static tether_status complete_by_getting_x(tether_resolver *r, void *instance, void *context) {
    (void)instance, (void)context;
    void *got = NULL;
    keep(tether_resolver_get(r, "X", &got), got);
    return TETHER_OK;
}

/* A completion callback taking "X" weakly from its resolver (the advice, X holding this one). */
static tether_status complete_by_getting_x_weakly(tether_resolver *r, void *instance, void *context) {
    (void)instance, (void)context;
    tether_weak *w = NULL;
    tether_status status = tether_resolver_get_weak(r, "X", &w);
    tether_ref *held = NULL;
    keep(status, status == TETHER_OK ? tether_weak_get(w, &held) : NULL);
    if (held) CHECK_OK(tether_ref_release(held));
    if (w) CHECK_OK(tether_weak_release(w));
    return status;
}

/* A completion callback asking its resolver for "Y", strongly (`context` NULL) or weakly. */
static tether_status complete_by_getting_y(tether_resolver *r, void *instance, void *context) {
    (void)instance;
    void *got = NULL;
    tether_weak *w = NULL;
    tether_status status = context ? tether_resolver_get_weak(r, "Y", &w) : tether_resolver_get(r, "Y", &got);
    CHECK_OK(status);
    if (w) CHECK_OK(tether_weak_release(w));
    return status;
}

/* X's factory: resolves "Y" inside itself, then makes X anyway. */
static void *make_x_resolving_y(kind *k) {
    tether_ref *ref = NULL;
    tether_status status = tether_resolve(container, "Y", &ref);
    if (status != TETHER_OK && seen_status == TETHER_E_NO_MEMORY) keep(status, NULL);
    if (ref) CHECK_OK(tether_ref_release(ref));
    return node_new(k, NULL, NULL);
}

/* Y's factory: resolves "X" inside itself, then makes Y anyway. */
static void *make_y_resolving_x(kind *k) {
    tether_ref *ref = NULL;
    keep(tether_resolve(container, "X", &ref), NULL);
    if (ref) CHECK_OK(tether_ref_release(ref));
    return node_new(k, NULL, NULL);
}

static tether_registration *reg_fn(tether_container *c, const char *key, kind *k, tether_fn fn) {
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, fn, p, 1, &r));
    CHECK_OK(tether_set_context(r, k, drop_node));
    return r;
}

/* X's factory resolves Y; Y's completion callback asks for X: the path is X -> Y -> X (not
 * X -> X), and the advice is to take Y as a slot of X, or from X's own callback. */
static void callback_inside_a_nested_resolve_names_its_path(void) {
    kind X = {"X", 0, 0}, Y = {"Y", 0, 0};
    tether_container *c = container = new_container();
    reg_fn(c, "X", &X, (tether_fn)make_x_resolving_y);
    tether_registration *ry = reg_node(c, "Y", &Y, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(ry, complete_by_getting_x, NULL));
    reset();
    tether_ref *ref;
    resolve(c, "X", &ref);
    check_message("\"X\" -> \"Y\" -> \"X\"", "take \"Y\" as a slot of \"X\"", "X", "Y", "Y");
    CHECK(strstr(seen_message, "a completion callback of \"Y\" that this runs asks for \"X\"") != NULL);
    CHECK(strstr(seen_message, "the callback of \"Y\" then takes \"X\" weakly (tether_resolver_get_weak)") != NULL);
    CHECK(X.made == 1 && Y.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(X.made == X.dropped && Y.made == Y.dropped);
}

/* Its advice applied: X takes Y as a dependency slot (then Y's callback finds X), or X takes
 * Y from its own completion callback's resolver; Y's callback takes X weakly (X holds Y).
 * Each factory runs once, and Y's callback gets the X the resolve returns. */
static void callback_advice_works(void) {
    for (int way = 0; way < 2; way++) {
        for (int s = TETHER_SCOPE_GRAPH; s <= TETHER_SCOPE_SINGLETON; s++) {
            if (s == TETHER_SCOPE_TRANSIENT) continue;  /* each request of a transient makes another */
            kind X = {"X", 0, 0}, Y = {"Y", 0, 0};
            tether_container *c = container = new_container();
            tether_registration *rx = reg_node(c, "X", &X, s, way == 0 ? "Y" : NULL, NULL, drop_node);
            if (way == 1) CHECK_OK(tether_on_complete(rx, complete_by_getting_y, NULL));
            tether_registration *ry = reg_node(c, "Y", &Y, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
            CHECK_OK(tether_on_complete(ry, complete_by_getting_x_weakly, NULL));
            reset();
            tether_ref *ref;
            node *x = resolve(c, "X", &ref);
            CHECK_OK(seen_status);
            CHECK(x != NULL && seen_instance == x);
            CHECK(X.made == 1 && Y.made == 1);
            CHECK_OK(tether_ref_release(ref));
            CHECK_OK(tether_container_free(c));
            CHECK(X.made == X.dropped && Y.made == Y.dropped);
        }
    }
}

/* X's factory resolves Y, which takes X as a dependency: X -> Y -> X, and the advice is to
 * take Y from X's completion callback; applied, each factory runs once. */
static void nested_construction_names_its_path_and_advice_works(void) {
    kind X = {"X", 0, 0}, Y = {"Y", 0, 0};
    tether_container *c = container = new_container();
    reg_fn(c, "X", &X, (tether_fn)make_x_resolving_y);
    reg_node(c, "Y", &Y, TETHER_SCOPE_GRAPH, "X", NULL, drop_node);
    reset();
    tether_ref *ref;
    resolve(c, "X", &ref);
    check_message("\"X\" -> \"Y\" -> \"X\"", "take \"Y\" from the resolver of a completion callback of \"X\" instead (tether_on_complete), once \"X\" is made, weakly (tether_resolver_get_weak)", "X", "Y",
                  "(null)");
    CHECK(X.made == 1 && Y.made == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(X.made == X.dropped);

    /* applied */
    kind X2 = {"X", 0, 0}, Y2 = {"Y", 0, 0};
    c = container = new_container();
    tether_registration *rx = reg_node(c, "X", &X2, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(rx, complete_by_getting_y, (void *)1));  /* weakly: Y holds X */
    reg_node(c, "Y", &Y2, TETHER_SCOPE_GRAPH, "X", NULL, drop_node);
    node *x = resolve(c, "X", &ref);
    CHECK(X2.made == 1 && Y2.made == 1);
    CHECK(x != NULL);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(X2.made == X2.dropped && Y2.made == Y2.dropped);
}

/* X takes Y as a dependency; Y's factory resolves X itself: X -> Y -> X, and the advice is a
 * weak-lazy slot, or (Y a dependency of X, as here) X from Y's completion callback; the latter
 * applied, each factory runs once. */
static void direct_nested_resolve_names_its_path_and_advice_works(void) {
    kind X = {"X", 0, 0}, Y = {"Y", 0, 0};
    tether_container *c = container = new_container();
    reg_node(c, "X", &X, TETHER_SCOPE_GRAPH, "Y", NULL, drop_node);
    reg_fn(c, "Y", &Y, (tether_fn)make_y_resolving_x);
    reset();
    tether_ref *ref;
    resolve(c, "X", &ref);
    check_message("\"X\" -> \"Y\" -> \"X\"", "declare the slot of \"Y\" on it TETHER_WEAK_LAZY(\"X\") and call it once that factory returned, or, \"Y\" being a dependency of \"X\", take it from the resolver of a completion callback of \"Y\" instead (tether_on_complete), weakly (tether_resolver_get_weak)", "Y", "X",
                  "(null)");
    CHECK(X.made == 1 && Y.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(X.made == X.dropped && Y.made == Y.dropped);

    /* applied */
    kind X2 = {"X", 0, 0}, Y2 = {"Y", 0, 0};
    c = container = new_container();
    reg_node(c, "X", &X2, TETHER_SCOPE_GRAPH, "Y", NULL, drop_node);
    tether_registration *ry = reg_node(c, "Y", &Y2, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(ry, complete_by_getting_x_weakly, NULL));
    reset();
    node *x = resolve(c, "X", &ref);
    CHECK_OK(seen_status);
    CHECK(x != NULL && seen_instance == x);
    CHECK(X2.made == 1 && Y2.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(X2.made == X2.dropped && Y2.made == Y2.dropped);
}

int main(void) {
    alarm(60);
    RUN(callback_inside_a_nested_resolve_names_its_path);
    RUN(callback_advice_works);
    RUN(nested_construction_names_its_path_and_advice_works);
    RUN(direct_nested_resolve_names_its_path_and_advice_works);
    return harness_finish();
}
