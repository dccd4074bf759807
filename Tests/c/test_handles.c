/* Strong and weak handles and instance lifetimes: get/clone/release,
 * downgrade/upgrade, TETHER_E_EXPIRED, the destructor running exactly once when
 * the last strong reference (handle, edge or singleton cache) goes, dependents
 * destroyed before their dependencies, instances outliving their container, and
 * drop(instance, context). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "fixtures.h"

/* ---- instances that log their destruction -------------------------------- */

/* Global destruction log: the tags of destroyed instances, in order. */
static const char *drop_log[64];
static int drop_count;

static void log_reset(void) { drop_count = 0; }
static int logged_at(int i, const char *tag) { return i < drop_count && strcmp(drop_log[i], tag) == 0; }
static int log_index(const char *tag) {
    for (int i = 0; i < drop_count; i++) if (strcmp(drop_log[i], tag) == 0) return i;
    return -1;
}

static void drop_and_log(void *instance, void *context) {
    node *o = instance;
    CHECK(o->magic == ALIVE);              /* exactly once */
    CHECK(o->k == context);
    /* a dependent dies before its dependencies: they are still intact here */
    if (o->a) CHECK(o->a->magic == ALIVE);
    if (o->b) CHECK(o->b->magic == ALIVE);
    o->magic = DEAD;
    o->k->dropped++;
    if (drop_count < 64) drop_log[drop_count++] = o->k->tag;
    free(o);
}

static tether_registration *reg(tether_container *c, kind *k, tether_scope scope,
                                const char *dep_a, const char *dep_b) {
    return reg_node(c, k->tag, k, scope, dep_a, dep_b, drop_and_log);
}

/* ---- tests --------------------------------------------------------------- */

