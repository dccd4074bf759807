/* Lazy slots remember the graph they were filled in (DESIGN.md, "Lazy slots inside a graph").
 *
 * X(Y) holds its Y; Y gets a provider for X. A TETHER_WEAK_LAZY provider answers the X that
 * holds this Y (whatever X's scope; also from Y's completion callback, while the graph is still
 * completing); a TETHER_LAZY one would hold that X strongly, closing a retain cycle: its calls
 * return NULL + TETHER_E_RETAIN_CYCLE naming TETHER_WEAK_LAZY, validate reports it, DOT draws it
 * red, and no second X is ever made. Also: the fixes the cycle and runtime-argument messages name
 * work when applied, and a retain cycle is TETHER_E_RETAIN_CYCLE from a resolver-form callback. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

typedef struct Y { kind *k; tether_provider x; } Y;
typedef struct X { kind *k; Y *y; } X;

static kind kx, ky, kw;
static int provider_answers_in_callback;  /* Y's completion: the provider answered the graph's X */
static void *x_seen_in_callback;
static tether_status callback_status;

static void reset_counts(void) {
    memset(&kx, 0, sizeof kx); kx.tag = "X";
    memset(&ky, 0, sizeof ky); ky.tag = "Y";
    memset(&kw, 0, sizeof kw); kw.tag = "W";
    provider_answers_in_callback = 0;
    x_seen_in_callback = NULL;
    callback_status = TETHER_OK;
}

static void *make_x(kind *k, Y *y) { X *x = xcalloc(sizeof *x); x->k = k; x->y = y; k->made++; return x; }
static void *make_y(kind *k, tether_provider x) { Y *y = xcalloc(sizeof *y); y->k = k; y->x = x; k->made++; return y; }
static void drop_counted(void *instance, void *context) { ((kind *)context)->dropped++; free(instance); }

/* Y's completion callback: calls its provider while X's graph is still completing. */
static tether_status y_calls_provider(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)context;
    Y *y = instance;
    x_seen_in_callback = y->x();
    callback_status = tether_last_status();
    if (!x_seen_in_callback) return callback_status;
    provider_answers_in_callback = 1;
    return TETHER_OK;
}

/* X(Y) in `xscope`, Y(slot on X) in the same scope (graph-scoped when X is transient: no
 * captive), optionally completed by y_calls_provider. */
static tether_container *xy(tether_scope xscope, tether_param slot, int y_completes) {
    reset_counts();
    tether_container *c = new_container();
    tether_param px[] = {TETHER_CONTEXT, TETHER_DEP("Y")};
    tether_param py[] = {TETHER_CONTEXT, slot};
    tether_options ox = TETHER_OPTIONS_INIT, oy = TETHER_OPTIONS_INIT;
    tether_completion done = {.fn = y_calls_provider};
    ox.scope = xscope, ox.context = &kx, ox.drop = drop_counted;
    oy.context = &ky, oy.drop = drop_counted;
    oy.scope = xscope == TETHER_SCOPE_TRANSIENT ? TETHER_SCOPE_GRAPH : xscope;
    if (y_completes) oy.callbacks = &done, oy.callback_count = 1;
    CHECK_OK(tether_register_with(c, "X", (tether_fn)make_x, px, 2, &ox, NULL));
    CHECK_OK(tether_register_with(c, "Y", (tether_fn)make_y, py, 2, &oy, NULL));
    return c;
}

static void weak_lazy_answers_the_x_that_holds_this_y_in(tether_scope scope) {
    tether_container *c = xy(scope, TETHER_WEAK_LAZY("X"), 0);
    CHECK_OK(tether_validate(c));
    tether_ref *keep = NULL;
    X *x = tether_get(c, "X", &keep);
    CHECK(x && x->y && x->y->x);
    if (x) {
        CHECK(x->y->x() == x);       /* the graph's X, not a second one */
        CHECK(x->y->x() == x);
    }
    CHECK(kx.made == 1 && ky.made == 1);
    CHECK_OK(tether_ref_release(keep));
    if (scope != TETHER_SCOPE_SINGLETON && scope != TETHER_SCOPE_CONTAINER) CHECK(kx.dropped == 1 && ky.dropped == 1);
    CHECK_OK(tether_container_free(c));
    CHECK(kx.made == 1 && ky.made == 1 && kx.dropped == 1 && ky.dropped == 1);
}

