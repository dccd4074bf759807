/* Declared params and scopes no resolve could honour are refused where they are
 * declared (tether_register, tether_register_ex, tether_set_scope), with a
 * message saying what to do: two TETHER_RESOLVER slots, runtime arguments on a
 * shared (singleton, weak) scope. And runtime-argument counts beyond any
 * registration's are an argument mismatch. */
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

static int made;
static void *make_two_resolvers(tether_resolver *a, tether_resolver *b) { (void)a; (void)b; made++; return malloc(8); }
static void *make_with_i64(int64_t n) { (void)n; made++; return malloc(8); }
static void drop_free(void *instance, void *context) { (void)context; free(instance); }

static void two_resolver_slots_are_refused(void) {
    tether_container *c = new_container();
    tether_param p[] = { TETHER_RESOLVER, TETHER_RESOLVER };
    tether_registration *r = (tether_registration *)&r;
    CHECK_STATUS(tether_register(c, "Twice", (tether_fn)make_two_resolvers, p, 2, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("\"Twice\" declares 2 TETHER_RESOLVER slots");
    CHECK_ERROR_HAS("declare the slot once");
    CHECK(r == NULL);
    tether_registration_options o = {0};
    CHECK_STATUS(TB.register_ex(c, "Twice", (tether_fn)make_two_resolvers, p, 2, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("TETHER_RESOLVER");
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Twice", &ref), TETHER_E_NOT_FOUND);  /* nothing was registered */
    CHECK(made == 0);
    CHECK_OK(tether_container_free(c));
}

static void arguments_on_a_shared_scope_are_refused(void) {
    tether_param p[] = { TETHER_I64 };
    tether_scope shared[] = { TETHER_SCOPE_SINGLETON, TETHER_SCOPE_WEAK };
    for (int i = 0; i < 2; i++) {
        made = 0;
        tether_container *c = new_container();
        tether_registration *r = NULL;
        CHECK_OK(tether_register(c, "Conn", (tether_fn)make_with_i64, p, 1, &r));
        CHECK_OK(tether_set_context(r, NULL, drop_free));
        CHECK_STATUS(tether_set_scope(r, shared[i]), TETHER_E_INVALID_ARGUMENT);
        CHECK_ERROR_HAS("\"Conn\" takes runtime arguments and cannot have the");
        CHECK_ERROR_HAS("keep it graph or transient scoped");
        /* The scope did not change: every resolve builds with its own argument. */
        tether_value one = TETHER_VAL_I64(1), two = TETHER_VAL_I64(2);
        tether_ref *a = NULL, *b = NULL;
        CHECK_OK(tether_resolve_args(c, "Conn", &one, 1, &a));
        CHECK_OK(tether_resolve_args(c, "Conn", &two, 1, &b));
        CHECK(a && b && tether_ref_get(a) != tether_ref_get(b));
        CHECK(made == 2);
        CHECK_OK(tether_ref_release(a));
        CHECK_OK(tether_ref_release(b));
        CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));  /* unshared scopes stay allowed */

        tether_registration_options o = {0};
        o.scope = shared[i];
        tether_registration *r2 = (tether_registration *)&r2;
        CHECK_STATUS(TB.register_ex(c, "Conn2", (tether_fn)make_with_i64, p, 1, &o, &r2), TETHER_E_INVALID_ARGUMENT);
        CHECK_ERROR_HAS("\"Conn2\" takes runtime arguments");
        CHECK(r2 == NULL);
        CHECK_STATUS(tether_resolve_args(c, "Conn2", &one, 1, &a), TETHER_E_NOT_FOUND);
        CHECK_OK(tether_container_free(c));
    }
}

/* More values than any registration can declare: still the documented mismatch. */
static void far_more_arguments_than_slots(void) {
    tether_container *c = new_container();
    tether_param p[] = { TETHER_I64 };
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "Conn", (tether_fn)make_with_i64, p, 1, &r));
    CHECK_OK(tether_set_context(r, NULL, drop_free));
    enum { MANY = 5000 };
    tether_value *values = calloc(MANY, sizeof *values);
    for (int i = 0; i < MANY; i++) values[i] = TETHER_VAL_I64(i);
    tether_ref *ref = (tether_ref *)&ref;
    CHECK_STATUS(tether_resolve_args(c, "Conn", values, MANY, &ref), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("5000");
    CHECK(ref == NULL);
    CHECK_STATUS(tether_resolve_args(c, "Conn", values, 2, &ref), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_STATUS(tether_resolve_args(c, "Conn", values, 1025, &ref), TETHER_E_ARGUMENT_MISMATCH);
    free(values);
    CHECK_OK(tether_container_free(c));
}

static void *make_one(void *a) { (void)a; made++; return malloc(8); }
static tether_status complete_args(void *instance, void *const *args, size_t n, void *context) {
    (void)instance; (void)args; (void)n; (void)context;
    return TETHER_OK;
}

/* The slot kinds the C numbers name are read from the library's one description of them
 * (Param.Kind): an unknown number, a keyed kind without a key and a completion target of a
 * kind a completion cannot declare are refused by name, and nothing is registered. */
static void slot_kinds_are_refused_by_name(void) {
    made = 0;
    tether_container *c = new_container();
    tether_registration *r = (tether_registration *)&r;
    tether_param unknown[] = { { (tether_param_kind)99, "X" } };
    CHECK_STATUS(tether_register(c, "Odd", (tether_fn)make_one, unknown, 1, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("param 1 of \"Odd\" has kind 99, which is not a tether_param_kind");
    CHECK(r == NULL);
    tether_param keyless[] = { { TETHER_PARAM_WEAK_LAZY, NULL } };
    CHECK_STATUS(tether_register(c, "Odd", (tether_fn)make_one, keyless, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("param 1 of \"Odd\" is TETHER_PARAM_WEAK_LAZY but its key is NULL or empty");
    /* A key on a kind that takes none is ignored: CONTEXT gets the context. */
    tether_param context[] = { { TETHER_PARAM_CONTEXT, "ignored" } };
    CHECK_OK(tether_register(c, "Ctx", (tether_fn)make_one, context, 1, NULL));

    tether_param target[] = { TETHER_LAZY("Ctx") };
    tether_completion done = { NULL, complete_args, target, 1, NULL };
    tether_options o = TETHER_OPTIONS_INIT;
    o.callbacks = &done;
    o.callback_count = 1;
    CHECK_STATUS(tether_register_with(c, "Done", (tether_fn)make_one, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("param 1 has kind TETHER_PARAM_LAZY; a completion callback declares TETHER_PARAM_DEP or TETHER_PARAM_WEAK targets only");
    tether_param weak_target[] = { TETHER_WEAK("Ctx") };
    done.params = weak_target;
    CHECK_OK(tether_register_with(c, "Done", (tether_fn)make_one, NULL, 0, &o, NULL));

    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Odd", &ref), TETHER_E_NOT_FOUND);  /* nothing was registered */
    CHECK(made == 0);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(two_resolver_slots_are_refused);
    RUN(arguments_on_a_shared_scope_are_refused);
    RUN(far_more_arguments_than_slots);
    RUN(slot_kinds_are_refused_by_name);
    return harness_finish();
}
