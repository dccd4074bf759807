/* Child containers with registrations of their own, one per request: a graph
 * registered in the parent takes the child's registrations (its factories, its
 * contexts, its scopes) wherever the child has the key, and the parent's
 * elsewhere; children whose registrations differ in shape (scope, params) get
 * what each declares; a failure in a child's factory destroys what the resolve
 * made, once; a child freed before or after its instances lets go of them once,
 * dependents first; a reused child's value with its own destructor and context; more
 * container-scoped instances in one child than its cache searches in order; children made and
 * freed on four threads at once; children in turn with components of their own (one thread, two);
 * children registering a key with the same context keep their own later configuration.
 * Run plain and under ASan (make test), and under TSan (make test-c-tsan). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* Destruction log: one letter per dropped node (its kind's tag's first character). */
static char drops[64];
static size_t ndrops;

static void drop_logged(void *instance, void *context) {
    node *o = instance;
    kind *k = context;
    CHECK(o->k == k);
    if (ndrops + 1 < sizeof drops) drops[ndrops++] = k->tag[0];
    drops[ndrops] = 0;
    k->dropped++;
    free(o);
}

static void reset_log(void) { ndrops = 0; drops[0] = 0; }

/* A destructor counting into its context's kind and freeing the node (of any kind). */
static void drop_logged_free(void *instance, void *context) {
    ((kind *)context)->dropped++;
    free(instance);
}

static tether_registration *reg(tether_container *c, const char *key, kind *k, tether_scope scope,
                                const char *dep_a, const char *dep_b) {
    return reg_node(c, key, k, scope, dep_a, dep_b, drop_logged);
}

/* Root: Settings (singleton), Svc(Settings), Handler(Request, Svc); Request only in children. */
static kind settings = {"Settings", 0, 0}, svc = {"Svc", 0, 0}, handler = {"Handler", 0, 0};

