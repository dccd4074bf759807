/* Decorators (TETHER_DECORATE): what resolves and dependents get, the order several apply in,
 * caching of the decorated result, teardown order (decorators' drops before the original's),
 * the moved registration's handle, validate/DOT, re-registration, and the errors. */
#include "harness.h"
#include "fixtures.h"

static void release(tether_ref *r) { CHECK_OK(tether_ref_release(r)); }

/* A decorator's result: a node whose `a` is the instance it decorates and `b` its own dependency. */
static char order[64];
static void note(const char *tag) { strncat(order, tag, sizeof order - strlen(order) - 1); }
static void drop_noting(void *instance, void *context) {
    kind *k = context;
    note(k->tag);
    drop_node(instance, context);
}
static void *wrap(node *inner, node *dep, kind *k) { return node_new(k, inner, dep); }
static void *wrap_only(node *inner, kind *k) { return node_new(k, inner, NULL); }

/* Registers `factory` (slots p[0..n)) as a decorator of `key`, with kind `k` as its context (drop_noting). */
static tether_status decorate_with(tether_container *c, const char *key, kind *k, tether_fn factory, const tether_param *p,
                                   size_t n) {
    tether_options o = TETHER_OPTIONS_INIT;
    o.flags = TETHER_DECORATE;
    o.context = k;
    o.drop = drop_noting;
    return tether_register_with(c, key, factory, p, n, &o, NULL);
}
/* Decorates `key` with wrap (over `dep` too) or, `dep` NULL, wrap_only. */
static tether_status decorate(tether_container *c, const char *key, kind *k, const char *dep) {
    if (dep) {
        tether_param p[] = {TETHER_DEP(key), TETHER_DEP(dep), TETHER_CONTEXT};
        return decorate_with(c, key, k, (tether_fn)wrap, p, 3);
    }
    tether_param p[] = {TETHER_DEP(key), TETHER_CONTEXT};
    return decorate_with(c, key, k, (tether_fn)wrap_only, p, 2);
}

static void decorators_apply_in_order_and_cache_once(void) {
    kind Db = {"D", 0, 0}, Log = {"L", 0, 0}, First = {"1", 0, 0}, Second = {"2", 0, 0}, Repo = {"R", 0, 0};
    tether_container *c = new_container();
    tether_registration *db = reg_node(c, "Db", &Db, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_noting);
    reg_node(c, "Log", &Log, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_noting);
    reg_node(c, "Repo", &Repo, TETHER_SCOPE_GRAPH, "Db", NULL, drop_noting);
    CHECK_OK(decorate(c, "Db", &First, "Log"));
    CHECK_OK(decorate(c, "Db", &Second, NULL));
    tether_ref *r1, *r2, *repo;
    node *d = resolve(c, "Db", &r1);
    CHECK(d->k == &Second && d->a->k == &First && d->a->a->k == &Db && d->a->b->k == &Log);
    CHECK(resolve(c, "Db", &r2) == d);           /* a singleton: the decorated result, cached */
    CHECK(resolve(c, "Repo", &repo)->a == d);    /* dependents get the decorated one */
    CHECK(Db.made == 1 && First.made == 1 && Second.made == 1);
    /* The original's handle configures the moved registration. */
    CHECK_OK(tether_set_context(db, &Db, drop_noting));
    release(r1);
    release(r2);
    release(repo);
    order[0] = 0;
    CHECK_OK(tether_container_free(c));
    CHECK(strcmp(order, "21LD") == 0);          /* last made first: decorators before the original */
    CHECK(Db.dropped == 1 && First.dropped == 1 && Second.dropped == 1 && Log.dropped == 1);
}

static void graph_scope_decorates_each_instance_and_plans_agree(void) {
    kind G = {"G", 0, 0}, W = {"W", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "G", &G, TETHER_SCOPE_GRAPH, NULL, NULL, drop_noting);
    CHECK_OK(decorate(c, "G", &W, NULL));
    for (int i = 0; i < 3; i++) {  /* the first resolve records a plan; the next ones replay it */
        tether_ref *r;
        node *g = resolve(c, "G", &r);
        CHECK(g->k == &W && g->a->k == &G);
        order[0] = 0;
        release(r);
        CHECK(strcmp(order, "WG") == 0);
    }
    CHECK(G.made == 3 && W.made == 3 && G.dropped == 3 && W.dropped == 3);
    CHECK_OK(tether_container_free(c));
}

