/* Multibindings: a TETHER_ALL("Codec") slot receives every registration "Codec" or
 * "Codec#name" visible from the resolving container, in registration order (a
 * child's replaces its parent's in place, a new one is added after), each held by
 * a strong edge until the dependent goes (dependent destroyed first). The same
 * list from tether_resolve_all; validate, DOT and trace see every item. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

/* Destruction order, by tag. */
static char order[256];

static void drop_logged(void *instance, void *context) {
    node *o = instance;
    kind *k = context;
    strncat(order, k->tag, sizeof order - strlen(order) - 2);
    strcat(order, " ");
    k->dropped++;
    free(o);
}

/* A host: the list it got, copied (the list itself lives as long as the host). */
typedef struct host { int magic; kind *k; const tether_list *list; size_t count; node *items[8]; } host;

static void *make_host(kind *k, const tether_list *list) {
    host *h = xcalloc(sizeof *h);
    h->magic = ALIVE; h->k = k; h->list = list; h->count = list->count;
    for (size_t i = 0; i < list->count && i < 8; i++) h->items[i] = list->items[i];
    k->made++;
    return h;
}

static void drop_host(void *instance, void *context) {
    host *h = instance;
    /* the items are still alive while the host's destructor runs */
    for (size_t i = 0; i < h->count && i < 8; i++) CHECK(h->items[i]->magic == ALIVE);
    drop_logged(instance, context);
}

static void reg_item(tether_container *c, const char *key, kind *k, tether_scope scope) {
    tether_param p[] = {TETHER_CONTEXT};
    reg_with_context(c, key, (tether_fn)make0, p, 1, scope, k, drop_logged);
}

static void reg_host(tether_container *c, const char *key, const char *all, kind *k) {
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = k;
    o.drop = drop_host;
    tether_param p[] = {TETHER_CONTEXT, TETHER_ALL(all)};
    CHECK_OK(tether_register_with(c, key, (tether_fn)make_host, p, 2, &o, NULL));
}

static void every_variant_in_registration_order_each_held_strongly(void) {
    kind gz = {"gzip", 0, 0}, plain = {"plain", 0, 0}, zs = {"zstd", 0, 0}, other = {"other", 0, 0}, h = {"host", 0, 0};
    order[0] = 0;
    tether_container *c = new_container();
    reg_item(c, "Codec#gzip", &gz, TETHER_SCOPE_SINGLETON);
    reg_item(c, "Codecs#x", &other, TETHER_SCOPE_GRAPH);    /* another key family: not listed */
    reg_item(c, "Codec", &plain, TETHER_SCOPE_TRANSIENT);
    reg_item(c, "Codec#zstd", &zs, TETHER_SCOPE_GRAPH);
    reg_host(c, "Host", "Codec", &h);
    tether_ref *keep = NULL, *gzip_ref = NULL;
    host *got = tether_get(c, "Host", &keep);
    CHECK(got != NULL);
    if (got) {
        CHECK(got->count == 3 && got->list->count == 3);
        CHECK(got->items[0]->k == &gz && got->items[1]->k == &plain && got->items[2]->k == &zs);
        CHECK(got->list->items[0] == got->items[0]);
        CHECK(tether_get(c, "Codec#gzip", &gzip_ref) == got->items[0]);  /* the singleton itself */
    }
    CHECK(gz.made == 1 && plain.made == 1 && zs.made == 1 && other.made == 0);
    CHECK_OK(tether_ref_release(gzip_ref));
    CHECK_OK(tether_ref_release(keep));
    /* the host first, then what only it held; the singleton stays cached */
    CHECK(strcmp(order, "host zstd plain ") == 0);
    CHECK(plain.dropped == 1 && zs.dropped == 1 && gz.dropped == 0);
    /* re-registering a key keeps its place */
    reg_item(c, "Codec#gzip", &gz, TETHER_SCOPE_GRAPH);
    got = tether_get(c, "Host", &keep);
    CHECK(got && got->count == 3 && got->items[0]->k == &gz && got->items[2]->k == &zs);
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(gz.made == gz.dropped && plain.made == plain.dropped && zs.made == zs.dropped && h.made == h.dropped);
}

