/* Failure in the middle of a (cyclic) graph: every instance that resolve
 * created is destroyed exactly once, no cache changes (a singleton made by the
 * failed resolve is made again next time; one cached before stays the same
 * instance), and the first failure is reported, with its path. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* App(Mid, Cache), Mid(Leaf, Session), Leaf{weak App}; Cache singleton, Session weak scope. */
enum { APP, MID, LEAF, CACHE, SESSION, BROKEN, GATEWAY, PING, PONG, ROOT, KINDS };
static kind kinds[KINDS];
static const char *const keys[KINDS] = {
    "App", "Mid", "Leaf", "Cache", "Session", "Broken", "Gateway", "Ping", "Pong", "Root"
};
static int fail_app_check;      /* App's second completion callback fails while set */

/* Broken(Cache, weak Mid): fails after its dependencies exist; still owns the weak handle. */
static node *make_broken(node *cache, tether_weak *mid, kind *k) {
    (void)cache; (void)k;
    if (tether_weak_release(mid) != TETHER_OK) bad_release++;
    tether_set_error("disk full");
    return NULL;
}

/* App's completion #1: closes the cycle App -> Mid -> Leaf -> (weak) App. */
static tether_status close_cycle(tether_resolver *r, void *instance, void *context) {
    (void)context;
    node *app = instance;
    node *leaf = app->dep[0]->dep[0];
    return tether_resolver_get_weak(r, "App", &leaf->weak);
}
/* App's completion #2: fails while fail_app_check is set. */
static tether_status app_check(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    if (!fail_app_check) return TETHER_OK;
    tether_set_error("app check failed");
    return TETHER_E_FACTORY_FAILED;
}

