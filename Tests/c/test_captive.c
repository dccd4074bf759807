/* Captive dependencies: a singleton holding a graph-, transient- or weak-scoped
 * instance strongly keeps it for its own life. tether_validate reports every
 * such edge (factory DEP slot, declared DEP target) with its path and what to
 * do; a strict container (tether_container_set_strict) refuses to build it,
 * before the singleton's factory runs, and builds nothing half. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

static tether_status complete_noop(void *instance, void *const *args, size_t n, void *context) {
    (void)instance; (void)args; (void)n; (void)context;
    return TETHER_OK;
}
static tether_status resolver_status;
static tether_status complete_with_resolver(tether_resolver *r, void *instance, void *context) {
    (void)instance; (void)context;
    void *got = NULL;
    return resolver_status = tether_resolver_get(r, "Short", &got);
}

static kind holder = {"Holder", 0, 0}, shorter = {"Short", 0, 0};

/* "Holder" (singleton) and "Short" in `scope`; Holder takes Short by `how`:
 * 0 a DEP slot, 1 a declared DEP target, 2 tether_resolver_get in a callback. */
static tether_container *captive_graph(tether_scope scope, int how) {
    holder.made = holder.dropped = shorter.made = shorter.dropped = 0;
    tether_container *c = new_container();
    reg_node(c, "Short", &shorter, scope, NULL, NULL, drop_node);
    tether_registration *h = reg_node(c, "Holder", &holder, TETHER_SCOPE_SINGLETON, how == 0 ? "Short" : NULL, NULL, drop_node);
    tether_param target[] = { TETHER_DEP("Short") };
    if (how == 1) CHECK_OK(tether_on_complete_params(h, complete_noop, target, 1, NULL));
    if (how == 2) CHECK_OK(tether_on_complete(h, complete_with_resolver, NULL));
    return c;
}

static void validate_reports_every_captive_edge(void) {
    tether_scope shorter_scopes[] = { TETHER_SCOPE_GRAPH, TETHER_SCOPE_TRANSIENT, TETHER_SCOPE_WEAK };
    const char *names[] = { "graph", "transient", "weak" };
    for (int s = 0; s < 3; s++) {
        for (int how = 0; how < 2; how++) {
            tether_container *c = captive_graph(shorter_scopes[s], how);
            CHECK_STATUS(tether_validate(c), TETHER_E_CAPTIVE_DEPENDENCY);
            CHECK_ERROR_HAS("captive dependency \"Holder\" -> \"Short\"");
            if (how == 1) CHECK_ERROR_HAS("\"Short\" (completion callback #1)");
            CHECK_ERROR_HAS("the singleton \"Holder\" would keep the");
            CHECK_ERROR_HAS(names[s]);
            CHECK_ERROR_HAS("make \"Short\" a singleton, or inject it lazily");
            CHECK(holder.made == 0 && shorter.made == 0);
            /* Not strict: the resolve builds it (and keeps it with the singleton). */
            tether_ref *ref = NULL;
            resolve(c, "Holder", &ref);
            CHECK(holder.made == 1 && shorter.made == 1);
            CHECK_OK(tether_ref_release(ref));
            CHECK_OK(tether_container_free(c));
            CHECK(holder.dropped == 1 && shorter.dropped == 1);
        }
    }
    /* A singleton dependency is no captive; neither is a weak or lazy slot. */
    tether_container *c = captive_graph(TETHER_SCOPE_SINGLETON, 0);
    CHECK_OK(tether_validate(c));
    CHECK_OK(tether_container_free(c));
    c = new_container();
    tether_param weak_and_lazy[] = { TETHER_WEAK("Short"), TETHER_LAZY("Short") };
    reg_node(c, "Short", &shorter, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "Holder", (tether_fn)make0, weak_and_lazy, 2, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_validate(c));
    CHECK_OK(tether_container_free(c));
}