static tether_container *request_root(void) {
    tether_container *root = new_container();
    reg(root, "Settings", &settings, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(root, "Svc", &svc, TETHER_SCOPE_GRAPH, "Settings", NULL);
    reg(root, "Handler", &handler, TETHER_SCOPE_GRAPH, "Request", "Svc");
    return root;
}

static void per_request_children_use_their_own_registration(void) {
    settings.made = settings.dropped = svc.made = svc.dropped = handler.made = handler.dropped = 0;
    tether_container *root = request_root();
    kind requests[4] = {{"R0", 0, 0}, {"R1", 0, 0}, {"R2", 0, 0}, {"R3", 0, 0}};
    node *first_settings = NULL;
    for (int i = 0; i < 4; i++) {
        tether_container *child = new_container_in(root);
        reg(child, "Request", &requests[i], TETHER_SCOPE_GRAPH, NULL, NULL);
        for (int n = 0; n < 2; n++) {
            tether_ref *r;
            node *h = resolve(child, "Handler", &r);
            if (!h) continue;
            CHECK(h->k == &handler && h->a->k == &requests[i] && h->b->k == &svc);
            if (!first_settings) first_settings = h->b->a;
            CHECK(h->b->a == first_settings);  /* the root's singleton, shared by every request */
            reset_log();
            CHECK_OK(tether_ref_release(r));
            /* dependents first: Handler, then its dependencies; the singleton stays */
            CHECK(ndrops == 3 && drops[0] == 'H' && strchr(drops, 'R') && strchr(drops, 'S'));
        }
        CHECK(requests[i].made == 2 && requests[i].dropped == 2);
        CHECK_OK(tether_container_free(child));
    }
    CHECK(handler.made == 8 && handler.dropped == 8 && svc.made == 8 && svc.dropped == 8);
    CHECK(settings.made == 1 && settings.dropped == 0);
    /* the root alone cannot build Handler: Request is the children's */
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(root, "Handler", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"Request\"");
    CHECK_OK(tether_container_free(root));
    CHECK(settings.dropped == 1);
}

/* Top(Mid), Mid(Leaf), Leaf in the root; children override Leaf, Mid, or neither, in turns. */
static void children_override_parent_keys_in_a_parent_graph(void) {
    kind top = {"Top", 0, 0}, mid = {"Mid", 0, 0}, leaf = {"Leaf", 0, 0};
    kind cleaf = {"leaf of a child", 0, 0}, cmid = {"mid of a child", 0, 0}, other = {"other", 0, 0};
    tether_container *root = new_container();
    reg(root, "Leaf", &leaf, TETHER_SCOPE_GRAPH, NULL, NULL);
    reg(root, "Mid", &mid, TETHER_SCOPE_GRAPH, "Leaf", NULL);
    reg(root, "Top", &top, TETHER_SCOPE_GRAPH, "Mid", NULL);
    for (int round = 0; round < 3; round++) {
        for (int which = 0; which < 4; which++) {
            tether_container *child = new_container_in(root);
            if (which == 0) reg(child, "Leaf", &cleaf, TETHER_SCOPE_GRAPH, NULL, NULL);
            if (which == 1) reg(child, "Other", &other, TETHER_SCOPE_GRAPH, NULL, NULL);
            if (which == 2) reg(child, "Mid", &cmid, TETHER_SCOPE_GRAPH, "Leaf", NULL);
            if (which == 3) {
                reg(child, "Mid", &cmid, TETHER_SCOPE_GRAPH, "Leaf", NULL);
                reg(child, "Leaf", &cleaf, TETHER_SCOPE_GRAPH, NULL, NULL);
            }
            tether_ref *r;
            node *t = resolve(child, "Top", &r);
            if (t) {
                CHECK(t->k == &top);
                CHECK(t->a->k == (which >= 2 ? &cmid : &mid));
                CHECK(t->a->a->k == (which == 0 || which == 3 ? &cleaf : &leaf));
                CHECK_OK(tether_ref_release(r));
            }
            CHECK_OK(tether_container_free(child));
        }
        tether_ref *r;
        node *t = resolve(root, "Top", &r);  /* the root's own graph is untouched */
        CHECK(t && t->a->k == &mid && t->a->a->k == &leaf);
        if (r) CHECK_OK(tether_ref_release(r));
    }
    CHECK(other.made == 0);
    CHECK(top.made == top.dropped && mid.made == mid.dropped && leaf.made == leaf.dropped);
    CHECK(cleaf.made == 6 && cleaf.dropped == 6 && cmid.made == 6 && cmid.dropped == 6);
    CHECK_OK(tether_container_free(root));
}

/* The same key with another scope or other params in the next child: each child gets what it declares. */
static void children_of_other_shapes_get_what_they_declare(void) {
    settings.made = settings.dropped = 0;
    tether_container *root = request_root();
    kind plain = {"plain", 0, 0}, single = {"single", 0, 0}, withdep = {"with a dep", 0, 0};
    for (int round = 0; round < 2; round++) {
        tether_container *a = new_container_in(root), *b = new_container_in(root), *d = new_container_in(root);
        reg(a, "Request", &plain, TETHER_SCOPE_GRAPH, NULL, NULL);
        reg(b, "Request", &single, TETHER_SCOPE_SINGLETON, NULL, NULL);
        reg(d, "Request", &withdep, TETHER_SCOPE_TRANSIENT, "Settings", NULL);
        tether_ref *r1, *r2, *r3, *r4, *r5, *r6;
        node *a1 = resolve(a, "Handler", &r1), *a2 = resolve(a, "Handler", &r2);
        node *b1 = resolve(b, "Handler", &r3), *b2 = resolve(b, "Handler", &r4);
        node *d1 = resolve(d, "Handler", &r5), *d2 = resolve(d, "Handler", &r6);
        if (a1 && a2 && b1 && b2 && d1 && d2) {
            CHECK(a1->a->k == &plain && a1->a != a2->a);
            CHECK(b1->a->k == &single && b1->a == b2->a);  /* the child's singleton, made once */
            CHECK(d1->a->k == &withdep && d1->a->a == d1->b->a && d1->a != d2->a);
        }
        tether_ref *refs[] = {r1, r2, r3, r4, r5, r6};
        for (int i = 0; i < 6; i++) if (refs[i]) CHECK_OK(tether_ref_release(refs[i]));
        CHECK(single.made == round + 1 && single.dropped == round);  /* b still holds its singleton */
        /* a scope changed after a resolve is followed by the next resolve */
        tether_registration *ra = reg(a, "Request", &plain, TETHER_SCOPE_GRAPH, NULL, NULL);
        CHECK_OK(tether_set_scope(ra, TETHER_SCOPE_SINGLETON));
        node *a3 = resolve(a, "Handler", &r1), *a4 = resolve(a, "Handler", &r2);
        CHECK(a3 && a4 && a3->a == a4->a);
        if (r1) CHECK_OK(tether_ref_release(r1));
        if (r2) CHECK_OK(tether_ref_release(r2));
        CHECK_OK(tether_container_free(a));
        CHECK_OK(tether_container_free(b));
        CHECK_OK(tether_container_free(d));
        CHECK(single.made == single.dropped);
    }
    CHECK(plain.made == plain.dropped && withdep.made == withdep.dropped);
    CHECK_OK(tether_container_free(root));
}

/* A context set again after a resolve: the next resolve from that child uses the new one. */
static void a_child_context_set_again_is_used(void) {
    tether_container *root = request_root();
    kind first = {"first", 0, 0}, second = {"second", 0, 0};
    tether_container *child = new_container_in(root);
    tether_registration *r = reg(child, "Request", &first, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_ref *ref;
    node *h = resolve(child, "Handler", &ref);
    CHECK(h && h->a->k == &first);
    if (ref) CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_set_context(r, &second, drop_logged));
    h = resolve(child, "Handler", &ref);
    CHECK(h && h->a->k == &second);
    if (ref) CHECK_OK(tether_ref_release(ref));
    CHECK(first.made == 1 && first.dropped == 1 && second.made == 1 && second.dropped == 1);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
}

static int fail_request;
static void *make_request_or_fail(kind *k) {
    if (fail_request) {
        tether_set_error("request rejected");
        return NULL;
    }
    return make0(k);
}

/* Handler2(Svc, Request): Svc is made before the child's factory fails. */
static void a_failing_child_factory_destroys_what_the_resolve_made(void) {
    svc.made = svc.dropped = 0;
    tether_container *root = request_root();
    kind handler2 = {"Handler2", 0, 0}, req = {"Request", 0, 0};
    reg(root, "Handler2", &handler2, TETHER_SCOPE_GRAPH, "Svc", "Request");
    for (int i = 0; i < 6; i++) {
        fail_request = i % 3 == 1;
        tether_container *child = new_container_in(root);
        tether_param p[] = {TETHER_CONTEXT};
        tether_registration *r;
        CHECK_OK(tether_register(child, "Request", (tether_fn)make_request_or_fail, p, 1, &r));
        CHECK_OK(tether_set_context(r, &req, drop_logged));
        tether_ref *ref = NULL;
        reset_log();
        if (fail_request) {
            CHECK_STATUS(tether_resolve(child, "Handler2", &ref), TETHER_E_FACTORY_FAILED);
            CHECK_ERROR_HAS("factory for \"Request\"");
            CHECK_ERROR_HAS("\"Handler2\" -> \"Request\"");
            CHECK_ERROR_HAS("request rejected");
            CHECK(ref == NULL);
            CHECK(strcmp(drops, "S") == 0);  /* Svc, made first, destroyed once; nothing cached */
        } else {
            node *h = resolve(child, "Handler2", &ref);
            CHECK(h && h->a->k == &svc && h->b->k == &req);
            if (ref) CHECK_OK(tether_ref_release(ref));
        }
        CHECK_OK(tether_container_free(child));
    }
    CHECK(svc.made == 6 && svc.dropped == 6 && req.made == 4 && req.dropped == 4);
    CHECK(handler2.made == 4 && handler2.dropped == 4);
    fail_request = 0;
    CHECK_OK(tether_container_free(root));
}

/* The child goes first, its instances later (and the other way round): each destroyed once, dependents first. */
static void a_child_freed_before_or_after_its_instances(void) {
    tether_container *root = request_root();
    kind req = {"Request", 0, 0};
    for (int before = 0; before < 2; before++) {
        for (int n = 0; n < 2; n++) {
            tether_container *child = new_container_in(root);
            reg(child, "Request", &req, TETHER_SCOPE_GRAPH, NULL, NULL);
            tether_ref *r1, *r2;
            node *h1 = resolve(child, "Handler", &r1), *h2 = resolve(child, "Handler", &r2);
            CHECK(h1 && h2 && h1->a != h2->a);
            reset_log();
            if (before) CHECK_OK(tether_container_free(child));
            CHECK(ndrops == 0);  /* the freed child let go of nothing its resolves handed out */
            if (r1) CHECK_OK(tether_ref_release(r1));
            CHECK(ndrops == 3 && drops[0] == 'H');
            if (r2) CHECK_OK(tether_ref_release(r2));
            CHECK(ndrops == 6 && drops[3] == 'H');
            if (!before) CHECK_OK(tether_container_free(child));
            CHECK(ndrops == 6);
        }
    }
    CHECK(req.made == 8 && req.dropped == 8);
    CHECK_OK(tether_container_free(root));
}

/* A child's singleton made by a resolve is let go of when the child is freed, while the parent lives. */
static void a_freed_child_releases_its_singleton(void) {
    tether_container *root = request_root();
    kind req = {"Request", 0, 0};
    for (int i = 0; i < 3; i++) {
        tether_container *child = new_container_in(root);
        reg(child, "Request", &req, TETHER_SCOPE_SINGLETON, NULL, NULL);
        tether_ref *r;
        if (resolve(child, "Handler", &r)) CHECK_OK(tether_ref_release(r));
        CHECK(req.made == i + 1 && req.dropped == i);
        CHECK_OK(tether_container_free(child));
        CHECK(req.dropped == i + 1);
    }
    CHECK_OK(tether_container_free(root));
}

/* Two children of one root alive at once, each registering singletons of its own (Request over Conn): each
 * child makes its own once (a plan's local creation steps, or the build), resolves in turn between them;
 * equal within a child, different across; each child's freed at its free, Request before Conn. */
static void two_children_each_make_their_own_singletons_once(void) {
    tether_container *root = request_root();
    kind req[2] = {{"Request0", 0, 0}, {"Request1", 0, 0}}, conn[2] = {{"Conn0", 0, 0}, {"Conn1", 0, 0}};
    tether_container *child[2];
    for (int i = 0; i < 2; i++) {
        child[i] = new_container_in(root);
        reg(child[i], "Conn", &conn[i], TETHER_SCOPE_SINGLETON, NULL, NULL);
        reg(child[i], "Request", &req[i], TETHER_SCOPE_SINGLETON, "Conn", NULL);
    }
    node *seen[2] = {NULL, NULL};
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 2; i++) {
            tether_ref *r;
            node *h = resolve(child[i], "Handler", &r);
            CHECK(h->a->k == &req[i] && h->a->a->k == &conn[i]);
            if (!seen[i]) seen[i] = h->a;
            CHECK(h->a == seen[i]);
            reset_log();
            CHECK_OK(tether_ref_release(r));
            CHECK(ndrops == 2 && drops[0] == 'H' && drops[1] == 'S');  /* Handler, its Svc; the singletons stay */
        }
    }
    CHECK(seen[0] != seen[1]);
    for (int i = 0; i < 2; i++) CHECK(req[i].made == 1 && conn[i].made == 1 && req[i].dropped == 0 && conn[i].dropped == 0);
    tether_ref *own;
    CHECK(resolve(child[1], "Request", &own) == seen[1]);  /* the root form: the child's cached one */
    CHECK_OK(tether_ref_release(own));
    for (int i = 0; i < 2; i++) {
        reset_log();
        CHECK_OK(tether_container_free(child[i]));
        CHECK(ndrops == 2 && drops[0] == 'R' && drops[1] == 'C');
        CHECK(req[i].dropped == 1 && conn[i].dropped == 1);
    }
    CHECK(req[0].made == 1 && req[1].made == 1);
    CHECK_OK(tether_container_free(root));
}

