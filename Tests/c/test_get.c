/* tether_get and tether_weak_get: the instance and the handle that keeps it alive, in one call. */
#include "harness.h"
#include "fixtures.h"

/* A container with "S" registered: a node of `k` in `scope`, dropped by drop_node. */
static tether_container *container_with_s(kind *k, tether_scope scope) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = k;
    o.drop = drop_node;
    o.scope = scope;
    CHECK_OK(TETHER_REGISTER1(c, "S", &o, NULL, make0, TETHER_AS(TETHER_CONTEXT, kind *)));
    return c;
}

static void test_get(void) {
    kind k = { "S", 0, 0 };
    tether_container *c = container_with_s(&k, TETHER_SCOPE_GRAPH);
    tether_ref *keep = NULL;
    node *s = tether_get(c, "S", &keep);
    CHECK(s != NULL && keep != NULL && s->magic == ALIVE && k.made == 1);
    CHECK(tether_ref_get(keep) == s);                  /* the handle holds exactly that instance */
    tether_weak *w;
    CHECK_OK(tether_ref_downgrade(keep, &w));
    tether_ref *again = NULL;
    CHECK(tether_weak_get(w, &again) == s && again != NULL && again != keep);
    CHECK_OK(tether_ref_release(again));
    CHECK(k.dropped == 0);
    CHECK_OK(tether_ref_release(keep));                /* last strong handle: destroyed now */
    CHECK(k.dropped == 1);
    again = (tether_ref *)&k;
    CHECK(tether_weak_get(w, &again) == NULL && again == NULL);
    CHECK(tether_last_status() == TETHER_E_EXPIRED);
    CHECK_ERROR_HAS("tether_weak_get: the instance is gone (\"S\"");
    CHECK_OK(tether_weak_release(w));
    CHECK(tether_weak_get(w, &again) == NULL && tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
}

static void test_get_failures(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_ref *keep = (tether_ref *)c;
    CHECK(tether_get(c, "Missing", &keep) == NULL && keep == NULL);
    CHECK(tether_last_status() == TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"Missing\"");
    CHECK(tether_get(c, "Missing", NULL) == NULL && tether_last_status() == TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("tether_get");
    CHECK(tether_get(c, NULL, &keep) == NULL && tether_last_status() == TETHER_E_INVALID_ARGUMENT);
    CHECK(tether_weak_get(NULL, &keep) == NULL && tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
    CHECK(tether_get(c, "S", &keep) == NULL && tether_last_status() == TETHER_E_INVALID_HANDLE && keep == NULL);
}

/* A singleton hit through tether_get: the same instance, each call with its own handle. */
static void test_get_singleton(void) {
    kind k = { "S", 0, 0 };
    tether_container *c = container_with_s(&k, TETHER_SCOPE_SINGLETON);
    tether_ref *a, *b;
    void *x = tether_get(c, "S", &a), *y = tether_get(c, "S", &b);
    CHECK(x && x == y && a && b && k.made == 1);
    CHECK_OK(tether_ref_release(a));
    CHECK_OK(tether_ref_release(b));
    CHECK(k.dropped == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(k.dropped == 1);
}

int main(void) {
    RUN(test_get);
    RUN(test_get_failures);
    RUN(test_get_singleton);
    return harness_finish();
}
