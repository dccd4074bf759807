/* Completion callbacks with declared targets (tether_on_complete_params and
 * tether_registration_options.callbacks): the S3 cycle Parent(Child) closed by
 * Child's callback receiving a weak reference to the graph's Parent, a DEP
 * target that would close a strong cycle, failures, order beside resolver-form
 * callbacks, and bad input. */
#include "harness.h"
#include "fixtures.h"

static kind kp, kc, kl;
static char order[16];
static size_t order_len;
static tether_status fail_status;    /* what link_weak returns after releasing its handle */

/* Child's callback: keeps the weak handle to Parent (released by drop_node_weak). */
static tether_status link_weak(void *instance, void *const *args, size_t count, void *context) {
    node *child = instance;
    CHECK(count == 1 && context == &kc);
    order[order_len++] = 'd';
    if (fail_status != TETHER_OK) {
        CHECK_OK(tether_weak_release(args[0]));  /* the callback owns it whatever it returns */
        tether_set_error("no parent for this child");
        return fail_status;
    }
    child->weak = args[0];
    return TETHER_OK;
}

/* A callback taking a strong target: stores it (the edge keeps it alive). */
static tether_status link_strong(void *instance, void *const *args, size_t count, void *context) {
    (void)context;
    CHECK(count == 1);
    ((node *)instance)->got = args[0];
    return TETHER_OK;
}

static tether_status resolver_form(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    order[order_len++] = 'r';
    return TETHER_OK;
}

/* Parent(Child), Child{weak parent}: both graph-scoped, counted in kp and kc. */
static tether_container *s3(tether_registration **child) {
    memset(&kp, 0, sizeof kp); memset(&kc, 0, sizeof kc); memset(&kl, 0, sizeof kl);
    order_len = 0; fail_status = TETHER_OK; bad_release = 0;
    tether_container *c = new_container();
    reg_node(c, "Parent", &kp, TETHER_SCOPE_GRAPH, "Child", NULL, drop_node);
    *child = reg_node(c, "Child", &kc, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node_weak);
    return c;
}

/* Checks p->child->parent is p, then releases p and checks the weak handle expired with it. */
static void check_s3(tether_container *c, int rounds) {
    for (int i = 1; i <= rounds; i++) {
        tether_ref *ref = NULL;
        node *p = resolve(c, "Parent", &ref);
        CHECK(p && p->a && p->a->weak);
        tether_weak *mine = NULL;
        CHECK_OK(tether_ref_downgrade(ref, &mine));
        if (p && p->a && p->a->weak) {
            tether_ref *back = NULL;
            CHECK_OK(tether_weak_upgrade(p->a->weak, &back));
            CHECK(tether_ref_get(back) == p);  /* p.child.parent is p */
            CHECK_OK(tether_ref_release(back));
        }
        CHECK(kp.made == i && kc.made == i && kp.dropped == i - 1 && kc.dropped == i - 1);
        CHECK_OK(tether_ref_release(ref));
        CHECK(kp.dropped == i && kc.dropped == i);  /* each destructor once */
        tether_ref *gone = NULL;
        CHECK_STATUS(tether_weak_upgrade(mine, &gone), TETHER_E_EXPIRED);
        CHECK_OK(tether_weak_release(mine));
    }
    CHECK(bad_release == 0);
}

static void test_weak_back_edge_closes_s3(void) {
    tether_registration *child = NULL;
    tether_container *c = s3(&child);
    tether_param targets[] = { TETHER_WEAK("Parent") };
    CHECK_OK(tether_on_complete_params(child, link_weak, targets, 1, &kc));
    check_s3(c, 3);
    CHECK_OK(tether_container_free(c));
    CHECK(kp.dropped == 3 && kc.dropped == 3);
}

/* NULL context: the registration's context is passed, as tether_on_complete does. */
static void test_registration_context_by_default(void) {
    tether_registration *child = NULL;
    tether_container *c = s3(&child);
    tether_param targets[] = { TETHER_WEAK("Parent") };
    CHECK_OK(tether_on_complete_params(child, link_weak, targets, 1, NULL));
    check_s3(c, 1);
    CHECK_OK(tether_container_free(c));
}