/* The same with a weak Request of each child's own: handed out again while a Handler holds it, made
 * again once nothing does; each child's its own; destroyed with the last Handler holding it. */
static void two_children_each_make_their_own_weak_instance(void) {
    tether_container *root = request_root();
    kind req[2] = {{"Request0", 0, 0}, {"Request1", 0, 0}};
    tether_container *child[2];
    for (int i = 0; i < 2; i++) {
        child[i] = new_container_in(root);
        reg(child[i], "Request", &req[i], TETHER_SCOPE_WEAK, NULL, NULL);
    }
    for (int round = 0; round < 2; round++) {
        tether_ref *held[2][2];
        node *h[2][2];
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < 2; i++) h[i][n] = resolve(child[i], "Handler", &held[i][n]);
        for (int i = 0; i < 2; i++) {
            CHECK(h[i][0]->a->k == &req[i] && h[i][0]->a == h[i][1]->a);
            CHECK(req[i].made == round + 1 && req[i].dropped == round);
        }
        CHECK(h[0][0]->a != h[1][0]->a);
        for (int i = 0; i < 2; i++) {
            CHECK_OK(tether_ref_release(held[i][0]));
            CHECK(req[i].dropped == round);
            reset_log();
            CHECK_OK(tether_ref_release(held[i][1]));
            CHECK(ndrops == 3 && drops[0] == 'H' && strchr(drops, 'R') && req[i].dropped == round + 1);
        }
    }
    for (int i = 0; i < 2; i++) CHECK_OK(tether_container_free(child[i]));
    CHECK(req[0].made == 2 && req[0].dropped == 2 && req[1].made == 2 && req[1].dropped == 2);
    CHECK_OK(tether_container_free(root));
}

