/* Swinject's circular-dependency documentation, ported to Tether's C API.
 *
 * Swinject supports initializer/property and property/property cycles through
 * `initCompleted`, calls initializer/initializer "not supported" (it recurses
 * until it crashes) and remarks that a factory inside a cycle may be invoked
 * more than once. Tether: completion callbacks (tether_on_complete) close the
 * cycle, a constructor-only cycle is TETHER_E_CYCLE with the path, and every
 * factory runs exactly once per resolve. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

typedef struct Child { tether_weak *parent; } Child;   /* weak back-reference */
typedef struct Parent { Child *child; } Parent;        /* strong: DEP or resolver_get */

static struct {
    int parent_made, child_made, parent_dropped, child_dropped;
    int bad_release;
} n;

static Parent *make_parent_with_child(Child *child) {
    Parent *p = xcalloc(sizeof *p);
    p->child = child;
    n.parent_made++;
    return p;
}
static Parent *make_parent(void) { n.parent_made++; return xcalloc(sizeof(Parent)); }
static Child *make_child(void) { n.child_made++; return xcalloc(sizeof(Child)); }
static Child *make_child_with_parent(Parent *parent) { (void)parent; n.child_made++; return xcalloc(sizeof(Child)); }
static Parent *make_self(Parent *self) { (void)self; n.parent_made++; return xcalloc(sizeof(Parent)); }

static void drop_parent(void *instance, void *context) { (void)context; n.parent_dropped++; free(instance); }
static void drop_child(void *instance, void *context) {
    (void)context;
    Child *c = instance;
    if (c->parent && tether_weak_release(c->parent) != TETHER_OK) n.bad_release++;
    n.child_dropped++;
    free(c);
}

/* Child's initCompleted: child.parent = r.resolve(Parent) — weakly. */
static tether_status complete_child(tether_resolver *r, void *instance, void *context) {
    (void)context;
    Child *child = instance;
    return tether_resolver_get_weak(r, "Parent", &child->parent);
}

/* Parent's initCompleted (property/property): parent.child = r.resolve(Child). */
static tether_status complete_parent(tether_resolver *r, void *instance, void *context) {
    (void)context;
    Parent *parent = instance;
    void *child = NULL;
    tether_status st = tether_resolver_get(r, "Child", &child);
    parent->child = child;
    return st;
}

enum shape { INITIALIZER_PROPERTY, PROPERTY_PROPERTY, INITIALIZER_INITIALIZER };

static tether_container *container_for(enum shape shape) {
    memset(&n, 0, sizeof n);
    tether_container *c = NULL;
    tether_registration *rp = NULL, *rc = NULL;
    tether_param parent_needs_child[] = { TETHER_DEP("Child") };
    tether_param child_needs_parent[] = { TETHER_DEP("Parent") };
    CHECK_OK(tether_container_new(NULL, &c));
    switch (shape) {
    case INITIALIZER_PROPERTY:
        CHECK_OK(tether_register(c, "Parent", (tether_fn)make_parent_with_child, parent_needs_child, 1, &rp));
        CHECK_OK(tether_register(c, "Child", (tether_fn)make_child, NULL, 0, &rc));
        CHECK_OK(tether_on_complete(rc, complete_child, NULL));
        break;
    case PROPERTY_PROPERTY:
        CHECK_OK(tether_register(c, "Parent", (tether_fn)make_parent, NULL, 0, &rp));
        CHECK_OK(tether_register(c, "Child", (tether_fn)make_child, NULL, 0, &rc));
        CHECK_OK(tether_on_complete(rp, complete_parent, NULL));
        CHECK_OK(tether_on_complete(rc, complete_child, NULL));
        break;
    case INITIALIZER_INITIALIZER:
        CHECK_OK(tether_register(c, "Parent", (tether_fn)make_parent_with_child, parent_needs_child, 1, &rp));
        CHECK_OK(tether_register(c, "Child", (tether_fn)make_child_with_parent, child_needs_parent, 1, &rc));
        break;
    }
    CHECK_OK(tether_set_context(rp, NULL, drop_parent));
    CHECK_OK(tether_set_context(rc, NULL, drop_child));
    return c;
}

/* parent->child->parent, upgraded, is parent. */
static void check_closed(Parent *parent) {
    CHECK(parent && parent->child && parent->child->parent);
    if (!(parent && parent->child && parent->child->parent)) return;
    tether_ref *back = NULL;
    CHECK_OK(tether_weak_upgrade(parent->child->parent, &back));
    CHECK(tether_ref_get(back) == parent);
    CHECK_OK(tether_ref_release(back));
}

