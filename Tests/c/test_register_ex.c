/* tether_register_ex: a registration configured in one call, never visible half set up. */
#include "harness.h"
#include "register_forms.h"

static void *make_variadic(void *context, int64_t n, ...) { (void)context; (void)n; return make(); }

static void test_everything_applied(void) {
    reset_counts();
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    int one = 1, ten = 10;
    tether_complete_fn fns[] = { complete, complete };
    void *contexts[] = { &one, &ten };
    tether_registration_options o = {0};
    o.scope = TETHER_SCOPE_SINGLETON;
    o.drop = drop;
    o.completions = fns;
    o.completion_contexts = contexts;
    o.completion_count = 2;
    tether_registration *reg;
    CHECK_OK(TB.register_ex(c, "S", (tether_fn)make, NULL, 0, &o, &reg));
    tether_ref *a, *b;
    CHECK_OK(tether_resolve(c, "S", &a));
    CHECK_OK(tether_resolve(c, "S", &b));
    CHECK(tether_ref_get(a) == tether_ref_get(b));   /* singleton */
    CHECK(made == 1 && completed == 11);
    tether_ref_release(a);
    tether_ref_release(b);
    CHECK_OK(tether_container_free(c));
    CHECK(dropped == 1);                               /* destructor from the options */
}

/* With a NULL out no handle is made; replacing and freeing such registrations
   still drops their singletons once, and a handle taken later stays exact. */
static void test_registrations_without_handles(void) {
    reset_counts();
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_registration_options o = {0};
    o.scope = TETHER_SCOPE_SINGLETON;
    o.drop = drop;
    CHECK_OK(TB.register_ex(c, "S", (tether_fn)make, NULL, 0, &o, NULL));
    tether_ref *a;
    CHECK_OK(tether_resolve(c, "S", &a));
    tether_ref_release(a);
    CHECK(made == 1 && dropped == 0);                  /* the cache holds it */
    tether_registration *reg;
    CHECK_OK(TB.register_ex(c, "S", (tether_fn)make, NULL, 0, &o, &reg));
    CHECK(dropped == 1);                               /* replaced: its singleton dropped */
    CHECK_OK(TB.register_ex(c, "S", (tether_fn)make, NULL, 0, &o, NULL));
    CHECK_STATUS(tether_set_scope(reg, TETHER_SCOPE_GRAPH), TETHER_E_INVALID_HANDLE);  /* replaced */
    CHECK_OK(tether_resolve(c, "S", &a));
    CHECK(made == 2);
    CHECK_OK(tether_container_free(c));
    CHECK(dropped == 1);                               /* `a` still holds the second */
    tether_ref_release(a);
    CHECK(dropped == 2);
}

static void test_variadic_and_bad_options(void) {
    reset_counts();
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param p[] = { TETHER_CONTEXT, TETHER_I64, TETHER_F64 };
    tether_registration_options o = {0};
    o.variadic_fixed = 2;
    o.drop = drop;
    CHECK_OK(TB.register_ex(c, "V", (tether_fn)make_variadic, p, 3, &o, NULL));
    tether_value args[] = { TETHER_VAL_I64(1), TETHER_VAL_F64(2.5) };
    tether_ref *ref;
    CHECK_OK(tether_resolve_args(c, "V", args, 2, &ref));
    tether_ref_release(ref);
    CHECK(made == 1 && dropped == 1);

    o.variadic_fixed = 4;
    CHECK_STATUS(TB.register_ex(c, "V2", (tether_fn)make_variadic, p, 3, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("variadic_fixed");
    o.variadic_fixed = 0;
    o.scope = (tether_scope)42;
    CHECK_STATUS(TB.register_ex(c, "V2", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("scope");
    o.scope = TETHER_SCOPE_GRAPH;
    tether_complete_fn none[] = { NULL };
    o.completions = none;
    o.completion_count = 1;
    CHECK_STATUS(TB.register_ex(c, "V2", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("completions[0]");
    CHECK_STATUS(tether_resolve(c, "V2", &ref), TETHER_E_NOT_FOUND);   /* nothing half registered */
    CHECK_OK(tether_container_free(c));
}

/* Re-registering while another thread resolves: every instance has its destructor. */
static tether_status register_k(void) {
    tether_registration_options o = {0};
    o.drop = drop;
    return TB.register_ex(shared, "K", (tether_fn)make, NULL, 0, &o, NULL);
}
static void test_reregistering_under_load(void) { registered_under_load(register_k); }

int main(void) {
    RUN(test_everything_applied);
    RUN(test_registrations_without_handles);
    RUN(test_variadic_and_bad_options);
    RUN(test_reregistering_under_load);
    return harness_finish();
}