static void decorating_lets_go_of_what_was_cached_and_validate_sees_it(void) {
    kind Db = {"D", 0, 0}, Repo = {"R", 0, 0}, W = {"W", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "Db", &Db, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_noting);
    reg_node(c, "Repo", &Repo, TETHER_SCOPE_SINGLETON, "Db", NULL, drop_noting);
    tether_ref *r;
    node *before = resolve(c, "Repo", &r);
    release(r);
    CHECK_OK(decorate(c, "Db", &W, NULL));
    CHECK(Repo.dropped == 1 && Db.dropped == 1);  /* not decorated: let go of */
    node *after = resolve(c, "Repo", &r);
    CHECK(after->a->k == &W && after->a->a->k == &Db);
    (void)before;
    release(r);
    CHECK_OK(tether_validate(c));
    char *dot = NULL;
    CHECK_OK(tether_export_dot(c, &dot));
    CHECK(dot && strstr(dot, "Db (before decorator 1)"));
    tether_string_free(dot);
    /* Registering the key again replaces it with its decorators. */
    reg_node(c, "Db", &Db, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_noting);
    CHECK(Repo.dropped == 1);  /* (a registration lets go of its own cache only, as ever) */
    node *plain = resolve(c, "Db", &r);
    CHECK(plain->k == &Db && W.made == 1);
    release(r);
    CHECK_OK(tether_export_dot(c, &dot));
    CHECK(dot && !strstr(dot, "before decorator"));
    tether_string_free(dot);
    CHECK_OK(tether_container_free(c));
    CHECK(Db.made == Db.dropped && W.made == W.dropped && Repo.made == Repo.dropped);
}

