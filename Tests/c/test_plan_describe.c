/* plan_describe and container_versions (tether_binding.h): the plan handed to bindings that run
 * their own factories, and the words that say when it went stale. Every status, and the plans it
 * declines to hand out; replay_enter/leave, what a replay tells the library it constructs. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"
#include "binding.h"

static void *make(void) { static int instance; return &instance; }
static void *make_dep(void *a) { return a; }
static tether_status complete(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    return TETHER_OK;
}

/* The plan of `key` from `c` into `steps` (8) and `inputs` (16): its step count, its input count in `*input_count`. */
static size_t describe(tether_container *c, const char *key, tether_plan_step *steps, int32_t *inputs, size_t *input_count) {
    size_t step_count = 99;
    *input_count = 99;
    CHECK_OK(TB.plan_describe(c, key_of(c, key), steps, 8, inputs, 16, NULL, 0, &step_count, input_count, NULL));
    return step_count;
}

/* The step count tether_plan_describe reports for `key` (with buffers large enough). */
static size_t described_steps(tether_container *c, const char *key) {
    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t input_count;
    return describe(c, key, steps, inputs, &input_count);
}

/* A(B, Ctx) with a hidden resolver first, B(T, T) transient T twice, graph-scoped G shared. */
static void test_describes_steps_inputs_and_parents(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_registration *ra, *rb, *rt;
    tether_param a_params[] = { TETHER_RESOLVER, TETHER_DEP("B"), TETHER_CONTEXT };
    tether_param b_params[] = { TETHER_DEP("T"), TETHER_DEP("T") };
    CHECK_OK(tether_register(c, "A", (tether_fn)make_dep, a_params, 3, &ra));
    CHECK_OK(tether_register(c, "B", (tether_fn)make_dep, b_params, 2, &rb));
    CHECK_OK(tether_register(c, "T", (tether_fn)make, NULL, 0, &rt));
    CHECK_OK(tether_set_scope(rt, TETHER_SCOPE_TRANSIENT));

    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t step_count = 99, input_count = 99;
    CHECK_OK(TB.plan_describe(c, key_of(c, "A"), steps, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL));
    /* post-order: T, T, B, A; every slot's input in declared order */
    CHECK(step_count == 4 && input_count == 5);
    CHECK(steps[0].registration == rt && steps[1].registration == rt);
    CHECK(steps[2].registration == rb && steps[3].registration == ra);
    CHECK(steps[0].slot_count == 0 && steps[2].slot_count == 2 && steps[3].slot_count == 3);
    CHECK(steps[2].first_input == 0 && steps[3].first_input == 2);
    CHECK(inputs[0] == 0 && inputs[1] == 1);  /* a transient step per slot */
    CHECK(inputs[2] == TETHER_PLAN_INPUT_RESOLVER && inputs[3] == 2 && inputs[4] == TETHER_PLAN_INPUT_CONTEXT);
    CHECK(steps[0].parent == 2 && steps[1].parent == 2 && steps[2].parent == 3 && steps[3].parent == -1);
    CHECK_OK(tether_container_free(c));
}

/* The first asker of a shared step is its parent (the frame below its factory), not a later one. */
static void test_parent_is_the_first_asker(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param p_params[] = { TETHER_DEP("X"), TETHER_DEP("Q") };
    tether_param q_params[] = { TETHER_DEP("X") };
    CHECK_OK(tether_register(c, "P", (tether_fn)make_dep, p_params, 2, NULL));
    CHECK_OK(tether_register(c, "Q", (tether_fn)make_dep, q_params, 1, NULL));
    CHECK_OK(tether_register(c, "X", (tether_fn)make, NULL, 0, NULL));
    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t step_count = 0, input_count = 0;
    CHECK_OK(TB.plan_describe(c, key_of(c, "P"), steps, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL));
    CHECK(step_count == 3);  /* X, Q, P */
    CHECK(steps[0].parent == 2 && steps[1].parent == 2);
    CHECK(steps[0].registration == NULL);  /* registered without a handle */
    CHECK_OK(tether_container_free(c));
}

