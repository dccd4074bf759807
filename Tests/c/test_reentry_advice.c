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
static char seen_nested[64];  /* the parts' nested resolves, "X>Y Y>Z" ("Y]X": in a callback of Y) */
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
    seen_nested[0] = 0;
    for (size_t i = 0; i < p.nested_count; i++) {
        size_t n = strlen(seen_nested);
        snprintf(seen_nested + n, sizeof seen_nested - n, "%s%s%c%s", i ? " " : "", p.nested[2 * i],
                 (p.nested_in_callback >> i & 1) ? ']' : '>', p.nested[2 * i + 1]);
    }
    CHECK(p.fix == TETHER_FIX_NESTED_RESOLVE || p.nested_count == 0);
}

static void reset(void) {
    seen_status = TETHER_E_NO_MEMORY;  /* "not run" */
    seen_instance = NULL;
    seen_message[0] = 0;
}

static void check_message(const char *path, const char *fix, const char *key, const char *target,
                          const char *callback_of, const char *nested) {
    CHECK_STATUS(seen_status, TETHER_E_CYCLE);
    if (!strstr(seen_message, path) || !strstr(seen_message, fix))
        fprintf(stderr, "  message: %s\n  expected: %s ... %s\n", seen_message, path, fix);
    CHECK(strstr(seen_message, path) != NULL);
    CHECK(strstr(seen_message, fix) != NULL);
    CHECK(strstr(seen_message, "\"X\" -> \"X\"") == NULL);
    CHECK(seen_fix == TETHER_FIX_NESTED_RESOLVE);
    CHECK(strcmp(seen_key, key) == 0 && strcmp(seen_target, target) == 0 && strcmp(seen_callback_of, callback_of) == 0);
    if (strcmp(seen_nested, nested) != 0) fprintf(stderr, "  nested: %s, expected %s\n", seen_nested, nested);
    CHECK(strcmp(seen_nested, nested) == 0);
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
    check_message("\"X\" -> \"Y\" -> \"X\"", "take \"Y\" as a slot of \"X\"", "X", "Y", "Y", "X>Y");
    CHECK(strstr(seen_message, "a completion callback of \"Y\" that this runs asks for \"X\"") != NULL);
    CHECK(strstr(seen_message, "the callback of \"Y\" then takes \"X\" weakly (tether_resolver_get_weak)") != NULL);
    CHECK(X.made == 1 && Y.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(X.made == X.dropped && Y.made == Y.dropped);
}

/* Resolves "X" from `c`, its advice applied: X and Y are made once each and, with `callback_saw_x`,
 * the callback that took X got the X the resolve returns; then frees `c`, which drops each. */
static void resolves_once(tether_container *c, kind *X, kind *Y, int callback_saw_x) {
    reset();
    tether_ref *ref;
    node *x = resolve(c, "X", &ref);
    if (callback_saw_x) {
        CHECK_OK(seen_status);
        CHECK(x != NULL && seen_instance == x);
    }
    CHECK(X->made == 1 && Y->made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(X->made == X->dropped && Y->made == Y->dropped);
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
            resolves_once(c, &X, &Y, 1);
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
                  "(null)", "X>Y");
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
    resolves_once(c, &X2, &Y2, 0);
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
    check_message("\"X\" -> \"Y\" -> \"X\"", "declare the slot of \"Y\" on it TETHER_WEAK_LAZY(\"X\") and call it once the factory of \"X\" returned, or, \"Y\" being a dependency of \"X\", take it from the resolver of a completion callback of \"Y\" instead (tether_on_complete), weakly (tether_resolver_get_weak)", "Y", "X",
                  "(null)", "Y>X");
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
    resolves_once(c, &X2, &Y2, 1);
}

/* ---- Re-entry across several nested resolves ---------------------------------------------- */

/* A registration of the deeper shapes: its counts, the key its factory resolves inside itself
 * (NULL: none), and whether the factory fails when that resolve does (else it makes its
 * instance anyway). `k` first: the registration's context is the link and its kind at once. */
typedef struct chain_link { kind k; const char *next; int fail, ran; } chain_link;

/* A factory resolving `next` inside itself (slots {CONTEXT}). */
static void *make_resolving_next(kind *k) {
    chain_link *l = (chain_link *)k;
    l->ran++;
    tether_ref *ref = NULL;
    tether_status status = tether_resolve(container, l->next, &ref);
    if (status != TETHER_OK && seen_status == TETHER_E_NO_MEMORY) keep(status, NULL);  /* the innermost failure */
    if (ref) CHECK_OK(tether_ref_release(ref));
    return status != TETHER_OK && l->fail ? NULL : node_new(k, NULL, NULL);
}

/* A factory whose TETHER_LAZY slot it calls inside itself (slots {CONTEXT, LAZY}). */
static void *make_calling_lazy(kind *k, tether_provider p) {
    chain_link *l = (chain_link *)k;
    l->ran++;
    void *got = p();
    if (!got && seen_status == TETHER_E_NO_MEMORY) keep(tether_last_status(), NULL);
    return !got && l->fail ? NULL : node_new(k, NULL, NULL);
}

/* A factory keeping its TETHER_WEAK_LAZY slot (slots {CONTEXT, WEAK_LAZY}). */
static void *make_keeping_lazy(kind *k, tether_provider p) {
    ((chain_link *)k)->ran++;
    node *o = node_new(k, NULL, NULL);
    o->lazy = p;
    return o;
}

/* A completion callback getting `context` (a key) from its resolver, strongly. */
static tether_status complete_by_getting(tether_resolver *r, void *instance, void *context) {
    void *got = NULL;
    tether_status status = tether_resolver_get(r, context, &got);
    if (status != TETHER_OK && seen_status == TETHER_E_NO_MEMORY) keep(status, NULL);
    if (got) ((node *)instance)->got = got;
    return TETHER_OK;
}

/* A completion callback taking `context` (a key) weakly from its resolver; its instance keeps the weak handle. */
static tether_status complete_by_getting_weakly(tether_resolver *r, void *instance, void *context) {
    CHECK_OK(tether_resolver_get_weak(r, context, &((node *)instance)->weak));
    return TETHER_OK;
}

/* A completion callback resolving "X" in a resolve of its own (not through its resolver). */
static tether_status complete_by_resolving_x(tether_resolver *r, void *instance, void *context) {
    (void)r, (void)instance, (void)context;
    tether_ref *ref = NULL;
    tether_status status = tether_resolve(container, "X", &ref);
    if (status != TETHER_OK && seen_status == TETHER_E_NO_MEMORY) keep(status, NULL);
    if (ref) CHECK_OK(tether_ref_release(ref));
    return TETHER_OK;
}

static tether_registration *reg_link(tether_container *c, chain_link *l, tether_scope scope) {
    tether_registration *r = reg_fn(c, l->k.tag, &l->k, (tether_fn)make_resolving_next);
    CHECK_OK(tether_set_scope(r, scope));
    return r;
}

static tether_registration *reg_with_slot(tether_container *c, chain_link *l, tether_scope scope, tether_fn fn, tether_param slot) {
    tether_param p[] = {TETHER_CONTEXT, slot};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, l->k.tag, fn, p, 2, &r));
    CHECK_OK(tether_set_scope(r, scope));
    CHECK_OK(tether_set_context(r, &l->k, drop_node_weak));
    return r;
}