static tether_container *graph(void) {
    memset(kinds, 0, sizeof kinds);
    for (int i = 0; i < KINDS; i++) kinds[i].tag = keys[i];
    bad_release = 0;
    fail_app_check = 0;
    tether_container *c = NULL;
    tether_registration *r[ROOT] = { 0 };
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param app[] = { TETHER_DEP("Mid"), TETHER_DEP("Cache"), TETHER_CONTEXT };
    tether_param mid[] = { TETHER_DEP("Leaf"), TETHER_DEP("Session"), TETHER_CONTEXT };
    tether_param leaf[] = { TETHER_CONTEXT };
    tether_param broken[] = { TETHER_DEP("Cache"), TETHER_WEAK("Mid"), TETHER_CONTEXT };
    tether_param gateway[] = { TETHER_DEP("Config"), TETHER_CONTEXT };    /* Config: never registered */
    tether_param ping[] = { TETHER_DEP("Pong"), TETHER_CONTEXT };
    tether_param pong[] = { TETHER_DEP("Ping"), TETHER_CONTEXT };
    CHECK_OK(tether_register(c, "App", (tether_fn)make2_context_last, app, 3, &r[APP]));
    CHECK_OK(tether_register(c, "Mid", (tether_fn)make2_context_last, mid, 3, &r[MID]));
    CHECK_OK(tether_register(c, "Leaf", (tether_fn)make0, leaf, 1, &r[LEAF]));
    CHECK_OK(tether_register(c, "Cache", (tether_fn)make0, leaf, 1, &r[CACHE]));
    CHECK_OK(tether_register(c, "Session", (tether_fn)make0, leaf, 1, &r[SESSION]));
    CHECK_OK(tether_register(c, "Broken", (tether_fn)make_broken, broken, 3, &r[BROKEN]));
    CHECK_OK(tether_register(c, "Gateway", (tether_fn)make1_context_last, gateway, 2, &r[GATEWAY]));
    CHECK_OK(tether_register(c, "Ping", (tether_fn)make1_context_last, ping, 2, &r[PING]));
    CHECK_OK(tether_register(c, "Pong", (tether_fn)make1_context_last, pong, 2, &r[PONG]));
    for (int i = 0; i < ROOT; i++) CHECK_OK(tether_set_context(r[i], &kinds[i], drop_node_weak));
    CHECK_OK(tether_set_scope(r[CACHE], TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_set_scope(r[SESSION], TETHER_SCOPE_WEAK));
    CHECK_OK(tether_on_complete(r[APP], close_cycle, NULL));
    CHECK_OK(tether_on_complete(r[APP], app_check, NULL));
    return c;
}

/* Registers `key`(d0, d1), counted as a Root. */
static void add_root(tether_container *c, const char *key, const char *d0, const char *d1) {
    tether_registration *r = NULL;
    tether_param params[] = { TETHER_DEP(d0), TETHER_DEP(d1), TETHER_CONTEXT };
    CHECK_OK(tether_register(c, key, (tether_fn)make2_context_last, params, 3, &r));
    CHECK_OK(tether_set_context(r, &kinds[ROOT], drop_node_weak));
}

static int made_equals_dropped(void) {
    int ok = 1;
    for (int i = 0; i < KINDS; i++)
        if (kinds[i].made != kinds[i].dropped) {
            fprintf(stderr, "  %s: made %d, dropped %d\n", kinds[i].tag, kinds[i].made, kinds[i].dropped);
            ok = 0;
        }
    return ok;
}

static void test_failing_completion_callback_in_a_cyclic_graph(void) {
    tether_container *c = graph();
    fail_app_check = 1;
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "App", &ref), TETHER_E_FACTORY_FAILED);
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("completion callback #2 of \"App\" failed");
    CHECK_ERROR_HAS("app check failed");
    /* App, Mid, Leaf (graph), Cache (singleton), Session (weak): each made and destroyed once. */
    CHECK(kinds[APP].made == 1 && kinds[MID].made == 1 && kinds[LEAF].made == 1);
    CHECK(kinds[CACHE].made == 1 && kinds[SESSION].made == 1);
    CHECK(made_equals_dropped());
    CHECK(bad_release == 0);

    /* Nothing was cached: the next resolve makes the singleton again. */
    fail_app_check = 0;
    CHECK_OK(tether_resolve(c, "App", &ref));
    CHECK(kinds[CACHE].made == 2 && kinds[SESSION].made == 2 && kinds[APP].made == 2);
    node *app = tether_ref_get(ref);
    CHECK(app != NULL);
    if (app) {
        node *leaf = app->dep[0]->dep[0];
        tether_ref *back = NULL;
        CHECK(leaf->weak != NULL);
        CHECK_OK(tether_weak_upgrade(leaf->weak, &back));
        CHECK(tether_ref_get(back) == app);
        CHECK_OK(tether_ref_release(back));
    }
    CHECK_OK(tether_ref_release(ref));
    CHECK(kinds[APP].dropped == 2 && kinds[MID].dropped == 2 && kinds[LEAF].dropped == 2);
    CHECK(kinds[SESSION].dropped == 2 && kinds[CACHE].dropped == 1);   /* cached now */
    CHECK_OK(tether_container_free(c));
    CHECK(made_equals_dropped());
    CHECK(bad_release == 0);
}

