/* The calls that hand out an instance pointer alongside (or instead of) a handle:
 * tether_resolve_key_instance and tether_resolver_get_weak_instance. */
#include <stdlib.h>
#include "harness.h"
#include "registering.h"
#include "binding.h"

typedef struct parent { void *child; } parent;
typedef struct child { void *parent; tether_weak *weak; } child;

static int parents_dropped, children_dropped;
static tether_status weak_status, null_status;
static int with_handle;   /* whether child_complete asks for a weak handle */

static void *make_plain(void) { return malloc(8); }
static void drop_plain(void *i, void *c) { (void)c; free(i); }

static void *make_parent(void *c) { parent *p = malloc(sizeof *p); p->child = c; return p; }
static void *make_child(void) { child *c = calloc(1, sizeof *c); return c; }
static void drop_parent(void *i, void *c) { (void)c; parents_dropped++; free(i); }
static void drop_child(void *i, void *c) {
    (void)c;
    child *ch = i;
    if (ch->weak) tether_weak_release(ch->weak);
    children_dropped++;
    free(i);
}

/* Child's back edge to Parent, as a binding would take it: the pointer, a weak handle only on request. */
static tether_status child_complete(tether_resolver *r, void *instance, void *context) {
    (void)context;
    child *ch = instance;
    weak_status = TB.resolver_get_weak_instance(r, "Parent", &ch->parent, with_handle ? &ch->weak : NULL);
    tether_weak *w = NULL;
    null_status = TB.resolver_get_weak_instance(r, "Parent", NULL, &w);
    return weak_status;
}

static tether_container *cycle(void) {
    tether_container *c;
    tether_container_new(NULL, &c);
    tether_param pp[] = { TETHER_DEP("Child") };
    tether_complete_fn fns[] = { child_complete };
    void *contexts[] = { NULL };
    tether_registration_options po = {0}, co = {0};
    po.drop = drop_parent;
    co.drop = drop_child;
    co.completions = fns;
    co.completion_contexts = contexts;
    co.completion_count = 1;
    TB.register_ex(c, "Parent", (tether_fn)make_parent, pp, 1, &po, NULL);
    TB.register_ex(c, "Child", (tether_fn)make_child, NULL, 0, &co, NULL);
    return c;
}

static void test_weak_instance_points_at_the_graphs_parent(void) {
    for (with_handle = 0; with_handle <= 1; with_handle++) {
        parents_dropped = children_dropped = 0;
        tether_container *c = cycle();
        tether_ref *ref;
        CHECK_OK(tether_resolve(c, "Parent", &ref));
        parent *p = tether_ref_get(ref);
        child *ch = p->child;
        CHECK_OK(weak_status);
        CHECK(ch->parent == p);                           /* parent.child.parent == parent */
        CHECK(null_status == TETHER_E_INVALID_ARGUMENT);
        CHECK((ch->weak != NULL) == with_handle);         /* a handle only when asked for */
        if (with_handle) {
            tether_ref *up;
            CHECK_OK(tether_weak_upgrade(ch->weak, &up));
            CHECK(tether_ref_get(up) == p);
            CHECK_OK(tether_ref_release(up));
        }
        CHECK_OK(tether_ref_release(ref));
        CHECK(parents_dropped == 1 && children_dropped == 1);   /* the weak edge held nothing */
        CHECK_OK(tether_container_free(c));
    }
}

static void test_resolve_key_instance_matches_the_handle(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    reg_with_context(c, "T", (tether_fn)make_plain, NULL, 0, TETHER_SCOPE_TRANSIENT, NULL, drop_plain);
    reg_with_context(c, "S", (tether_fn)make_plain, NULL, 0, TETHER_SCOPE_SINGLETON, NULL, drop_plain);
    uint32_t t, s;
    CHECK_OK(tether_intern(c, "T", &t));
    CHECK_OK(tether_intern(c, "S", &s));
    void *a = NULL, *b = NULL;
    tether_ref *ra, *rb, *rs1, *rs2;
    CHECK_OK(TB.resolve_key_instance(c, t, &a, &ra));
    CHECK_OK(TB.resolve_key_instance(c, t, &b, &rb));
    CHECK(a != NULL && a == tether_ref_get(ra) && b == tether_ref_get(rb) && a != b);
    CHECK_OK(TB.resolve_key_instance(c, s, &a, &rs1));   /* built */
    CHECK_OK(TB.resolve_key_instance(c, s, &b, &rs2));   /* a cache hit */
    CHECK(a == b && a == tether_ref_get(rs1) && b == tether_ref_get(rs2));
    CHECK_OK(tether_ref_release(ra));
    CHECK_OK(tether_ref_release(rb));
    CHECK_OK(tether_ref_release(rs1));
    CHECK_OK(tether_ref_release(rs2));
    CHECK_OK(tether_container_free(c));
}

static void test_resolve_key_instance_bad_input(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    uint32_t id;
    CHECK_OK(tether_intern(c, "Nowhere", &id));
    void *p = &id;
    tether_ref *r = (tether_ref *)&id;
    CHECK_STATUS(TB.resolve_key_instance(c, id, NULL, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("instance");
    CHECK(r == NULL);
    CHECK_STATUS(TB.resolve_key_instance(c, id, &p, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK(p == NULL);
    p = &id;
    CHECK_STATUS(TB.resolve_key_instance(c, id, &p, &r), TETHER_E_NOT_FOUND);
    CHECK(p == NULL && r == NULL);
    CHECK_STATUS(TB.resolve_key_instance(c, 0xFFFFFFF0u, &p, &r), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.resolve_key_instance(NULL, id, &p, &r), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_weak_instance_points_at_the_graphs_parent);
    RUN(test_resolve_key_instance_matches_the_handle);
    RUN(test_resolve_key_instance_bad_input);
    return harness_finish();
}