static void get_clone_release(void) {
    kind A = {"A", 0, 0};
    tether_container *c = new_container();
    reg(c, &A, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_ref *r, *r2 = NULL, *r3 = NULL;
    node *a = resolve(c, "A", &r);
    CHECK(tether_ref_get(r) == a);         /* stable */
    CHECK_OK(tether_ref_clone(r, &r2));
    CHECK(r2 != NULL && r2 != r);
    CHECK(tether_ref_get(r2) == a);
    CHECK_OK(tether_ref_release(r));
    CHECK(A.dropped == 0);                 /* the clone holds it */
    CHECK(tether_ref_get(r2) == a);
    CHECK_OK(tether_ref_clone(r2, &r3));
    CHECK_OK(tether_ref_release(r2));
    CHECK(A.dropped == 0);
    CHECK(tether_ref_get(r3) == a && a->magic == ALIVE);
    CHECK_OK(tether_ref_release(r3));
    CHECK(A.dropped == 1 && A.made == 1);
    CHECK_OK(tether_container_free(c));
}

static void downgrade_and_upgrade(void) {
    kind A = {"A", 0, 0};
    tether_container *c = new_container();
    reg(c, &A, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_ref *r, *up = NULL, *up2 = NULL;
    tether_weak *w = NULL, *w2 = NULL;
    node *a = resolve(c, "A", &r);
    CHECK_OK(tether_ref_downgrade(r, &w));
    CHECK(w != NULL);
    CHECK_OK(tether_weak_upgrade(w, &up));
    CHECK(tether_ref_get(up) == a);
    CHECK_OK(tether_ref_release(r));
    CHECK(A.dropped == 0);                 /* the upgraded handle is strong */
    CHECK_OK(tether_ref_downgrade(up, &w2));
    CHECK_OK(tether_weak_upgrade(w2, &up2));
    CHECK(tether_ref_get(up2) == a);
    CHECK_OK(tether_ref_release(up2));
    CHECK_OK(tether_weak_release(w2));     /* releasing a weak handle never destroys */
    CHECK(A.dropped == 0);
    CHECK_OK(tether_ref_release(up));
    CHECK(A.dropped == 1);
    CHECK_OK(tether_weak_release(w));
    CHECK(A.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void upgrade_after_last_release_is_expired(void) {
    kind A = {"A", 0, 0};
    tether_container *c = new_container();
    reg(c, &A, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_ref *r, *up = (tether_ref *)&A;  /* sentinel: must become NULL */
    tether_weak *w = NULL;
    resolve(c, "A", &r);
    CHECK_OK(tether_ref_downgrade(r, &w));
    CHECK_OK(tether_ref_release(r));
    CHECK(A.dropped == 1);
    CHECK_STATUS(tether_weak_upgrade(w, &up), TETHER_E_EXPIRED);
    CHECK(up == NULL);
    CHECK_ERROR_HAS("the instance is gone");
    CHECK_STATUS(tether_weak_upgrade(w, &up), TETHER_E_EXPIRED); /* stays expired */
    CHECK_OK(tether_weak_release(w));
    CHECK_OK(tether_container_free(c));
}

static void destructor_once_across_handles_edges_and_cache(void) {
    kind S = {"S", 0, 0}, D = {"D", 0, 0};
    tether_container *c = new_container();
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &D, TETHER_SCOPE_GRAPH, "S", NULL);
    log_reset();
    tether_ref *rd, *rs;
    node *d = resolve(c, "D", &rd);        /* S: cache + D's edge */
    node *s = resolve(c, "S", &rs);        /* S: + a handle */
    if (d) CHECK(d->a == s);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(S.dropped == 0);                 /* cache gone; edge and handle remain */
    CHECK_OK(tether_ref_release(rs));
    CHECK(S.dropped == 0);                 /* the edge remains */
    CHECK_OK(tether_ref_release(rd));
    CHECK(D.dropped == 1 && S.dropped == 1);
    CHECK(logged_at(0, "D") && logged_at(1, "S"));
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 1 && S.made == 1 && drop_count == 2);
}

static void singleton_cache_is_the_last_reference(void) {
    kind S = {"S", 0, 0}, D = {"D", 0, 0};
    tether_container *c = new_container();
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &D, TETHER_SCOPE_GRAPH, "S", NULL);
    tether_ref *rd;
    resolve(c, "D", &rd);
    CHECK_OK(tether_ref_release(rd));
    CHECK(D.dropped == 1 && S.dropped == 0);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(S.dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 1);
}

static void chain_destroyed_dependents_first(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, C = {"C", 0, 0};
    tether_container *c = new_container();
    reg(c, &A, TETHER_SCOPE_GRAPH, "B", NULL);
    reg(c, &B, TETHER_SCOPE_GRAPH, "C", NULL);
    reg(c, &C, TETHER_SCOPE_GRAPH, NULL, NULL);
    log_reset();
    tether_ref *r;
    resolve(c, "A", &r);
    CHECK(drop_count == 0);
    CHECK_OK(tether_ref_release(r));
    CHECK(drop_count == 3);
    CHECK(logged_at(0, "A") && logged_at(1, "B") && logged_at(2, "C"));
    CHECK_OK(tether_container_free(c));
}

static void diamond_destroyed_dependents_first(void) {
    kind Top = {"Top", 0, 0}, L = {"L", 0, 0}, R = {"R", 0, 0}, Base = {"Base", 0, 0};
    tether_container *c = new_container();
    reg(c, &Top, TETHER_SCOPE_GRAPH, "L", "R");
    reg(c, &L, TETHER_SCOPE_GRAPH, "Base", NULL);
    reg(c, &R, TETHER_SCOPE_GRAPH, "Base", NULL);
    reg(c, &Base, TETHER_SCOPE_GRAPH, NULL, NULL);
    log_reset();
    tether_ref *r;
    node *top = resolve(c, "Top", &r);
    if (top) CHECK(top->a->a == top->b->a);
    CHECK_OK(tether_ref_release(r));
    CHECK(drop_count == 4);
    CHECK(Base.made == 1 && Base.dropped == 1);
    CHECK(logged_at(0, "Top") && logged_at(3, "Base"));
    CHECK(log_index("L") > 0 && log_index("R") > 0);
    CHECK_OK(tether_container_free(c));
}

static void held_dependency_survives_its_dependent(void) {
    kind A = {"A", 0, 0}, W = {"W", 0, 0};
    tether_container *c = new_container();
    reg(c, &A, TETHER_SCOPE_GRAPH, "W", NULL);
    reg(c, &W, TETHER_SCOPE_WEAK, NULL, NULL);  /* weak scope: resolving it again reaches the same one */
    log_reset();
    tether_ref *ra, *rw;
    node *a = resolve(c, "A", &ra);
    node *w = resolve(c, "W", &rw);
    if (a) CHECK(a->a == w);               /* an edge and a handle on one instance */
    CHECK_OK(tether_ref_release(ra));
    CHECK(A.dropped == 1 && W.dropped == 0);
    if (w) CHECK(w->magic == ALIVE);
    CHECK_OK(tether_ref_release(rw));
    CHECK(W.dropped == 1);
    CHECK(logged_at(0, "A") && logged_at(1, "W"));
    CHECK_OK(tether_container_free(c));
}

static void instances_outlive_their_container(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, S = {"S", 0, 0}, Unheld = {"Unheld", 0, 0};
    tether_container *c = new_container();
    reg(c, &A, TETHER_SCOPE_GRAPH, "B", "S");
    reg(c, &B, TETHER_SCOPE_GRAPH, NULL, NULL);
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &Unheld, TETHER_SCOPE_SINGLETON, NULL, NULL);
    log_reset();
    tether_ref *ra, *ru, *ra2 = NULL, *up = NULL;
    tether_weak *wa = NULL;
    node *a = resolve(c, "A", &ra);
    resolve(c, "Unheld", &ru);
    CHECK_OK(tether_ref_release(ru));
    CHECK_OK(tether_ref_downgrade(ra, &wa));

    CHECK_OK(tether_container_free(c));
    CHECK(Unheld.dropped == 1);            /* only the cache held it */
    CHECK(A.dropped == 0 && B.dropped == 0 && S.dropped == 0);
    CHECK(tether_ref_get(ra) == a);
    if (a) CHECK(a->magic == ALIVE && a->a->magic == ALIVE && a->b->magic == ALIVE);
    CHECK_OK(tether_ref_clone(ra, &ra2));
    CHECK_OK(tether_weak_upgrade(wa, &up));
    CHECK(tether_ref_get(up) == a);
    CHECK_OK(tether_ref_release(up));
    CHECK_OK(tether_ref_release(ra));
    CHECK(A.dropped == 0);
    CHECK_OK(tether_ref_release(ra2));
    CHECK(A.dropped == 1 && B.dropped == 1 && S.dropped == 1);
    CHECK(log_index("A") == 1);            /* after Unheld, before its dependencies */
    CHECK(log_index("B") > 1 && log_index("S") > 1);
    CHECK_STATUS(tether_weak_upgrade(wa, &up), TETHER_E_EXPIRED);
    CHECK_OK(tether_weak_release(wa));
}

/* ---- drop(instance, context) --------------------------------------------- */

typedef struct drop_record { void *instance, *context; int calls; } drop_record;
static drop_record first_drop, second_drop;

static void *make_plain(void *ctx) { (void)ctx; return malloc(16); }
static void drop_first(void *instance, void *context) {
    first_drop.instance = instance; first_drop.context = context; first_drop.calls++;
    free(instance);
}
static void drop_second(void *instance, void *context) {
    second_drop.instance = instance; second_drop.context = context; second_drop.calls++;
    free(instance);
}

static void drop_receives_instance_and_context(void) {
    static int ctx1, ctx2;
    memset(&first_drop, 0, sizeof first_drop);
    memset(&second_drop, 0, sizeof second_drop);
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "P", (tether_fn)make_plain, p, 1, &r));
    CHECK_OK(tether_set_context(r, &ctx1, drop_first));
    tether_ref *h1, *h2;
    CHECK_OK(tether_resolve(c, "P", &h1));
    void *i1 = tether_ref_get(h1);
    /* affects instances created after the call only */
    CHECK_OK(tether_set_context(r, &ctx2, drop_second));
    CHECK_OK(tether_resolve(c, "P", &h2));
    void *i2 = tether_ref_get(h2);
    CHECK_OK(tether_ref_release(h1));
    CHECK(first_drop.calls == 1 && first_drop.instance == i1 && first_drop.context == &ctx1);
    CHECK(second_drop.calls == 0);
    CHECK_OK(tether_ref_release(h2));
    CHECK(second_drop.calls == 1 && second_drop.instance == i2 && second_drop.context == &ctx2);
    CHECK(first_drop.calls == 1);
    CHECK_OK(tether_container_free(c));
}