/* Installed whole through tether_register_ex, beside a resolver-form callback:
 * they run in the order of the list. */
static void test_register_ex_callbacks_in_order(void) {
    tether_registration *unused = NULL;
    tether_container *c = s3(&unused);
    tether_param slots[] = { TETHER_CONTEXT };
    tether_param targets[] = { TETHER_WEAK("Parent") };
    tether_completion list[] = {
        { .fn = resolver_form },
        { .args_fn = link_weak, .params = targets, .param_count = 1, .context = &kc },
        { .fn = resolver_form },
    };
    tether_registration_options o = {0};
    o.flags = TETHER_OPTIONS_CALLBACKS;
    o.context = &kc;
    o.drop = drop_node_weak;
    o.callbacks = list;
    o.callback_count = 3;
    CHECK_OK(TB.register_ex(c, "Child", (tether_fn)make0, slots, 1, &o, NULL));
    check_s3(c, 2);
    CHECK(order_len == 6 && memcmp(order, "rdrrdr", 6) == 0);
    CHECK_OK(tether_container_free(c));
}

/* Callbacks of both forms added one by one also run in the order they were added. */
static void test_mixed_forms_run_in_order_added(void) {
    tether_registration *child = NULL;
    tether_container *c = s3(&child);
    tether_param targets[] = { TETHER_WEAK("Parent") };
    CHECK_OK(tether_on_complete_params(child, link_weak, targets, 1, &kc));
    CHECK_OK(tether_on_complete(child, resolver_form, NULL));
    check_s3(c, 1);
    CHECK(order_len == 2 && memcmp(order, "dr", 2) == 0);
    CHECK_OK(tether_container_free(c));
}

/* A DEP target closing Parent -> Child -> Parent: TETHER_E_RETAIN_CYCLE, the callback
 * never runs, nothing is cached and both instances are destroyed once. */
static void test_dep_target_closing_strong_cycle(void) {
    tether_registration *child = NULL;
    tether_container *c = s3(&child);
    tether_param targets[] = { TETHER_DEP("Parent") };
    CHECK_OK(tether_on_complete_params(child, link_strong, targets, 1, NULL));
    for (int i = 1; i <= 2; i++) {
        tether_ref *ref = NULL;
        CHECK_STATUS(tether_resolve(c, "Parent", &ref), TETHER_E_RETAIN_CYCLE);
        CHECK(ref == NULL);
        CHECK_ERROR_HAS("a declared target of completion callback #1 of \"Child\"");
        CHECK_ERROR_HAS("would close a retain cycle");
        CHECK_ERROR_HAS("declare that target weak");
        CHECK(kp.made == i && kc.made == i && kp.dropped == i && kc.dropped == i);
    }
    CHECK_OK(tether_container_free(c));
}

/* A DEP target outside the constructor graph: resolved as tether_resolver_get
 * would (built once in this graph), kept alive by the strong edge. */
