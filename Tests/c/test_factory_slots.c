/* Factory slots: TETHER_FACTORY("Greeter") hands the factory a tether_factory * it
 * owns; tether_factory_call builds a new Greeter with the runtime arguments given,
 * its other dependencies injected as usual, from the container the receiver was
 * resolved from. Wrong arguments: ARGUMENT_MISMATCH; a released factory, or one
 * whose container was freed: INVALID_HANDLE. Validate accepts a factory slot on a
 * key taking runtime arguments, and its advice for a plain DEP on one works. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

typedef struct greeter { int magic; kind *k; char name[16]; node *pool; } greeter;

static void *make_greeter(kind *k, const char *name, node *pool) {
    greeter *g = xcalloc(sizeof *g);
    g->magic = ALIVE; g->k = k; g->pool = pool;
    strncpy(g->name, name, sizeof g->name - 1);
    k->made++;
    return g;
}

static void drop_greeter(void *instance, void *context) {
    greeter *g = instance;
    CHECK(g->pool->magic == ALIVE);   /* dependencies outlive their dependent */
    ((kind *)context)->dropped++;
    free(g);
}

typedef struct greetings { int magic; kind *k; tether_factory *make; greeter *first; tether_ref *first_ref; } greetings;

/* Builds a first greeter right away (a factory called while its receiver is being made). */
static void *make_greetings(kind *k, tether_factory *f) {
    greetings *s = xcalloc(sizeof *s);
    s->magic = ALIVE; s->k = k; s->make = f;
    tether_value args[] = {TETHER_VAL_STR("first")};
    CHECK_OK(tether_factory_call(f, args, 1, &s->first_ref));
    s->first = tether_ref_get(s->first_ref);
    k->made++;
    return s;
}

static int release_status = -1;
static void drop_greetings(void *instance, void *context) {
    greetings *s = instance;
    CHECK_OK(tether_ref_release(s->first_ref));
    release_status = tether_factory_release(s->make);
    ((kind *)context)->dropped++;
    free(s);
}

static kind kp = {"Pool", 0, 0}, kg = {"Greeter", 0, 0}, ks = {"Greetings", 0, 0};