static int static_instance;
static void *make_static(void) { return &static_instance; }

static void no_destructor_is_fine(void) {
    tether_container *c = new_container();
    CHECK_OK(tether_register(c, "X", (tether_fn)make_static, NULL, 0, NULL));
    tether_ref *r;
    CHECK_OK(tether_resolve(c, "X", &r));
    CHECK(tether_ref_get(r) == &static_instance);
    CHECK_OK(tether_ref_release(r));
    CHECK_OK(tether_container_free(c));
}

static void handles_are_distinct_per_resolve_and_clone(void) {
    kind S = {"S", 0, 0};
    tether_container *c = new_container();
    reg(c, &S, TETHER_SCOPE_SINGLETON, NULL, NULL);
    tether_ref *r1, *r2, *r3 = NULL;
    node *s1 = resolve(c, "S", &r1);
    node *s2 = resolve(c, "S", &r2);
    CHECK(s1 == s2);
    CHECK(r1 != r2);                       /* each handle is released on its own */
    CHECK_OK(tether_ref_clone(r1, &r3));
    CHECK(r3 != r1 && r3 != r2);
    CHECK_OK(tether_ref_release(r1));
    CHECK(tether_ref_get(r2) == s1 && tether_ref_get(r3) == s1);
    CHECK_OK(tether_ref_release(r2));
    CHECK_OK(tether_ref_release(r3));
    CHECK(S.dropped == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(S.dropped == 1);
}

/* ---- callbacks calling back into the library ------------------------------ */
/* The header allows factories and destructors to call the library, including
 * resolving from the same container. main() sets an alarm so a deadlock fails. */

typedef struct holder { tether_ref *held; kind *k; } holder;
static tether_container *reentrant_container;
static tether_status nested_status, drop_resolve_status;

/* A factory that makes a nested top-level resolve of "B" and keeps the handle. */
static void *make_holder(kind *k) {
    holder *h = malloc(sizeof *h);
    h->k = k;
    h->held = NULL;
    nested_status = tether_resolve(reentrant_container, "B", &h->held);
    k->made++;
    return h;
}
/* ...and releases it in its destructor. */
static void drop_holder(void *instance, void *context) {
    holder *h = instance;
    (void)context;
    h->k->dropped++;
    if (drop_count < 64) drop_log[drop_count++] = h->k->tag;
    if (h->held) CHECK_OK(tether_ref_release(h->held));
    free(h);
}

static void factory_resolves_and_destructor_releases(void) {
    kind H = {"H", 0, 0}, B = {"B", 0, 0};
    tether_container *c = reentrant_container = new_container();
    reg(c, &B, TETHER_SCOPE_GRAPH, NULL, NULL);
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "H", (tether_fn)make_holder, p, 1, &r));
    CHECK_OK(tether_set_context(r, &H, drop_holder));
    log_reset();
    tether_ref *ref;
    CHECK_OK(tether_resolve(c, "H", &ref));
    CHECK(nested_status == TETHER_OK);
    holder *h = tether_ref_get(ref);
    if (h) CHECK(tether_ref_get(h->held) != NULL);
    CHECK(B.made == 1 && B.dropped == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK(H.dropped == 1 && B.dropped == 1);
    CHECK(logged_at(0, "H") && logged_at(1, "B"));
    CHECK_OK(tether_container_free(c));
}