static void test_weak_lazy_answers_the_graphs_x_whatever_its_scope(void) {
    weak_lazy_answers_the_x_that_holds_this_y_in(TETHER_SCOPE_GRAPH);
    weak_lazy_answers_the_x_that_holds_this_y_in(TETHER_SCOPE_TRANSIENT);
    weak_lazy_answers_the_x_that_holds_this_y_in(TETHER_SCOPE_SINGLETON);
    weak_lazy_answers_the_x_that_holds_this_y_in(TETHER_SCOPE_WEAK);
    weak_lazy_answers_the_x_that_holds_this_y_in(TETHER_SCOPE_CONTAINER);
}

/* A Y resolved alone has no X in its graph: its provider resolves anew, as before (the new X's
 * graph has a Y of its own, so nothing holds that X: expired). */
static void test_weak_lazy_without_an_x_in_its_graph_resolves_anew(void) {
    tether_container *c = xy(TETHER_SCOPE_GRAPH, TETHER_WEAK_LAZY("X"), 0);
    tether_ref *keep = NULL;
    Y *y = tether_get(c, "Y", &keep);
    CHECK(y != NULL && kx.made == 0);
    if (y) {
        CHECK(y->x() == NULL && tether_last_status() == TETHER_E_EXPIRED);
        CHECK(kx.made == 1 && ky.made == 2 && kx.dropped == 1 && ky.dropped == 1);
    }
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(kx.made == kx.dropped && ky.made == ky.dropped);
}