enum shape { THREE, CALLBACK_BETWEEN, LAZY_BETWEEN, RESOLVE_IN_CALLBACK, NEEDED_AT_THE_END, SHAPES };

/* Registers `shape` in `c`, each registration in `scope` (those only completed: graph-scoped), its
 * factories failing when their nested resolve fails if `fail`:
 *   THREE              X's factory resolves Y, Y's resolves Z, Z's resolves X;
 *   CALLBACK_BETWEEN   X's factory resolves Y; Y's completion callback gets Z; Z's factory resolves X;
 *   LAZY_BETWEEN       X's factory resolves Y; Y's factory calls its lazy slot on Z; Z's factory resolves X;
 *   RESOLVE_IN_CALLBACK X's factory resolves Y; Y's completion callback resolves X (not through its resolver);
 *   NEEDED_AT_THE_END  X's factory resolves Y, Y's resolves Z; Z takes X as a dependency. */
static void reg_shape(tether_container *c, enum shape shape, tether_scope scope, int fail, chain_link *x, chain_link *y, chain_link *z) {
    *x = (chain_link){{"X", 0, 0}, "Y", fail, 0};
    *y = (chain_link){{"Y", 0, 0}, shape == THREE || shape == NEEDED_AT_THE_END ? "Z" : NULL, fail, 0};
    *z = (chain_link){{"Z", 0, 0}, "X", fail, 0};
    reg_link(c, x, scope);
    tether_registration *ry = NULL;
    if (shape == THREE || shape == NEEDED_AT_THE_END) ry = reg_link(c, y, scope);
    else if (shape == LAZY_BETWEEN) ry = reg_with_slot(c, y, scope, (tether_fn)make_calling_lazy, TETHER_LAZY("Z"));
    else ry = reg_node(c, "Y", &y->k, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    if (shape == CALLBACK_BETWEEN) CHECK_OK(tether_on_complete(ry, complete_by_getting, "Z"));
    if (shape == RESOLVE_IN_CALLBACK) CHECK_OK(tether_on_complete(ry, complete_by_resolving_x, NULL));
    if (shape == NEEDED_AT_THE_END) reg_node(c, "Z", &z->k, scope, "X", NULL, drop_node);
    else if (shape != RESOLVE_IN_CALLBACK) reg_link(c, z, scope);
}

/* Each shape's path, advice and nested resolves: the advice is for the innermost nested
 * resolve, after every other one on the cycle is made a slot (one resolve builds it then). */
static const struct expected { const char *path, *fix, *first, *key, *target, *callback_of, *nested; } expected[SHAPES] = {
    [THREE] = {"\"X\" -> \"Y\" -> \"Z\" -> \"X\"",
               "declare the slot of \"Z\" on it TETHER_WEAK_LAZY(\"X\") and call it once the factory of \"X\" returned",
               "; but first take \"Y\" as a slot of \"X\", \"Z\" as a slot of \"Y\" (each instead of its nested resolve)",
               "Z", "X", "(null)", "X>Y Y>Z Z>X"},
    [CALLBACK_BETWEEN] = {"\"X\" -> \"Y\" -> \"Z\" -> \"X\"",
                          "declare the slot of \"Z\" on it TETHER_WEAK_LAZY(\"X\") and call it once the factory of \"X\" returned",
                          "; but first take \"Y\" as a slot of \"X\" (instead of its nested resolve)",
                          "Z", "X", "(null)", "X>Y Z>X"},
    [LAZY_BETWEEN] = {"\"X\" -> \"Y\" -> \"Z\" -> \"X\"",
                      "declare the slot of \"Z\" on it TETHER_WEAK_LAZY(\"X\") and call it once the factory of \"X\" returned",
                      "; but first take \"Y\" as a slot of \"X\", \"Z\" as a slot of \"Y\" (each instead of its nested resolve)",
                      "Z", "X", "(null)", "X>Y Y>Z Z>X"},
    [RESOLVE_IN_CALLBACK] = {"\"X\" -> \"Y\" -> \"X\"",
                             "a completion callback of \"Y\" resolves \"X\" in a resolve of its own, and that is still being "
                             "constructed; take \"X\" from that callback's resolver instead, weakly (tether_resolver_get_weak)",
                             "; but first take \"Y\" as a slot of \"X\" (instead of its nested resolve)",
                             "Y", "X", "(null)", "X>Y Y]X"},
    [NEEDED_AT_THE_END] = {"\"X\" -> \"Y\" -> \"Z\" -> \"X\"",
                           "the factory of \"Y\" resolves \"Z\", whose construction needs \"X\" before that factory returned; "
                           "take \"Z\" from the resolver of a completion callback of \"Y\" instead",
                           "; but first take \"Y\" as a slot of \"X\" (instead of its nested resolve)",
                           "Y", "Z", "(null)", "X>Y Y>Z"},
};

/* Every shape, graph- and singleton-scoped: the path is the
 * real chain and the advice as above; every factory runs once, and when they fail with their
 * nested resolve, the resolve fails with nothing cached (a second one runs each factory again once). */
static void deep_reentry_names_the_whole_path(void) {
    tether_scope scopes[] = {TETHER_SCOPE_GRAPH, TETHER_SCOPE_SINGLETON, TETHER_SCOPE_CONTAINER};
    for (int shape = 0; shape < SHAPES; shape++) {
        for (size_t s = 0; s < sizeof scopes / sizeof *scopes; s++) {
            for (int fail = 0; fail < 2; fail++) {
                chain_link x, y, z;
                tether_container *c = container = new_container();
                reg_shape(c, shape, scopes[s], fail, &x, &y, &z);
                int fails = fail && shape != CALLBACK_BETWEEN && shape != RESOLVE_IN_CALLBACK;  /* (callbacks go on) */
                for (int round = 1; round <= (fails ? 2 : 1); round++) {
                    reset();
                    tether_ref *ref = NULL;
                    tether_status status = tether_resolve(c, "X", &ref);
                    const struct expected *e = &expected[shape];
                    check_message(e->path, e->fix, e->key, e->target, e->callback_of, e->nested);
                    CHECK(strstr(seen_message, e->first) != NULL);
                    int z_ran = shape == RESOLVE_IN_CALLBACK || shape == NEEDED_AT_THE_END ? 0 : 1;  /* none, or its cycle is found first */
                    int y_ran = y.ran + y.k.made * (shape == CALLBACK_BETWEEN || shape == RESOLVE_IN_CALLBACK);  /* (a plain factory) */
                    if (!(x.ran == round && y_ran == round && z.ran == z_ran * round))
                        fprintf(stderr, "  shape %d scope %d fail %d: ran %d %d %d\n", shape, scopes[s], fail, x.ran, y_ran, z.ran);
                    CHECK(x.ran == round && y_ran == round && z.ran == z_ran * round);
                    if (fails) {
                        CHECK_STATUS(status, TETHER_E_FACTORY_FAILED);
                        CHECK(ref == NULL);
                    } else {
                        CHECK_OK(status);
                        if (ref) CHECK_OK(tether_ref_release(ref));
                    }
                }
                CHECK_OK(tether_container_free(c));
                CHECK(x.k.made == x.k.dropped && y.k.made == y.k.dropped && z.k.made == z.k.dropped);
            }
        }
    }
}

static node *z_dependency;

/* Z's factory taking X as a dependency, which it records (slots {CONTEXT, DEP}). */
static void *make_recording_dependency(kind *k, node *x) {
    ((chain_link *)k)->ran++;
    z_dependency = x;
    return node_new(k, x, NULL);
}

/* Each shape's advice applied: every nested resolve a slot (Y of X; Z of Y unless a callback gets it),
 * and the innermost request as advised (Z's slot on X weak-lazy; Y's callback taking X, or Z, weakly).
 * The resolve succeeds, each factory runs once, and what asked for X gets the X the resolve returns. */
static void deep_reentry_advice_works(void) {
    tether_scope scopes[] = {TETHER_SCOPE_GRAPH, TETHER_SCOPE_SINGLETON, TETHER_SCOPE_CONTAINER};
    for (int shape = 0; shape < SHAPES; shape++) {
        for (size_t s = 0; s < sizeof scopes / sizeof *scopes; s++) {
            chain_link x = {{"X", 0, 0}, NULL, 0, 0}, y = {{"Y", 0, 0}, NULL, 0, 0}, z = {{"Z", 0, 0}, NULL, 0, 0};
            tether_container *c = container = new_container();
            reg_node(c, "X", &x.k, scopes[s], "Y", NULL, drop_node);
            int z_slot = shape == THREE || shape == LAZY_BETWEEN;
            tether_registration *ry = reg_node(c, "Y", &y.k, z_slot ? scopes[s] : TETHER_SCOPE_GRAPH, z_slot ? "Z" : NULL,
                                               NULL, drop_node_weak);
            if (shape == CALLBACK_BETWEEN) CHECK_OK(tether_on_complete(ry, complete_by_getting, "Z"));
            if (shape == RESOLVE_IN_CALLBACK) CHECK_OK(tether_on_complete(ry, complete_by_getting_weakly, "X"));
            if (shape == NEEDED_AT_THE_END) {
                CHECK_OK(tether_on_complete(ry, complete_by_getting_weakly, "Z"));
                reg_with_slot(c, &z, scopes[s], (tether_fn)make_recording_dependency, TETHER_DEP("X"));
            } else if (shape != RESOLVE_IN_CALLBACK) {
                reg_with_slot(c, &z, scopes[s], (tether_fn)make_keeping_lazy, TETHER_WEAK_LAZY("X"));
            }
            reset();
            z_dependency = NULL;
            tether_ref *ref;
            node *got = resolve(c, "X", &ref);
            node *made_y = got ? got->a : NULL;
            CHECK(made_y != NULL && made_y->k == &y.k);
            CHECK(seen_status == TETHER_E_NO_MEMORY);  /* nothing failed */
            CHECK(x.k.made == 1 && y.k.made == 1 && z.k.made == (shape == RESOLVE_IN_CALLBACK ? 0 : 1));
            if (made_y && (shape == THREE || shape == LAZY_BETWEEN || shape == CALLBACK_BETWEEN)) {
                node *made_z = shape == CALLBACK_BETWEEN ? made_y->got : made_y->a;
                CHECK(made_z != NULL && made_z->lazy != NULL);
                if (made_z && made_z->lazy) CHECK(made_z->lazy() == got);  /* the X this resolve made */
            }
            if (made_y && shape == RESOLVE_IN_CALLBACK) {
                tether_ref *held = NULL;
                CHECK(made_y->weak != NULL);
                void *weakly = made_y->weak ? tether_weak_get(made_y->weak, &held) : NULL;
                CHECK(weakly == got && held != NULL && tether_ref_get(held) == got);
                if (held) CHECK_OK(tether_ref_release(held));
            }
            if (shape == NEEDED_AT_THE_END) CHECK(z_dependency == got);
            CHECK(x.k.made == 1 && y.k.made == 1);  /* the provider and the weak handle made nothing */
            CHECK_OK(tether_ref_release(ref));
            CHECK_OK(tether_container_free(c));
            CHECK(x.k.made == x.k.dropped && y.k.made == y.k.dropped && z.k.made == z.k.dropped);
        }
    }
}

int main(void) {
    alarm(60);
    RUN(callback_inside_a_nested_resolve_names_its_path);
    RUN(callback_advice_works);
    RUN(nested_construction_names_its_path_and_advice_works);
    RUN(direct_nested_resolve_names_its_path_and_advice_works);
    RUN(deep_reentry_names_the_whole_path);
    RUN(deep_reentry_advice_works);
    return harness_finish();
}