static tether_container *setup(tether_scope greetings_scope) {
    kp = (kind){"Pool", 0, 0}; kg = (kind){"Greeter", 0, 0}; ks = (kind){"Greetings", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "Pool", &kp, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &kg;
    o.drop = drop_greeter;
    CHECK_OK(TETHER_REGISTER3(c, "Greeter", &o, NULL, make_greeter, TETHER_AS(TETHER_CONTEXT, kind *), TETHER_STR,
                              TETHER_AS(TETHER_DEP("Pool"), node *)));
    tether_options so = TETHER_OPTIONS_INIT;
    so.scope = greetings_scope;
    so.context = &ks;
    so.drop = drop_greetings;
    CHECK_OK(TETHER_REGISTER2(c, "Greetings", &so, NULL, make_greetings, TETHER_AS(TETHER_CONTEXT, kind *),
                              TETHER_FACTORY("Greeter")));
    return c;
}

static void a_factory_builds_new_instances_with_arguments_and_injected_dependencies(void) {
    tether_container *c = setup(TETHER_SCOPE_GRAPH);
    CHECK_OK(tether_validate(c));
    tether_ref *keep = NULL, *pool_ref = NULL;
    greetings *s = tether_get(c, "Greetings", &keep);
    node *pool = tether_get(c, "Pool", &pool_ref);
    CHECK(s && s->first && strcmp(s->first->name, "first") == 0 && s->first->pool == pool);
    if (s) {
        tether_ref *ada_ref = NULL, *bob_ref = NULL;
        tether_value ada[] = {TETHER_VAL_STR("ada")}, bob[] = {TETHER_VAL_STR("bob")};
        CHECK_OK(tether_factory_call(s->make, ada, 1, &ada_ref));
        CHECK_OK(tether_factory_call(s->make, bob, 1, &bob_ref));
        greeter *a = tether_ref_get(ada_ref), *b = tether_ref_get(bob_ref);
        CHECK(a && b && a != b && a != s->first);
        CHECK(a && strcmp(a->name, "ada") == 0 && a->pool == pool);
        CHECK(b && strcmp(b->name, "bob") == 0 && b->pool == pool);
        CHECK(kg.made == 3 && kp.made == 1);
        CHECK_OK(tether_ref_release(ada_ref));
        CHECK(kg.dropped == 1);
        CHECK_OK(tether_ref_release(bob_ref));
        CHECK(kg.dropped == 2);
    }
    release_status = -1;
    CHECK_OK(tether_ref_release(keep));
    CHECK(ks.dropped == 1 && kg.dropped == 3 && release_status == TETHER_OK);
    CHECK_OK(tether_ref_release(pool_ref));
    CHECK_OK(tether_container_free(c));
    CHECK(kp.made == 1 && kp.dropped == 1);
}

static void wrong_arguments_are_refused_and_build_nothing(void) {
    tether_container *c = setup(TETHER_SCOPE_GRAPH);
    tether_ref *keep = NULL, *out = NULL;
    greetings *s = tether_get(c, "Greetings", &keep);
    CHECK(s != NULL);
    if (s) {
        tether_value wrong[] = {TETHER_VAL_I64(7)};
        CHECK_STATUS(tether_factory_call(s->make, wrong, 1, &out), TETHER_E_ARGUMENT_MISMATCH);
        CHECK_ERROR_HAS("runtime argument 1 of \"Greeter\" must be str, got i64");
        CHECK_STATUS(tether_factory_call(s->make, NULL, 0, &out), TETHER_E_ARGUMENT_MISMATCH);
        CHECK_ERROR_HAS("\"Greeter\" takes 1 runtime argument, got 0");
        CHECK(out == NULL);
        tether_value ok[] = {TETHER_VAL_STR("x")};
        CHECK_STATUS(tether_factory_call(s->make, ok, 1, NULL), TETHER_E_INVALID_ARGUMENT);
        CHECK(kg.made == 1);
    }
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(kg.made == kg.dropped);
}

static tether_factory *kept_factory;
static void *make_keeping(kind *k, tether_factory *f) { kept_factory = f; return node_new(k, NULL, NULL); }

static void a_released_factory_or_one_whose_container_was_freed_is_an_invalid_handle(void) {
    tether_container *c = setup(TETHER_SCOPE_GRAPH);
    kind kk = {"Keeper", 0, 0};
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &kk;
    o.drop = drop_node;
    CHECK_OK(TETHER_REGISTER2(c, "Keeper", &o, NULL, make_keeping, TETHER_AS(TETHER_CONTEXT, kind *), TETHER_FACTORY("Greeter")));
    tether_ref *keep = NULL, *keep2 = NULL, *out = NULL;
    CHECK(tether_get(c, "Keeper", &keep2) != NULL);
    tether_factory *first = kept_factory;
    CHECK(tether_get(c, "Keeper", &keep) != NULL);   /* each receiver gets a factory of its own */
    CHECK(kept_factory != first);
    CHECK_OK(tether_factory_release(first));
    tether_value args[] = {TETHER_VAL_STR("x")};
    CHECK_STATUS(tether_factory_call(first, args, 1, &out), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("already released");
    CHECK_STATUS(tether_factory_release(first), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_factory_release(NULL), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_factory_call((tether_factory *)keep, args, 1, &out), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("not a factory");
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_ref_release(keep2));
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(tether_factory_call(kept_factory, args, 1, &out), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("was freed");
    CHECK(out == NULL);
    CHECK_OK(tether_factory_release(kept_factory));
    CHECK(kk.made == 2 && kk.dropped == 2 && kg.made == 0);
}

/* A factory slot resolves from the receiver's container: a child's own registration. */
static void a_factory_builds_from_the_container_its_receiver_was_resolved_from(void) {
    tether_container *c = setup(TETHER_SCOPE_GRAPH), *child = NULL;
    CHECK_OK(tether_container_new(c, &child));
    kind kp2 = {"ChildPool", 0, 0};
    reg_node(child, "Pool", &kp2, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    tether_ref *keep = NULL;
    greetings *s = tether_get(child, "Greetings", &keep);
    CHECK(s && s->first->pool->k == &kp2);
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(c));
    CHECK(kp2.made == 1 && kp2.dropped == 1 && kg.made == kg.dropped);
}

static void *make_plain(kind *k, greeter *g) { (void)g; return node_new(k, NULL, NULL); }
static void *make_with_factory(kind *k, tether_factory *f) { tether_factory_release(f); return node_new(k, NULL, NULL); }

/* Validate's advice for a plain dependency on a key taking runtime arguments, applied, passes. */
static void validates_advice_for_a_dependency_on_an_arguments_key_works(void) {
    tether_container *c = setup(TETHER_SCOPE_GRAPH);
    kind kh = {"Hello", 0, 0};
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &kh;
    o.drop = drop_node;
    CHECK_OK(TETHER_REGISTER2(c, "Hello", &o, NULL, make_plain, TETHER_AS(TETHER_CONTEXT, kind *), TETHER_AS(TETHER_DEP("Greeter"), greeter *)));
    CHECK_STATUS(tether_validate(c), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"Greeter\" takes runtime arguments and cannot be a dependency (needed by \"Hello\"); declare the slot TETHER_FACTORY(\"Greeter\")");
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "Hello", &keep) == NULL);
    CHECK(tether_last_status() == TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("declare the slot TETHER_FACTORY(\"Greeter\")");
    /* the advice */
    CHECK_OK(TETHER_REGISTER2(c, "Hello", &o, NULL, make_with_factory, TETHER_AS(TETHER_CONTEXT, kind *), TETHER_FACTORY("Greeter")));
    CHECK_OK(tether_validate(c));
    CHECK(tether_get(c, "Hello", &keep) != NULL);
    CHECK_OK(tether_ref_release(keep));
    /* a factory slot on a missing key is reported as missing */
    CHECK_OK(TETHER_REGISTER2(c, "Hello", &o, NULL, make_with_factory, TETHER_AS(TETHER_CONTEXT, kind *), TETHER_FACTORY("Nope")));
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Nope\" (needed by \"Hello\")");
    char *dot = NULL;
    CHECK_OK(tether_export_dot(c, &dot));
    CHECK(dot && strstr(dot, "\"Greetings\" -> \"Greeter\" [style=dotted, arrowhead=diamond, label=\"factory\"]"));
    tether_string_free(dot);
    CHECK_OK(tether_container_free(c));
    CHECK(kh.made == kh.dropped && kh.made == 1);
}

/* A singleton receiver keeps its factory; the container's free releases the singleton. */
static void a_singleton_receiver_keeps_its_factory_until_the_container_goes(void) {
    tether_container *c = setup(TETHER_SCOPE_SINGLETON);
    tether_ref *keep = NULL, *again = NULL;
    greetings *s = tether_get(c, "Greetings", &keep);
    CHECK(s && tether_get(c, "Greetings", &again) == s);
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_ref_release(again));
    release_status = -1;
    CHECK_OK(tether_container_free(c));
    CHECK(ks.made == 1 && ks.dropped == 1 && release_status == TETHER_OK && kg.made == 1 && kg.dropped == 1);
}

int main(void) {
    RUN(a_factory_builds_new_instances_with_arguments_and_injected_dependencies);
    RUN(wrong_arguments_are_refused_and_build_nothing);
    RUN(a_released_factory_or_one_whose_container_was_freed_is_an_invalid_handle);
    RUN(a_factory_builds_from_the_container_its_receiver_was_resolved_from);
    RUN(validates_advice_for_a_dependency_on_an_arguments_key_works);
    RUN(a_singleton_receiver_keeps_its_factory_until_the_container_goes);
    return harness_finish();
}
