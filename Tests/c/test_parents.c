/* Parent containers: lookups fall through to the parent, a child's registration
 * overrides the parent's for resolves through the child, singletons live in the
 * container that registered them (and take their dependencies from it), and a
 * parent cannot be freed while a child exists. */
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* Registers `key` in `c` made by kind `k`, with an optional DEP on `dep`. A kind's
 * `tag` says which registration (and so which container) made an instance. */
static void reg(tether_container *c, const char *key, kind *k, tether_scope scope, const char *dep) {
    reg_node(c, key, k, scope, dep, NULL, drop_node);
}

static tether_container *new_checked_container(tether_container *parent) {
    tether_container *c = new_container_in(parent);
    CHECK(c != NULL);
    return c;
}

/* Resolves `key` from `c` and returns the tag of the registration that made it (`of_dep`: that made its
 * first dependency). */
static const char *made_by(tether_container *c, const char *key, int of_dep) {
    tether_ref *r;
    node *o = resolve(c, key, &r);
    if (o && of_dep) o = o->dep[0];
    const char *tag = o ? o->k->tag : "(failed)";
    if (r) CHECK_OK(tether_ref_release(r));
    return tag;
}
static const char *tag_of(tether_container *c, const char *key) { return made_by(c, key, 0); }
static const char *dep_tag_of(tether_container *c, const char *key) { return made_by(c, key, 1); }

static void child_falls_through_to_parent(void) {
    kind logger = {"parent.Logger", 0, 0}, service = {"child.Service", 0, 0};
    tether_container *parent = new_checked_container(NULL);
    tether_container *child = new_checked_container(parent);
    reg(parent, "Logger", &logger, TETHER_SCOPE_GRAPH, NULL);
    reg(child, "Service", &service, TETHER_SCOPE_GRAPH, "Logger");

    CHECK(strcmp(tag_of(child, "Logger"), "parent.Logger") == 0);
    CHECK(strcmp(dep_tag_of(child, "Service"), "parent.Logger") == 0);
    /* the parent does not see the child's keys */
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(parent, "Service", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Service\"");
    CHECK(r == NULL);

    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
    CHECK(logger.made == logger.dropped && service.made == service.dropped);
}

static void falls_through_several_levels(void) {
    kind k = {"root.K", 0, 0};
    tether_container *root = new_checked_container(NULL);
    tether_container *mid = new_checked_container(root);
    tether_container *leaf = new_checked_container(mid);
    reg(root, "K", &k, TETHER_SCOPE_GRAPH, NULL);
    CHECK(strcmp(tag_of(leaf, "K"), "root.K") == 0);
    CHECK_OK(tether_container_free(leaf));
    CHECK_OK(tether_container_free(mid));
    CHECK_OK(tether_container_free(root));
    CHECK(k.made == 1 && k.dropped == 1);
}

/* A parent registering Logger (kind `plog`) and `svc_key` over Logger (kind `svc`, in `scope`), and a child of it
 * registering a Logger of its own (kind `clog`): the child, its parent in *parent. */
static tether_container *child_with_own_logger(tether_container **parent, kind *plog, kind *clog, const char *svc_key,
                                               kind *svc, tether_scope scope) {
    *parent = new_checked_container(NULL);
    tether_container *child = new_checked_container(*parent);
    reg(*parent, "Logger", plog, TETHER_SCOPE_GRAPH, NULL);
    reg(*parent, svc_key, svc, scope, "Logger");
    reg(child, "Logger", clog, TETHER_SCOPE_GRAPH, NULL);
    return child;
}