static void test_swinject_initializer_property(void) {
    tether_container *c = container_for(INITIALIZER_PROPERTY);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Parent", &ref));
    check_closed(tether_ref_get(ref));
    CHECK(n.parent_made == 1 && n.child_made == 1);
    CHECK(n.parent_dropped == 0 && n.child_dropped == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.parent_dropped == 1 && n.child_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

static void test_swinject_property_property(void) {
    tether_container *c = container_for(PROPERTY_PROPERTY);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Parent", &ref));
    check_closed(tether_ref_get(ref));
    CHECK(n.parent_made == 1 && n.child_made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.parent_dropped == 1 && n.child_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

static void test_swinject_initializer_initializer_is_a_cycle_error(void) {
    tether_container *c = container_for(INITIALIZER_INITIALIZER);
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Parent", &ref), TETHER_E_CYCLE);
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("dependency cycle through constructors");
    CHECK_ERROR_HAS("\"Parent\" -> \"Child\" -> \"Parent\"");
    CHECK_ERROR_HAS("tether_on_complete");
    CHECK_ERROR_HAS("TETHER_WEAK_LAZY(\"Parent\")");

    CHECK_STATUS(tether_resolve(c, "Child", &ref), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"Child\" -> \"Parent\" -> \"Child\"");
    CHECK(n.parent_made == 0 && n.child_made == 0);   /* no recursion, no factory ran */
    CHECK(n.parent_dropped == 0 && n.child_dropped == 0);
    CHECK_OK(tether_container_free(c));
}

static void test_swinject_self_dependency_is_a_cycle_of_one(void) {
    memset(&n, 0, sizeof n);
    tether_container *c = NULL;
    tether_ref *ref = NULL;
    tether_param self[] = { TETHER_DEP("A") };
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_register(c, "A", (tether_fn)make_self, self, 1, NULL));
    CHECK_STATUS(tether_resolve(c, "A", &ref), TETHER_E_CYCLE);
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("\"A\" -> \"A\"");
    CHECK(strstr(tether_last_error(), "\"A\" -> \"A\" -> \"A\"") == NULL);
    CHECK(n.parent_made == 0);
    CHECK_OK(tether_container_free(c));
}

/* The remark: "a factory in a circular dependency may be invoked more than once".
 * Not here: every cyclic shape, resolved from either end, many times over. */
static void test_swinject_remark_each_factory_runs_once_per_resolve(void) {
    enum { ROUNDS = 50 };
    enum shape shapes[] = { INITIALIZER_PROPERTY, PROPERTY_PROPERTY };
    const char *starts[] = { "Parent", "Child" };
    for (size_t s = 0; s < 2; s++) {
        for (size_t k = 0; k < 2; k++) {
            tether_container *c = container_for(shapes[s]);
            for (int i = 0; i < ROUNDS; i++) {
                tether_ref *ref = NULL;
                CHECK_OK(tether_resolve(c, starts[k], &ref));
                CHECK(n.parent_made == i + 1 && n.child_made == i + 1);
                if (k == 0) check_closed(tether_ref_get(ref));
                CHECK_OK(tether_ref_release(ref));
            }
            CHECK(n.parent_dropped == ROUNDS && n.child_dropped == ROUNDS);
            CHECK(n.bad_release == 0);
            CHECK_OK(tether_container_free(c));
        }
    }
}

/* Started from Child, Parent exists only through Child's weak back-reference:
 * it was built with this very child, and is gone once the resolve returns. */
static void test_swinject_initializer_property_from_child(void) {
    tether_container *c = container_for(INITIALIZER_PROPERTY);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Child", &ref));
    Child *child = tether_ref_get(ref);
    CHECK(n.parent_made == 1 && n.child_made == 1);
    CHECK(n.parent_dropped == 1 && n.child_dropped == 0);
    CHECK(child && child->parent);
    if (child && child->parent) {
        tether_ref *back = NULL;
        CHECK_STATUS(tether_weak_upgrade(child->parent, &back), TETHER_E_EXPIRED);
        CHECK(back == NULL);
    }
    CHECK_OK(tether_ref_release(ref));
    CHECK(n.child_dropped == 1 && n.bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_swinject_initializer_property);
    RUN(test_swinject_property_property);
    RUN(test_swinject_initializer_initializer_is_a_cycle_error);
    RUN(test_swinject_self_dependency_is_a_cycle_of_one);
    RUN(test_swinject_remark_each_factory_runs_once_per_resolve);
    RUN(test_swinject_initializer_property_from_child);
    return harness_finish();
}