/* Handler's completion callback asks the resolver for Request: the instance its graph made,
 * the child's, in every request (the graph's table holds each child's registration). */
static int completions, same_request;
static tether_status complete_handler(tether_resolver *r, void *instance, void *context) {
    (void)context;
    node *h = instance;
    void *request = NULL;
    tether_status st = tether_resolver_get(r, "Request", &request);
    completions++;
    if (st == TETHER_OK && request == h->a) same_request++;
    return st;
}

static void a_parent_graph_with_a_completion_callback_takes_each_childs_registration(void) {
    tether_container *root = new_container();
    kind hk = {"Handler", 0, 0}, req = {"Request", 0, 0};
    tether_registration *h = reg(root, "Handler", &hk, TETHER_SCOPE_GRAPH, "Request", NULL);
    CHECK_OK(tether_on_complete(h, complete_handler, NULL));
    completions = same_request = 0;
    for (int i = 0; i < 4; i++) {
        tether_container *child = new_container_in(root);
        reg(child, "Request", &req, TETHER_SCOPE_GRAPH, NULL, NULL);
        tether_ref *r;
        node *o = resolve(child, "Handler", &r);
        CHECK(o && o->a->k == &req);
        if (r) CHECK_OK(tether_ref_release(r));
        CHECK_OK(tether_container_free(child));  /* its registration goes: the next child's must serve */
    }
    CHECK(completions == 4 && same_request == 4);
    CHECK(req.made == 4 && req.dropped == 4 && hk.made == 4 && hk.dropped == 4);
    CHECK_OK(tether_container_free(root));
}

/* A freed child's container may serve the parent's next child: that child starts empty (no
 * registration, value or container-scoped instance of the old one), freeing the old handle
 * again is refused, and the parent freed with a child kept lets go of it (ASan/LSan). */
static void the_next_child_starts_empty(void) {
    tether_container *root = request_root();
    kind req = {"Request", 0, 0}, scoped = {"Scoped", 0, 0}, value = {"value", 0, 0};
    reg(root, "Scoped", &scoped, TETHER_SCOPE_CONTAINER, NULL, NULL);
    CHECK_OK(tether_declare_value(root, "Value"));
    tether_container *old = NULL;
    for (int i = 0; i < 3; i++) {
        tether_container *child = new_container_in(root);
        CHECK(child != old);  /* a new handle, whatever serves it */
        tether_ref *r = NULL;
        if (old) CHECK_STATUS(tether_resolve(old, "Scoped", &r), TETHER_E_INVALID_HANDLE);  /* the old one stays stale */
        /* nothing of the previous child: its Request, its value, its container-scoped instance */
        CHECK_STATUS(tether_resolve(child, "Handler", &r), TETHER_E_NOT_FOUND);
        CHECK_ERROR_HAS("\"Request\"");
        CHECK_STATUS(tether_resolve(child, "Value", &r), TETHER_E_NOT_FOUND);
        tether_ref *s1, *s2;
        node *a = resolve(child, "Scoped", &s1), *b = resolve(child, "Scoped", &s2);
        CHECK(a && a == b && scoped.made == i + 1);
        if (s1) CHECK_OK(tether_ref_release(s1));
        if (s2) CHECK_OK(tether_ref_release(s2));
        reg(child, "Request", &req, TETHER_SCOPE_GRAPH, NULL, NULL);
        node *v = node_new(&value, NULL, NULL);
        CHECK_OK(tether_provide_value(child, "Value", v, drop_logged, &value));
        if (resolve(child, "Handler", &r)) CHECK_OK(tether_ref_release(r));
        CHECK_OK(tether_container_free(child));
        CHECK(value.dropped == i + 1 && scoped.dropped == i + 1);  /* let go of when the child was freed */
        CHECK_STATUS(tether_container_free(child), TETHER_E_INVALID_HANDLE);
        old = child;
    }
    CHECK(req.made == 3 && req.dropped == 3);
    CHECK_OK(tether_container_free(root));
}

