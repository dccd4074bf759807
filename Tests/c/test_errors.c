/* Bad input never crashes: one test per case, asserting the exact status and a
 * fragment of tether_last_error(). Also: a failing factory aborts the whole
 * resolve (every instance it created destroyed exactly once, nothing cached),
 * status names, the version, and the thread-local last error. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* Asserts that the last error starts with `prefix` (INVALID_HANDLE messages start
 * with the name of the function that refused the handle). */
#define CHECK_ERROR_STARTS(prefix) do { if (strncmp(tether_last_error(), (prefix), strlen(prefix)) != 0) { \
    fprintf(stderr, "  %s:%d: last error \"%s\" does not start with \"%s\"\n", __FILE__, __LINE__, \
            tether_last_error(), (prefix)); harness_current_failed = 1; } } while (0)

/* ---- counted instances --------------------------------------------------- */

/* Counts the drop on the node's kind (unlike drop_node, without checking the context). */
static void drop(void *instance, void *context) { (void)context; node *o = instance; o->k->dropped++; free(o); }

/* Registers a leaf made by `k` in `scope`. */
static tether_registration *reg_leaf(tether_container *c, kind *k, tether_scope scope) {
    return reg_node(c, k->tag, k, scope, NULL, NULL, drop);
}

static void *make_plain(void) { return malloc(8); }
static void free_plain(void *instance, void *context) { (void)context; free(instance); }

/* A container with "A" registered (graph scope, no params, freed by free_plain). */
static tether_container *container_with_a(tether_registration **out) {
    tether_container *c = new_container();
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "A", (tether_fn)make_plain, NULL, 0, &r));
    CHECK_OK(tether_set_context(r, NULL, free_plain));
    if (out) *out = r;
    return c;
}

/* A released strong handle (for use-after-release checks). */
static tether_ref *released_ref(tether_container *c) {
    tether_ref *r = NULL;
    CHECK_OK(tether_resolve(c, "A", &r));
    CHECK_OK(tether_ref_release(r));
    return r;
}

/* ---- NULL and malformed arguments ---------------------------------------- */