static void test_no_plan_for_graphs_that_are_not_plain(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param dep_s[] = { TETHER_DEP("S") }, dep_cb[] = { TETHER_DEP("CB") }, dep_missing[] = { TETHER_DEP("Missing") };
    tether_param dep_cyc2[] = { TETHER_DEP("Cyc2") }, dep_cyc1[] = { TETHER_DEP("Cyc1") }, dep_w[] = { TETHER_WEAK("Plain") };
    tether_param arg[] = { TETHER_I64 };
    tether_registration *s, *cb;
    CHECK_OK(tether_register(c, "Plain", (tether_fn)make, NULL, 0, NULL));
    CHECK_OK(tether_register(c, "S", (tether_fn)make, NULL, 0, &s));
    CHECK_OK(tether_set_scope(s, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_register(c, "NeedsSingleton", (tether_fn)make_dep, dep_s, 1, NULL));
    CHECK_OK(tether_register(c, "CB", (tether_fn)make, NULL, 0, &cb));
    CHECK_OK(tether_on_complete(cb, complete, NULL));
    CHECK_OK(tether_register(c, "NeedsCallback", (tether_fn)make_dep, dep_cb, 1, NULL));
    CHECK_OK(tether_register(c, "NeedsMissing", (tether_fn)make_dep, dep_missing, 1, NULL));
    CHECK_OK(tether_register(c, "Cyc1", (tether_fn)make_dep, dep_cyc2, 1, NULL));
    CHECK_OK(tether_register(c, "Cyc2", (tether_fn)make_dep, dep_cyc1, 1, NULL));
    CHECK_OK(tether_register(c, "Weak", (tether_fn)make_dep, dep_w, 1, NULL));
    CHECK_OK(tether_register(c, "Args", (tether_fn)make_dep, arg, 1, NULL));
    CHECK(described_steps(c, "Plain") == 1);
    const char *declined[] = { "S", "CB", "NeedsCallback", "NeedsMissing", "Cyc1", "Weak" };
    for (size_t i = 0; i < sizeof declined / sizeof *declined; i++) {
        if (described_steps(c, declined[i]) != 0) {
            fprintf(stderr, "  %s was described\n", declined[i]);
            CHECK(0);
        }
    }
    CHECK_OK(tether_container_free(c));
}

/* A singleton dependency is a cached step: a leaf with its key and TETHER_PLAN_STEP_CACHED. */
static void test_cached_steps(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param dep_s[] = { TETHER_DEP("S") };
    tether_registration *s, *needs;
    CHECK_OK(tether_register(c, "S", (tether_fn)make, NULL, 0, &s));
    CHECK_OK(tether_set_scope(s, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_register(c, "NeedsSingleton", (tether_fn)make_dep, dep_s, 1, &needs));
    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t input_count, step_count = describe(c, "NeedsSingleton", steps, inputs, &input_count);
    CHECK(step_count == 2 && input_count == 1);
    CHECK(steps[0].registration == s && steps[0].flags == TETHER_PLAN_STEP_CACHED && steps[0].slot_count == 0);
    CHECK(steps[0].key == key_of(c, "S") && steps[0].parent == 1);
    CHECK(steps[1].registration == needs && steps[1].flags == 0 && steps[1].slot_count == 1 && inputs[0] == 0);
    CHECK(steps[1].key == key_of(c, "NeedsSingleton") && steps[1].parent == -1);
    CHECK_OK(tether_container_free(c));
}

/* The root's runtime arguments are inputs TETHER_PLAN_INPUT_ARGUMENT(n); a dependency's decline the plan. */
static void test_argument_inputs(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param args[] = { TETHER_F64, TETHER_DEP("Plain"), TETHER_I64 }, dep_args[] = { TETHER_DEP("Args") };
    CHECK_OK(tether_register(c, "Plain", (tether_fn)make, NULL, 0, NULL));
    CHECK_OK(tether_register(c, "Args", (tether_fn)make_dep, args, 3, NULL));
    CHECK_OK(tether_register(c, "NeedsArgs", (tether_fn)make_dep, dep_args, 1, NULL));
    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t input_count, step_count = describe(c, "Args", steps, inputs, &input_count);
    CHECK(step_count == 2 && input_count == 3);
    CHECK(inputs[0] == TETHER_PLAN_INPUT_ARGUMENT(0) && inputs[1] == 0 && inputs[2] == TETHER_PLAN_INPUT_ARGUMENT(1));
    CHECK(described_steps(c, "NeedsArgs") == 0);
    CHECK_OK(tether_container_free(c));
}

/* tether_plan_failure: the library's message for a replayed step or completion that failed. */
/* A declared value key is a value step, named by key, in the plan described from the declaring
 * container: one description serves every child providing it, the providing child's own too (its
 * value is a slot of the child's, not a registration); a failure report names the value's path. */
static void test_value_steps(void) {
    tether_container *root, *child;
    CHECK_OK(tether_container_new(NULL, &root));
    tether_param dep_req[] = { TETHER_DEP("Request") };
    tether_registration *handler;
    CHECK_OK(tether_declare_value(root, "Request"));
    CHECK_OK(tether_register(root, "Handler", (tether_fn)make_dep, dep_req, 1, &handler));
    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t input_count, step_count = describe(root, "Handler", steps, inputs, &input_count);
    CHECK(step_count == 2 && input_count == 1);
    CHECK(steps[0].flags == TETHER_PLAN_STEP_VALUE && steps[0].key == key_of(root, "Request"));
    CHECK(steps[0].slot_count == 0 && steps[0].parent == 1);
    CHECK(steps[1].registration == handler && steps[1].flags == 0 && inputs[0] == 0);
    CHECK_STATUS(TB.plan_failure(root, key_of(root, "Handler"), 1, -1, "boom"), TETHER_E_FACTORY_FAILED);
    CHECK(strcmp(tether_last_error(), "factory for \"Handler\" returned NULL: boom") == 0);
    /* the root's own resolve still reports the value missing */
    tether_ref *out = NULL;
    CHECK_STATUS(tether_resolve(root, "Handler", &out), TETHER_E_NOT_FOUND);
    CHECK(strstr(tether_last_error(), "\"Request\"") != NULL);
    static int request;
    CHECK_OK(tether_container_new(root, &child));
    CHECK_OK(tether_provide_value(child, "Request", &request, NULL, NULL));
    step_count = describe(child, "Handler", steps, inputs, &input_count);
    /* the value is a slot of the child's, not a registration: the same value step as the root's */
    CHECK(step_count == 2 && steps[0].flags == TETHER_PLAN_STEP_VALUE && steps[0].key == key_of(root, "Request"));
    CHECK_OK(tether_resolve(child, "Handler", &out));
    CHECK(tether_ref_get(out) == &request);
    CHECK_OK(tether_ref_release(out));
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
}

/* A container-scoped registration over a declared value is a container step (made once per
 * resolving container); tether_plan_adopt hands what a binding made for a child to that child's
 * cache: resolves take it, and its destructor runs once, at the child's free, after what was made later. */
static void test_container_steps_and_adopt(void) {
    static kind k_session = {"Session", 0, 0}, k_late = {"Late", 0, 0}, k_user = {"User", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Request"));
    reg_node(root, "Session", &k_session, TETHER_SCOPE_CONTAINER, "Request", NULL, drop_node);
    reg_node(root, "User", &k_user, TETHER_SCOPE_GRAPH, "Session", NULL, drop_node);
    reg_node(root, "Late", &k_late, TETHER_SCOPE_CONTAINER, "Session", NULL, drop_node);
    reg_node(root, "OverGraph", &k_user, TETHER_SCOPE_CONTAINER, "User", NULL, drop_node);
    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t input_count, step_count = describe(root, "User", steps, inputs, &input_count);
    CHECK(step_count == 3 && steps[0].flags == TETHER_PLAN_STEP_VALUE);
    CHECK(steps[1].flags == TETHER_PLAN_STEP_CONTAINER && steps[1].key == key_of(root, "Session"));
    CHECK(steps[1].slot_count == 2 && inputs[steps[1].first_input + 1] == 0 && steps[1].parent == 2);
    CHECK(steps[2].flags == 0 && inputs[steps[2].first_input + 1] == 1);
    CHECK(describe(root, "OverGraph", steps, inputs, &input_count) == 0);  /* over a graph step: not described */
    static int request;
    tether_container *child = new_container_in(root);
    CHECK_OK(tether_provide_value(child, "Request", &request, NULL, NULL));
    node *made = node_new(&k_session, NULL, NULL);  /* what a binding's run of the plan made */
    CHECK_STATUS(TB.plan_adopt(child, key_of(root, "User"), made), TETHER_E_INVALID_ARGUMENT);
    CHECK(strstr(tether_last_error(), "graph scope") != NULL);
    CHECK_STATUS(TB.plan_adopt(child, key_of(root, "Session"), NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(TB.plan_adopt(child, key_of(root, "Session"), made));
    CHECK_STATUS(TB.plan_adopt(child, key_of(root, "Session"), made), TETHER_E_INVALID_ARGUMENT);
    CHECK(strstr(tether_last_error(), "already") != NULL);
    tether_ref *out;
    node *user = resolve(child, "User", &out);
    CHECK(user->a == made && k_session.made == 1);  /* taken, not made (made counts node_new's call) */
    CHECK_OK(tether_ref_release(out));
    CHECK(resolve(child, "Late", &out)->a == made);
    CHECK_OK(tether_ref_release(out));
    CHECK(k_late.dropped == 0 && k_session.dropped == 0);
    CHECK_OK(tether_container_free(child));
    CHECK(k_late.dropped == 1 && k_session.dropped == 1);
    CHECK_OK(tether_container_free(root));
}

static void test_plan_failure(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param dep_b[] = { TETHER_DEP("B") };
    CHECK_OK(tether_register(c, "A", (tether_fn)make_dep, dep_b, 1, NULL));
    CHECK_OK(tether_register(c, "B", (tether_fn)make, NULL, 0, NULL));
    uint32_t a = key_of(c, "A");
    CHECK_STATUS(TB.plan_failure(c, a, 0, -1, "boom"), TETHER_E_FACTORY_FAILED);
    CHECK(strcmp(tether_last_error(), "factory for \"B\" returned NULL: boom (while resolving \"A\" -> \"B\")") == 0);
    CHECK_STATUS(TB.plan_failure(c, a, 1, -1, NULL), TETHER_E_FACTORY_FAILED);
    CHECK(strcmp(tether_last_error(), "factory for \"A\" returned NULL") == 0);
    CHECK_STATUS(TB.plan_failure(c, a, 2, -1, "boom"), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_failure(c, a, 0, 0, "boom"), TETHER_E_INVALID_ARGUMENT);  /* no completion calls */
    CHECK_STATUS(TB.plan_failure(c, a, 0, -2, "boom"), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_failure(NULL, a, 0, -1, "boom"), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
}

static void test_statuses(void) {
    tether_container *c, *freed;
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_container_new(NULL, &freed));
    CHECK_OK(tether_container_free(freed));
    tether_param dep_b[] = { TETHER_DEP("B") };
    tether_registration *ra;
    CHECK_OK(tether_register(c, "A", (tether_fn)make_dep, dep_b, 1, &ra));
    CHECK_OK(tether_register(c, "B", (tether_fn)make, NULL, 0, NULL));
    uint32_t a = key_of(c, "A"), unregistered = key_of(c, "NotRegisteredAnywhere");
    tether_plan_step steps[8];
    int32_t inputs[16];
    size_t step_count = 99, input_count = 99;

    CHECK_STATUS(TB.plan_describe(NULL, a, steps, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL), TETHER_E_INVALID_HANDLE);
    CHECK(step_count == 0 && input_count == 0);
    CHECK_STATUS(TB.plan_describe(freed, a, steps, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(TB.plan_describe((tether_container *)ra, a, steps, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL),
                 TETHER_E_INVALID_HANDLE);  /* a registration handle is no container */
    CHECK_STATUS(TB.plan_describe(c, 0xfffffff0u, steps, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL),
                 TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("tether_intern");
    CHECK_STATUS(TB.plan_describe(c, unregistered, steps, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("NotRegisteredAnywhere");
    CHECK_STATUS(TB.plan_describe(c, a, steps, 8, inputs, 16, NULL, 0, NULL, &input_count, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_describe(c, a, steps, 8, inputs, 16, NULL, 0, &step_count, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_describe(c, a, NULL, 8, inputs, 16, NULL, 0, &step_count, &input_count, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_describe(c, a, steps, 8, NULL, 16, NULL, 0, &step_count, &input_count, NULL), TETHER_E_INVALID_ARGUMENT);

    /* too small: the counts needed, nothing else written */
    steps[0].registration = NULL;
    CHECK_STATUS(TB.plan_describe(c, a, NULL, 0, NULL, 0, NULL, 0, &step_count, &input_count, NULL), TETHER_E_BUFFER_TOO_SMALL);
    CHECK(step_count == 2 && input_count == 1);
    CHECK_ERROR_HAS("2 steps, 1 inputs and 0 completions");
    CHECK_STATUS(TB.plan_describe(c, a, steps, 2, inputs, 0, NULL, 0, &step_count, &input_count, NULL), TETHER_E_BUFFER_TOO_SMALL);
    CHECK(steps[0].registration == NULL);
    CHECK_OK(TB.plan_describe(c, a, steps, 2, inputs, 1, NULL, 0, &step_count, &input_count, NULL));
    CHECK(step_count == 2 && steps[1].registration == ra && inputs[0] == 0);
    CHECK_OK(tether_container_free(c));
}

static size_t sum(const volatile size_t **words, size_t count) {
    size_t total = 0;
    for (size_t i = 0; i < count; i++) total += *words[i];
    return total;
}

static void test_version_words(void) {
    tether_container *parent, *child, *freed;
    CHECK_OK(tether_container_new(NULL, &parent));
    CHECK_OK(tether_container_new(parent, &child));
    CHECK_OK(tether_container_new(NULL, &freed));
    CHECK_OK(tether_container_free(freed));
    const volatile size_t *words[4] = {0};
    size_t count = 99;

    /* the statuses */
    count = 99;
    CHECK_STATUS(TB.container_versions(NULL, words, 4, &count), TETHER_E_INVALID_HANDLE);
    CHECK(count == 0);
    CHECK_STATUS(TB.container_versions(freed, words, 4, &count), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(TB.container_versions(child, words, 4, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.container_versions(child, NULL, 4, &count), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.container_versions(child, words, 1, &count), TETHER_E_BUFFER_TOO_SMALL);
    CHECK(count == 2 && words[0] == NULL);
    CHECK_ERROR_HAS("2 version words");

    CHECK_OK(TB.container_versions(child, words, 4, &count));
    CHECK(count == 2 && words[0] && words[1] && words[0] != words[1]);
    const volatile size_t *parent_word = NULL;
    CHECK_OK(TB.container_versions(parent, &parent_word, 1, &count));
    CHECK(count == 1 && parent_word == words[1]);

    /* every configuration change, here or in the parent, changes the sum */
    size_t before = sum(words, 2);
    tether_registration *r;
    CHECK_OK(tether_register(child, "K", (tether_fn)make, NULL, 0, &r));
    size_t after_child = sum(words, 2);
    CHECK(after_child > before);
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));
    CHECK(sum(words, 2) > after_child);
    size_t own = *words[0];
    CHECK_OK(tether_register(parent, "K", (tether_fn)make, NULL, 0, NULL));
    CHECK(*words[0] == own && sum(words, 2) > after_child);

    /* the words outlive their containers (read after the free: ASan checks it) and never go back */
    size_t last = sum(words, 2);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(parent));
    CHECK(sum(words, 2) > last);
    tether_container *next;
    CHECK_OK(tether_container_new(NULL, &next));
    CHECK(sum(words, 2) > last);
    CHECK_OK(tether_container_free(next));
}

/* A binding replaying the plan of A(B) with its own factories, inside B's factory (step 0): its
 * nested resolves see A and B under construction, as the library's own resolve would, and no
 * factory of the library's runs for them. Entered twice (a factory calling in again from
 * further in), the path names each key once; every enter is left. */
static int made_a, made_b;
static void *counted_a(void *b) { made_a++; return b; }
static void *counted_b(void) { made_b++; static int b; return &b; }

static void test_replay_enter(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param dep_b[] = { TETHER_DEP("B") };
    CHECK_OK(tether_register(c, "A", (tether_fn)counted_a, dep_b, 1, NULL));
    CHECK_OK(tether_register(c, "B", (tether_fn)counted_b, NULL, 0, NULL));
    CHECK_OK(tether_register(c, "Other", (tether_fn)make, NULL, 0, NULL));
    uint32_t a = key_of(c, "A");
    tether_ref *out = NULL;
    CHECK_STATUS(TB.replay_leave(), TETHER_E_INVALID_ARGUMENT);  /* nothing entered */
    CHECK_STATUS(TB.replay_enter(NULL, a, 0), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(TB.replay_enter(c, 0xfffffff0u, 0), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.replay_enter(c, a, 2), TETHER_E_INVALID_ARGUMENT);  /* 2 steps: B, A */
    CHECK_OK(TB.replay_enter(c, a, 0));
    made_a = made_b = 0;
    CHECK_STATUS(tether_resolve(c, "A", &out), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"A\" -> \"B\" -> \"A\"");
    CHECK_STATUS(tether_resolve(c, "B", &out), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("through constructors: \"B\" -> \"B\";");  /* from the key asked again */
    CHECK(made_a == 0 && made_b == 0 && out == NULL);
    CHECK_OK(tether_resolve(c, "Other", &out));  /* a key not under construction resolves */
    CHECK_OK(tether_ref_release(out));
    CHECK_OK(TB.replay_enter(c, a, 0));  /* again, from further in: nothing added twice */
    CHECK_STATUS(tether_resolve(c, "A", &out), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"A\" -> \"B\" -> \"A\";");
    CHECK_OK(TB.replay_leave());
    CHECK_STATUS(tether_resolve(c, "A", &out), TETHER_E_CYCLE);  /* the first enter still holds */
    CHECK_OK(TB.replay_leave());
    CHECK_OK(tether_resolve(c, "A", &out));
    CHECK(made_a == 1 && made_b == 1);
    CHECK_OK(tether_ref_release(out));
    CHECK_STATUS(TB.replay_leave(), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(c));
}

/* construct_enter: a binding whose factory of B (reached from A) suspended out of a resolve says
 * the path A -> B it constructs while it goes on; nested resolves see both under construction, with
 * plans on or off (no plan needed), and no factory runs for them. Below a singleton, its own
 * container answers; a key nothing registers is left out; leave undoes it. */
static void test_construct_enter(void) {
    tether_container *c, *child;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param dep_b[] = { TETHER_DEP("B") };
    tether_options singleton = TETHER_OPTIONS_INIT;
    singleton.scope = TETHER_SCOPE_SINGLETON;
    CHECK_OK(tether_register_with(c, "A", (tether_fn)counted_a, dep_b, 1, &singleton, NULL));
    CHECK_OK(tether_register(c, "B", (tether_fn)counted_b, NULL, 0, NULL));
    CHECK_OK(tether_register(c, "Other", (tether_fn)make, NULL, 0, NULL));
    CHECK_OK(tether_container_new(c, &child));
    CHECK_OK(tether_register(child, "B", (tether_fn)make, NULL, 0, NULL));  /* not the singleton's B */
    uint32_t path[] = { key_of(c, "A"), key_of(c, "B") }, unknown[] = { 0xfffffff0u };
    tether_ref *out = NULL;
    CHECK_STATUS(TB.construct_enter(NULL, path, 2), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(TB.construct_enter(c, NULL, 2), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.construct_enter(c, path, 0), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.construct_enter(c, unknown, 1), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.replay_leave(), TETHER_E_INVALID_ARGUMENT);  /* none of those entered anything */
    made_a = made_b = 0;
    CHECK_OK(TB.construct_enter(child, path, 2));  /* from the child: A, then B from A's container */
    CHECK_STATUS(tether_resolve(child, "A", &out), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"A\" -> \"B\" -> \"A\"");
    CHECK_STATUS(tether_resolve(c, "B", &out), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("through constructors: \"B\" -> \"B\";");  /* from the key asked again */
    CHECK_OK(tether_resolve(child, "B", &out));  /* the child's own B is not under construction */
    CHECK_OK(tether_ref_release(out));
    CHECK_OK(tether_resolve(c, "Other", &out));
    CHECK_OK(tether_ref_release(out));
    CHECK(made_a == 0 && made_b == 0);
    CHECK_OK(TB.replay_leave());
    CHECK_OK(tether_resolve(child, "A", &out));
    CHECK(made_a == 1 && made_b == 1);
    CHECK_OK(tether_ref_release(out));
    uint32_t gone[] = { key_of(c, "Nothing"), key_of(c, "Other") };  /* the unregistered key is left out */
    CHECK_OK(TB.construct_enter(c, gone, 2));
    CHECK_STATUS(tether_resolve(c, "Other", &out), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"Other\" -> \"Other\"");
    CHECK_OK(TB.replay_leave());
    CHECK_STATUS(TB.replay_leave(), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_describes_steps_inputs_and_parents);
    RUN(test_parent_is_the_first_asker);
    RUN(test_no_plan_for_graphs_that_are_not_plain);
    RUN(test_cached_steps);
    RUN(test_value_steps);
    RUN(test_container_steps_and_adopt);
    RUN(test_plan_failure);
    RUN(test_argument_inputs);
    RUN(test_statuses);
    RUN(test_version_words);
    RUN(test_replay_enter);
    RUN(test_construct_enter);
    return harness_finish();
}