/* A child kept for the next request may serve that request's registration of the same key,
 * function and params with the registration the previous request had: it must be a new one all
 * the same. Every other request registers Request configured (container scope, a context, a
 * destructor, a completion callback), the next one plain: graph scope (a new Request for each
 * Handler), no destructor, no callback; the configured one's handle stays stale. */
static int request_completions;
static tether_status count_completion(tether_resolver *rs, void *instance, void *context) {
    (void)rs; (void)instance; (void)context;
    request_completions++;
    return TETHER_OK;
}
static kind plain = {"plain", 0, 0}, plain_handler = {"Handler", 0, 0};
static void *make_plain_request(void) { return node_new(&plain, NULL, NULL); }
static void *make_plain_handler(node *request) { return node_new(&plain_handler, request, NULL); }
static void drop_handler_only(void *instance, void *context) {
    (void)context;
    plain_handler.dropped++;
    free(instance);
}

static void a_reused_childs_registration_starts_new(void) {
    tether_container *root = new_container();
    tether_param dep[] = {TETHER_DEP("Request")};
    tether_registration *h = NULL;
    CHECK_OK(tether_register(root, "Handler", (tether_fn)make_plain_handler, dep, 1, &h));
    CHECK_OK(tether_set_context(h, NULL, drop_handler_only));
    kind configured = {"configured", 0, 0};
    tether_completion callback = {count_completion, NULL, NULL, 0, NULL};
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_CONTAINER;
    o.context = &configured;
    o.drop = drop_logged_free;
    o.callbacks = &callback;
    o.callback_count = 1;
    tether_registration *old = NULL;
    request_completions = 0;
    for (int i = 0; i < 6; i++) {
        tether_container *child = new_container_in(root);
        tether_registration *r = NULL;
        int plain_request = i % 2;
        if (plain_request) {
            CHECK_OK(tether_register(child, "Request", (tether_fn)make_plain_request, NULL, 0, &r));
            CHECK_STATUS(tether_set_context(old, &configured, drop_logged_free), TETHER_E_INVALID_HANDLE);
        } else {
            CHECK_OK(tether_register_with(child, "Request", (tether_fn)make_plain_request, NULL, 0, &o, &r));
        }
        CHECK(r != NULL && r != old);
        old = r;
        tether_ref *a, *b;
        node *x = resolve(child, "Handler", &a), *y = resolve(child, "Handler", &b);
        CHECK(x && y && x != y);
        if (!x || !y) continue;
        node *rx = x->a, *ry = y->a;
        CHECK(plain_request ? rx != ry : rx == ry);          /* graph scope, or one per container */
        CHECK(request_completions == (i / 2 + 1));           /* a callback only for configured ones */
        CHECK_OK(tether_ref_release(a));
        CHECK_OK(tether_ref_release(b));
        CHECK_OK(tether_container_free(child));
        CHECK(configured.dropped == (i / 2 + 1));            /* a destructor only for configured ones */
        if (plain_request) { free(rx); free(ry); }           /* no destructor: still ours */
    }
    CHECK(plain_handler.made == 12 && plain_handler.dropped == 12);
    CHECK_OK(tether_container_free(root));
}

/* A reused child's value fills the previous request's value spec in place: each request's value
 * gets its own destructor and context (or none), the previous one's never runs again; a value
 * provided again in the same child replaces the first, which is destroyed once, with its own. */
static void a_reused_childs_value_takes_its_own_destructor_and_context(void) {
    tether_container *root = new_container();
    kind first = {"first", 0, 0}, second = {"second", 0, 0}, bare = {"bare", 0, 0};
    for (int i = 0; i < 6; i++) {
        tether_container *child = new_container_in(root);
        kind *k = i % 3 == 0 ? &first : i % 3 == 1 ? &bare : &second;
        node *v = node_new(k, NULL, NULL);
        CHECK_OK(tether_provide_value(child, "Value", v, k == &bare ? NULL : drop_logged, k == &bare ? NULL : k));
        tether_ref *r = NULL;
        CHECK(resolve(child, "Value", &r) == v);
        if (r) CHECK_OK(tether_ref_release(r));
        CHECK_OK(tether_container_free(child));
        if (k == &bare) { CHECK(bare.dropped == 0); free(v); }  /* no destructor: still ours */
        CHECK(first.dropped == (i + 3) / 3 && second.dropped == (i + 1) / 3);
    }
    tether_container *child = new_container_in(root);
    node *a = node_new(&first, NULL, NULL), *b = node_new(&second, NULL, NULL);
    CHECK_OK(tether_provide_value(child, "Value", a, drop_logged, &first));
    CHECK_OK(tether_provide_value(child, "Value", b, drop_logged, &second));
    CHECK(first.dropped == 3 && second.dropped == 2);  /* the replaced value, with its own context */
    tether_ref *r = NULL;
    CHECK(resolve(child, "Value", &r) == b);
    if (r) CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_container_free(child));
    CHECK(first.dropped == 3 && second.dropped == 3);
    CHECK_OK(tether_container_free(root));
}