static void a_child_replaces_its_parents_variant_in_place_and_adds_its_own(void) {
    kind a = {"a", 0, 0}, b = {"b", 0, 0}, b2 = {"b-child", 0, 0}, c3 = {"c", 0, 0}, h = {"host", 0, 0};
    tether_container *root = new_container(), *child = NULL;
    reg_item(root, "Codec#a", &a, TETHER_SCOPE_GRAPH);
    reg_item(root, "Codec#b", &b, TETHER_SCOPE_GRAPH);
    reg_host(root, "Host", "Codec", &h);
    CHECK_OK(tether_container_new(root, &child));
    reg_item(child, "Codec#c", &c3, TETHER_SCOPE_GRAPH);
    reg_item(child, "Codec#b", &b2, TETHER_SCOPE_GRAPH);
    tether_ref *keep = NULL;
    host *got = tether_get(child, "Host", &keep);
    CHECK(got && got->count == 3 && got->items[0]->k == &a && got->items[1]->k == &b2 && got->items[2]->k == &c3);
    CHECK_OK(tether_ref_release(keep));
    got = tether_get(root, "Host", &keep);
    CHECK(got && got->count == 2 && got->items[0]->k == &a && got->items[1]->k == &b);
    CHECK_OK(tether_ref_release(keep));
    CHECK(b.made == 1 && b2.made == 1 && c3.made == 1 && a.made == 2);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
    CHECK(a.made == a.dropped && b.made == b.dropped && b2.made == b2.dropped && c3.made == c3.dropped);
}

/* The list follows registrations made after a resolve, in the container and in a child
 * that had none of its own when it first resolved. */
static void registrations_made_later_are_listed(void) {
    kind a = {"a", 0, 0}, b = {"b", 0, 0}, c3 = {"c", 0, 0}, h = {"host", 0, 0};
    tether_container *root = new_container(), *child = NULL;
    reg_item(root, "Codec#a", &a, TETHER_SCOPE_GRAPH);
    reg_host(root, "Host", "Codec", &h);
    CHECK_OK(tether_container_new(root, &child));
    tether_ref *keep = NULL;
    host *got = tether_get(child, "Host", &keep);
    CHECK(got && got->count == 1);
    CHECK_OK(tether_ref_release(keep));
    reg_item(root, "Codec#b", &b, TETHER_SCOPE_GRAPH);
    got = tether_get(child, "Host", &keep);
    CHECK(got && got->count == 2 && got->items[1]->k == &b);
    CHECK_OK(tether_ref_release(keep));
    reg_item(child, "Codec#c", &c3, TETHER_SCOPE_GRAPH);
    got = tether_get(child, "Host", &keep);
    CHECK(got && got->count == 3 && got->items[2]->k == &c3);
    CHECK_OK(tether_ref_release(keep));
    got = tether_get(root, "Host", &keep);
    CHECK(got && got->count == 2);
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
    CHECK(a.made == a.dropped && b.made == b.dropped && c3.made == 1 && c3.dropped == 1 && h.made == 4);
}

static void no_variant_is_an_empty_list(void) {
    kind h = {"host", 0, 0};
    tether_container *c = new_container();
    reg_host(c, "Host", "Plugin", &h);
    tether_ref *keep = NULL;
    host *got = tether_get(c, "Host", &keep);
    CHECK(got && got->count == 0 && got->list->items != NULL);
    CHECK_OK(tether_ref_release(keep));
    const tether_list *list = NULL;
    CHECK_OK(tether_resolve_all(c, "Plugin", &keep, &list));
    CHECK(list && list->count == 0 && tether_ref_get(keep) == list);
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(h.made == 1 && h.dropped == 1);
}

static void resolve_all_gives_the_same_list_kept_by_its_handle(void) {
    kind a = {"a", 0, 0}, b = {"b", 0, 0};
    order[0] = 0;
    tether_container *c = new_container();
    reg_item(c, "Codec#b", &b, TETHER_SCOPE_GRAPH);
    reg_item(c, "Codec#a", &a, TETHER_SCOPE_TRANSIENT);
    tether_ref *keep = NULL;
    const tether_list *list = NULL;
    CHECK_OK(tether_resolve_all(c, "Codec", &keep, &list));
    CHECK(list && list->count == 2);
    if (list && list->count == 2) {
        CHECK(((node *)list->items[0])->k == &b && ((node *)list->items[1])->k == &a);
        CHECK(((node *)list->items[0])->magic == ALIVE);
    }
    CHECK(a.dropped == 0 && b.dropped == 0);
    /* a handle of its own to an item outlives the list's */
    tether_ref *item = NULL, *other = NULL;
    CHECK_OK(TB.list_ref(keep, 1, &item));
    CHECK(list && tether_ref_get(item) == list->items[1]);
    CHECK_STATUS(TB.list_ref(keep, 2, &other), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_ref_release(keep));
    CHECK(a.dropped == 0 && b.dropped == 1);
    CHECK_OK(tether_ref_release(item));
    CHECK(a.dropped == 1 && b.dropped == 1);
    CHECK_OK(tether_resolve(c, "Codec#b", &item));
    CHECK_STATUS(TB.list_ref(item, 0, &other), TETHER_E_INVALID_ARGUMENT);   /* not a list */
    CHECK_OK(tether_ref_release(item));
    CHECK_STATUS(tether_resolve_all(c, "", &keep, &list), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_resolve_all(c, "Codec", NULL, &list), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(tether_resolve_all(c, "Codec", &keep, &list), TETHER_E_INVALID_HANDLE);
    CHECK(keep == NULL && list == NULL);
}

static void *make_null(kind *k) { (void)k; return NULL; }

static void a_failing_item_fails_the_resolve_and_keeps_nothing(void) {
    kind a = {"a", 0, 0}, h = {"host", 0, 0};
    tether_container *c = new_container();
    reg_item(c, "Codec#a", &a, TETHER_SCOPE_SINGLETON);
    tether_param p[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register(c, "Codec#broken", (tether_fn)make_null, p, 1, NULL));
    reg_host(c, "Host", "Codec", &h);
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "Host", &keep) == NULL);
    CHECK(tether_last_status() == TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("\"Codec#broken\"");
    CHECK(h.made == 0 && a.made == 1 && a.dropped == 1);   /* the singleton made on the way is not cached */
    const tether_list *list = NULL;
    CHECK_STATUS(tether_resolve_all(c, "Codec", &keep, &list), TETHER_E_FACTORY_FAILED);
    CHECK(a.made == 2 && a.dropped == 2);
    CHECK_OK(tether_container_free(c));
}

