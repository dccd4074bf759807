/* tether_resolver_ref: a strong handle to an instance of the current resolve,
 * taken from inside a factory or completion callback, without building anything. */
#include <stdlib.h>
#include "harness.h"
#include "binding.h"

static int made_t, dropped_t;
static tether_ref *kept;            /* the handle a "binding" keeps past the resolve */
static tether_resolver *stale;      /* a resolver used after its callback returned */
static tether_status seen_status;

static void *make_t(void) { made_t++; return malloc(8); }
static void drop_t(void *i, void *c) { (void)c; dropped_t++; free(i); }
static void drop_free(void *i, void *c) { (void)c; free(i); }

/* A factory that keeps its transient dependency with a handle of its own. */
static void *make_holder(void *t, tether_resolver *r) {
    tether_ref *ref = NULL;
    if (TB.resolver_ref(r, t, &ref) != TETHER_OK) return NULL;
    kept = ref;
    stale = r;
    int local;
    seen_status = TB.resolver_ref(r, &local, &ref);   /* not an instance of this resolve */
    return malloc(8);
}

static tether_container *setup(void) {
    tether_container *c;
    tether_registration *reg;
    tether_container_new(NULL, &c);
    tether_register(c, "T", (tether_fn)make_t, NULL, 0, &reg);
    tether_set_scope(reg, TETHER_SCOPE_TRANSIENT);
    tether_set_context(reg, NULL, drop_t);
    tether_param p[] = { TETHER_DEP("T"), TETHER_RESOLVER };
    tether_register(c, "Holder", (tether_fn)make_holder, p, 2, &reg);
    tether_set_context(reg, NULL, drop_free);
    return c;
}

static void test_ref_to_a_dependency_builds_nothing(void) {
    made_t = dropped_t = 0;
    kept = NULL;
    tether_container *c = setup();
    tether_ref *holder;
    CHECK_OK(tether_resolve(c, "Holder", &holder));
    CHECK(made_t == 1);                       /* the transient was not built a second time */
    CHECK(kept != NULL);
    CHECK_OK(tether_ref_release(holder));
    CHECK(dropped_t == 0);                    /* the binding's handle still holds it */
    CHECK_OK(tether_ref_release(kept));
    CHECK(dropped_t == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_foreign_pointer_and_stale_resolver(void) {
    tether_container *c = setup();
    tether_ref *holder, *ref;
    CHECK_OK(tether_resolve(c, "Holder", &holder));
    CHECK(seen_status == TETHER_E_NOT_FOUND);
    int x;
    CHECK_STATUS(TB.resolver_ref(stale, &x, &ref), TETHER_E_WRONG_CONTEXT);
    CHECK_ERROR_HAS("tether_resolver_ref");
    CHECK(ref == NULL);
    CHECK_STATUS(TB.resolver_ref(NULL, &x, &ref), TETHER_E_INVALID_HANDLE);
    tether_ref_release(kept);
    tether_ref_release(holder);
    CHECK_OK(tether_container_free(c));
}

static tether_status complete_self(tether_resolver *r, void *instance, void *context) {
    (void)context;
    tether_ref *self;
    tether_status s = TB.resolver_ref(r, instance, &self);
    if (s != TETHER_OK) return s;
    kept = self;
    return TETHER_OK;
}

static void test_ref_from_a_completion_callback(void) {
    made_t = dropped_t = 0;
    tether_container *c;
    tether_registration *reg;
    tether_container_new(NULL, &c);
    tether_register(c, "T", (tether_fn)make_t, NULL, 0, &reg);
    tether_set_context(reg, NULL, drop_t);
    tether_on_complete(reg, complete_self, NULL);
    tether_ref *ref;
    CHECK_OK(tether_resolve(c, "T", &ref));
    CHECK(tether_ref_get(kept) == tether_ref_get(ref));
    CHECK_OK(tether_ref_release(ref));
    CHECK(dropped_t == 0);
    CHECK_OK(tether_ref_release(kept));
    CHECK(dropped_t == 1 && made_t == 1);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_ref_to_a_dependency_builds_nothing);
    RUN(test_foreign_pointer_and_stale_resolver);
    RUN(test_ref_from_a_completion_callback);
    return harness_finish();
}
