/* Counted-object fixtures for the C tests: `kind` counts one registration's factory and destructor calls, and
 * `node` is what its factory made. Include after harness.h; all static inline, so a test uses what it needs. */
#ifndef TETHER_TEST_FIXTURES_H
#define TETHER_TEST_FIXTURES_H
#include <stdlib.h>
#include "harness.h"
#include "registering.h"  /* the registrations tests share, whatever their object type */

/* One registration's identity and counters, passed as its context. */
typedef struct kind { const char *tag; int made, dropped; } kind;

enum { ALIVE = 0x5ca1ab1e, DEAD = 0xdead };

typedef struct node {
    int magic;                  /* ALIVE from its factory on; a checking destructor may set DEAD */
    kind *k;
    union {                     /* constructor dependencies (strong), by name or by index */
        struct { struct node *a, *b; };
        struct node *dep[2];
    };
    struct node *got;           /* taken in a completion callback (strong edge) */
    tether_weak *weak;          /* weak back-reference or WEAK slot, released by drop_node_weak */
    tether_provider lazy;       /* TETHER_LAZY slot */
} node;

/* How often drop_node_weak failed to release a node's weak handle. */
static int bad_release __attribute__((unused));

static inline void *xcalloc(size_t size) {
    void *p = calloc(1, size);
    if (!p) abort();
    return p;
}

static inline node *node_new(kind *k, node *a, node *b) {
    node *o = xcalloc(sizeof *o);
    o->magic = ALIVE; o->k = k; o->a = a; o->b = b;
    k->made++;
    return o;
}
/* Factories for slots {TETHER_CONTEXT, DEP...} ... */
static inline void *make0(kind *k) { return node_new(k, NULL, NULL); }
static inline void *make1(kind *k, node *a) { return node_new(k, a, NULL); }
static inline void *make2(kind *k, node *a, node *b) { return node_new(k, a, b); }
/* ... and for slots {DEP..., TETHER_CONTEXT}. */
static inline void *make1_context_last(node *a, kind *k) { return node_new(k, a, NULL); }
static inline void *make2_context_last(node *a, node *b, kind *k) { return node_new(k, a, b); }

/* Destructor: checks that its context is the node's kind, counts the drop, frees. */
static inline void drop_node(void *instance, void *context) {
    node *o = instance;
    CHECK(o->k == context);
    o->k->dropped++;
    free(o);
}
/* Destructor: releases the node's weak handle (a failure counts in bad_release),
 * counts the drop on its context, frees. */
static inline void drop_node_weak(void *instance, void *context) {
    node *o = instance;
    kind *k = context;
    if (o->weak && tether_weak_release(o->weak) != TETHER_OK) bad_release++;
    k->dropped++;
    free(o);
}

/* Registers `key` made by makeN with kind `k` as its context (destroyed by `drop`) in
 * `scope`, with a DEP slot for each non-NULL dependency key. */
static inline tether_registration *reg_node(tether_container *c, const char *key, kind *k, tether_scope scope,
                                            const char *dep_a, const char *dep_b, tether_drop_fn drop) {
    tether_param p[3];
    size_t n = context_and_deps(p, dep_a, dep_b);
    tether_fn fn = n == 1 ? (tether_fn)make0 : n == 2 ? (tether_fn)make1 : (tether_fn)make2;
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, fn, p, n, &r));
    CHECK_OK(tether_set_scope(r, scope));
    CHECK_OK(tether_set_context(r, k, drop));
    return r;
}

/* Registers `key` made by `factory` (slots {TETHER_CONTEXT}) with kind `k` as its context,
 * destroyed by drop_node, in `scope`, configured in one call (tether_register_ex). */
static inline tether_status reg_kind_factory(tether_container *c, const char *key, tether_fn factory, kind *k,
                                             tether_scope scope) {
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration_options o = {0};
    o.scope = scope;
    o.context = k;
    o.drop = drop_node;
    return TB.register_ex(c, key, factory, p, 1, &o, NULL);
}

/* A new container: a child of `parent`, or a root if `parent` is NULL. */
static inline tether_container *new_container_in(tether_container *parent) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(parent, &c));
    return c;
}
static inline tether_container *new_container(void) { return new_container_in(NULL); }

/* Resolves `key` from `c`, keeps the handle in *out and returns the instance (checked non-NULL). */
static inline node *resolve(tether_container *c, const char *key, tether_ref **out) {
    *out = NULL;
    CHECK_OK(tether_resolve(c, key, out));
    node *o = *out ? tether_ref_get(*out) : NULL;
    CHECK(o != NULL);
    return o;
}

/* The interned id of `key` in `c` (checked). */
static inline uint32_t key_of(tether_container *c, const char *key) {
    uint32_t id = 0;
    CHECK_OK(tether_intern(c, key, &id));
    return id;
}
#endif
