/* tether_register_ex: a registration configured in one call, never visible half set up. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "harness.h"

static atomic_int made, dropped, completed;

static void *make(void) { atomic_fetch_add(&made, 1); return malloc(8); }
static void *make_variadic(void *context, int64_t n, ...) { (void)context; (void)n; return make(); }
static void drop(void *instance, void *context) { (void)context; atomic_fetch_add(&dropped, 1); free(instance); }
static tether_status complete(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance;
    atomic_fetch_add(&completed, *(int *)context);
    return TETHER_OK;
}

static void reset_counts(void) { made = dropped = completed = 0; }

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
static tether_container *shared;
static atomic_int stop;

static void *resolver_thread(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        tether_ref *ref;
        if (tether_resolve(shared, "K", &ref) == TETHER_OK) tether_ref_release(ref);
    }
    return NULL;
}

static void test_reregistering_under_load(void) {
    reset_counts();
    CHECK_OK(tether_container_new(NULL, &shared));
    tether_registration_options o = {0};
    o.drop = drop;
    CHECK_OK(TB.register_ex(shared, "K", (tether_fn)make, NULL, 0, &o, NULL));
    stop = 0;
    pthread_t t;
    pthread_create(&t, NULL, resolver_thread, NULL);
    for (int i = 0; i < 2000; i++) CHECK_OK(TB.register_ex(shared, "K", (tether_fn)make, NULL, 0, &o, NULL));
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    CHECK_OK(tether_container_free(shared));
    CHECK(made == dropped);
}

int main(void) {
    RUN(test_everything_applied);
    RUN(test_registrations_without_handles);
    RUN(test_variadic_and_bad_options);
    RUN(test_reregistering_under_load);
    return harness_finish();
}