/* Registers singleton `key` (factory `fn` with its kind as context, destructor
 * `drop`) and resolves it once, so the cache holds it. */
static void cache_singleton(tether_container *c, const char *key, tether_fn fn, kind *k, tether_drop_fn drop) {
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, fn, p, 1, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_context(r, k, drop));
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, key, &ref));
    CHECK_OK(tether_ref_release(ref));
}

static void singleton_holding_a_ref_freed_with_its_container(void) {
    kind H = {"H", 0, 0}, B = {"B", 0, 0};
    tether_container *c = reentrant_container = new_container();
    reg(c, &B, TETHER_SCOPE_SINGLETON, NULL, NULL);
    cache_singleton(c, "H", (tether_fn)make_holder, &H, drop_holder);
    CHECK_OK(tether_container_free(c));    /* H's destructor releases its handle on B meanwhile */
    CHECK(H.dropped == 1 && B.dropped == 1);
}

/* A destructor that resolves from the container whose cache is being emptied. */
static void drop_and_resolve(void *instance, void *context) {
    kind *k = context;
    k->dropped++;
    free(instance);
    tether_ref *r = NULL;
    drop_resolve_status = tether_resolve(reentrant_container, "G", &r);
    if (r) CHECK_OK(tether_ref_release(r));
}
static void *make_plain_obj(kind *k) { k->made++; return malloc(8); }