static void test_caches_from_before_the_failure_survive_it(void) {
    tether_container *c = graph();
    tether_ref *cache_ref = NULL, *session_ref = NULL, *ref = NULL;
    CHECK_OK(tether_resolve(c, "Cache", &cache_ref));
    CHECK_OK(tether_resolve(c, "Session", &session_ref));
    node *cache = tether_ref_get(cache_ref);
    node *session = tether_ref_get(session_ref);
    CHECK_OK(tether_ref_release(cache_ref));     /* the singleton stays cached */

    fail_app_check = 1;
    CHECK_STATUS(tether_resolve(c, "App", &ref), TETHER_E_FACTORY_FAILED);
    CHECK(kinds[CACHE].made == 1 && kinds[CACHE].dropped == 0);
    CHECK(kinds[SESSION].made == 1 && kinds[SESSION].dropped == 0);
    CHECK(kinds[APP].dropped == 1 && kinds[MID].dropped == 1 && kinds[LEAF].dropped == 1);

    fail_app_check = 0;
    CHECK_OK(tether_resolve(c, "App", &ref));
    node *app = tether_ref_get(ref);
    CHECK(app && app->dep[1] == cache);          /* the same singleton as before */
    CHECK(app && app->dep[0]->dep[1] == session);
    CHECK(kinds[CACHE].made == 1 && kinds[SESSION].made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_ref_release(session_ref));
    CHECK(kinds[SESSION].dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(made_equals_dropped());
}

/* Root(App, Broken): App's whole subgraph (graph, singleton and weak-scoped
 * instances) exists when Broken's factory returns NULL; completion callbacks
 * are deferred, so App's never run. */
static void test_factory_null_deep_in_a_graph(void) {
    tether_container *c = graph();
    add_root(c, "Root", "App", "Broken");
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Root", &ref), TETHER_E_FACTORY_FAILED);
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("factory for \"Broken\"");
    CHECK_ERROR_HAS("disk full");
    CHECK(kinds[APP].made == 1 && kinds[MID].made == 1 && kinds[LEAF].made == 1);
    CHECK(kinds[CACHE].made == 1 && kinds[SESSION].made == 1);
    CHECK(made_equals_dropped());
    CHECK(bad_release == 0);

    /* Nothing cached: resolving App alone now makes a new Cache and Session. */
    CHECK_OK(tether_resolve(c, "App", &ref));
    CHECK(kinds[CACHE].made == 2 && kinds[SESSION].made == 2);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(made_equals_dropped());
}

static void test_missing_key_deep_in_a_graph_names_the_path(void) {
    tether_container *c = graph();
    add_root(c, "Root", "App", "Gateway");
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Root", &ref), TETHER_E_NOT_FOUND);
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("no registration for \"Config\" (needed by \"Root\" -> \"Gateway\")");
    CHECK(kinds[APP].made == 1 && kinds[CACHE].made == 1);
    CHECK(kinds[GATEWAY].made == 0 && kinds[ROOT].made == 0);
    CHECK(made_equals_dropped());
    CHECK_OK(tether_container_free(c));
}

static void test_constructor_cycle_deep_in_a_graph(void) {
    tether_container *c = graph();
    add_root(c, "Root", "App", "Ping");
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Root", &ref), TETHER_E_CYCLE);
    CHECK(ref == NULL);
    CHECK_ERROR_HAS("\"Ping\" -> \"Pong\" -> \"Ping\"");
    CHECK(kinds[APP].made == 1 && kinds[PING].made == 0 && kinds[PONG].made == 0);
    CHECK(made_equals_dropped());
    CHECK_OK(tether_container_free(c));
}

/* Two things would fail; the first one is reported and the rest never runs. */
static void test_first_failure_is_reported(void) {
    tether_container *c = graph();
    add_root(c, "Root", "Broken", "Gateway");
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Root", &ref), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("\"Broken\"");
    CHECK(strstr(tether_last_error(), "Config") == NULL);
    CHECK(made_equals_dropped());

    /* A failing constructor dependency stops the graph before any completion callback. */
    fail_app_check = 1;
    add_root(c, "Root2", "App", "Broken");
    CHECK_STATUS(tether_resolve(c, "Root2", &ref), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("factory for \"Broken\"");
    CHECK(strstr(tether_last_error(), "app check failed") == NULL);
    CHECK(made_equals_dropped());
    CHECK(bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_failing_completion_callback_in_a_cyclic_graph);
    RUN(test_caches_from_before_the_failure_survive_it);
    RUN(test_factory_null_deep_in_a_graph);
    RUN(test_missing_key_deep_in_a_graph_names_the_path);
    RUN(test_constructor_cycle_deep_in_a_graph);
    RUN(test_first_failure_is_reported);
    return harness_finish();
}