static void test_dep_target_outside_the_graph(void) {
    tether_registration *parent = NULL;
    memset(&kp, 0, sizeof kp); memset(&kl, 0, sizeof kl);
    tether_container *c = new_container();
    parent = reg_node(c, "Parent", &kp, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    reg_node(c, "Logger", &kl, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node);
    tether_param targets[] = { TETHER_DEP("Logger") };
    CHECK_OK(tether_on_complete_params(parent, link_strong, targets, 1, NULL));
    tether_ref *ref = NULL;
    node *p = resolve(c, "Parent", &ref);
    CHECK(p && p->got && p->got->magic == ALIVE && p->got->k == &kl);
    CHECK(kl.made == 1 && kl.dropped == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK(kp.dropped == 1 && kl.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

/* A missing target: its own status, the callback not called. */
static void test_missing_target(void) {
    tether_registration *child = NULL;
    tether_container *c = s3(&child);
    tether_param targets[] = { TETHER_WEAK("Nobody") };
    CHECK_OK(tether_on_complete_params(child, link_weak, targets, 1, &kc));
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Parent", &ref), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"Nobody\"");
    CHECK(order_len == 0 && kp.dropped == 1 && kc.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_failing_callback(void) {
    tether_registration *child = NULL;
    tether_container *c = s3(&child);
    tether_param targets[] = { TETHER_WEAK("Parent") };
    CHECK_OK(tether_on_complete_params(child, link_weak, targets, 1, &kc));
    fail_status = TETHER_E_NOT_FOUND;
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Parent", &ref), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("completion callback #1 of \"Child\" failed: no parent for this child");
    CHECK(ref == NULL && kp.made == 1 && kc.made == 1 && kp.dropped == 1 && kc.dropped == 1);
    fail_status = TETHER_OK;  /* nothing was cached: the next resolve builds a new graph */
    memset(&kp, 0, sizeof kp); memset(&kc, 0, sizeof kc);
    check_s3(c, 1);
    CHECK_OK(tether_container_free(c));
}

static void test_bad_input(void) {
    tether_registration *child = NULL;
    tether_container *c = s3(&child);
    tether_param weak[] = { TETHER_WEAK("Parent") };
    tether_param lazy[] = { TETHER_LAZY("Parent") };
    tether_param context[] = { TETHER_CONTEXT };
    tether_param nokey[] = { TETHER_WEAK(NULL) };
    tether_param empty[] = { TETHER_DEP("") };
    CHECK_STATUS(tether_on_complete_params(child, NULL, weak, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_on_complete_params(child, link_weak, NULL, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_on_complete_params(child, link_weak, lazy, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("TETHER_PARAM_LAZY");
    CHECK_STATUS(tether_on_complete_params(child, link_weak, context, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_on_complete_params(child, link_weak, nokey, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_on_complete_params(child, link_weak, empty, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("key is NULL or empty");
    tether_param odd = { (tether_param_kind)42, "Parent" };
    CHECK_STATUS(tether_on_complete_params(child, link_weak, &odd, 1, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_on_complete_params(NULL, link_weak, weak, 1, NULL), TETHER_E_INVALID_HANDLE);

    /* tether_register_ex: each entry sets exactly one form; params only with args_fn. */
    tether_param slots[] = { TETHER_CONTEXT };
    tether_completion both = { .fn = resolver_form, .args_fn = link_weak, .params = weak, .param_count = 1 };
    tether_completion neither = { .params = weak, .param_count = 1 };
    tether_completion resolver_with_params = { .fn = resolver_form, .params = weak, .param_count = 1 };
    tether_completion bad_kind = { .args_fn = link_weak, .params = lazy, .param_count = 1 };
    tether_completion *bad[] = { &both, &neither, &resolver_with_params, &bad_kind };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tether_registration_options o = {0};
        o.flags = TETHER_OPTIONS_CALLBACKS;
        o.callbacks = bad[i];
        o.callback_count = 1;
        CHECK_STATUS(TB.register_ex(c, "Other", (tether_fn)make0, slots, 1, &o, NULL), TETHER_E_INVALID_ARGUMENT);
        CHECK_ERROR_HAS("options.callbacks[0]");
    }
    tether_registration_options o = {0};
    o.flags = TETHER_OPTIONS_CALLBACKS;
    o.callback_count = 1;  /* without a list */
    CHECK_STATUS(TB.register_ex(c, "Other", (tether_fn)make0, slots, 1, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("callback_count");
    o.flags = 0;  /* without the flag the fields are not read (an older caller's shorter struct) */
    CHECK_OK(TB.register_ex(c, "Other", (tether_fn)make0, slots, 1, &o, NULL));

    /* A stale handle: its key was registered again. */
    reg_node(c, "Child", &kc, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node_weak);
    CHECK_STATUS(tether_on_complete_params(child, link_weak, weak, 1, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_weak_back_edge_closes_s3);
    RUN(test_registration_context_by_default);
    RUN(test_register_ex_callbacks_in_order);
    RUN(test_mixed_forms_run_in_order_added);
    RUN(test_dep_target_closing_strong_cycle);
    RUN(test_dep_target_outside_the_graph);
    RUN(test_missing_target);
    RUN(test_failing_callback);
    RUN(test_bad_input);
    return harness_finish();
}
