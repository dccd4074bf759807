/* seeds.c: the cycles of the libraries Tether started from, done Tether's way.
 *
 *   Resolver  A(B) -> B(C) -> C{weak a}: set by A's completion (Resolver's resolveProperties)
 *   Resolver  A(B) -> B(C) -> C(weak-lazy a): TETHER_WEAK_LAZY (Resolver's @WeakLazyInjected),
 *             which answers the A of the graph C was made in: no shared scope needed
 *   Swinject  Parent(Child), Child{weak parent} set in Child's initCompleted (completion)
 *   Swinject  Parent{child}, Child{weak parent}: property/property, both set in completions
 *   Dip       Client(Server), Server{weak client}: set in Server's resolvingProperties
 *
 * Every scenario checks that each factory ran once per resolve and each destructor once.
 * Build and run: make test-examples (or cc examples/c/seeds.c -Iinclude -Lbuild/lib -ltether).
 */
#include <stdio.h>
#include <stdlib.h>
#include <tether.h>

/* One type's counts: its registration's context. */
typedef struct count { const char *name; int made, freed; } count;

/* Every object here: what it holds strongly, weakly, or through a provider. */
typedef struct obj {
    count *type;
    struct obj *dep;          /* strong: a constructor dependency, or taken in a completion */
    tether_weak *weak;        /* weak back-reference, owned (released by its destructor) */
    tether_provider lazy;     /* TETHER_WEAK_LAZY: called when needed */
} obj;

static obj *new_obj(count *type) {
    obj *o = calloc(1, sizeof *o);
    if (o) type->made++;
    return o;
}
static void *make0(count *type) { return new_obj(type); }
static void *make_dep(count *type, obj *dep) {
    obj *o = new_obj(type);
    if (o) o->dep = dep;
    return o;
}
static void *make_lazy(count *type, tether_provider lazy) {
    obj *o = new_obj(type);
    if (o) o->lazy = lazy;
    return o;
}
static void drop(void *instance, void *context) {
    obj *o = instance;
    tether_weak_release(o->weak);   /* NULL: nothing to release */
    ((count *)context)->freed++;
    free(o);
}

/* The weak back edge `key` -> this object's `weak`, once every factory has returned. */
static tether_status take_weak(tether_resolver *r, void *instance, void *key) {
    return tether_resolver_get_weak(r, key, &((obj *)instance)->weak);
}
/* Resolver's resolveProperties on A: C is in this graph (A -> B -> C); give it a weak A. */
static tether_status a_resolves_properties(tether_resolver *r, void *a, void *context) {
    (void)context;
    (void)a;
    obj *c = NULL;
    tether_status st = tether_resolver_get(r, "C", (void **)&c);
    return st != TETHER_OK ? st : tether_resolver_get_weak(r, "A", &c->weak);
}
/* Swinject's property/property: Parent takes its Child after construction (strong). */
static tether_status parent_takes_child(tether_resolver *r, void *parent, void *context) {
    (void)context;
    return tether_resolver_get(r, "Child", (void **)&((obj *)parent)->dep);
}

static int failures;
static void expect(int ok, const char *scenario, const char *what) {
    if (!ok) {
        failures++;
        fprintf(stderr, "%s: %s (%s: %s)\n", scenario, what, tether_status_name(tether_last_status()), tether_last_error());
    }
}

static tether_options counted(count *type, tether_completion *done, void *done_context) {
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = type, o.drop = drop;
    if (done) {
        done->context = done_context;
        o.callbacks = done, o.callback_count = 1;
    }
    return o;
}

/* Frees `c` and checks every type made once and freed once. */
static void finish(tether_container *c, const char *scenario, count *types, int n) {
    int before = failures;
    expect(tether_container_free(c) == TETHER_OK, scenario, "tether_container_free");
    for (int i = 0; i < n; i++) {
        if (types[i].made != 1 || types[i].freed != 1) {
            failures++;
            fprintf(stderr, "%s: %s made %d, freed %d (want 1, 1)\n", scenario, types[i].name, types[i].made, types[i].freed);
        }
    }
    if (failures == before) printf("%s: ok (each factory once, each destructor once)\n", scenario);
}

static void resolver_resolve_properties(void) {
    const char *s = "Resolver A(B) B(C) C{weak a}, resolveProperties";
    count t[] = {{"A", 0, 0}, {"B", 0, 0}, {"C", 0, 0}};
    tether_container *c;
    if (tether_container_new(NULL, &c) != TETHER_OK) { expect(0, s, "container"); return; }
    tether_completion done = {.fn = a_resolves_properties};
    tether_options oa = counted(&t[0], &done, NULL), ob = counted(&t[1], NULL, NULL), oc = counted(&t[2], NULL, NULL);
    expect(TETHER_REGISTER2(c, "A", &oa, NULL, make_dep, TETHER_AS(TETHER_CONTEXT, count *), TETHER_AS(TETHER_DEP("B"), obj *)) == TETHER_OK
           && TETHER_REGISTER2(c, "B", &ob, NULL, make_dep, TETHER_AS(TETHER_CONTEXT, count *), TETHER_AS(TETHER_DEP("C"), obj *)) == TETHER_OK
           && TETHER_REGISTER1(c, "C", &oc, NULL, make0, TETHER_AS(TETHER_CONTEXT, count *)) == TETHER_OK, s, "register");
    expect(tether_validate(c) == TETHER_OK, s, "validate");
    tether_ref *keep = NULL, *back = NULL;
    obj *a = tether_get(c, "A", &keep);
    expect(a && tether_weak_get(a->dep->dep->weak, &back) == a, s, "C's weak a is the A");
    tether_ref_release(back);
    tether_ref_release(keep);
    finish(c, s, t, 3);
}