static void destructor_resolves_during_reset_and_free(void) {
    kind S = {"S", 0, 0}, G = {"G", 0, 0};
    tether_container *c = reentrant_container = new_container();
    reg(c, &G, TETHER_SCOPE_GRAPH, NULL, NULL);
    cache_singleton(c, "S", (tether_fn)make_plain_obj, &S, drop_and_resolve);
    tether_ref *ref;
    drop_resolve_status = TETHER_E_NO_MEMORY;
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(S.dropped == 1);
    CHECK(drop_resolve_status == TETHER_OK);          /* the container is alive */
    CHECK(G.made == 1 && G.dropped == 1);

    CHECK_OK(tether_resolve(c, "S", &ref));
    CHECK_OK(tether_ref_release(ref));
    drop_resolve_status = TETHER_E_NO_MEMORY;
    CHECK_OK(tether_container_free(c));               /* S's destructor runs inside the free */
    CHECK(S.dropped == 2);
    /* resolving from a container being freed: refused or served, never a crash or deadlock */
    CHECK(drop_resolve_status == TETHER_OK || drop_resolve_status == TETHER_E_INVALID_HANDLE);
    CHECK(G.made == G.dropped);
}

/* What a destructor run by tether_container_free(c) gets from calls on c: every
 * call agrees that c is gone (tether_reset and tether_make_provider said OK). */
