/* Registrations the C tests share, whatever counted-object type a test keeps (fixtures.h's, threaded_fixtures.h's
 * or its own): contexts are passed as `void *`, factories as tether_fn. Include after harness.h; all static
 * inline, so a test uses what it needs. */
#ifndef TETHER_TEST_REGISTERING_H
#define TETHER_TEST_REGISTERING_H
#include "harness.h"

/* Registers `key` in `c`, made by `factory` with slots `params[0..count)`, in `scope`, with `context`
 * destroyed by `drop`: one register_ex call, checked. */
static inline void reg_with_context(tether_container *c, const char *key, tether_fn factory, const tether_param *params,
                                    size_t count, tether_scope scope, void *context, tether_drop_fn drop) {
    tether_registration_options o = {0};
    o.scope = scope;
    o.context = context;
    o.drop = drop;
    CHECK_OK(TB.register_ex(c, key, factory, params, count, &o, NULL));
}

/* The slots {TETHER_CONTEXT, DEP(dep_a), DEP(dep_b)} in `p`, the NULL keys left out; returns how many (1 to 3),
 * so that a test's factory for that many slots can be picked. */
static inline size_t context_and_deps(tether_param p[3], const char *dep_a, const char *dep_b) {
    size_t n = 0;
    p[n++] = TETHER_CONTEXT;
    if (dep_a) p[n++] = TETHER_DEP(dep_a);
    if (dep_b) p[n++] = TETHER_DEP(dep_b);
    return n;
}

/* The per-request shape (the README's, bench RP's) in `root`: Request a declared value; Db a singleton,
 * made by `db(db_kind)`; Session one per container, `session(session_kind, Request, Db)`; Handler one per
 * resolve, `handler(handler_kind, Session)`. Each kind is its registration's context, destroyed by `drop`. */
static inline void reg_request_shape(tether_container *root, tether_fn db, void *db_kind, tether_fn session,
                                     void *session_kind, tether_fn handler, void *handler_kind, tether_drop_fn drop) {
    tether_param p_db[] = {TETHER_CONTEXT}, p_session[] = {TETHER_CONTEXT, TETHER_DEP("Request"), TETHER_DEP("Db")},
                 p_handler[] = {TETHER_CONTEXT, TETHER_DEP("Session")};
    CHECK_OK(tether_declare_value(root, "Request"));
    reg_with_context(root, "Db", db, p_db, 1, TETHER_SCOPE_SINGLETON, db_kind, drop);
    reg_with_context(root, "Session", session, p_session, 3, TETHER_SCOPE_CONTAINER, session_kind, drop);
    reg_with_context(root, "Handler", handler, p_handler, 2, TETHER_SCOPE_GRAPH, handler_kind, drop);
}

/* A request's child of `root` with its Request provided: `request`, destroyed by `drop` with `context`. */
static inline tether_container *request_child_of(tether_container *root, void *request, tether_drop_fn drop,
                                                 void *context) {
    tether_container *child = NULL;
    CHECK_OK(tether_container_new(root, &child));
    CHECK_OK(tether_provide_value(child, "Request", request, drop, context));
    return child;
}
#endif