static void resolver_weak_lazy_injected(void) {
    const char *s = "Resolver A(B) B(C) C(weak-lazy a), WeakLazyInjected";
    count t[] = {{"A", 0, 0}, {"B", 0, 0}, {"C", 0, 0}};
    tether_container *c;
    if (tether_container_new(NULL, &c) != TETHER_OK) { expect(0, s, "container"); return; }
    tether_options oa = counted(&t[0], NULL, NULL), ob = counted(&t[1], NULL, NULL), oc = counted(&t[2], NULL, NULL);
    expect(TETHER_REGISTER2(c, "A", &oa, NULL, make_dep, TETHER_AS(TETHER_CONTEXT, count *), TETHER_AS(TETHER_DEP("B"), obj *)) == TETHER_OK
           && TETHER_REGISTER2(c, "B", &ob, NULL, make_dep, TETHER_AS(TETHER_CONTEXT, count *), TETHER_AS(TETHER_DEP("C"), obj *)) == TETHER_OK
           && TETHER_REGISTER2(c, "C", &oc, NULL, make_lazy, TETHER_AS(TETHER_CONTEXT, count *), TETHER_WEAK_LAZY("A")) == TETHER_OK,
           s, "register");
    expect(tether_validate(c) == TETHER_OK, s, "validate");
    tether_ref *keep = NULL;
    obj *a = tether_get(c, "A", &keep);
    expect(a && a->dep->dep->lazy() == a, s, "C's provider answers the A that holds it");
    tether_ref_release(keep);
    finish(c, s, t, 3);
}

static void swinject_init_completed(void) {
    const char *s = "Swinject Parent(Child) Child{weak parent}, initCompleted";
    count t[] = {{"Parent", 0, 0}, {"Child", 0, 0}};
    tether_container *c;
    if (tether_container_new(NULL, &c) != TETHER_OK) { expect(0, s, "container"); return; }
    tether_completion done = {.fn = take_weak};
    tether_options op = counted(&t[0], NULL, NULL), oc = counted(&t[1], &done, "Parent");
    expect(TETHER_REGISTER2(c, "Parent", &op, NULL, make_dep, TETHER_AS(TETHER_CONTEXT, count *), TETHER_AS(TETHER_DEP("Child"), obj *)) == TETHER_OK
           && TETHER_REGISTER1(c, "Child", &oc, NULL, make0, TETHER_AS(TETHER_CONTEXT, count *)) == TETHER_OK, s, "register");
    tether_ref *keep = NULL, *back = NULL;
    obj *p = tether_get(c, "Parent", &keep);
    expect(p && tether_weak_get(p->dep->weak, &back) == p, s, "the child's parent is the Parent");
    tether_ref_release(back);
    tether_ref_release(keep);
    finish(c, s, t, 2);
}

static void swinject_property_property(void) {
    const char *s = "Swinject Parent{child} Child{weak parent}, property/property";
    count t[] = {{"Parent", 0, 0}, {"Child", 0, 0}};
    tether_container *c;
    if (tether_container_new(NULL, &c) != TETHER_OK) { expect(0, s, "container"); return; }
    tether_completion parent_done = {.fn = parent_takes_child}, child_done = {.fn = take_weak};
    tether_options op = counted(&t[0], &parent_done, NULL), oc = counted(&t[1], &child_done, "Parent");
    expect(TETHER_REGISTER1(c, "Parent", &op, NULL, make0, TETHER_AS(TETHER_CONTEXT, count *)) == TETHER_OK
           && TETHER_REGISTER1(c, "Child", &oc, NULL, make0, TETHER_AS(TETHER_CONTEXT, count *)) == TETHER_OK, s, "register");
    tether_ref *keep = NULL, *back = NULL;
    obj *p = tether_get(c, "Parent", &keep);
    expect(p && p->dep && tether_weak_get(p->dep->weak, &back) == p, s, "the child's parent is the Parent");
    tether_ref_release(back);
    tether_ref_release(keep);
    finish(c, s, t, 2);
}

static void dip_client_server(void) {
    const char *s = "Dip Client(Server) Server{weak client}, resolvingProperties";
    count t[] = {{"Client", 0, 0}, {"Server", 0, 0}};
    tether_container *c;
    if (tether_container_new(NULL, &c) != TETHER_OK) { expect(0, s, "container"); return; }
    tether_completion done = {.fn = take_weak};
    tether_options oc = counted(&t[0], NULL, NULL), os = counted(&t[1], &done, "Client");
    expect(TETHER_REGISTER2(c, "Client", &oc, NULL, make_dep, TETHER_AS(TETHER_CONTEXT, count *), TETHER_AS(TETHER_DEP("Server"), obj *)) == TETHER_OK
           && TETHER_REGISTER1(c, "Server", &os, NULL, make0, TETHER_AS(TETHER_CONTEXT, count *)) == TETHER_OK, s, "register");
    tether_ref *keep = NULL, *back = NULL;
    obj *client = tether_get(c, "Client", &keep);
    expect(client && tether_weak_get(client->dep->weak, &back) == client, s, "the server's client is the Client");
    tether_ref_release(back);
    tether_ref_release(keep);
    finish(c, s, t, 2);
}

int main(void) {
    resolver_resolve_properties();
    resolver_weak_lazy_injected();
    swinject_init_completed();
    swinject_property_property();
    dip_client_server();
    return failures ? 1 : 0;
}