static void *make_item_needing_host(kind *k, void *hostp) { (void)hostp; return node_new(k, NULL, NULL); }

static void a_cycle_through_an_item_is_reported_by_resolve_and_validate(void) {
    kind a = {"a", 0, 0}, h = {"host", 0, 0};
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT, TETHER_DEP("Host")};
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "Codec#a", (tether_fn)make_item_needing_host, p, 2, &r));
    CHECK_OK(tether_set_context(r, &a, drop_node));
    reg_host(c, "Host", "Codec", &h);
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "Host", &keep) == NULL);
    CHECK(tether_last_status() == TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"Host\" -> \"Codec#a\" -> \"Host\"");
    CHECK_STATUS(tether_validate(c), TETHER_E_CYCLE);
    CHECK(a.made == 0 && h.made == 0);
    CHECK_OK(tether_container_free(c));
}

static void *make_host_with_dep(kind *k, const tether_list *list, node *extra) {
    (void)extra;
    return make_host(k, list);
}

static void validate_and_dot_see_every_item(void) {
    kind a = {"a", 0, 0}, h = {"host", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "Codec#a", &a, TETHER_SCOPE_GRAPH, "Missing", NULL, drop_node);
    reg_item(c, "Codec#b", &a, TETHER_SCOPE_TRANSIENT);
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_SINGLETON;
    o.context = &h;
    o.drop = drop_host;
    CHECK_OK(TETHER_REGISTER3(c, "Host", &o, NULL, make_host_with_dep, TETHER_AS(TETHER_CONTEXT, kind *),
                              TETHER_ALL("Codec"), TETHER_AS(TETHER_DEP("Codec#b"), node *)));
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Missing\" (needed by \"Codec#a\")");
    /* the singleton host holding shorter-lived items is captive, per item */
    CHECK_ERROR_HAS("captive dependency \"Host\" -> \"Codec#a\"");
    CHECK_ERROR_HAS("captive dependency \"Host\" -> \"Codec#b\"");
    char *dot = NULL;
    CHECK_OK(tether_export_dot(c, &dot));
    CHECK(dot && strstr(dot, "\"Host\" -> \"Codec#a\" [label=\"all\", color=orange"));
    CHECK(dot && strstr(dot, "\"Host\" -> \"Codec#b\" [label=\"all\", color=orange"));
    CHECK(dot && strstr(dot, "\"Host\" -> \"Codec#b\" [color=orange"));  /* the DEP slot, drawn too */
    tether_string_free(dot);
    CHECK_OK(tether_container_free(c));
}

static void *make_with_args(kind *k, int64_t n) { (void)n; return node_new(k, NULL, NULL); }

static void an_item_taking_runtime_arguments_is_refused_naming_the_factory_slot(void) {
    kind a = {"a", 0, 0}, h = {"host", 0, 0};
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT, TETHER_I64};
    CHECK_OK(tether_register(c, "Codec#n", (tether_fn)make_with_args, p, 2, NULL));
    reg_host(c, "Host", "Codec", &h);
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "Host", &keep) == NULL);
    CHECK(tether_last_status() == TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("TETHER_FACTORY(\"Codec#n\")");
    CHECK_STATUS(tether_validate(c), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("TETHER_FACTORY(\"Codec#n\")");
    CHECK(a.made == 0 && h.made == 0);
    CHECK_OK(tether_container_free(c));
}

static char trace_log[2048];
static void record(const tether_trace_event *e, void *context) {
    (void)context;
    if (e->kind != TETHER_TRACE_EDGE) return;
    char line[128];
    snprintf(line, sizeof line, "%s->%s ", e->key, e->target_key);
    strncat(trace_log, line, sizeof trace_log - strlen(trace_log) - 1);
}

static void trace_reports_an_edge_per_item(void) {
    kind a = {"a", 0, 0}, b = {"b", 0, 0}, h = {"host", 0, 0};
    tether_container *c = new_container();
    reg_item(c, "Codec#a", &a, TETHER_SCOPE_GRAPH);
    reg_item(c, "Codec#b", &b, TETHER_SCOPE_GRAPH);
    reg_host(c, "Host", "Codec", &h);
    trace_log[0] = 0;
    CHECK_OK(tether_set_trace(c, record, NULL));
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "Host", &keep) != NULL);
    CHECK(strcmp(trace_log, "Host->Codec#a Host->Codec#b ") == 0);
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
}

