/* Overrides (tether_override, TETHER_OVERRIDE, tether_override_clear): what resolves while one
 * holds, which cached instances are rebuilt when it starts and ends (identities), that handles
 * taken before keep what they had, that drops run once, and the errors. */
#include "harness.h"
#include "fixtures.h"

static void release(tether_ref *r) { CHECK_OK(tether_ref_release(r)); }

static int fake_drops;
static void drop_fake(void *instance, void *context) {
    CHECK(context == &fake_drops);
    node *o = instance;
    o->magic = DEAD;
    fake_drops++;
}

/* Pool <- Repo (singleton) <- Service (singleton); Clock (singleton) is unrelated. */
static tether_container *app(kind *Pool, kind *Repo, kind *Service, kind *Clock) {
    tether_container *c = new_container();
    reg_node(c, "Pool", Pool, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(c, "Repo", Repo, TETHER_SCOPE_SINGLETON, "Pool", NULL, drop_node);
    reg_node(c, "Service", Service, TETHER_SCOPE_SINGLETON, "Repo", NULL, drop_node);
    reg_node(c, "Clock", Clock, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    return c;
}

static void override_rebuilds_dependents_then_restores(void) {
    kind Pool = {"Pool", 0, 0}, Repo = {"Repo", 0, 0}, Service = {"Service", 0, 0}, Clock = {"Clock", 0, 0};
    tether_container *c = app(&Pool, &Repo, &Service, &Clock);
    tether_ref *s1, *k1, *p1;
    node *svc1 = resolve(c, "Service", &s1);
    node *clock1 = resolve(c, "Clock", &k1);
    node *pool1 = resolve(c, "Pool", &p1);

    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    fake_drops = 0;
    CHECK_OK(tether_override(c, "Pool", &fake, drop_fake, &fake_drops));
    /* Repo and Service were let go of by the cache (the handle keeps Service and its chain). */
    CHECK(Service.dropped == 0 && Repo.dropped == 0);
    tether_ref *s2, *k2, *p2;
    node *svc2 = resolve(c, "Service", &s2);
    CHECK(svc2 != svc1 && svc2->a != svc1->a);
    CHECK(svc2->a->a == &fake);                 /* the new Repo was built over the fake */
    CHECK(resolve(c, "Pool", &p2) == &fake);
    release(p2);
    CHECK(resolve(c, "Clock", &k2) == clock1);  /* unrelated: kept */
    release(k2);
    CHECK(Pool.made == 1 && Repo.made == 2 && Service.made == 2 && Clock.made == 1);
    CHECK(svc1->a->a == pool1);                 /* the old handle keeps what it had */

    CHECK_OK(tether_override_clear(c, "Pool"));
    /* The cache let go of the Service and Repo built over the fake; s2 still holds them. */
    CHECK(fake_drops == 0);
    release(s2);
    CHECK(Service.dropped == 1 && Repo.dropped == 1);
    CHECK(fake_drops == 1);                     /* nothing holds the fake any more */
    tether_ref *s3, *p3;
    node *svc3 = resolve(c, "Service", &s3);
    CHECK(resolve(c, "Pool", &p3) == pool1);    /* the original's singleton is back */
    /* New (made 3 times below); not compared with svc2, freed above: malloc may reuse its address. */
    CHECK(svc3->a->a == pool1);
    CHECK(Pool.made == 1 && Repo.made == 3 && Service.made == 3);
    release(p3);
    release(s3);
    release(s1);
    release(k1);
    release(p1);
    CHECK_OK(tether_container_free(c));
    CHECK(Pool.dropped == 1 && Repo.dropped == 3 && Service.dropped == 3 && Clock.dropped == 1);
    CHECK(fake_drops == 1);
}

static void override_reaches_children_and_their_caches(void) {
    kind Pool = {"Pool", 0, 0}, Repo = {"Repo", 0, 0}, Service = {"Service", 0, 0}, Clock = {"Clock", 0, 0};
    kind Req = {"Req", 0, 0};
    tether_container *root = app(&Pool, &Repo, &Service, &Clock);
    tether_container *child = new_container_in(root);
    reg_node(child, "Req", &Req, TETHER_SCOPE_CONTAINER, "Repo", NULL, drop_node);
    tether_ref *r1;
    node *req1 = resolve(child, "Req", &r1);
    release(r1);
    CHECK(Req.dropped == 0);                    /* the child caches it */

    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    fake_drops = 0;
    CHECK_OK(tether_override(root, "Pool", &fake, drop_fake, &fake_drops));
    CHECK(Req.dropped == 1);                    /* built over Pool (through Repo): let go of */
    tether_ref *r2;
    node *req2 = resolve(child, "Req", &r2);
    CHECK(req2->a->a == &fake);
    (void)req1;
    release(r2);
    CHECK_OK(tether_override_clear(root, "Pool"));
    CHECK(Req.dropped == 2 && fake_drops == 1);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
}

static void override_factory_form_stacks_and_goes_under_register(void) {
    kind Pool = {"Pool", 0, 0}, Repo = {"Repo", 0, 0}, Service = {"Service", 0, 0}, Clock = {"Clock", 0, 0};
    kind Fake = {"Fake", 0, 0}, Fake2 = {"Fake2", 0, 0}, Pool2 = {"Pool2", 0, 0};
    tether_container *c = app(&Pool, &Repo, &Service, &Clock);
    tether_param ctx[] = {TETHER_CONTEXT};
    tether_options o = TETHER_OPTIONS_INIT;
    o.flags = TETHER_OVERRIDE;
    o.scope = TETHER_SCOPE_SINGLETON;
    o.context = &Fake;
    o.drop = drop_node;
    tether_registration *h = NULL;
    CHECK_OK(tether_register_with(c, "Pool", (tether_fn)make0, ctx, 1, &o, &h));
    CHECK(h != NULL);
    o.context = &Fake2;
    CHECK_OK(tether_register_with(c, "Pool", (tether_fn)make0, ctx, 1, &o, NULL));  /* stacks */
    tether_ref *s;
    CHECK(resolve(c, "Service", &s)->a->a->k == &Fake2);
    release(s);
    /* Registering Pool meanwhile goes under the overrides. */
    reg_node(c, "Pool", &Pool2, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    CHECK(resolve(c, "Service", &s)->a->a->k == &Fake2);
    release(s);
    CHECK_OK(tether_override_clear(c, "Pool"));
    CHECK(Fake2.made == 1 && Fake2.dropped == 1);
    CHECK(resolve(c, "Service", &s)->a->a->k == &Fake);
    release(s);
    CHECK_STATUS(tether_set_scope(h, TETHER_SCOPE_GRAPH), TETHER_OK);  /* the first override's handle is live */
    CHECK(resolve(c, "Service", &s)->a->a->k == &Fake);
    release(s);
    CHECK_OK(tether_override_clear(c, "Pool"));
    CHECK_STATUS(tether_set_scope(h, TETHER_SCOPE_GRAPH), TETHER_E_INVALID_HANDLE);  /* stale now */
    CHECK(resolve(c, "Service", &s)->a->a->k == &Pool2);
    release(s);
    CHECK(Pool.made == 0 && Pool2.made == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(Fake.made == Fake.dropped && Pool2.dropped == 1 && Service.made == Service.dropped);
}

/* An override of Pool reaches the Repo singleton an override of Repo displaced: it was built over
 * Pool and resolves again when Repo's override ends, so it is let go of at once and rebuilt over the
 * fake (README "Overrides for tests"); the same rule as fuzz-039a2815ac828e20 (test_decorators.c). */
static void override_reaches_a_registration_another_override_displaced(void) {
    kind Pool = {"Pool", 0, 0}, Repo = {"Repo", 0, 0}, Service = {"Service", 0, 0}, Clock = {"Clock", 0, 0};
    tether_container *c = app(&Pool, &Repo, &Service, &Clock);
    tether_ref *r;
    node *pool1 = resolve(c, "Repo", &r)->a;
    release(r);
    node fake_repo = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    node fake_pool = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    fake_drops = 0;
    CHECK_OK(tether_override(c, "Repo", &fake_repo, drop_fake, &fake_drops));
    CHECK(Repo.dropped == 0);                     /* the key's own registration keeps its singleton */
    CHECK_OK(tether_override(c, "Pool", &fake_pool, drop_fake, &fake_drops));
    CHECK(Repo.dropped == 1 && Pool.dropped == 0);
    CHECK_OK(tether_override_clear(c, "Repo"));
    CHECK(fake_drops == 1);
    node *repo2 = resolve(c, "Repo", &r);
    CHECK(repo2->a == &fake_pool && Repo.made == 2);
    release(r);
    CHECK_OK(tether_override_clear(c, "Pool"));
    CHECK(Repo.dropped == 2 && fake_drops == 2);
    CHECK(resolve(c, "Repo", &r)->a == pool1);
    CHECK(Repo.made == 3 && Pool.made == 1);
    release(r);
    CHECK_OK(tether_container_free(c));
    CHECK(Pool.dropped == 1 && Repo.dropped == 3 && fake_drops == 2);
}

static void clear_errors_and_bad_arguments(void) {
    kind Pool = {"Pool", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "Pool", &Pool, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    CHECK_STATUS(tether_override_clear(c, "Pool"), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("tether_override_clear");
    CHECK_ERROR_HAS("\"Pool\" is not overridden in this container");
    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    fake_drops = 0;
    CHECK_STATUS(tether_override(c, "Pool", NULL, drop_fake, &fake_drops), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_override(c, "", &fake, drop_fake, &fake_drops), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_override(NULL, "Pool", &fake, drop_fake, &fake_drops), TETHER_E_INVALID_HANDLE);
    CHECK(fake_drops == 0);
    /* A child's clear does not end its parent's override. */
    tether_container *child = new_container_in(c);
    CHECK_OK(tether_override(c, "Pool", &fake, drop_fake, &fake_drops));
    CHECK_STATUS(tether_override_clear(child, "Pool"), TETHER_E_INVALID_ARGUMENT);
    tether_ref *p;
    CHECK(resolve(child, "Pool", &p) == &fake);
    release(p);
    CHECK_OK(tether_container_free(child));
    /* Freeing the container ends the override: the fake's drop runs once. */
    CHECK_OK(tether_container_free(c));
    CHECK(fake_drops == 1 && Pool.made == 0);
}

static void override_key_with_no_registration_falls_through_again(void) {
    kind Pool = {"Pool", 0, 0}, Repo = {"Repo", 0, 0}, Service = {"Service", 0, 0}, Clock = {"Clock", 0, 0};
    tether_container *root = app(&Pool, &Repo, &Service, &Clock);
    tether_container *child = new_container_in(root);
    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    fake_drops = 0;
    CHECK_OK(tether_override(child, "Pool", &fake, drop_fake, &fake_drops));
    tether_ref *p;
    CHECK(resolve(child, "Pool", &p) == &fake);
    release(p);
    CHECK(resolve(root, "Pool", &p) != &fake);  /* the parent is not overridden */
    release(p);
    CHECK_OK(tether_override_clear(child, "Pool"));
    CHECK(fake_drops == 1);
    CHECK(resolve(child, "Pool", &p)->k == &Pool);
    release(p);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
}

/* A resolve that took the fake before the override's clear and publishes after it: it returns what
 * it built (over the fake: it saw that configuration whole), but caches none of it, so the next
 * resolve builds over the original. Repo's factory clears the override (the clear lands between the
 * build's look-up of Pool and its publication), from the root or from a child of it. */
static tether_container *stale_root;
static int stale_clears;
static void *make_repo_clearing(kind *k, node *pool) {
    if (stale_clears++ == 0) CHECK_OK(tether_override_clear(stale_root, "Pool"));
    return node_new(k, pool, NULL);
}
/* These tests' configuration: stale_root anew with Pool, a singleton of kind `pool`, and `key` made by
 * `clearing` (slots {TETHER_CONTEXT, second}: the factory that clears the override) in `scope`. */
static void stale_root_with(kind *pool, const char *key, tether_fn clearing, tether_param second, tether_scope scope,
                            kind *k) {
    stale_root = new_container();
    stale_clears = 0;
    reg_node(stale_root, "Pool", pool, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = scope;
    o.drop = drop_node;
    o.context = k;
    tether_param p[] = {TETHER_CONTEXT, second};
    CHECK_OK(tether_register_with(stale_root, key, clearing, p, 2, &o, NULL));
}
/* `fake` overrides Pool in stale_root; returns where the test resolves from: stale_root, or a new child of it. */
static tether_container *override_pool(node *fake, int from_child) {
    tether_container *from = from_child ? new_container_in(stale_root) : stale_root;
    fake_drops = 0;
    CHECK_OK(tether_override(stale_root, "Pool", fake, drop_fake, &fake_drops));
    return from;
}
/* Frees `from` (when a child) and stale_root. */
static void free_stale(tether_container *from) {
    if (from != stale_root) CHECK_OK(tether_container_free(from));
    CHECK_OK(tether_container_free(stale_root));
}
static void built_over_a_cleared_override_is_not_cached(int from_child) {
    kind Pool = {"Pool", 0, 0}, Repo = {"Repo", 0, 0}, Service = {"Service", 0, 0};
    stale_root_with(&Pool, "Repo", (tether_fn)make_repo_clearing, TETHER_DEP("Pool"), TETHER_SCOPE_SINGLETON, &Repo);
    reg_node(stale_root, "Service", &Service, TETHER_SCOPE_SINGLETON, "Repo", NULL, drop_node);
    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    tether_container *from = override_pool(&fake, from_child);
    tether_ref *s1, *s2, *p2;
    node *svc1 = resolve(from, "Service", &s1);
    CHECK(stale_clears == 1 && svc1->a->a == &fake);   /* what it built, over what it saw */
    CHECK(fake_drops == 0);                            /* s1 holds it through Repo */
    node *svc2 = resolve(from, "Service", &s2);
    node *pool = resolve(from, "Pool", &p2);
    CHECK(svc2 != svc1 && svc2->a != svc1->a);         /* not cached: built again */
    CHECK(pool != &fake && svc2->a->a == pool);        /* over the original */
    CHECK(Pool.made == 1 && Repo.made == 2 && Service.made == 2);
    release(s1);
    CHECK(Service.dropped == 1 && Repo.dropped == 1 && fake_drops == 1);  /* nothing cached them */
    tether_ref *s3;
    CHECK(resolve(from, "Service", &s3) == svc2);      /* the one over the original is cached */
    release(s3);
    release(s2);
    release(p2);
    free_stale(from);
    CHECK(Pool.dropped == 1 && Repo.dropped == 2 && Service.dropped == 2 && fake_drops == 1);
}
static void built_over_a_cleared_override_from_the_root(void) { built_over_a_cleared_override_is_not_cached(0); }
static void built_over_a_cleared_override_from_a_child(void) { built_over_a_cleared_override_is_not_cached(1); }

/* The same for a container-scoped key (its publication into the resolving container): Repo, container-scoped over
 * Pool under a graph-scoped Handler, resolved from the root or a child, its factory clearing the override. The Handler
 * over the fake is returned; its Repo is not cached in the container, so the next resolve from there makes a Repo over
 * the original, which is cached. */
static void scoped_built_over_a_cleared_override_is_not_cached(int from_child) {
    kind Pool = {"Pool", 0, 0}, Repo = {"Repo", 0, 0}, Handler = {"Handler", 0, 0};
    stale_root_with(&Pool, "Repo", (tether_fn)make_repo_clearing, TETHER_DEP("Pool"), TETHER_SCOPE_CONTAINER, &Repo);
    reg_node(stale_root, "Handler", &Handler, TETHER_SCOPE_GRAPH, "Repo", NULL, drop_node);
    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    tether_container *from = override_pool(&fake, from_child);
    tether_ref *h1, *h2, *h3, *p2;
    node *handler1 = resolve(from, "Handler", &h1);
    CHECK(stale_clears == 1 && handler1->a->a == &fake);  /* what it built, over what it saw */
    CHECK(fake_drops == 0);                                /* h1 holds it through Repo */
    node *handler2 = resolve(from, "Handler", &h2);
    node *pool = resolve(from, "Pool", &p2);
    CHECK(handler2->a != handler1->a);                     /* the Repo over the fake was not cached */
    CHECK(pool != &fake && handler2->a->a == pool);        /* over the original */
    CHECK(Pool.made == 1 && Repo.made == 2 && Handler.made == 2);
    release(h1);
    CHECK(Handler.dropped == 1 && Repo.dropped == 1 && fake_drops == 1);  /* nothing cached them */
    CHECK(resolve(from, "Handler", &h3)->a == handler2->a);              /* the Repo over the original is cached */
    CHECK(Repo.made == 2);
    release(h3);
    release(h2);
    release(p2);
    free_stale(from);
    CHECK(Pool.dropped == 1 && Repo.dropped == 2 && Handler.dropped == 3 && fake_drops == 1);
}
static void scoped_built_over_a_cleared_override_from_the_root(void) { scoped_built_over_a_cleared_override_is_not_cached(0); }
static void scoped_built_over_a_cleared_override_from_a_child(void) { scoped_built_over_a_cleared_override_is_not_cached(1); }

/* Edges made at run time, which no declaration shows: Service (singleton or container-scoped) takes Pool through its
 * RESOLVER slot (tether_resolver_get: a strong edge) and clears the override. The Service over the fake is returned,
 * not cached: the next resolve makes one over the original, which is cached. */
static void *make_service_getting_pool(kind *k, tether_resolver *r) {
    void *pool = NULL;
    CHECK_OK(tether_resolver_get(r, "Pool", &pool));
    if (stale_clears++ == 0) CHECK_OK(tether_override_clear(stale_root, "Pool"));
    return node_new(k, pool, NULL);
}
static void runtime_edge_built_over_a_cleared_override_is_not_cached(tether_scope scope, int from_child) {
    kind Pool = {"Pool", 0, 0}, Service = {"Service", 0, 0};
    stale_root_with(&Pool, "Service", (tether_fn)make_service_getting_pool, TETHER_RESOLVER, scope, &Service);
    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    tether_container *from = override_pool(&fake, from_child);
    tether_ref *s1, *s2, *s3, *p2;
    node *svc1 = resolve(from, "Service", &s1);
    CHECK(stale_clears == 1 && svc1->a == &fake);
    CHECK(fake_drops == 0);
    node *svc2 = resolve(from, "Service", &s2);
    node *pool = resolve(from, "Pool", &p2);
    CHECK(svc2 != svc1);                               /* not cached: built again */
    CHECK(pool != &fake && svc2->a == pool);           /* over the original */
    CHECK(Pool.made == 1 && Service.made == 2);
    release(s1);
    CHECK(Service.dropped == 1 && fake_drops == 1);
    CHECK(resolve(from, "Service", &s3) == svc2);      /* the one over the original is cached */
    CHECK(Service.made == 2);
    release(s3);
    release(s2);
    release(p2);
    free_stale(from);
    CHECK(Pool.dropped == 1 && Service.dropped == 2 && fake_drops == 1);
}
static void runtime_edge_singleton_built_over_a_cleared_override(void) {
    runtime_edge_built_over_a_cleared_override_is_not_cached(TETHER_SCOPE_SINGLETON, 0);
    runtime_edge_built_over_a_cleared_override_is_not_cached(TETHER_SCOPE_SINGLETON, 1);
}
static void runtime_edge_scoped_built_over_a_cleared_override(void) {
    runtime_edge_built_over_a_cleared_override_is_not_cached(TETHER_SCOPE_CONTAINER, 0);
    runtime_edge_built_over_a_cleared_override_is_not_cached(TETHER_SCOPE_CONTAINER, 1);
}

/* Threads resolving through children of their own while the main thread overrides and clears:
 * every resolve sees the fake or the original, and every instance is dropped once at the end. */
#include <pthread.h>
typedef struct worker { tether_container *root; node *fake; int bad, done; } worker;
static void *work(void *arg) {
    worker *w = arg;
    for (int i = 0; i < 2000; i++) {
        tether_container *child = NULL;
        if (tether_container_new(w->root, &child) != TETHER_OK) { w->bad++; continue; }
        tether_ref *r = NULL;
        if (tether_resolve(child, "Service", &r) == TETHER_OK) {
            node *s = tether_ref_get(r);
            node *pool = s->a->a;
            if (!(pool == w->fake || (pool->k && pool->magic == ALIVE))) w->bad++;
            tether_ref_release(r);
        } else {
            w->bad++;
        }
        if (tether_container_free(child) != TETHER_OK) w->bad++;
    }
    return NULL;
}

static kind Pool_t = {"Pool", 0, 0}, Repo_t = {"Repo", 0, 0}, Service_t = {"Service", 0, 0};
static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;
static void drop_locked(void *instance, void *context) {
    pthread_mutex_lock(&counts);
    drop_node(instance, context);
    pthread_mutex_unlock(&counts);
}
static void *make0_locked(kind *k) {
    pthread_mutex_lock(&counts);
    void *o = node_new(k, NULL, NULL);
    pthread_mutex_unlock(&counts);
    return o;
}
static void drop_fake_locked(void *instance, void *context) {
    pthread_mutex_lock(&counts);
    drop_fake(instance, context);
    pthread_mutex_unlock(&counts);
}
static void *make1_locked(kind *k, node *a) {
    pthread_mutex_lock(&counts);
    void *o = node_new(k, a, NULL);
    pthread_mutex_unlock(&counts);
    return o;
}

static void overrides_while_other_threads_resolve(void) {
    tether_container *root = new_container();
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_SINGLETON;
    o.drop = drop_locked;
    tether_param ctx[] = {TETHER_CONTEXT}, pool[] = {TETHER_CONTEXT, TETHER_DEP("Pool")}, repo[] = {TETHER_CONTEXT, TETHER_DEP("Repo")};
    o.context = &Pool_t;
    CHECK_OK(tether_register_with(root, "Pool", (tether_fn)make0_locked, ctx, 1, &o, NULL));
    o.context = &Repo_t;
    CHECK_OK(tether_register_with(root, "Repo", (tether_fn)make1_locked, pool, 2, &o, NULL));
    o.context = &Service_t;
    CHECK_OK(tether_register_with(root, "Service", (tether_fn)make1_locked, repo, 2, &o, NULL));
    node fake = {ALIVE, NULL, {{NULL, NULL}}, NULL, NULL, NULL};
    fake_drops = 0;
    worker w[2] = {{root, &fake, 0, 0}, {root, &fake, 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &w[i]);
    for (int i = 0; i < 200; i++) {
        CHECK_OK(tether_override(root, "Pool", &fake, drop_fake_locked, &fake_drops));
        CHECK_OK(tether_override_clear(root, "Pool"));
    }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK(w[0].bad == 0 && w[1].bad == 0);
    /* Nothing a worker built over the fake and published after a clear stays cached. */
    tether_ref *r;
    node *s = resolve(root, "Service", &r);
    CHECK(s->a->a != &fake && s->a->a->k == &Pool_t && s->a->a->magic == ALIVE);
    release(r);
    CHECK_OK(tether_container_free(root));
    CHECK(fake_drops == 200);
    CHECK(Pool_t.made == Pool_t.dropped && Repo_t.made == Repo_t.dropped && Service_t.made == Service_t.dropped);
}

int main(void) {
    RUN(overrides_while_other_threads_resolve);
    RUN(override_rebuilds_dependents_then_restores);
    RUN(override_reaches_children_and_their_caches);
    RUN(override_factory_form_stacks_and_goes_under_register);
    RUN(clear_errors_and_bad_arguments);
    RUN(override_key_with_no_registration_falls_through_again);
    RUN(override_reaches_a_registration_another_override_displaced);
    RUN(built_over_a_cleared_override_from_the_root);
    RUN(built_over_a_cleared_override_from_a_child);
    RUN(scoped_built_over_a_cleared_override_from_the_root);
    RUN(scoped_built_over_a_cleared_override_from_a_child);
    RUN(runtime_edge_singleton_built_over_a_cleared_override);
    RUN(runtime_edge_scoped_built_over_a_cleared_override);
    return harness_finish();
}