/* More container-scoped instances in one child than its cache searches in order (16): each is
 * made once per child, a reset makes them again, and the child lets go of them last made first. */
#define SCOPED_KEYS 24
static int scoped_order[2 * SCOPED_KEYS], nscoped_order;
static kind scoped_kinds[SCOPED_KEYS];
static void drop_scoped(void *instance, void *context) {
    kind *k = context;
    if (nscoped_order < 2 * SCOPED_KEYS) scoped_order[nscoped_order++] = (int)(k - scoped_kinds);
    k->dropped++;
    free(instance);
}
static void many_container_scoped_instances_in_one_child(void) {
    tether_container *root = new_container();
    static char keys[SCOPED_KEYS][16];
    for (int i = 0; i < SCOPED_KEYS; i++) {
        snprintf(keys[i], sizeof keys[i], "S%d", i);
        scoped_kinds[i] = (kind){keys[i], 0, 0};
        reg_node(root, keys[i], &scoped_kinds[i], TETHER_SCOPE_CONTAINER, NULL, NULL, drop_scoped);
    }
    for (int round = 0; round < 2; round++) {
        tether_container *child = new_container_in(root);
        nscoped_order = 0;
        node *made[SCOPED_KEYS];
        for (int i = 0; i < SCOPED_KEYS; i++) {
            tether_ref *r = NULL;
            made[i] = resolve(child, keys[i], &r);
            if (r) CHECK_OK(tether_ref_release(r));
        }
        for (int i = SCOPED_KEYS - 1; i >= 0; i--) {  /* found again, whatever the order */
            tether_ref *r = NULL;
            CHECK(resolve(child, keys[i], &r) == made[i]);
            if (r) CHECK_OK(tether_ref_release(r));
            CHECK(scoped_kinds[i].made == round + 1);  /* once per child */
        }
        if (round == 1) {  /* a reset lets go of them (last made first) and the next resolves make them again */
            CHECK_OK(tether_reset(child, TETHER_SCOPE_CONTAINER));
            CHECK(nscoped_order == SCOPED_KEYS);
            tether_ref *r = NULL;
            CHECK(resolve(child, keys[SCOPED_KEYS - 1], &r) != NULL && scoped_kinds[SCOPED_KEYS - 1].made == round + 2);
            if (r) CHECK_OK(tether_ref_release(r));
        }
        CHECK_OK(tether_container_free(child));
        int expected = 0, n = 0;
        for (int i = SCOPED_KEYS - 1; i >= 0; i--) if (scoped_order[n++] != i) expected = 1;
        CHECK(expected == 0);
        CHECK(nscoped_order == SCOPED_KEYS + round);
    }
    for (int i = 0; i < SCOPED_KEYS; i++) CHECK(scoped_kinds[i].made == scoped_kinds[i].dropped);
    CHECK_OK(tether_container_free(root));
}

/* Four threads make, use and free children of one root, each with its own Request (half of
 * them with a destructor): children and their registrations are kept and reused by whichever
 * thread frees and makes the next one; every Request a destructor was set for is destroyed once,
 * with its own context. Run under TSan by make test-c-tsan. */
static _Thread_local kind thread_request = {"Request", 0, 0}, thread_handler = {"Handler", 0, 0};
static void *make_thread_request(void) { return node_new(&thread_request, NULL, NULL); }
static void *make_thread_handler(node *request) { return node_new(&thread_handler, request, NULL); }
static void drop_thread_handler(void *instance, void *context) {
    (void)context;
    thread_handler.dropped++;  /* released on the thread that made it */
    free(instance);
}
static void drop_counted(void *instance, void *context) {
    (*(int *)context)++;  /* the context is the destroying thread's own counter */
    free(instance);
}
static tether_container *threads_root;

static void *request_worker(void *arg) {
    (void)arg;
    int dropped = 0;
    for (int i = 0; i < 1000; i++) {
        tether_container *child = new_container_in(threads_root);
        tether_registration *r = NULL;
        CHECK_OK(tether_register(child, "Request", (tether_fn)make_thread_request, NULL, 0, &r));
        if (i % 2) CHECK_OK(tether_set_context(r, &dropped, drop_counted));
        tether_ref *ref;
        node *h = resolve(child, "Handler", &ref);
        CHECK(h && h->a && h->a->k == &thread_request);
        node *request = h ? h->a : NULL;
        if (h) CHECK_OK(tether_ref_release(ref));
        if (i % 2 == 0) free(request);  /* no destructor: still ours */
        CHECK_OK(tether_container_free(child));
    }
    CHECK(dropped == 500 && thread_request.made == 1000);
    CHECK(thread_handler.made == 1000 && thread_handler.dropped == 1000);
    return NULL;
}