static void test_weak_lazy_from_a_completion_callback_answers_at_once(void) {
    tether_container *c = xy(TETHER_SCOPE_GRAPH, TETHER_WEAK_LAZY("X"), 1);
    tether_ref *keep = NULL;
    X *x = tether_get(c, "X", &keep);
    CHECK(x != NULL);
    CHECK(provider_answers_in_callback && x_seen_in_callback == x);
    CHECK(kx.made == 1 && ky.made == 1);            /* no nested graphs */
    CHECK_OK(tether_ref_release(keep));
    CHECK(kx.dropped == 1 && ky.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_strong_lazy_back_edge_is_refused_with_the_weak_lazy_fix(void) {
    tether_container *c = xy(TETHER_SCOPE_GRAPH, TETHER_LAZY("X"), 0);
    /* validate reports it, naming the fix */
    CHECK_STATUS(tether_validate(c), TETHER_E_RETAIN_CYCLE);
    CHECK_ERROR_HAS("lazy dependency \"Y\" -> \"X\" would close a retain cycle \"Y\" -> \"X\" -> \"Y\"");
    CHECK_ERROR_HAS("TETHER_WEAK_LAZY(\"X\")");
    char *dot = NULL;
    CHECK_OK(tether_export_dot(c, &dot));
    CHECK(dot && strstr(dot, "\"Y\" -> \"X\" [style=dotted, color=red, penwidth=2]"));
    CHECK(dot && strstr(dot, "\"X\" -> \"Y\" [color=red, penwidth=2]"));
    tether_string_free(dot);
    /* a call returns NULL + RETAIN_CYCLE with the same fix; never a second X */
    tether_ref *keep = NULL;
    X *x = tether_get(c, "X", &keep);
    CHECK(x != NULL);
    if (x) {
        CHECK(x->y->x() == NULL);
        CHECK(tether_last_status() == TETHER_E_RETAIN_CYCLE);
        CHECK_ERROR_HAS("declare the slot TETHER_WEAK_LAZY(\"X\")");
        tether_error_parts parts;
        CHECK_OK(TB.last_error_parts(&parts));
        CHECK(parts.fix == TETHER_FIX_WEAK_LAZY && parts.key && strcmp(parts.key, "Y") == 0
              && parts.target && strcmp(parts.target, "X") == 0);
        CHECK(x->y->x() == NULL && tether_last_status() == TETHER_E_RETAIN_CYCLE);
    }
    CHECK(kx.made == 1 && ky.made == 1);
    CHECK_OK(tether_ref_release(keep));
    CHECK(kx.dropped == 1 && ky.dropped == 1);
    CHECK_OK(tether_container_free(c));

    /* the same from Y's completion callback: the resolve fails as a retain cycle, caching nothing */
    c = xy(TETHER_SCOPE_SINGLETON, TETHER_LAZY("X"), 1);
    CHECK(tether_get(c, "X", &keep) == NULL);
    CHECK(tether_last_status() == TETHER_E_RETAIN_CYCLE);
    CHECK(callback_status == TETHER_E_RETAIN_CYCLE && !provider_answers_in_callback);
    CHECK(kx.made == 1 && ky.made == 1 && kx.dropped == 1 && ky.dropped == 1);
    CHECK_OK(tether_container_free(c));

    /* the fix applied: TETHER_WEAK_LAZY passes validate and the call */
    c = xy(TETHER_SCOPE_SINGLETON, TETHER_WEAK_LAZY("X"), 1);
    CHECK_OK(tether_validate(c));
    x = tether_get(c, "X", &keep);
    CHECK(x && x_seen_in_callback == x && x->y->x() == x);
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(kx.made == 1 && ky.made == 1 && kx.dropped == 1 && ky.dropped == 1);
}

/* W(Y, X): X does not hold Y, so Y's strong provider may hold the graph's X. */
static void *make_w(kind *k, Y *y, X *x) { (void)x; return node_new(k, (node *)y, NULL); }
static void test_strong_lazy_answers_the_graphs_x_when_no_cycle(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param pw[] = {TETHER_CONTEXT, TETHER_DEP("Y"), TETHER_DEP("X")};
    tether_param px[] = {TETHER_CONTEXT};
    tether_param py[] = {TETHER_CONTEXT, TETHER_LAZY("X")};
    tether_options ow = TETHER_OPTIONS_INIT, ox = TETHER_OPTIONS_INIT, oy = TETHER_OPTIONS_INIT;
    ow.context = &kw, ow.drop = drop_node;
    ox.context = &kx, ox.drop = drop_counted;
    oy.context = &ky, oy.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "W", (tether_fn)make_w, pw, 3, &ow, NULL));
    CHECK_OK(tether_register_with(c, "X", (tether_fn)make0, px, 1, &ox, NULL));
    CHECK_OK(tether_register_with(c, "Y", (tether_fn)make_y, py, 2, &oy, NULL));
    CHECK_OK(tether_validate(c));
    tether_ref *keep = NULL;
    node *w = tether_get(c, "W", &keep);
    CHECK(w != NULL);
    void *x_of_w = NULL;
    if (w) {
        Y *y = (Y *)w->a;
        x_of_w = y->x();
        CHECK(x_of_w != NULL && kx.made == 1);   /* the graph's X: no second one */
        CHECK(y->x() == x_of_w);
    }
    CHECK_OK(tether_ref_release(keep));
    CHECK(kw.dropped == 1 && ky.dropped == 1 && kx.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

/* The constructor-cycle message names two fixes; both close the cycle when applied. */
static tether_status y_takes_x_weakly(tether_resolver *r, void *instance, void *context) {
    (void)context;
    return tether_resolver_get_weak(r, "X", &((node *)instance)->weak);
}
static void test_constructor_cycle_fixes_work_as_named(void) {
    reset_counts();
    tether_container *c = new_container();
    reg_node(c, "X", &kx, TETHER_SCOPE_GRAPH, "Y", NULL, drop_node);
    reg_node(c, "Y", &ky, TETHER_SCOPE_GRAPH, "X", NULL, drop_node);
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "X", &keep) == NULL && tether_last_status() == TETHER_E_CYCLE);
    CHECK_ERROR_HAS("break its last edge \"Y\" -> \"X\": take \"X\" in a completion callback of \"Y\" (tether_on_complete), or declare the slot TETHER_WEAK_LAZY(\"X\")");
    CHECK_STATUS(tether_validate(c), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("TETHER_WEAK_LAZY(\"X\")");

    /* fix 1: the slot weak-lazy */
    tether_param py[] = {TETHER_CONTEXT, TETHER_WEAK_LAZY("X")};
    tether_options oy = TETHER_OPTIONS_INIT;
    oy.context = &ky, oy.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "Y", (tether_fn)make_y, py, 2, &oy, NULL));
    CHECK_OK(tether_validate(c));
    node *x = tether_get(c, "X", &keep);
    CHECK(x && ((Y *)x->a)->x() == x);
    CHECK_OK(tether_ref_release(keep));

    /* fix 2: Y takes X in a completion callback */
    tether_registration *ry = reg_node(c, "Y", &ky, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(ry, y_takes_x_weakly, NULL));
    CHECK_OK(tether_validate(c));
    x = tether_get(c, "X", &keep);
    CHECK(x != NULL);
    tether_ref *back = NULL;
    CHECK(x && tether_weak_get(x->a->weak, &back) == x);
    CHECK_OK(tether_ref_release(back));
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(kx.made == 2 && kx.dropped == 2 && ky.made == 2 && ky.dropped == 2 && bad_release == 0);
}