/* Threads resolve a host while another registers variants: every list seen is the variants
 * registered so far, in registration order (never torn, never out of order). */
enum { VARIANTS = 40, RESOLVERS = 2 };
static kind variant_kinds[VARIANTS];
static atomic_int registered, list_errors, resolve_errors;
static tether_container *shared;

static void *resolve_hosts(void *arg) {
    (void)arg;
    int seen = 0;
    while (seen < VARIANTS) {
        tether_ref *keep = NULL;
        host *h = tether_get(shared, "Host", &keep);
        if (!h) { atomic_fetch_add(&resolve_errors, 1); break; }
        size_t n = h->list->count;
        if ((int)n < seen || n > VARIANTS) atomic_fetch_add(&list_errors, 1);
        for (size_t i = 0; i < n; i++)
            if (((node *)h->list->items[i])->k != &variant_kinds[i]) atomic_fetch_add(&list_errors, 1);
        seen = (int)n;
        tether_ref_release(keep);
    }
    return NULL;
}

/* Counted atomically: hosts are made and dropped on several threads. */
static atomic_int hosts_made, hosts_dropped;
static void static_drop(void *instance, void *context) { (void)context; free(instance); }
static void drop_counted_host(void *instance, void *context) { (void)context; free(instance); atomic_fetch_add(&hosts_dropped, 1); }
static void *make_variant(kind *k) { node *o = xcalloc(sizeof *o); o->magic = ALIVE; o->k = k; return o; }
static void *make_counted_host(const tether_list *list) {
    host *h = xcalloc(sizeof *h);
    h->magic = ALIVE; h->list = list; h->count = list->count;
    atomic_fetch_add(&hosts_made, 1);
    return h;
}

static void lists_stay_whole_and_ordered_while_variants_are_registered(void) {
    shared = new_container();
    tether_options ho = TETHER_OPTIONS_INIT;
    ho.drop = drop_counted_host;
    CHECK_OK(TETHER_REGISTER1(shared, "Host", &ho, NULL, make_counted_host, TETHER_ALL("Codec")));
    pthread_t t[RESOLVERS];
    for (int i = 0; i < RESOLVERS; i++) CHECK(pthread_create(&t[i], NULL, resolve_hosts, NULL) == 0);
    for (int i = 0; i < VARIANTS; i++) {
        char key[32];
        snprintf(key, sizeof key, "Codec#%02d", i);
        variant_kinds[i] = (kind){"v", 0, 0};
        tether_param p[] = {TETHER_CONTEXT};
        tether_registration_options o = {0};
        o.context = &variant_kinds[i];
        o.drop = static_drop;
        CHECK_OK(TB.register_ex(shared, key, (tether_fn)make_variant, p, 1, &o, NULL));
        atomic_fetch_add(&registered, 1);
    }
    for (int i = 0; i < RESOLVERS; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&list_errors) == 0 && atomic_load(&resolve_errors) == 0);
    CHECK_OK(tether_container_free(shared));
    CHECK(atomic_load(&hosts_made) == atomic_load(&hosts_dropped) && atomic_load(&hosts_made) > 0);
}

int main(void) {
    RUN(every_variant_in_registration_order_each_held_strongly);
    RUN(a_child_replaces_its_parents_variant_in_place_and_adds_its_own);
    RUN(registrations_made_later_are_listed);
    RUN(no_variant_is_an_empty_list);
    RUN(resolve_all_gives_the_same_list_kept_by_its_handle);
    RUN(a_failing_item_fails_the_resolve_and_keeps_nothing);
    RUN(a_cycle_through_an_item_is_reported_by_resolve_and_validate);
    RUN(validate_and_dot_see_every_item);
    RUN(an_item_taking_runtime_arguments_is_refused_naming_the_factory_slot);
    RUN(trace_reports_an_edge_per_item);
    RUN(lists_stay_whole_and_ordered_while_variants_are_registered);
    return harness_finish();
}