static void per_request_children_on_four_threads(void) {
    threads_root = new_container();
    tether_param dep[] = {TETHER_DEP("Request")};
    tether_registration *h = NULL;
    CHECK_OK(tether_register(threads_root, "Handler", (tether_fn)make_thread_handler, dep, 1, &h));
    CHECK_OK(tether_set_context(h, NULL, drop_thread_handler));
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, request_worker, NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    CHECK_OK(tether_container_free(threads_root));
}

/* Children in turn, each with its own registrations of one of five components (its keys in
 * order, their scopes and params): Request alone (registered again after a first resolve);
 * Request then an override of Svc; Svc then Request; Request over Settings; Request beside a key
 * no graph reaches. Every resolve gets this child's own registrations (their kinds: no
 * earlier child's registration serves it, whichever plan ran) and the parent's elsewhere, the
 * root's singleton once; every instance is destroyed once, each by its own registration. */
#define TURNS 60
static void children_in_turn_take_their_own_registrations(void) {
    settings.made = settings.dropped = svc.made = svc.dropped = handler.made = handler.dropped = 0;
    tether_container *root = request_root();
    static kind requests[TURNS], again[TURNS], svcs[TURNS], extras[TURNS];
    node *first_settings = NULL;
    int handlers = 0, parent_svcs = 0;
    for (int i = 0; i < TURNS; i++) {
        requests[i] = (kind){"Request", 0, 0};
        again[i] = (kind){"again", 0, 0};
        svcs[i] = (kind){"svc", 0, 0};
        extras[i] = (kind){"extra", 0, 0};
        int shape = i % 5;
        tether_container *child = new_container_in(root);
        if (shape == 2) reg(child, "Svc", &svcs[i], TETHER_SCOPE_GRAPH, NULL, NULL);
        reg(child, "Request", &requests[i], shape == 4 ? TETHER_SCOPE_TRANSIENT : TETHER_SCOPE_GRAPH,
            shape == 3 ? "Settings" : NULL, NULL);
        if (shape == 1) reg(child, "Svc", &svcs[i], TETHER_SCOPE_GRAPH, NULL, NULL);
        if (shape == 4) reg(child, "Extra", &extras[i], TETHER_SCOPE_GRAPH, NULL, NULL);
        kind *own_svc = shape == 1 || shape == 2 ? &svcs[i] : &svc;
        for (int round = 0; round < 2; round++) {
            if (shape == 0 && round == 1) reg(child, "Request", &again[i], TETHER_SCOPE_GRAPH, NULL, NULL);
            kind *request = shape == 0 && round == 1 ? &again[i] : &requests[i];
            tether_ref *ref;
            node *h = resolve(child, "Handler", &ref);
            if (!h) continue;
            handlers++;
            if (own_svc == &svc) parent_svcs++;
            CHECK(h->k == &handler && h->a->k == request && h->b->k == own_svc);
            node *s = own_svc == &svc ? h->b->a : h->a->a;
            if (shape == 3 || own_svc == &svc) {
                CHECK(s && s->k == &settings);
                if (!first_settings) first_settings = s;
                CHECK(s == first_settings);
            }
            if (shape == 3) CHECK(h->a->a == first_settings);
            CHECK_OK(tether_ref_release(ref));
        }
        CHECK(requests[i].made == (shape == 0 ? 1 : 2) && requests[i].dropped == requests[i].made);
        CHECK(again[i].made == (shape == 0 ? 1 : 0) && again[i].dropped == again[i].made);
        CHECK(svcs[i].made == (own_svc == &svcs[i] ? 2 : 0) && svcs[i].dropped == svcs[i].made);
        CHECK(extras[i].made == 0);
        CHECK_OK(tether_container_free(child));
    }
    CHECK(handler.made == handlers && handler.dropped == handlers && handlers == 2 * TURNS);
    CHECK(svc.made == parent_svcs && svc.dropped == parent_svcs);
    CHECK(settings.made == 1 && settings.dropped == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(settings.dropped == 1);
}

/* Two threads take turns as above, each child registering Request alone or Request and an
 * override of Svc (its own kinds, on its thread's stack): every Handler gets its child's
 * registrations, every instance is destroyed once. Run under TSan by make test-c-tsan. */
static _Thread_local kind turn_handler = {"Handler", 0, 0};
static kind turn_svc = {"Svc", 0, 0};
static void *make_turn_handler(node *request, node *svc_node) { return node_new(&turn_handler, request, svc_node); }
static void drop_turn_handler(void *instance, void *context) {
    (void)context;
    turn_handler.dropped++;  /* released on the thread that made it */
    free(instance);
}
static tether_container *turns_root;

static void *turn_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 400; i++) {
        kind request = {"Request", 0, 0}, own_svc = {"svc", 0, 0};
        tether_container *child = new_container_in(turns_root);
        reg_node(child, "Request", &request, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
        if (i % 2) reg_node(child, "Svc", &own_svc, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
        tether_ref *ref;
        node *h = resolve(child, "Handler", &ref);
        CHECK(h && h->a->k == &request && h->b->k == (i % 2 ? &own_svc : &turn_svc));
        if (h) CHECK_OK(tether_ref_release(ref));
        CHECK(request.made == 1 && request.dropped == 1);
        CHECK(own_svc.made == i % 2 && own_svc.dropped == own_svc.made);
        CHECK_OK(tether_container_free(child));
    }
    CHECK(turn_handler.made == 400 && turn_handler.dropped == 400);
    return NULL;
}

static void children_in_turn_on_two_threads(void) {
    turns_root = new_container();
    reg_node(turns_root, "Svc", &turn_svc, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_param deps[] = {TETHER_DEP("Request"), TETHER_DEP("Svc")};
    tether_registration *h = NULL;
    CHECK_OK(tether_register(turns_root, "Handler", (tether_fn)make_turn_handler, deps, 2, &h));
    CHECK_OK(tether_set_context(h, NULL, drop_turn_handler));
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, turn_worker, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK(turn_svc.made == 1 && turn_svc.dropped == 0);
    CHECK_OK(tether_container_free(turns_root));
    CHECK(turn_svc.dropped == 1);
}

/* Children registering a key with the same context and destructor (a request's registration
 * shares the thread's spec of them): what one child configures later (a completion callback, a
 * scope, another context) changes that child's registration only, and each destructor gets its
 * own child's context, once. */
static int request_completion_calls;
static tether_status count_request_completion(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    request_completion_calls++;
    return TETHER_OK;
}

static void children_with_the_same_context_keep_their_own_later_configuration(void) {
    tether_container *root = request_root();
    kind shared = {"shared", 0, 0}, other = {"other", 0, 0};
    tether_container *a = new_container_in(root), *b = new_container_in(root), *c = new_container_in(root);
    tether_registration *ra = reg(a, "Request", &shared, TETHER_SCOPE_GRAPH, NULL, NULL);
    reg(b, "Request", &shared, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_registration *rc = reg(c, "Request", &shared, TETHER_SCOPE_GRAPH, NULL, NULL);
    CHECK_OK(tether_on_complete(ra, count_request_completion, NULL));
    CHECK_OK(tether_set_scope(rc, TETHER_SCOPE_CONTAINER));
    request_completion_calls = 0;
    tether_ref *ref, *again;
    node *h = resolve(b, "Handler", &ref);
    CHECK(h && h->a->k == &shared && request_completion_calls == 0);
    if (ref) CHECK_OK(tether_ref_release(ref));
    h = resolve(a, "Handler", &ref);
    CHECK(h && h->a->k == &shared && request_completion_calls == 1);
    if (ref) CHECK_OK(tether_ref_release(ref));
    /* c's Request is container-scoped now: two resolves share it; b's graph-scoped ones do not. */
    node *h1 = resolve(c, "Handler", &ref), *h2 = resolve(c, "Handler", &again);
    CHECK(h1 && h2 && h1->a == h2->a && request_completion_calls == 1);
    if (ref) CHECK_OK(tether_ref_release(ref));
    if (again) CHECK_OK(tether_ref_release(again));
    h1 = resolve(b, "Handler", &ref);
    h2 = resolve(b, "Handler", &again);
    CHECK(h1 && h2 && h1->a != h2->a);
    if (ref) CHECK_OK(tether_ref_release(ref));
    if (again) CHECK_OK(tether_ref_release(again));
    CHECK_OK(tether_set_context(ra, &other, drop_logged));
    h = resolve(a, "Handler", &ref);
    CHECK(h && h->a->k == &other && request_completion_calls == 2);
    if (ref) CHECK_OK(tether_ref_release(ref));
    h = resolve(b, "Handler", &ref);
    CHECK(h && h->a->k == &shared && request_completion_calls == 2);
    if (ref) CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(a));
    CHECK_OK(tether_container_free(b));
    CHECK_OK(tether_container_free(c));
    /* b: 4, a: 1 with shared, c: 1 (container-scoped, dropped with c); a: 1 with other. */
    CHECK(shared.made == 6 && shared.dropped == 6 && other.made == 1 && other.dropped == 1);
    CHECK_OK(tether_container_free(root));
}

int main(void) {
    RUN(the_next_child_starts_empty);
    RUN(a_parent_graph_with_a_completion_callback_takes_each_childs_registration);
    RUN(per_request_children_use_their_own_registration);
    RUN(children_override_parent_keys_in_a_parent_graph);
    RUN(children_of_other_shapes_get_what_they_declare);
    RUN(a_child_context_set_again_is_used);
    RUN(a_failing_child_factory_destroys_what_the_resolve_made);
    RUN(a_child_freed_before_or_after_its_instances);
    RUN(a_freed_child_releases_its_singleton);
    RUN(two_children_each_make_their_own_singletons_once);
    RUN(two_children_each_make_their_own_weak_instance);
    RUN(a_reused_childs_registration_starts_new);
    RUN(a_reused_childs_value_takes_its_own_destructor_and_context);
    RUN(many_container_scoped_instances_in_one_child);
    RUN(per_request_children_on_four_threads);
    RUN(children_in_turn_take_their_own_registrations);
    RUN(children_in_turn_on_two_threads);
    RUN(children_with_the_same_context_keep_their_own_later_configuration);
    return harness_finish();
}