static tether_status during_free[11];
static uint32_t during_free_g;  /* G's key id, interned before the free */
static void drop_and_call(void *instance, void *context) {
    kind *k = context;
    k->dropped++;
    free(instance);
    tether_container *c = reentrant_container;
    tether_ref *r = NULL;
    tether_provider p = NULL;
    tether_registration *reg = NULL;
    uint32_t id = 0;
    tether_param none[] = {TETHER_CONTEXT};
    during_free[0] = tether_reset(c, TETHER_SCOPE_SINGLETON);
    during_free[1] = tether_make_provider(c, "G", &p);
    during_free[2] = tether_resolve(c, "G", &r);
    during_free[3] = tether_register(c, "New", (tether_fn)make_plain_obj, none, 1, &reg);
    during_free[4] = tether_intern(c, "G", &id);
    during_free[5] = tether_validate(c);
    /* the container's state answers before any other argument is looked at (a key id that is
     * no id, a NULL collector): the same status whichever argument is also wrong */
    during_free[6] = tether_resolve_key_args(c, 0xfffffff0u, NULL, 0, &r);
    during_free[7] = tether_resolve_key(c, 0xfffffff0u, &r);
    tether_drop drops[1];
    tether_collect io = {drops, 1, 0, NULL, NULL, 0, NULL};
    during_free[8] = TB.resolve_key_collect(c, 0xfffffff0u, 0, &io);
    during_free[9] = tether_resolve_key_args(c, during_free_g, NULL, 2, &r);  /* a real key, arguments that are no arguments */
    tether_param two_resolvers[] = {TETHER_RESOLVER, TETHER_RESOLVER};      /* params refused on a live container */
    during_free[10] = tether_register(c, "Bad", (tether_fn)make_plain_obj, two_resolvers, 2, &reg);
    CHECK(p == NULL && r == NULL && reg == NULL);
    if (p) tether_provider_free(p);
    if (r) tether_ref_release(r);
}

/* Re-registering S drops the instance the replaced registration made; its destructor frees the
 * container while tether_register runs: the call says so and hands out no handle (a handle
 * made after the free retired the container's registrations would stay valid for good). */
static void drop_and_free(void *instance, void *context) {
    ((kind *)context)->dropped++;
    free(instance);
    during_free[0] = tether_container_free(reentrant_container);
}

static void a_container_freed_while_registering_gives_no_handle(void) {
    for (int with_ex = 0; with_ex < 2; with_ex++) {
        kind S = {"S", 0, 0};
        tether_container *c = reentrant_container = new_container();
        cache_singleton(c, "S", (tether_fn)make_plain_obj, &S, drop_and_free);
        during_free[0] = TETHER_E_NO_MEMORY;
        tether_registration *r = (tether_registration *)1;
        tether_param p[] = {TETHER_CONTEXT};
        tether_status st;
        if (with_ex) {
            tether_options o = TETHER_OPTIONS_INIT;
            o.context = &S;
            st = tether_register_with(c, "S", (tether_fn)make_plain_obj, p, 1, &o, &r);
        } else {
            st = tether_register(c, "S", (tether_fn)make_plain_obj, p, 1, &r);
        }
        CHECK_STATUS(during_free[0], TETHER_OK);
        CHECK_STATUS(st, TETHER_E_INVALID_HANDLE);
        CHECK_ERROR_HAS("freed while this call ran");
        CHECK(r == NULL && S.dropped == 1);
        CHECK_STATUS(tether_set_scope(r, TETHER_SCOPE_SINGLETON), TETHER_E_INVALID_HANDLE);
        CHECK_STATUS(tether_resolve(c, "S", &(tether_ref *){NULL}), TETHER_E_INVALID_HANDLE);
    }
}

/* The same when the destructor registers the key again: that registration replaces the one
 * tether_register was making before it had a handle; the key resolves to the newer one. */
static kind *again_kind;
static void drop_plain(void *instance, void *context) {
    ((kind *)context)->dropped++;
    free(instance);
}
static void drop_and_register_again(void *instance, void *context) {
    ((kind *)context)->dropped++;
    free(instance);
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    during_free[0] = tether_register(reentrant_container, "S", (tether_fn)make_plain_obj, p, 1, &r);
    during_free[1] = tether_set_context(r, again_kind, drop_plain);
}