static void strict_container_refuses_captives(void) {
    for (int how = 0; how < 3; how++) {
        tether_container *c = captive_graph(TETHER_SCOPE_GRAPH, how);
        CHECK_OK(tether_container_set_strict(c, TETHER_STRICT_CAPTIVE));
        tether_ref *ref = (tether_ref *)&ref;
        /* A callback that returns what tether_resolver_get said fails the resolve as any failing callback. */
        CHECK_STATUS(tether_resolve(c, "Holder", &ref), how == 2 ? TETHER_E_FACTORY_FAILED : TETHER_E_CAPTIVE_DEPENDENCY);
        if (how == 2) CHECK(resolver_status == TETHER_E_CAPTIVE_DEPENDENCY);
        CHECK(ref == NULL);
        CHECK_ERROR_HAS("captive dependency \"Holder\" -> \"Short\"");
        CHECK_ERROR_HAS("make \"Short\" a singleton");
        CHECK_ERROR_HAS("tether_container_set_strict");
        /* A DEP slot is refused before any factory runs; a callback's target after
         * the holder was made, which the failed resolve destroys. Nothing cached. */
        if (how == 0) CHECK(holder.made == 0 && shorter.made == 0);
        CHECK(holder.made == holder.dropped && shorter.made == shorter.dropped);
        /* Graph-scoped "Short" alone is fine; so is the holder once checks are off. */
        resolve(c, "Short", &ref);
        CHECK_OK(tether_ref_release(ref));
        CHECK_OK(tether_container_set_strict(c, 0));
        resolve(c, "Holder", &ref);
        CHECK_OK(tether_ref_release(ref));
        CHECK_OK(tether_container_free(c));
        CHECK(holder.made == holder.dropped && shorter.made == shorter.dropped);
    }
}

/* Children created from a strict container are strict; the flag is checked. */
static void strict_is_inherited_and_checked(void) {
    tether_container *c = new_container();
    CHECK_STATUS(tether_container_set_strict(c, 2), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("TETHER_STRICT_CAPTIVE");
    CHECK_STATUS(tether_container_set_strict(NULL, TETHER_STRICT_CAPTIVE), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_set_strict(c, TETHER_STRICT_CAPTIVE));
    tether_container *child = new_container_in(c);
    holder.made = shorter.made = 0;
    reg_node(child, "Short", &shorter, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node);
    reg_node(child, "Holder", &holder, TETHER_SCOPE_SINGLETON, "Short", NULL, drop_node);
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(child, "Holder", &ref), TETHER_E_CAPTIVE_DEPENDENCY);
    CHECK(holder.made == 0 && shorter.made == 0);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(c));
}

/* A child's key over its parent's singleton not cached yet: the singleton's frame checks captives as its
 * own container says (its dependencies are looked up there too), not as the resolving child says: the
 * parent strict and the child not refuses, with the path from the child's key; the child strict and the
 * parent not builds it. The creation plan runs both (branch foreign). */
static void a_parents_singleton_resolved_from_a_child_checks_as_its_own_container(void) {
    for (int strict_parent = 0; strict_parent < 2; strict_parent++) {
        tether_container *c = new_container();
        tether_container *child = new_container_in(c);
        CHECK_OK(tether_container_set_strict(c, strict_parent ? TETHER_STRICT_CAPTIVE : 0));
        CHECK_OK(tether_container_set_strict(child, strict_parent ? 0 : TETHER_STRICT_CAPTIVE));
        holder.made = holder.dropped = shorter.made = shorter.dropped = 0;
        static kind user = {"User", 0, 0};
        user.made = user.dropped = 0;
        reg_node(c, "Short", &shorter, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
        reg_node(c, "Holder", &holder, TETHER_SCOPE_SINGLETON, "Short", NULL, drop_node);
        reg_node(child, "User", &user, TETHER_SCOPE_GRAPH, "Holder", NULL, drop_node);
        for (int round = 0; round < 2; round++) {
            tether_ref *ref = (tether_ref *)&ref;
            if (strict_parent) {
                CHECK_STATUS(tether_resolve(child, "User", &ref), TETHER_E_CAPTIVE_DEPENDENCY);
                CHECK(ref == NULL);
                CHECK_ERROR_HAS("captive dependency \"Holder\" -> \"Short\" (while resolving \"User\" -> \"Holder\")");
                CHECK_ERROR_HAS("tether_container_set_strict");
                CHECK(holder.made == 0 && shorter.made == 0 && user.made == 0);
            } else {
                node *u = resolve(child, "User", &ref);
                CHECK(u != NULL && holder.made == 1 && shorter.made == 1 && user.made == round + 1);
                CHECK_OK(tether_ref_release(ref));
            }
        }
        CHECK_OK(tether_container_free(child));
        CHECK_OK(tether_container_free(c));
        CHECK(holder.made == holder.dropped && shorter.made == shorter.dropped && user.made == user.dropped);
    }
}

int main(void) {
    RUN(validate_reports_every_captive_edge);
    RUN(strict_container_refuses_captives);
    RUN(strict_is_inherited_and_checked);
    RUN(a_parents_singleton_resolved_from_a_child_checks_as_its_own_container);
    return harness_finish();
}