static void child_overrides_parent_key(void) {
    kind plog = {"parent.Logger", 0, 0}, clog = {"child.Logger", 0, 0}, svc = {"parent.Service", 0, 0};
    tether_container *parent;
    tether_container *child = child_with_own_logger(&parent, &plog, &clog, "Service", &svc, TETHER_SCOPE_GRAPH);

    CHECK(strcmp(tag_of(child, "Logger"), "child.Logger") == 0);
    CHECK(strcmp(tag_of(parent, "Logger"), "parent.Logger") == 0);
    /* a parent's graph-scoped registration resolved through the child takes its
     * dependencies from the child (the container the resolve was called on) */
    CHECK(strcmp(dep_tag_of(child, "Service"), "child.Logger") == 0);
    CHECK(strcmp(dep_tag_of(parent, "Service"), "parent.Logger") == 0);

    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
    CHECK(plog.made == plog.dropped && clog.made == clog.dropped && svc.made == svc.dropped);
}

static void singleton_dependencies_come_from_the_registering_container(void) {
    kind plog = {"parent.Logger", 0, 0}, clog = {"child.Logger", 0, 0}, svc = {"parent.Svc", 0, 0};
    tether_container *parent;
    tether_container *child = child_with_own_logger(&parent, &plog, &clog, "Svc", &svc, TETHER_SCOPE_SINGLETON);

    CHECK(strcmp(dep_tag_of(child, "Svc"), "parent.Logger") == 0);
    CHECK(strcmp(dep_tag_of(parent, "Svc"), "parent.Logger") == 0);
    CHECK(svc.made == 1 && clog.made == 0);

    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
    CHECK(plog.made == plog.dropped && svc.dropped == 1);
}

static void singletons_live_in_the_registering_container(void) {
    kind s = {"parent.S", 0, 0};
    tether_container *parent = new_checked_container(NULL);
    tether_container *c1 = new_checked_container(parent);
    tether_container *c2 = new_checked_container(parent);
    reg(parent, "S", &s, TETHER_SCOPE_SINGLETON, NULL);

    tether_ref *r1, *r2, *r3, *r4;
    node *s1 = resolve(c1, "S", &r1);
    node *s2 = resolve(c2, "S", &r2);
    node *s3 = resolve(parent, "S", &r3);
    CHECK(s1 == s2 && s2 == s3);
    CHECK(s.made == 1);
    CHECK_OK(tether_ref_release(r1));
    CHECK_OK(tether_ref_release(r2));
    CHECK_OK(tether_ref_release(r3));

    /* resetting or freeing a child does not touch the parent's cache */
    CHECK_OK(tether_reset(c1, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_container_free(c1));
    CHECK(s.dropped == 0);
    node *s4 = resolve(c2, "S", &r4);
    CHECK(s4 == s1);
    CHECK(s.made == 1);
    CHECK_OK(tether_ref_release(r4));

    CHECK_OK(tether_reset(parent, TETHER_SCOPE_SINGLETON));
    CHECK(s.dropped == 1);
    CHECK(strcmp(tag_of(c2, "S"), "parent.S") == 0);
    CHECK(s.made == 2);
    CHECK_OK(tether_container_free(c2));
    CHECK(s.dropped == 1);                 /* still cached in the parent */
    CHECK_OK(tether_container_free(parent));
    CHECK(s.dropped == 2);
}

static void child_singleton_is_cached_in_the_child(void) {
    kind ps = {"parent.S", 0, 0}, cs = {"child.S", 0, 0};
    tether_container *parent = new_checked_container(NULL);
    tether_container *child = new_checked_container(parent);
    reg(parent, "S", &ps, TETHER_SCOPE_SINGLETON, NULL);
    reg(child, "S", &cs, TETHER_SCOPE_SINGLETON, NULL);
    reg(child, "OnlyChild", &cs, TETHER_SCOPE_SINGLETON, NULL);

    CHECK(strcmp(tag_of(child, "S"), "child.S") == 0);
    CHECK(strcmp(tag_of(parent, "S"), "parent.S") == 0);
    CHECK(strcmp(tag_of(child, "OnlyChild"), "child.S") == 0);
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(parent, "OnlyChild", &r), TETHER_E_NOT_FOUND);
    CHECK(cs.made == 2 && ps.made == 1);
    CHECK_OK(tether_container_free(child)); /* the child's cache goes with it */
    CHECK(cs.dropped == 2 && ps.dropped == 0);
    CHECK_OK(tether_container_free(parent));
    CHECK(ps.dropped == 1);
}