/* validate's advice for a dependency on a key taking runtime arguments passes once applied. */
static void *make_arg(kind *k, int64_t n) { (void)n; return node_new(k, NULL, NULL); }
static void test_runtime_argument_advice_passes_when_applied(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param pa[] = {TETHER_CONTEXT, TETHER_I64};
    tether_options oa = TETHER_OPTIONS_INIT;
    oa.context = &kx, oa.drop = drop_node;
    CHECK_OK(tether_register_with(c, "Arg", (tether_fn)make_arg, pa, 2, &oa, NULL));
    reg_node(c, "User", &ky, TETHER_SCOPE_GRAPH, "Arg", NULL, drop_node);
    CHECK_STATUS(tether_validate(c), TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("declare the slot TETHER_FACTORY(\"Arg\")");  /* applied in test_factory_slots.c */
    CHECK_ERROR_HAS("or resolve it at the top level with tether_resolve_args");
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "User", &keep) == NULL && tether_last_status() == TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("with tether_resolve_args");
    tether_error_parts parts;
    CHECK_OK(TB.last_error_parts(&parts));
    CHECK(parts.fix == TETHER_FIX_RUNTIME_ARGUMENTS && parts.key && strcmp(parts.key, "Arg") == 0 && parts.path_count == 1);
    /* applied: User no longer declares it; the caller resolves it with its arguments */
    reg_node(c, "User", &ky, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_validate(c));
    tether_value v[] = {TETHER_VAL_I64(7)};
    CHECK_OK(tether_resolve_args(c, "Arg", v, 1, &keep));
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(kx.made == 1 && kx.dropped == 1);
}