static void null_container(void) {
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_register(NULL, "A", (tether_fn)make_plain, NULL, 0, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_register: ");
    CHECK_ERROR_HAS("NULL");
    CHECK_STATUS(tether_resolve(NULL, "A", &r), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_resolve: ");
    CHECK(r == NULL);
    CHECK_STATUS(tether_resolve_args(NULL, "A", NULL, 0, &r), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_container_free(NULL), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_container_free: ");
    CHECK_STATUS(tether_reset(NULL, TETHER_SCOPE_SINGLETON), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_validate(NULL), TETHER_E_INVALID_HANDLE);
    uint32_t id;
    CHECK_STATUS(tether_intern(NULL, "A", &id), TETHER_E_INVALID_HANDLE);
    char *dot = NULL;
    CHECK_STATUS(tether_export_dot(NULL, &dot), TETHER_E_INVALID_HANDLE);
    CHECK(dot == NULL);
}

static void null_key(void) {
    tether_container *c = container_with_a(NULL);
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_register(c, NULL, (tether_fn)make_plain, NULL, 0, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("key");
    CHECK_STATUS(tether_resolve(c, NULL, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("key");
    CHECK(r == NULL);
    uint32_t id;
    CHECK_STATUS(tether_intern(c, NULL, &id), TETHER_E_INVALID_ARGUMENT);
    tether_provider p;
    CHECK_STATUS(tether_make_provider(c, NULL, &p), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(c));
}

static void empty_key(void) {
    tether_container *c = container_with_a(NULL);
    CHECK_STATUS(tether_register(c, "", (tether_fn)make_plain, NULL, 0, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("key");
    uint32_t id;
    CHECK_STATUS(tether_intern(c, "", &id), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("key");
    CHECK_OK(tether_container_free(c));
}

static void null_out(void) {
    tether_registration *reg;
    tether_container *c = container_with_a(&reg);
    tether_ref *r = NULL;
    tether_weak *w = NULL;
    CHECK_STATUS(tether_container_new(NULL, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("out");
    CHECK_STATUS(tether_resolve(c, "A", NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("out");
    CHECK_STATUS(tether_resolve_args(c, "A", NULL, 0, NULL), TETHER_E_INVALID_ARGUMENT);
    uint32_t id;
    CHECK_OK(tether_intern(c, "A", &id));
    CHECK_STATUS(tether_resolve_key(c, id, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_intern(c, "A", NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_export_dot(c, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_make_provider(c, "A", NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_resolve(c, "A", &r));
    CHECK_STATUS(tether_ref_clone(r, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_ref_downgrade(r, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_ref_downgrade(r, &w));
    CHECK_STATUS(tether_weak_upgrade(w, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK(tether_ref_get(r) != NULL);      /* nothing was consumed by the failed calls */
    CHECK_OK(tether_weak_release(w));
    CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_container_free(c));
}

static void null_factory(void) {
    tether_container *c = new_container();
    tether_registration *r = (tether_registration *)&r;
    CHECK_STATUS(tether_register(c, "A", NULL, NULL, 0, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("factory");
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &ref), TETHER_E_NOT_FOUND); /* nothing registered */
    CHECK_OK(tether_container_free(c));
}

static void null_params_with_a_count(void) {
    tether_container *c = new_container();
    CHECK_STATUS(tether_register(c, "A", (tether_fn)make_plain, NULL, 2, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("param");
    CHECK_OK(tether_container_free(c));
}

static void bad_param_kind(void) {
    tether_container *c = new_container();
    tether_param p99[] = {TETHER_CONTEXT, {(tether_param_kind)99, NULL}};
    CHECK_STATUS(tether_register(c, "A", (tether_fn)make_plain, p99, 2, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("kind");
    tether_param past_end[] = {{(tether_param_kind)(TETHER_PARAM_FACTORY + 1), "K"}};
    CHECK_STATUS(tether_register(c, "A", (tether_fn)make_plain, past_end, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    tether_param negative[] = {{(tether_param_kind)-1, "K"}};
    CHECK_STATUS(tether_register(c, "A", (tether_fn)make_plain, negative, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "A", &ref), TETHER_E_NOT_FOUND);
    CHECK_OK(tether_container_free(c));
}

static void dependency_slot_without_key(void) {
    tether_container *c = new_container();
    tether_param_kind kinds[] = {TETHER_PARAM_DEP, TETHER_PARAM_WEAK, TETHER_PARAM_LAZY, TETHER_PARAM_WEAK_LAZY};
    for (int i = 0; i < 4; i++) {
        tether_param p[] = {TETHER_CONTEXT, {kinds[i], NULL}};
        CHECK_STATUS(tether_register(c, "A", (tether_fn)make_plain, p, 2, NULL), TETHER_E_INVALID_ARGUMENT);
        CHECK_ERROR_HAS("key");
        tether_param empty[] = {{kinds[i], ""}};
        CHECK_STATUS(tether_register(c, "A", (tether_fn)make_plain, empty, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    }
    CHECK_OK(tether_container_free(c));
}

static void bad_scope_value(void) {
    tether_registration *reg;
    tether_container *c = container_with_a(&reg);
    CHECK_STATUS(tether_set_scope(reg, (tether_scope)42), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("scope");
    CHECK_STATUS(tether_set_scope(reg, (tether_scope)-1), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_reset(c, (tether_scope)42), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("scope");
    /* the registration kept its scope (graph: a new instance per resolve) */
    tether_ref *r1, *r2;
    CHECK_OK(tether_resolve(c, "A", &r1));
    CHECK_OK(tether_resolve(c, "A", &r2));
    CHECK(tether_ref_get(r1) != tether_ref_get(r2));
    CHECK_OK(tether_ref_release(r1));
    CHECK_OK(tether_ref_release(r2));
    CHECK_OK(tether_container_free(c));
}

static void null_callback_and_handles(void) {
    tether_registration *reg;
    tether_container *c = container_with_a(&reg);
    CHECK_STATUS(tether_on_complete(reg, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_on_complete(NULL, NULL, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_set_scope(NULL, TETHER_SCOPE_GRAPH), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_set_scope: ");
    CHECK_STATUS(tether_set_context(NULL, NULL, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_ref_release(NULL), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_release: ");
    CHECK_ERROR_HAS("NULL");
    CHECK(tether_ref_get(NULL) == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_get: ");
    tether_ref *r = NULL;
    tether_weak *w = NULL;
    CHECK_STATUS(tether_ref_clone(NULL, &r), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_ref_downgrade(NULL, &w), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_weak_upgrade(NULL, &r), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_weak_release(NULL), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_weak_release: ");
    CHECK_STATUS(tether_provider_free(NULL), TETHER_E_INVALID_HANDLE);
    void *out = NULL;
    tether_weak *wout = NULL;
    CHECK_STATUS(tether_resolver_get(NULL, "A", &out), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_resolver_get_weak(NULL, "A", &wout), TETHER_E_INVALID_HANDLE);
    tether_string_free(NULL);              /* ignored */
    CHECK_OK(tether_container_free(c));
}

/* ---- released, stale and wrong-kind handles ------------------------------ */

static void released_ref_used_again(void) {
    tether_container *c = container_with_a(NULL);
    tether_ref *r = released_ref(c), *out = (tether_ref *)&out;
    tether_weak *w = (tether_weak *)&w;
    CHECK(tether_ref_get(r) == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_get: ");
    CHECK_ERROR_HAS("stale");
    CHECK_STATUS(tether_ref_clone(r, &out), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_clone: ");
    CHECK(out == NULL);
    CHECK_STATUS(tether_ref_downgrade(r, &w), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_downgrade: ");
    CHECK(w == NULL);
    CHECK_STATUS(tether_ref_release(r), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_release: ");
    CHECK_OK(tether_container_free(c));
}

/* Handles are generation-counted: a released handle stays invalid after its slot is
 * reused by new handles, and using it never touches the new ones. */
static void released_handle_after_slot_reuse(void) {
    tether_container *c = container_with_a(NULL);
    tether_ref *old = released_ref(c);
    tether_weak *old_weak = NULL;
    tether_ref *tmp;
    CHECK_OK(tether_resolve(c, "A", &tmp));
    CHECK_OK(tether_ref_downgrade(tmp, &old_weak));
    CHECK_OK(tether_weak_release(old_weak));
    CHECK_OK(tether_ref_release(tmp));
    enum { MANY = 64 };
    tether_ref *fresh[MANY];
    tether_weak *fresh_weak[MANY];
    int reused = 0;
    for (int i = 0; i < MANY; i++) {
        CHECK_OK(tether_resolve(c, "A", &fresh[i]));
        CHECK_OK(tether_ref_downgrade(fresh[i], &fresh_weak[i]));
        reused |= fresh[i] == old;
    }
    (void)reused; /* equal values are allowed only if the library tells them apart otherwise */
    CHECK_STATUS(tether_ref_release(old), TETHER_E_INVALID_HANDLE);
    CHECK(tether_ref_get(old) == NULL);
    CHECK_STATUS(tether_weak_release(old_weak), TETHER_E_INVALID_HANDLE);
    for (int i = 0; i < MANY; i++) {
        CHECK(tether_ref_get(fresh[i]) != NULL);
        CHECK_OK(tether_weak_release(fresh_weak[i]));
        CHECK_OK(tether_ref_release(fresh[i]));
    }
    CHECK_OK(tether_container_free(c));

    /* containers too */
    tether_container *gone = new_container();
    CHECK_OK(tether_container_free(gone));
    tether_container *alive[8];
    for (int i = 0; i < 8; i++) alive[i] = new_container();
    CHECK_STATUS(tether_container_free(gone), TETHER_E_INVALID_HANDLE);
    for (int i = 0; i < 8; i++) CHECK_OK(tether_container_free(alive[i]));
}

static void double_release(void) {
    kind K = {"K", 0, 0};
    tether_container *c = new_container();
    reg_leaf(c, &K, TETHER_SCOPE_GRAPH);
    tether_ref *r, *other;
    CHECK_OK(tether_resolve(c, "K", &r));
    CHECK_OK(tether_resolve(c, "K", &other));
    CHECK_OK(tether_ref_release(r));
    CHECK(K.dropped == 1);
    CHECK_STATUS(tether_ref_release(r), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_release: ");
    CHECK(K.dropped == 1);                 /* no second destructor call */
    CHECK(tether_ref_get(other) != NULL);  /* the other handle is untouched */
    CHECK_OK(tether_ref_release(other));
    CHECK(K.dropped == 2);

    tether_weak *w;
    CHECK_OK(tether_resolve(c, "K", &r));
    CHECK_OK(tether_ref_downgrade(r, &w));
    CHECK_OK(tether_weak_release(w));
    CHECK_STATUS(tether_weak_release(w), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_weak_release: ");
    tether_ref *up = NULL;
    CHECK_STATUS(tether_weak_upgrade(w, &up), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_weak_upgrade: ");
    CHECK(tether_ref_get(r) != NULL);
    CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_container_free(c));
    CHECK(K.made == 3 && K.dropped == 3);
}

static void handle_of_the_wrong_kind(void) {
    tether_registration *reg;
    tether_container *c = container_with_a(&reg);
    tether_ref *r, *out = NULL;
    tether_weak *w;
    CHECK_OK(tether_resolve(c, "A", &r));
    CHECK_OK(tether_ref_downgrade(r, &w));

    /* a weak handle where a strong one is expected */
    CHECK(tether_ref_get((tether_ref *)w) == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_get: ");
    CHECK_STATUS(tether_ref_release((tether_ref *)w), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_ref_release: ");
    CHECK_STATUS(tether_ref_clone((tether_ref *)w, &out), TETHER_E_INVALID_HANDLE);
    /* a strong handle where a weak one is expected */
    CHECK_STATUS(tether_weak_release((tether_weak *)r), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_weak_release: ");
    CHECK_STATUS(tether_weak_upgrade((tether_weak *)r, &out), TETHER_E_INVALID_HANDLE);
    /* containers, registrations and refs are not interchangeable */
    CHECK_STATUS(tether_resolve((tether_container *)r, "A", &out), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_resolve((tether_container *)reg, "A", &out), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_container_free((tether_container *)reg), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_set_scope((tether_registration *)c, TETHER_SCOPE_GRAPH), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_ref_release((tether_ref *)c), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_weak_release((tether_weak *)reg), TETHER_E_INVALID_HANDLE);

    /* both handles still work after all that */
    tether_ref *up = NULL;
    CHECK_OK(tether_weak_upgrade(w, &up));
    CHECK(tether_ref_get(up) == tether_ref_get(r));
    CHECK_OK(tether_ref_release(up));
    CHECK_OK(tether_weak_release(w));
    CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_container_free(c));
}

static void handles_of_a_freed_container(void) {
    tether_registration *reg;
    tether_container *c = container_with_a(&reg);
    CHECK_OK(tether_container_free(c));
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve(c, "A", &r), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_resolve: ");
    CHECK_ERROR_HAS("freed");
    CHECK(r == NULL);
    CHECK_STATUS(tether_register(c, "B", (tether_fn)make_plain, NULL, 0, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_register: ");
    CHECK_STATUS(tether_container_free(c), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_container_free: ");
    CHECK_STATUS(tether_reset(c, TETHER_SCOPE_SINGLETON), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_validate(c), TETHER_E_INVALID_HANDLE);
    uint32_t id;
    CHECK_STATUS(tether_intern(c, "A", &id), TETHER_E_INVALID_HANDLE);
    tether_container *child = NULL;
    CHECK_STATUS(tether_container_new(c, &child), TETHER_E_INVALID_HANDLE);
    /* its registrations went with it */
    CHECK_STATUS(tether_set_scope(reg, TETHER_SCOPE_SINGLETON), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_set_scope: ");
    CHECK_STATUS(tether_set_context(reg, NULL, NULL), TETHER_E_INVALID_HANDLE);
}

static tether_status noop_complete(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    return TETHER_OK;
}

static void registration_stale_after_reregistering(void) {
    kind S = {"S", 0, 0};
    tether_container *c = new_container();
    tether_registration *old = reg_leaf(c, &S, TETHER_SCOPE_SINGLETON);
    tether_ref *r;
    CHECK_OK(tether_resolve(c, "S", &r));
    void *first = tether_ref_get(r);

    tether_registration *fresh = reg_leaf(c, &S, TETHER_SCOPE_SINGLETON); /* same key again */
    CHECK(S.dropped == 0);                 /* the old singleton is still handed out */
    CHECK_STATUS(tether_set_scope(old, TETHER_SCOPE_GRAPH), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_set_scope: ");
    CHECK_ERROR_HAS("stale");
    CHECK_STATUS(tether_set_context(old, NULL, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_set_context: ");
    CHECK_STATUS(tether_on_complete(old, noop_complete, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_set_variadic(old, 1), TETHER_E_INVALID_HANDLE);

    tether_ref *r2;
    CHECK_OK(tether_resolve(c, "S", &r2)); /* the new registration, a new singleton */
    CHECK(tether_ref_get(r2) != first);
    CHECK(S.made == 2);
    CHECK_OK(tether_ref_release(r));
    CHECK(S.dropped == 1);                 /* no longer cached: gone with its handle */
    CHECK_OK(tether_set_scope(fresh, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_ref_release(r2));
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 2);
}

static void reregistering_releases_the_cached_singleton(void) {
    kind S = {"S", 0, 0};
    tether_container *c = new_container();
    reg_leaf(c, &S, TETHER_SCOPE_SINGLETON);
    tether_ref *r;
    CHECK_OK(tether_resolve(c, "S", &r));
    CHECK_OK(tether_ref_release(r));
    CHECK(S.dropped == 0);
    reg_leaf(c, &S, TETHER_SCOPE_SINGLETON);
    CHECK(S.dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(S.made == 1 && S.dropped == 1);
}

/* Handles are generation-counted ids, never dereferenced: any garbage value is refused. */
static void garbage_handle_values(void) {
    uintptr_t values[] = {1, 8, 0x1000, 0xdeadbeef, (uintptr_t)0x7ff0deadbeef0ULL, ~(uintptr_t)0};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        tether_ref *out = NULL;
        CHECK(tether_ref_get((tether_ref *)values[i]) == NULL);
        CHECK_STATUS(tether_ref_release((tether_ref *)values[i]), TETHER_E_INVALID_HANDLE);
        CHECK_STATUS(tether_weak_release((tether_weak *)values[i]), TETHER_E_INVALID_HANDLE);
        CHECK_STATUS(tether_resolve((tether_container *)values[i], "A", &out), TETHER_E_INVALID_HANDLE);
        CHECK_STATUS(tether_set_scope((tether_registration *)values[i], TETHER_SCOPE_GRAPH), TETHER_E_INVALID_HANDLE);
    }
    /* a plain C function is not a provider */
    CHECK_STATUS(tether_provider_free((tether_provider)make_plain), TETHER_E_INVALID_HANDLE);
}

/* ---- resolve failures ---------------------------------------------------- */

static void unknown_key(void) {
    tether_container *c = container_with_a(NULL);
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve(c, "Nope", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Nope\"");
    CHECK(strstr(tether_last_error(), "needed by") == NULL);
    CHECK(r == NULL);
    uint32_t id;
    CHECK_OK(tether_intern(c, "AlsoNope", &id)); /* interning does not register */
    CHECK_STATUS(tether_resolve_key(c, id, &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"AlsoNope\"");
    CHECK_OK(tether_container_free(c));
}

static void unknown_interned_id(void) {
    tether_container *c = container_with_a(NULL);
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve_key(c, 0xfffffff0u, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK(r == NULL);
    CHECK_OK(tether_container_free(c));
}

static void *make_two(kind *k, void *dep) { (void)dep; return make0(k); }

static void missing_dependency_names_the_path(void) {
    kind Service = {"Service", 0, 0}, Repository = {"Repository", 0, 0};
    tether_container *c = new_container();
    tether_param ps[] = {TETHER_CONTEXT, TETHER_DEP("Repository")};
    tether_param pr[] = {TETHER_CONTEXT, TETHER_DEP("Logger")};
    tether_registration *r1, *r2;
    CHECK_OK(tether_register(c, "Service", (tether_fn)make_two, ps, 2, &r1));
    CHECK_OK(tether_register(c, "Repository", (tether_fn)make_two, pr, 2, &r2));
    CHECK_OK(tether_set_context(r1, &Service, drop));
    CHECK_OK(tether_set_context(r2, &Repository, drop));
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve(c, "Service", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Logger\" (needed by \"Service\" -> \"Repository\")");
    CHECK(r == NULL);
    CHECK_STATUS(tether_resolve(c, "Repository", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Logger\" (needed by \"Repository\")");
    CHECK_OK(tether_container_free(c));
    CHECK(Service.made == Service.dropped && Repository.made == Repository.dropped);
}

static void *make_args(kind *k, int64_t n, double x) { (void)n; (void)x; return make0(k); }

/* A container with "A" taking (context, i64, f64), counted in `A`. */
static tether_container *container_with_args(kind *A) {
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT, TETHER_I64, TETHER_F64};
    tether_registration *reg;
    CHECK_OK(tether_register(c, "A", (tether_fn)make_args, p, 3, &reg));
    CHECK_OK(tether_set_context(reg, A, drop));
    return c;
}

static void wrong_runtime_argument_count(void) {
    kind A = {"A", 0, 0};
    tether_container *c = container_with_args(&A);
    tether_value one[] = {TETHER_VAL_I64(1)};
    tether_value three[] = {TETHER_VAL_I64(1), TETHER_VAL_F64(2), TETHER_VAL_F64(3)};
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve_args(c, "A", one, 1, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"A\" takes 2 runtime arguments, got 1");
    CHECK(r == NULL);
    CHECK_STATUS(tether_resolve_args(c, "A", three, 3, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"A\" takes 2 runtime arguments, got 3");
    CHECK_STATUS(tether_resolve(c, "A", &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"A\" takes 2 runtime arguments, got 0");
    CHECK_STATUS(tether_resolve_args(c, "A", NULL, 2, &r), TETHER_E_INVALID_ARGUMENT);
    /* and a registration without runtime arguments given some */
    tether_registration *reg;
    CHECK_OK(tether_register(c, "Plain", (tether_fn)make_plain, NULL, 0, &reg));
    CHECK_STATUS(tether_resolve_args(c, "Plain", one, 1, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"Plain\" takes 0 runtime arguments, got 1");
    CHECK(A.made == 0);
    CHECK_OK(tether_container_free(c));
}

/* By interned id (tether_resolve_key_args finds the registration as the hit path does, then
   checks the arguments): the same refusals as by name, nothing made, the out-parameter NULL. */
static void runtime_argument_failures_by_id(void) {
    kind A = {"A", 0, 0};
    tether_container *c = container_with_args(&A);
    uint32_t id, unknown;
    CHECK_OK(tether_intern(c, "A", &id));
    CHECK_OK(tether_intern(c, "NoSuchKey", &unknown));
    tether_ref *r = (tether_ref *)&r;
    tether_value one[] = {TETHER_VAL_I64(1)};
    CHECK_STATUS(tether_resolve_key_args(c, id, one, 1, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"A\" takes 2 runtime arguments, got 1");
    CHECK(r == NULL);
    tether_value ii[] = {TETHER_VAL_I64(1), TETHER_VAL_I64(2)};
    r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve_key_args(c, id, ii, 2, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("runtime argument 2 of \"A\" must be f64, got i64");
    CHECK(r == NULL);
    tether_value dep[] = {{TETHER_PARAM_DEP, {.i64 = 1}}, TETHER_VAL_F64(2)};
    CHECK_STATUS(tether_resolve_key_args(c, id, dep, 2, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("tether_resolve_key_args: runtime argument 1 has kind TETHER_PARAM_DEP");
    CHECK_STATUS(tether_resolve_key_args(c, id, NULL, 2, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("tether_resolve_key_args: args is NULL but arg_count is 2");
    CHECK_STATUS(tether_resolve_key_args(c, id, ii, 2, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("out");
    CHECK_STATUS(tether_resolve_key_args(c, unknown, one, 1, &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"NoSuchKey\"");
    CHECK_STATUS(tether_resolve_key_args(c, 0xFFFFFFF0u, one, 1, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("not a key id");
    CHECK(A.made == 0);
    tether_value good[] = {TETHER_VAL_I64(1), TETHER_VAL_F64(2)};
    CHECK_OK(tether_resolve_key_args(c, id, good, 2, &r));
    CHECK(A.made == 1);
    CHECK_OK(tether_ref_release(r));
    CHECK(A.dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(tether_resolve_key_args(c, id, good, 2, &r), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_STARTS("tether_resolve_key_args: ");
}

static void wrong_runtime_argument_type(void) {
    kind A = {"A", 0, 0};
    tether_container *c = container_with_args(&A);
    tether_ref *r = (tether_ref *)&r;
    tether_value ii[] = {TETHER_VAL_I64(1), TETHER_VAL_I64(2)};
    CHECK_STATUS(tether_resolve_args(c, "A", ii, 2, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("runtime argument 2 of \"A\" must be f64, got i64");
    CHECK(r == NULL);
    tether_value sf[] = {TETHER_VAL_STR("1"), TETHER_VAL_F64(2)};
    CHECK_STATUS(tether_resolve_args(c, "A", sf, 2, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("runtime argument 1 of \"A\" must be i64, got str");
    tether_value pf[] = {TETHER_VAL_I64(1), TETHER_VAL_PTR(NULL)};
    CHECK_STATUS(tether_resolve_args(c, "A", pf, 2, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("runtime argument 2 of \"A\" must be f64, got ptr");
    /* kinds that are not runtime-argument kinds at all */
    tether_value dep[] = {{TETHER_PARAM_DEP, {.i64 = 1}}, TETHER_VAL_F64(2)};
    CHECK_STATUS(tether_resolve_args(c, "A", dep, 2, &r), TETHER_E_ARGUMENT_MISMATCH);
    tether_value junk[] = {TETHER_VAL_I64(1), {(tether_param_kind)99, {.i64 = 1}}};
    CHECK_STATUS(tether_resolve_args(c, "A", junk, 2, &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK(A.made == 0);
    tether_value ok[] = {TETHER_VAL_I64(1), TETHER_VAL_F64(2)};
    CHECK_OK(tether_resolve_args(c, "A", ok, 2, &r));
    CHECK(A.made == 1);
    CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_container_free(c));
    CHECK(A.dropped == 1);
}

static void runtime_arguments_on_a_dependency(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0};
    tether_container *c = new_container();
    tether_param pa[] = {TETHER_CONTEXT, TETHER_I64, TETHER_F64};
    tether_param pb[] = {TETHER_CONTEXT, TETHER_DEP("A")};
    tether_registration *ra, *rb;
    CHECK_OK(tether_register(c, "A", (tether_fn)make_args, pa, 3, &ra));
    CHECK_OK(tether_register(c, "B", (tether_fn)make_two, pb, 2, &rb));
    CHECK_OK(tether_set_context(ra, &A, drop));
    CHECK_OK(tether_set_context(rb, &B, drop));
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve(c, "B", &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"A\" takes runtime arguments and cannot be a dependency (needed by \"B\")");
    CHECK(r == NULL);
    CHECK(A.made == 0 && B.made == 0);
    CHECK_OK(tether_container_free(c));
}

/* ---- failing factories --------------------------------------------------- */

static int bad_should_fail = 1;
static const char *bad_reason;
static kind Bad = {"Bad", 0, 0};

/* Fails while bad_should_fail is set. It owns the weak handle it was given, failing or not. */
static void *make_bad(kind *k, tether_weak *w) {
    tether_weak_release(w);
    if (bad_reason) tether_set_error(bad_reason);
    return bad_should_fail ? NULL : make0(k);
}

static void *make_top(kind *k, void *s, void *g, void *w, void *bad) {
    (void)s; (void)g; (void)w; (void)bad;
    return make0(k);
}

/* Top(S singleton, G graph, W weak, Bad graph); all made before Bad runs. */
static tether_container *failing_graph(kind *Top, kind *S, kind *G, kind *W) {
    tether_container *c = new_container();
    reg_leaf(c, S, TETHER_SCOPE_SINGLETON);
    reg_leaf(c, G, TETHER_SCOPE_GRAPH);
    reg_leaf(c, W, TETHER_SCOPE_WEAK);
    tether_param pb[] = {TETHER_CONTEXT, TETHER_WEAK("S")};
    tether_param pt[] = {TETHER_CONTEXT, TETHER_DEP("S"), TETHER_DEP("G"), TETHER_DEP("W"), TETHER_DEP("Bad")};
    tether_registration *rb, *rt;
    CHECK_OK(tether_register(c, "Bad", (tether_fn)make_bad, pb, 2, &rb));
    CHECK_OK(tether_set_context(rb, &Bad, drop));
    CHECK_OK(tether_register(c, "Top", (tether_fn)make_top, pt, 5, &rt));
    CHECK_OK(tether_set_context(rt, Top, drop));
    return c;
}

static void factory_null_aborts_the_whole_resolve(void) {
    kind Top = {"Top", 0, 0}, S = {"S", 0, 0}, G = {"G", 0, 0}, W = {"W", 0, 0};
    Bad.made = Bad.dropped = 0;
    bad_should_fail = 1;
    bad_reason = NULL;
    tether_container *c = failing_graph(&Top, &S, &G, &W);
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve(c, "Top", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("factory for \"Bad\" returned NULL");
    CHECK(strstr(tether_last_error(), "returned NULL:") == NULL); /* no reason given */
    CHECK(r == NULL);
    CHECK(S.made == 1 && G.made == 1 && W.made == 1 && Top.made == 0);
    CHECK(S.dropped == 1 && G.dropped == 1 && W.dropped == 1); /* every instance, exactly once */

    /* nothing was cached: the singleton and weak instances are made again */
    CHECK_STATUS(tether_resolve(c, "Top", &r), TETHER_E_FACTORY_FAILED);
    CHECK(S.made == 2 && W.made == 2 && S.dropped == 2 && W.dropped == 2);

    bad_should_fail = 0;
    CHECK_OK(tether_resolve(c, "Top", &r));
    CHECK(S.made == 3 && G.made == 3 && W.made == 3 && Top.made == 1 && Bad.made == 1);
    CHECK_OK(tether_ref_release(r));
    CHECK(S.dropped == 2);                 /* now cached */
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 3 && G.dropped == 3 && W.dropped == 3 && Top.dropped == 1 && Bad.dropped == 1);
    bad_should_fail = 1;
}

static void factory_null_with_a_reason(void) {
    kind Top = {"Top", 0, 0}, S = {"S", 0, 0}, G = {"G", 0, 0}, W = {"W", 0, 0};
    bad_should_fail = 1;
    bad_reason = "disk full";
    tether_container *c = failing_graph(&Top, &S, &G, &W);
    tether_ref *r = (tether_ref *)&r;
    CHECK_STATUS(tether_resolve(c, "Bad", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("factory for \"Bad\" returned NULL: disk full");
    CHECK(r == NULL);
    CHECK_STATUS(tether_resolve(c, "Top", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("factory for \"Bad\" returned NULL: disk full");
    CHECK(S.made == S.dropped && G.made == G.dropped && W.made == W.dropped && Top.made == 0);

    /* the reason belongs to that failure only: the next one without a reason says none */
    bad_reason = NULL;
    CHECK_STATUS(tether_resolve(c, "Top", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("factory for \"Bad\" returned NULL");
    CHECK(strstr(tether_last_error(), "disk full") == NULL);

    /* nor does a reason set by a factory that then succeeded */
    bad_should_fail = 0;
    bad_reason = "only a warning";
    CHECK_OK(tether_resolve(c, "Bad", &r));
    CHECK_OK(tether_ref_release(r));
    bad_should_fail = 1;
    bad_reason = NULL;
    CHECK_STATUS(tether_resolve(c, "Bad", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("factory for \"Bad\" returned NULL");
    CHECK(strstr(tether_last_error(), "only a warning") == NULL);
    CHECK_OK(tether_container_free(c));
}

/* ---- status names, version, last error ----------------------------------- */

static void status_names(void) {
    static const struct { tether_status s; const char *name; } all[] = {
        {TETHER_OK, "TETHER_OK"},
        {TETHER_E_INVALID_ARGUMENT, "TETHER_E_INVALID_ARGUMENT"},
        {TETHER_E_INVALID_HANDLE, "TETHER_E_INVALID_HANDLE"},
        {TETHER_E_NOT_FOUND, "TETHER_E_NOT_FOUND"},
        {TETHER_E_CYCLE, "TETHER_E_CYCLE"},
        {TETHER_E_RETAIN_CYCLE, "TETHER_E_RETAIN_CYCLE"},
        {TETHER_E_FACTORY_FAILED, "TETHER_E_FACTORY_FAILED"},
        {TETHER_E_ARGUMENT_MISMATCH, "TETHER_E_ARGUMENT_MISMATCH"},
        {TETHER_E_EXPIRED, "TETHER_E_EXPIRED"},
        {TETHER_E_WRONG_CONTEXT, "TETHER_E_WRONG_CONTEXT"},
        {TETHER_E_NO_MEMORY, "TETHER_E_NO_MEMORY"},
        {TETHER_E_WOULD_BLOCK, "TETHER_E_WOULD_BLOCK"},
        {TETHER_E_BUFFER_TOO_SMALL, "TETHER_E_BUFFER_TOO_SMALL"},
    };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        const char *name = tether_status_name(all[i].s);
        CHECK(name != NULL && strcmp(name, all[i].name) == 0);
    }
    CHECK(strcmp(tether_status_name((tether_status)99), "TETHER_E_UNKNOWN") == 0);
    CHECK(strcmp(tether_status_name((tether_status)-1), "TETHER_E_UNKNOWN") == 0);
}

static void version_matches_header(void) {
    const char *v = tether_version();
    CHECK(v != NULL && strcmp(v, TETHER_VERSION) == 0);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", TETHER_VERSION_MAJOR, TETHER_VERSION_MINOR, TETHER_VERSION_PATCH);
    CHECK(strcmp(TETHER_VERSION, expect) == 0);
}

typedef struct thread_view { int error_was_null, error_was_empty; tether_status status; int own_error; } thread_view;

static void *fresh_thread(void *arg) {
    thread_view *v = arg;
    const char *e = tether_last_error();
    v->error_was_null = e == NULL;
    v->error_was_empty = e && e[0] == '\0';
    v->status = tether_last_status();
    tether_set_error("only on this thread");
    v->own_error = strcmp(tether_last_error(), "only on this thread") == 0;
    return NULL;
}

static void last_error_is_thread_local_and_never_null(void) {
    CHECK(tether_last_error() != NULL);
    tether_ref *r;
    CHECK_STATUS(tether_resolve(NULL, "A", &r), TETHER_E_INVALID_HANDLE);
    char mine[256];
    snprintf(mine, sizeof mine, "%s", tether_last_error());

    thread_view v = {1, 0, TETHER_E_NO_MEMORY, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fresh_thread, &v) == 0);
    pthread_join(t, NULL);
    CHECK(!v.error_was_null && v.error_was_empty);   /* "" before any failure */
    CHECK(v.status == TETHER_OK);
    CHECK(v.own_error);
    CHECK(strcmp(tether_last_error(), mine) == 0);   /* untouched by the other thread */
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);

    tether_set_error(NULL);
    CHECK(tether_last_error() != NULL);
}

static void success_keeps_the_last_error(void) {
    tether_container *c = container_with_a(NULL);
    tether_ref *r;
    CHECK_STATUS(tether_resolve(c, "Nope", &r), TETHER_E_NOT_FOUND);
    CHECK_OK(tether_resolve(c, "A", &r));
    CHECK_ERROR_HAS("no registration for \"Nope\"");
    CHECK(tether_last_status() == TETHER_E_NOT_FOUND);
    CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(null_container);
    RUN(null_key);
    RUN(empty_key);
    RUN(null_out);
    RUN(null_factory);
    RUN(null_params_with_a_count);
    RUN(bad_param_kind);
    RUN(dependency_slot_without_key);
    RUN(bad_scope_value);
    RUN(null_callback_and_handles);
    RUN(released_ref_used_again);
    RUN(released_handle_after_slot_reuse);
    RUN(double_release);
    RUN(handle_of_the_wrong_kind);
    RUN(handles_of_a_freed_container);
    RUN(registration_stale_after_reregistering);
    RUN(reregistering_releases_the_cached_singleton);
    RUN(unknown_key);
    RUN(unknown_interned_id);
    RUN(missing_dependency_names_the_path);
    RUN(wrong_runtime_argument_count);
    RUN(wrong_runtime_argument_type);
    RUN(runtime_argument_failures_by_id);
    RUN(runtime_arguments_on_a_dependency);
    RUN(factory_null_aborts_the_whole_resolve);
    RUN(factory_null_with_a_reason);
    RUN(status_names);
    RUN(version_matches_header);
    RUN(last_error_is_thread_local_and_never_null);
    RUN(success_keeps_the_last_error);
    RUN(garbage_handle_values);            /* last: a crash here would hide the others */
    return harness_finish();
}