static void freeing_a_parent_with_a_live_child_fails(void) {
    kind k = {"parent.K", 0, 0};
    tether_container *parent = new_checked_container(NULL);
    tether_container *child = new_checked_container(parent);
    reg(parent, "K", &k, TETHER_SCOPE_SINGLETON, NULL);
    CHECK(strcmp(tag_of(child, "K"), "parent.K") == 0);

    CHECK_STATUS(tether_container_free(parent), TETHER_E_INVALID_ARGUMENT);
    CHECK(k.dropped == 0);                 /* nothing freed */
    CHECK(strcmp(tag_of(parent, "K"), "parent.K") == 0);
    CHECK(strcmp(tag_of(child, "K"), "parent.K") == 0);
    CHECK(k.made == 1);

    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
    CHECK(k.dropped == 1);
}

static void freeing_a_middle_container_with_a_live_grandchild_fails(void) {
    tether_container *root = new_checked_container(NULL);
    tether_container *mid = new_checked_container(root);
    tether_container *leaf = new_checked_container(mid);
    CHECK_STATUS(tether_container_free(root), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_container_free(mid), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(leaf));
    CHECK_STATUS(tether_container_free(root), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(mid));
    CHECK_OK(tether_container_free(root));
}

static void child_of_a_freed_container_is_refused(void) {
    tether_container *parent = new_checked_container(NULL);
    CHECK_OK(tether_container_free(parent));
    tether_container *child = (tether_container *)&parent; /* sentinel: must become NULL */
    CHECK_STATUS(tether_container_new(parent, &child), TETHER_E_INVALID_HANDLE);
    CHECK(child == NULL);
}

static void interned_ids_are_process_wide(void) {
    kind k = {"parent.K", 0, 0};
    tether_container *parent = new_checked_container(NULL);
    tether_container *child = new_checked_container(parent);
    tether_container *other = new_checked_container(NULL);
    reg(parent, "K", &k, TETHER_SCOPE_SINGLETON, NULL);
    uint32_t a = 0, b = 1, d = 2;
    CHECK_OK(tether_intern(parent, "K", &a));
    CHECK_OK(tether_intern(child, "K", &b));
    CHECK_OK(tether_intern(other, "K", &d));
    CHECK(a == b && b == d);
    uint32_t e = a;
    CHECK_OK(tether_intern(other, "K#other", &e));
    CHECK(e != a);
    tether_ref *r1 = NULL, *r2 = NULL, *r3 = NULL;
    CHECK_OK(tether_resolve_key(child, a, &r1));   /* falls through to the parent */
    CHECK_OK(tether_resolve(parent, "K", &r2));
    CHECK(r1 && r2 && tether_ref_get(r1) == tether_ref_get(r2));
    CHECK_STATUS(tether_resolve_key(other, a, &r3), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"K\"");
    if (r1) CHECK_OK(tether_ref_release(r1));
    if (r2) CHECK_OK(tether_ref_release(r2));
    CHECK_OK(tether_container_free(other));
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
    CHECK(k.made == 1 && k.dropped == 1);
}

int main(void) {
    RUN(child_falls_through_to_parent);
    RUN(falls_through_several_levels);
    RUN(child_overrides_parent_key);
    RUN(singleton_dependencies_come_from_the_registering_container);
    RUN(singletons_live_in_the_registering_container);
    RUN(child_singleton_is_cached_in_the_child);
    RUN(freeing_a_parent_with_a_live_child_fails);
    RUN(freeing_a_middle_container_with_a_live_grandchild_fails);
    RUN(child_of_a_freed_container_is_refused);
    RUN(interned_ids_are_process_wide);
    return harness_finish();
}