static void a_registration_replaced_while_registering_gives_no_handle(void) {
    kind S = {"S", 0, 0}, Newer = {"Newer", 0, 0}, Outer = {"Outer", 0, 0};
    tether_container *c = reentrant_container = new_container();
    again_kind = &Newer;
    cache_singleton(c, "S", (tether_fn)make_plain_obj, &S, drop_and_register_again);
    tether_registration *r = (tether_registration *)1;
    tether_param p[] = {TETHER_CONTEXT};
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &Outer;
    CHECK_STATUS(tether_register_with(c, "S", (tether_fn)make_plain_obj, p, 1, &o, &r), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("was registered again while this call ran");
    CHECK(r == NULL && S.dropped == 1);
    CHECK_OK(during_free[0]);
    CHECK_OK(during_free[1]);
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "S", &ref));      /* the newer registration answers */
    CHECK(Newer.made == 1 && Outer.made == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(Newer.made == Newer.dropped);
}

/* A destructor run while S is registered again (the replaced registration's instance) calls
 * a setter with the replaced registration's handle: stale already, not configurable. */
static tether_registration *replaced_handle;
static void drop_and_configure_the_replaced(void *instance, void *context) {
    ((kind *)context)->dropped++;
    free(instance);
    during_free[0] = tether_set_scope(replaced_handle, TETHER_SCOPE_TRANSIENT);
    during_free[1] = tether_set_context(replaced_handle, NULL, NULL);
}

static void a_replaced_registrations_handle_is_stale_during_the_replacement(void) {
    kind S = {"S", 0, 0};
    tether_container *c = reentrant_container = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register(c, "S", (tether_fn)make_plain_obj, p, 1, &replaced_handle));
    CHECK_OK(tether_set_scope(replaced_handle, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_context(replaced_handle, &S, drop_and_configure_the_replaced));
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "S", &ref));
    CHECK_OK(tether_ref_release(ref));
    during_free[0] = during_free[1] = TETHER_E_NO_MEMORY;
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "S", (tether_fn)make_plain_obj, p, 1, &r));
    CHECK(S.dropped == 1 && r != NULL);
    CHECK_STATUS(during_free[0], TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(during_free[1], TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_set_scope(replaced_handle, TETHER_SCOPE_TRANSIENT), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
}

static void calls_from_destructors_run_by_free_agree(void) {
    kind S = {"S", 0, 0}, G = {"G", 0, 0};
    tether_container *c = reentrant_container = new_container();
    reg(c, &G, TETHER_SCOPE_GRAPH, NULL, NULL);
    cache_singleton(c, "S", (tether_fn)make_plain_obj, &S, drop_and_call);
    CHECK_OK(tether_intern(c, "G", &during_free_g));
    for (int i = 0; i < 11; i++) during_free[i] = TETHER_E_NO_MEMORY;
    CHECK_OK(tether_container_free(c));               /* S's destructor runs inside the free */
    CHECK(S.dropped == 1);
    for (int i = 0; i < 11; i++) CHECK_STATUS(during_free[i], TETHER_E_INVALID_HANDLE);
    CHECK(G.made == 0);
}

int main(void) {
    alarm(60); /* a deadlock in a reentrancy test fails the run instead of hanging it */
    RUN(get_clone_release);
    RUN(downgrade_and_upgrade);
    RUN(upgrade_after_last_release_is_expired);
    RUN(destructor_once_across_handles_edges_and_cache);
    RUN(singleton_cache_is_the_last_reference);
    RUN(chain_destroyed_dependents_first);
    RUN(diamond_destroyed_dependents_first);
    RUN(held_dependency_survives_its_dependent);
    RUN(instances_outlive_their_container);
    RUN(drop_receives_instance_and_context);
    RUN(no_destructor_is_fine);
    RUN(handles_are_distinct_per_resolve_and_clone);
    RUN(factory_resolves_and_destructor_releases);
    RUN(singleton_holding_a_ref_freed_with_its_container);
    RUN(destructor_resolves_during_reset_and_free);
    RUN(calls_from_destructors_run_by_free_agree);
    RUN(a_container_freed_while_registering_gives_no_handle);
    RUN(a_registration_replaced_while_registering_gives_no_handle);
    RUN(a_replaced_registrations_handle_is_stale_during_the_replacement);
    return harness_finish();
}