/* One status per kind of failure: a resolver-form callback refused a strong back edge. */
static tether_status y_takes_x_strongly(tether_resolver *r, void *instance, void *context) {
    (void)context;
    return tether_resolver_get(r, "X", (void **)&((node *)instance)->got);
}
static void test_retain_cycle_from_a_resolver_form_callback_is_retain_cycle(void) {
    reset_counts();
    tether_container *c = new_container();
    reg_node(c, "X", &kx, TETHER_SCOPE_GRAPH, "Y", NULL, drop_node);
    tether_registration *ry = reg_node(c, "Y", &ky, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK_OK(tether_on_complete(ry, y_takes_x_strongly, NULL));
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "X", &keep) == NULL);
    CHECK(tether_last_status() == TETHER_E_RETAIN_CYCLE);
    CHECK_ERROR_HAS("completion callback #1 of \"Y\" failed");
    CHECK(kx.made == 1 && kx.dropped == 1 && ky.made == 1 && ky.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

/* The binding protocol's watch: told the graph's X (or the refusal) once X is made. */
static struct { int calls; tether_status status; void *instance; tether_fix fix; } watched;
static void watch_fn(void *context, tether_status status, void *instance) {
    (void)context;
    watched.calls++;
    watched.status = status;
    watched.instance = instance;
    tether_error_parts parts;
    watched.fix = status && TB.last_error_parts(&parts) == TETHER_OK ? parts.fix : TETHER_FIX_NONE;
}
static void *make_y_watching(kind *k, tether_provider x) {
    if (TB.provider_watch(x, watch_fn, NULL) != TETHER_OK) return NULL;
    return make_y(k, x);
}
static void test_provider_watch_tells_the_graphs_answer(void) {
    for (int strong = 0; strong < 2; strong++) {
        reset_counts();
        memset(&watched, 0, sizeof watched);
        tether_container *c = new_container();
        tether_param px[] = {TETHER_CONTEXT, TETHER_DEP("Y")};
        tether_param py[] = {TETHER_CONTEXT, strong ? TETHER_LAZY("X") : TETHER_WEAK_LAZY("X")};
        tether_options ox = TETHER_OPTIONS_INIT, oy = TETHER_OPTIONS_INIT;
        ox.context = &kx, ox.drop = drop_counted;
        oy.context = &ky, oy.drop = drop_counted;
        CHECK_OK(tether_register_with(c, "X", (tether_fn)make_x, px, 2, &ox, NULL));
        CHECK_OK(tether_register_with(c, "Y", (tether_fn)make_y_watching, py, 2, &oy, NULL));
        tether_ref *keep = NULL;
        X *x = tether_get(c, "X", &keep);
        CHECK(x != NULL && watched.calls == 1);
        if (strong) CHECK(watched.status == TETHER_E_RETAIN_CYCLE && !watched.instance && watched.fix == TETHER_FIX_WEAK_LAZY);
        else CHECK(watched.status == TETHER_OK && watched.instance == x);
        CHECK_OK(tether_ref_release(keep));
        CHECK_OK(tether_container_free(c));
        CHECK(kx.made == 1 && ky.made == 1 && kx.dropped == 1 && ky.dropped == 1);
    }
    CHECK_STATUS(TB.provider_watch(NULL, watch_fn, NULL), TETHER_E_INVALID_HANDLE);
}

/* The binding protocol's slot_container: a singleton registered further up, made by a child's
 * resolve, has its lazy and factory slots bound to its own container; a graph-scoped one to the child's. */
static tether_container *chain[2];
static size_t lazy_at, factory_at, short_at;
static int slot_stuff;
static void *make_slotted(tether_provider lazy, tether_factory *factory) {
    lazy_at = factory_at = short_at = 99;
    if (TB.slot_container(lazy, NULL, chain, 2, &lazy_at) != TETHER_OK) return NULL;
    if (TB.slot_container(NULL, factory, chain, 2, &factory_at) != TETHER_OK) return NULL;
    if (TB.slot_container(lazy, factory, chain, 2, &factory_at) != TETHER_E_INVALID_ARGUMENT) return NULL;
    if (TB.slot_container(lazy, NULL, chain, 2, NULL) != TETHER_E_INVALID_ARGUMENT) return NULL;
    if (TB.slot_container(lazy, NULL, chain, 1, &short_at) != TETHER_OK) return NULL; /* child only */
    return tether_factory_release(factory) == TETHER_OK ? &slot_stuff : NULL;
}
static void *make_plain(void) { return &slot_stuff; }
static void test_slot_container_names_the_container_a_slot_resolves_from(void) {
    for (int singleton = 0; singleton < 2; singleton++) {
        tether_container *root = new_container(), *child = new_container_in(root);
        chain[0] = child, chain[1] = root;
        tether_param ps[] = {TETHER_LAZY("L"), TETHER_FACTORY("L")};
        tether_param pq[] = {TETHER_DEP("S")};
        tether_options os = TETHER_OPTIONS_INIT, plain = TETHER_OPTIONS_INIT;
        os.scope = singleton ? TETHER_SCOPE_SINGLETON : TETHER_SCOPE_GRAPH;
        CHECK_OK(tether_register_with(root, "L", (tether_fn)make_plain, NULL, 0, &plain, NULL));
        CHECK_OK(tether_register_with(root, "S", (tether_fn)make_slotted, ps, 2, &os, NULL));
        CHECK_OK(tether_register_with(child, "L", (tether_fn)make_plain, NULL, 0, &plain, NULL));
        CHECK_OK(tether_register_with(child, "Q", (tether_fn)make_plain, pq, 1, &plain, NULL));
        tether_ref *keep = NULL;
        CHECK(tether_get(child, "Q", &keep) == &slot_stuff);
        CHECK(lazy_at == (size_t)singleton && factory_at == (size_t)singleton);
        CHECK(short_at == (size_t)singleton);  /* the singleton's root is not in {child}: the count */
        CHECK_OK(tether_ref_release(keep));
        CHECK_OK(tether_container_free(child));
        CHECK_OK(tether_container_free(root));
    }
    CHECK_STATUS(TB.slot_container(NULL, NULL, chain, 0, &lazy_at), TETHER_E_INVALID_ARGUMENT);
}

/* The binding protocol's lazy_hold / lazy_get: a binding's own lazy object asks the slot it held
 * what the slot's call answers. A singleton App's LAZY slot on a transient Job that holds App: each
 * get resolves a Job anew and refuses the owner's late edge to it (RETAIN_CYCLE, FIX_WEAK_LAZY), the
 * Job gone at once and the slot left empty; a slot without a cycle answers its instance and a
 * handle; a weak-lazy slot is not held; once the owner is gone the held slot is stale. */
static void *held_cycle, *held_plain;
static tether_status weak_hold_status;
typedef struct App { tether_provider job, plain, weak; } App;
static void *make_app(tether_provider job, tether_provider plain, tether_provider weak) {
    App *a = xcalloc(sizeof *a);
    a->job = job, a->plain = plain, a->weak = weak;
    void *refused = NULL;
    weak_hold_status = TB.lazy_hold(weak, &refused);
    if (TB.lazy_hold(job, &held_cycle) != TETHER_OK || TB.lazy_hold(plain, &held_plain) != TETHER_OK) return NULL;
    return a;
}
static void *make_job(kind *k, App *app) { (void)app; k->made++; return xcalloc(1); }
static void *make_plain_w(kind *k) { k->made++; return xcalloc(1); }
static void drop_app(void *instance, void *context) { (void)context; free(instance); }
static void test_lazy_hold_answers_as_the_slots_call(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param pa[] = {TETHER_LAZY("Job"), TETHER_LAZY("W"), TETHER_WEAK_LAZY("Job")};
    tether_param pj[] = {TETHER_CONTEXT, TETHER_DEP("App")};
    tether_param pw[] = {TETHER_CONTEXT};
    tether_options oa = TETHER_OPTIONS_INIT, oj = TETHER_OPTIONS_INIT, ow = TETHER_OPTIONS_INIT;
    oa.scope = TETHER_SCOPE_SINGLETON, oa.drop = drop_app;
    oj.scope = TETHER_SCOPE_TRANSIENT, oj.context = &kx, oj.drop = drop_counted;
    ow.context = &kw, ow.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "App", (tether_fn)make_app, pa, 3, &oa, NULL));
    CHECK_OK(tether_register_with(c, "Job", (tether_fn)make_job, pj, 2, &oj, NULL));
    CHECK_OK(tether_register_with(c, "W", (tether_fn)make_plain_w, pw, 1, &ow, NULL));
    tether_ref *keep = NULL;
    CHECK(tether_get(c, "App", &keep) != NULL);
    CHECK(weak_hold_status == TETHER_E_INVALID_ARGUMENT);
    for (int made = 1; made <= 2; made++) {  /* the slot stays empty: refused again, a Job each time */
        void *instance = &slot_stuff;
        tether_ref *out = (tether_ref *)&slot_stuff;
        CHECK_STATUS(TB.lazy_get(held_cycle, &instance, &out), TETHER_E_RETAIN_CYCLE);
        CHECK(instance == NULL && out == NULL);
        tether_error_parts parts;
        CHECK_OK(TB.last_error_parts(&parts));
        CHECK(parts.fix == TETHER_FIX_WEAK_LAZY && strcmp(parts.key, "App") == 0 && strcmp(parts.target, "Job") == 0);
        CHECK(strstr(tether_last_error(), "TETHER_WEAK_LAZY(\"Job\")") != NULL);
        CHECK(kx.made == made && kx.dropped == made);
    }
    void *first = NULL, *again = NULL;
    tether_ref *out = NULL, *out2 = NULL;
    CHECK_OK(TB.lazy_get(held_plain, &first, &out));
    CHECK_OK(TB.lazy_get(held_plain, &again, &out2));
    CHECK(first != NULL && first == again && tether_ref_get(out) == first && kw.made == 1);
    CHECK_OK(tether_ref_release(out));
    CHECK_OK(tether_ref_release(out2));
    CHECK(kw.dropped == 0);  /* the slot holds it, as its owner's edge */
    CHECK_OK(tether_ref_release(keep));
    CHECK_OK(tether_container_free(c));
    CHECK(kw.dropped == 1);
    void *late = NULL;
    CHECK_STATUS(TB.lazy_get(held_plain, &late, &out), TETHER_E_INVALID_HANDLE);  /* the owner went */
    CHECK_STATUS(TB.lazy_get(held_plain, NULL, &out), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.lazy_get(NULL, &late, &out), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(TB.lazy_release(held_cycle));
    CHECK_OK(TB.lazy_release(held_plain));
    CHECK_STATUS(TB.lazy_release(NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK(kx.made == 2 && kx.dropped == 2);
}

/* The watch knows a provider by its code address (a table read without a lock, grown as
 * providers are made): every live one, no other pointer, not one that was freed. */
static void test_provider_watch_knows_live_providers_only(void) {
    enum { N = 600 };                       /* past the table's first sizes (256, 512) */
    static tether_provider made[N];
    reset_counts();
    tether_container *c = new_container();
    tether_param px[] = {TETHER_CONTEXT, TETHER_DEP("Y")};
    tether_param py[] = {TETHER_CONTEXT, TETHER_WEAK_LAZY("X")};
    tether_options ox = TETHER_OPTIONS_INIT, oy = TETHER_OPTIONS_INIT;
    ox.context = &kx, ox.drop = drop_counted;
    oy.context = &ky, oy.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "X", (tether_fn)make_x, px, 2, &ox, NULL));
    CHECK_OK(tether_register_with(c, "Y", (tether_fn)make_y, py, 2, &oy, NULL));
    for (int i = 0; i < N; i++) CHECK_OK(tether_make_provider(c, "X", &made[i]));
    for (int i = 0; i < N; i++) CHECK_OK(TB.provider_watch(made[i], watch_fn, NULL));
    CHECK_STATUS(TB.provider_watch((tether_provider)(void (*)(void))make_x, watch_fn, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("not a live provider");
    for (int i = 0; i < N; i++) CHECK_OK(tether_provider_free(made[i]));
    for (int i = 0; i < N; i++) CHECK_STATUS(TB.provider_watch(made[i], watch_fn, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
    CHECK(kx.made == 0 && ky.made == 0);    /* no provider was called */
}

/* Each of validate's problems has the parts a binding renders its fix from. */
static void test_validate_problems_have_their_parts(void) {
    tether_container *c = xy(TETHER_SCOPE_GRAPH, TETHER_LAZY("X"), 0);
    reg_node(c, "A", &kw, TETHER_SCOPE_GRAPH, "B", NULL, drop_node);
    reg_node(c, "B", &kw, TETHER_SCOPE_GRAPH, "A", NULL, drop_node);
    CHECK_STATUS(tether_validate(c), TETHER_E_CYCLE);
    tether_error_parts parts;
    size_t count = 0;
    CHECK_OK(TB.validate_problem_parts(0, &parts, &count));
    CHECK(count == 2);
    CHECK(parts.status == TETHER_E_CYCLE && parts.fix == TETHER_FIX_BREAK_CYCLE && parts.path_count == 3);
    CHECK_OK(TB.validate_problem_parts(1, &parts, NULL));
    CHECK(parts.status == TETHER_E_RETAIN_CYCLE && parts.fix == TETHER_FIX_WEAK_LAZY
          && parts.key && strcmp(parts.key, "Y") == 0 && parts.target && strcmp(parts.target, "X") == 0);
    CHECK_STATUS(TB.validate_problem_parts(2, &parts, &count), TETHER_E_INVALID_ARGUMENT);
    CHECK(count == 2);
    CHECK_STATUS(TB.validate_problem_parts(0, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(c));
    c = new_container();
    CHECK_OK(tether_validate(c));
    CHECK_STATUS(TB.validate_problem_parts(0, &parts, &count), TETHER_E_INVALID_ARGUMENT);
    CHECK(count == 0);
    CHECK_OK(tether_container_free(c));
}

/* A container-scoped W#a (an item of list W) that A's factory makes through its lazy slot, then
 * R(A, W#a or [W]) asks for: R gets that W#a1, the one instance of the container (found by the
 * differential fuzz: a plan claimed W#a before A's factory and made a W#a2 for R's slot). */
typedef struct A { kind *k; tether_provider w; void *w_called; } A;
typedef struct R { kind *k; A *a; void *w; } R;
static kind ka, kr, kwa;
static void *make_a(kind *k, tether_provider w) { A *a = xcalloc(sizeof *a); a->k = k; a->w = w; a->w_called = w(); k->made++; return a; }
static void *make_item(kind *k) { int *w = xcalloc(sizeof *w); k->made++; return w; }
static void *make_r_dep(kind *k, A *a, void *w) { R *r = xcalloc(sizeof *r); r->k = k; r->a = a; r->w = w; k->made++; return r; }
static void *make_r_all(kind *k, A *a, const tether_list *ws) {
    R *r = xcalloc(sizeof *r); r->k = k; r->a = a; r->w = ws->count == 1 ? ws->items[0] : NULL; k->made++; return r;
}

static void lazy_made_item_is_the_one_a_later_slot_takes(tether_scope scope, tether_param lazy, int all) {
    memset(&ka, 0, sizeof ka); memset(&kr, 0, sizeof kr); memset(&kwa, 0, sizeof kwa);
    tether_container *c = new_container();
    tether_param pa[] = {TETHER_CONTEXT, lazy};
    tether_param pw[] = {TETHER_CONTEXT};
    tether_param pr[] = {TETHER_CONTEXT, TETHER_DEP("A"), all ? TETHER_ALL("W") : TETHER_DEP("W#a")};
    tether_options oa = TETHER_OPTIONS_INIT, ow = TETHER_OPTIONS_INIT, or_ = TETHER_OPTIONS_INIT;
    oa.context = &ka, oa.drop = drop_counted;
    ow.context = &kwa, ow.drop = drop_counted, ow.scope = scope;
    or_.context = &kr, or_.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "A", (tether_fn)make_a, pa, 2, &oa, NULL));
    CHECK_OK(tether_register_with(c, "W#a", (tether_fn)make_item, pw, 1, &ow, NULL));
    CHECK_OK(tether_register_with(c, "R", all ? (tether_fn)make_r_all : (tether_fn)make_r_dep, pr, 3, &or_, NULL));
    for (int round = 0; round < 2; round++) {  /* the second: the plan recorded by the first */
        tether_ref *keep = NULL;
        R *r = tether_get(c, "R", &keep);
        CHECK(r && r->a && r->a->w_called && r->w == r->a->w_called);
        if (scope != TETHER_SCOPE_WEAK) CHECK(kwa.made == 1);  /* one per container (singleton: one) */
        CHECK(kwa.made - kwa.dropped == 1);                       /* one alive, none let go of early */
        CHECK_OK(tether_ref_release(keep));
    }
    CHECK(ka.made == 2 && kr.made == 2 && ka.dropped == 2 && kr.dropped == 2);
    CHECK_OK(tether_container_free(c));
    CHECK(kwa.dropped == kwa.made);
}

static void test_a_lazy_made_item_is_the_one_a_later_slot_takes(void) {
    lazy_made_item_is_the_one_a_later_slot_takes(TETHER_SCOPE_CONTAINER, TETHER_WEAK_LAZY("W#a"), 1);
    lazy_made_item_is_the_one_a_later_slot_takes(TETHER_SCOPE_CONTAINER, TETHER_WEAK_LAZY("W#a"), 0);
    lazy_made_item_is_the_one_a_later_slot_takes(TETHER_SCOPE_CONTAINER, TETHER_LAZY("W#a"), 1);
    lazy_made_item_is_the_one_a_later_slot_takes(TETHER_SCOPE_SINGLETON, TETHER_WEAK_LAZY("W#a"), 1);
    lazy_made_item_is_the_one_a_later_slot_takes(TETHER_SCOPE_WEAK, TETHER_LAZY("W#a"), 1);
}

int main(void) {
    RUN(test_weak_lazy_answers_the_graphs_x_whatever_its_scope);
    RUN(test_weak_lazy_without_an_x_in_its_graph_resolves_anew);
    RUN(test_weak_lazy_from_a_completion_callback_answers_at_once);
    RUN(test_strong_lazy_back_edge_is_refused_with_the_weak_lazy_fix);
    RUN(test_strong_lazy_answers_the_graphs_x_when_no_cycle);
    RUN(test_constructor_cycle_fixes_work_as_named);
    RUN(test_runtime_argument_advice_passes_when_applied);
    RUN(test_retain_cycle_from_a_resolver_form_callback_is_retain_cycle);
    RUN(test_provider_watch_tells_the_graphs_answer);
    RUN(test_provider_watch_knows_live_providers_only);
    RUN(test_slot_container_names_the_container_a_slot_resolves_from);
    RUN(test_lazy_hold_answers_as_the_slots_call);
    RUN(test_validate_problems_have_their_parts);
    RUN(test_a_lazy_made_item_is_the_one_a_later_slot_takes);
    return harness_finish();
}