static void decorate_errors(void) {
    kind Db = {"D", 0, 0}, W = {"W", 0, 0};
    tether_container *c = new_container();
    CHECK_STATUS(decorate(c, "Db", &W, NULL), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("register \"Db\" here first");
    reg_node(c, "Db", &Db, TETHER_SCOPE_GRAPH, NULL, NULL, drop_noting);
    tether_options o = TETHER_OPTIONS_INIT;
    o.flags = TETHER_DECORATE;
    tether_param none[] = {TETHER_CONTEXT};
    CHECK_STATUS(tether_register_with(c, "Db", (tether_fn)make0, none, 1, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("exactly one DEP slot on \"Db\"");
    o.flags = TETHER_DECORATE | TETHER_OVERRIDE;
    tether_param one[] = {TETHER_DEP("Db")};
    CHECK_STATUS(tether_register_with(c, "Db", (tether_fn)make0, one, 1, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    /* A child cannot decorate its parent's registration. */
    tether_container *child = new_container_in(c);
    CHECK_STATUS(decorate(child, "Db", &W, NULL), TETHER_E_NOT_FOUND);
    CHECK_OK(tether_container_free(child));
    /* Runtime arguments: no decorator can receive the instance. */
    tether_param args[] = {TETHER_I64};
    CHECK_OK(tether_register(c, "Args", (tether_fn)make0, args, 1, NULL));
    CHECK_STATUS(decorate(c, "Args", &W, NULL), TETHER_E_ARGUMENT_MISMATCH);
    CHECK(W.made == 0);
    CHECK_OK(tether_container_free(c));
}

/* A decorator with a runtime slot: its key takes runtime arguments (tether_resolve_args passes them
 * to the decorator), so a second decorator is refused as for any such key, before its own scope's
 * INVALID_ARGUMENT (found by make fuzz-diff: the model had let it wrap the key). */
static int64_t decorated_with;
static void *wrap_with(node *inner, int64_t n, kind *k) {
    decorated_with = n;
    return node_new(k, inner, NULL);
}

static void a_decorator_taking_runtime_arguments_refuses_a_second_decorator(void) {
    kind G = {"G", 0, 0}, W = {"W", 0, 0}, V = {"V", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "G", &G, TETHER_SCOPE_GRAPH, NULL, NULL, drop_noting);
    tether_param p[] = {TETHER_DEP("G"), TETHER_I64, TETHER_CONTEXT};
    CHECK_OK(decorate_with(c, "G", &W, (tether_fn)wrap_with, p, 3));
    tether_value arg = {TETHER_PARAM_I64, {.i64 = 14}};
    tether_ref *r = NULL;
    CHECK_OK(tether_resolve_args(c, "G", &arg, 1, &r));
    node *g = tether_ref_get(r);
    CHECK(g && g->k == &W && g->a->k == &G && decorated_with == 14);
    release(r);
    CHECK_STATUS(tether_resolve(c, "G", &r), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_STATUS(decorate(c, "G", &V, NULL), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"G\" takes runtime arguments");
    tether_options o = TETHER_OPTIONS_INIT;
    o.flags = TETHER_DECORATE;
    o.context = &V;
    o.drop = drop_noting;
    o.scope = TETHER_SCOPE_SINGLETON;  /* shared with a runtime slot: the key's arguments are named first */
    CHECK_STATUS(tether_register_with(c, "G", (tether_fn)wrap_with, p, 3, &o, NULL), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("takes runtime arguments");
    CHECK(V.made == 0 && G.made == 1 && W.made == 1 && G.dropped == 1 && W.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static int fail_decorator;
static void *maybe_fail(node *inner, kind *k) {
    if (fail_decorator) {
        tether_set_error("the decorator refused");
        return NULL;
    }
    return node_new(k, inner, NULL);
}

static void a_failing_decorator_fails_the_resolve_and_destroys_the_original(void) {
    kind Db = {"D", 0, 0}, W = {"W", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "Db", &Db, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_noting);
    tether_param p[] = {TETHER_DEP("Db"), TETHER_CONTEXT};
    CHECK_OK(decorate_with(c, "Db", &W, (tether_fn)maybe_fail, p, 2));
    fail_decorator = 1;
    tether_ref *r = NULL;
    CHECK_STATUS(tether_resolve(c, "Db", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("the decorator refused");
    CHECK(r == NULL && Db.made == 1 && Db.dropped == 1);  /* nothing half-built cached */
    fail_decorator = 0;
    node *d = resolve(c, "Db", &r);
    CHECK(d->k == &W && Db.made == 2);
    release(r);
    CHECK_OK(tether_container_free(c));
    CHECK(Db.dropped == 2 && W.dropped == 1);
}

/* The trace hook hears the decorator as the step after the original's factory; validate names a
 * decorator's missing dependency. */
static char heard[512];
static void hear(const tether_trace_event *e, void *context) {
    (void)context;
    if (e->kind == TETHER_TRACE_FACTORY_CALL || e->kind == TETHER_TRACE_EDGE) {
        strncat(heard, e->kind == TETHER_TRACE_EDGE ? "edge " : "call ", sizeof heard - strlen(heard) - 1);
        strncat(heard, e->key, sizeof heard - strlen(heard) - 1);
        if (e->target_key) {
            strncat(heard, " -> ", sizeof heard - strlen(heard) - 1);
            strncat(heard, e->target_key, sizeof heard - strlen(heard) - 1);
        }
        strncat(heard, "; ", sizeof heard - strlen(heard) - 1);
    }
}

static void trace_and_validate_see_the_decorator(void) {
    kind Db = {"D", 0, 0}, W = {"W", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "Db", &Db, TETHER_SCOPE_GRAPH, NULL, NULL, drop_noting);
    CHECK_OK(decorate(c, "Db", &W, "Log"));
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"Log\"");
    CHECK_ERROR_HAS("\"Db\"");
    reg_node(c, "Log", &Db, TETHER_SCOPE_GRAPH, NULL, NULL, drop_noting);
    CHECK_OK(tether_validate(c));
    heard[0] = 0;
    CHECK_OK(tether_set_trace(c, hear, NULL));
    tether_ref *r;
    resolve(c, "Db", &r);
    const char *expected = "call Db (before decorator 1); call Log; call Db; edge Db -> Db (before decorator 1); edge Db -> Log; ";
    if (strcmp(heard, expected) != 0) fprintf(stderr, "  heard: %s\n", heard);
    CHECK(strcmp(heard, expected) == 0);
    release(r);
    CHECK_OK(tether_set_trace(c, NULL, NULL));
    CHECK_OK(tether_container_free(c));
}

/* A factory that decorates its own key while it runs, then resolves the key: the decorator's
 * DEP on the moved original is the factory under way, a cycle (found by the fuzzer: the moved
 * registration, a new one, was not seen as the one being constructed, and the factory ran again). */
static tether_container *self_decorating_in;
static kind SelfMade = {"S", 0, 0}, SelfWrap = {"w", 0, 0};
static tether_status nested_status;
static void *make_decorating_itself(kind *k) {
    if (k->made == 0) {
        CHECK_OK(decorate(self_decorating_in, "Svc", &SelfWrap, NULL));
        tether_ref *r = NULL;
        nested_status = tether_resolve(self_decorating_in, "Svc", &r);
        CHECK(r == NULL);
    }
    return make0(k);
}

static void a_factory_resolving_its_key_decorated_meanwhile_is_a_cycle(void) {
    tether_container *c = self_decorating_in = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "Svc", (tether_fn)make_decorating_itself, p, 1, &r));
    CHECK_OK(tether_set_context(r, &SelfMade, drop_noting));
    tether_ref *outer = NULL;
    node *made = resolve(c, "Svc", &outer);     /* the original's instance: the resolve began before */
    CHECK(nested_status == TETHER_E_CYCLE);
    CHECK(made->k == &SelfMade && SelfMade.made == 1 && SelfWrap.made == 0);
    release(outer);
    tether_ref *again = NULL;
    node *d = resolve(c, "Svc", &again);        /* from now on the decorated one */
    CHECK(d->k == &SelfWrap && d->a->k == &SelfMade && SelfMade.made == 2 && SelfWrap.made == 1);
    release(again);
    CHECK_OK(tether_container_free(c));
    CHECK(SelfMade.dropped == 2 && SelfWrap.dropped == 1);
}

/* A destructor the re-registration ran decorated the key: the registration being made moved, it was
 * not replaced, so its call gives a handle, and that handle configures it where it moved
 * (fuzz: corpus/regress-registration-decorated-by-a-destructor-it-ran). */
static tether_container *decorating_c;
static kind *decorating_kind;
static void drop_decorating(void *instance, void *context) {
    drop_node(instance, context);
    CHECK_OK(decorate(decorating_c, "Db", decorating_kind, NULL));
}

static void a_registration_decorated_by_a_destructor_it_ran_keeps_its_handle(void) {
    kind Old = {"O", 0, 0}, New = {"N", 0, 0}, Wrap = {"W", 0, 0};
    tether_container *c = new_container();
    decorating_c = c;
    decorating_kind = &Wrap;
    reg_node(c, "Db", &Old, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_decorating);
    tether_ref *r;
    resolve(c, "Db", &r);
    release(r);                                  /* cached: registering Db again drops it */
    tether_registration *h = NULL;
    tether_param p[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register(c, "Db", (tether_fn)make0, p, 1, &h));
    CHECK(h != NULL && Old.dropped == 1);
    /* The handle configures the registration where the decorator moved it. */
    CHECK_OK(tether_set_scope(h, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_context(h, &New, drop_noting));
    node *d = resolve(c, "Db", &r);
    CHECK(d->k == &Wrap && d->a && d->a->k == &New);
    CHECK(New.made == 1 && Wrap.made == 1);
    order[0] = 0;
    release(r);                                  /* the decorator took the key's scope when it came: graph */
    CHECK_OK(tether_container_free(c));
    CHECK(strcmp(order, "WN") == 0);             /* the decorator's drop, then the original's */
    CHECK(New.dropped == 1 && Wrap.dropped == 1 && Old.dropped == 1);
}

/* fuzz-diff, fuzz-039a2815ac828e20: K3's singleton over ALL(K0), cached by K3's registration while an
 * override displaces it, declares an edge to every element of K0's list as it is now, K0#a included:
 * decorating K0#a lets it go at once (as it would were K3 not overridden), dependents first, and the
 * override's end builds K3 anew over the decorated element. Registering K0#a lets nothing go. */
static void *make_over_list(kind *k, const tether_list *list) {
    return node_new(k, list->count > 0 ? list->items[0] : NULL, list->count > 1 ? list->items[1] : NULL);
}
static void decorating_a_listed_key_lets_go_of_a_displaced_singleton_over_the_list(void) {
    kind K0 = {"0", 0, 0}, K0b = {"b", 0, 0}, K3 = {"3", 0, 0}, A = {"a", 0, 0}, Deco = {"d", 0, 0}, F = {"f", 0, 0};
    order[0] = 0;
    tether_container *c = new_container();
    reg_node(c, "K0", &K0, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_noting);
    tether_param p[] = {TETHER_CONTEXT, TETHER_ALL("K0")};
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_SINGLETON;
    o.context = &K3;
    o.drop = drop_noting;
    CHECK_OK(tether_register_with(c, "K3", (tether_fn)make_over_list, p, 2, &o, NULL));
    tether_ref *r;
    node *k31 = resolve(c, "K3", &r);
    CHECK(k31->a != NULL && k31->a->k == &K0 && k31->b == NULL);
    release(r);
    reg_node(c, "K0", &K0b, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_noting);
    CHECK(K0.dropped == 0);                       /* K31 holds it */
    tether_param ctx[] = {TETHER_CONTEXT};
    tether_options f = TETHER_OPTIONS_INIT;
    f.flags = TETHER_OVERRIDE;
    f.scope = TETHER_SCOPE_CONTAINER;
    f.context = &F;
    f.drop = drop_noting;
    CHECK_OK(tether_register_with(c, "K3", (tether_fn)make0, ctx, 1, &f, NULL));
    CHECK(K3.dropped == 0);                       /* the key's own registration keeps its singleton */
    reg_node(c, "K0#a", &A, TETHER_SCOPE_GRAPH, NULL, NULL, drop_noting);
    CHECK(K3.dropped == 0 && K0.dropped == 0);
    CHECK_OK(decorate(c, "K0#a", &Deco, NULL));
    CHECK(K3.dropped == 1 && K0.dropped == 1);
    CHECK(strcmp(order, "30") == 0);              /* the dependent first, then what only it held */
    CHECK_OK(tether_override_clear(c, "K3"));
    node *k32 = resolve(c, "K3", &r);
    CHECK(k32->a->k == &K0b && k32->b->k == &Deco && k32->b->a->k == &A);
    CHECK(K3.made == 2 && K0b.made == 1 && Deco.made == 1 && A.made == 1 && F.made == 0);
    release(r);
    order[0] = 0;
    CHECK_OK(tether_container_free(c));
    CHECK(strcmp(order, "3dab") == 0);            /* K32 (its list last listed first), then K0b's cache */
    CHECK(K3.dropped == 2 && K0b.dropped == 1 && Deco.dropped == 1 && A.dropped == 1);
}

int main(void) {
    RUN(a_registration_decorated_by_a_destructor_it_ran_keeps_its_handle);
    RUN(a_factory_resolving_its_key_decorated_meanwhile_is_a_cycle);
    RUN(trace_and_validate_see_the_decorator);
    RUN(decorators_apply_in_order_and_cache_once);
    RUN(graph_scope_decorates_each_instance_and_plans_agree);
    RUN(decorating_lets_go_of_what_was_cached_and_validate_sees_it);
    RUN(decorate_errors);
    RUN(a_decorator_taking_runtime_arguments_refuses_a_second_decorator);
    RUN(a_failing_decorator_fails_the_resolve_and_destroys_the_original);
    RUN(decorating_a_listed_key_lets_go_of_a_displaced_singleton_over_the_list);
    return harness_finish();
}
