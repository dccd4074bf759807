/* tether_plan_describe with resolver-form completion callbacks, tether_plan_keys (the keys their
 * resolver finds in the graph, with the retain-cycle bits) and tether_plan_resolver (what the
 * library's resolver answers where the table does not). */
#include <stdlib.h>
#include "plan_described.h"

static void *make(void) { static int instance; return &instance; }
static void *make_dep(void *a) { return a; }

/* Parent(Child), Child completed by a resolver-form callback: the README's S3. */
static tether_container *s3(void) {
    tether_container *c = NULL;
    tether_registration *child = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param pp[] = { TETHER_DEP("Child") };
    CHECK_OK(tether_register(c, "Parent", (tether_fn)make_dep, pp, 1, NULL));
    CHECK_OK(tether_register(c, "Child", (tether_fn)make, NULL, 0, &child));
    CHECK_OK(tether_on_complete(child, resolver_form, NULL));
    return c;
}

static void test_describes_a_resolver_form_callback_and_its_keys(void) {
    tether_container *c = s3();
    described d;
    CHECK_OK(describe_with_keys(c, "Parent", &d));
    CHECK(d.step_count == 2 && d.completion_count == 1 && d.input_count == 1);
    CHECK(d.completions[0].step == 0 && d.completions[0].target_count == 0);
    CHECK(d.completions[0].flags == TETHER_PLAN_COMPLETION_RESOLVER);
    CHECK(d.key_count == 2);
    CHECK(d.keys[0].key == key_of(c, "Child") && d.keys[0].step == 0 && d.keys[0].closes == 1u);
    /* Parent reaches Child: a strong edge from either to Parent closes a cycle */
    CHECK(d.keys[1].key == key_of(c, "Parent") && d.keys[1].step == 1 && d.keys[1].closes == 3u);
    CHECK_OK(tether_container_free(c));
}

static void test_the_library_answers_what_the_table_does_not(void) {
    tether_container *c = s3();
    tether_registration *other = NULL;
    CHECK_OK(tether_register(c, "Other", (tether_fn)make, NULL, 0, &other));
    CHECK_OK(tether_set_scope(other, TETHER_SCOPE_TRANSIENT));
    tether_param args[] = { TETHER_PTR };
    CHECK_OK(tether_register(c, "Args", (tether_fn)make_dep, args, 1, NULL));
    uint32_t parent = key_of(c, "Parent"), child = key_of(c, "Child");
    described d;
    CHECK_OK(describe_with_keys(c, "Parent", &d));
    CHECK(d.step_count == 2 && d.key_count == 2);
    /* Child -> Parent strongly closes Parent -> Child -> Parent: the resolver's message */
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, parent, 0, NULL, 0), TETHER_E_RETAIN_CYCLE);
    CHECK_ERROR_HAS("strong edge \"Child\" -> \"Parent\" would close a retain cycle \"Parent\" -> \"Child\" -> \"Parent\"");
    CHECK_OK(TB.plan_resolver(c, parent, 0, parent, TETHER_PLAN_RESOLVER_WEAK, NULL, 0));
    /* a strong edge to itself is a cycle too */
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, child, 0, NULL, 0), TETHER_E_RETAIN_CYCLE);
    /* outside the table: resolve it from c; unknown or with arguments: the resolver's refusal */
    CHECK_OK(TB.plan_resolver(c, parent, 0, key_of(c, "Other"), 0, NULL, 0));
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, key_of(c, "Nope"), 0, NULL, 0), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"Nope\" (needed by the completion callback of \"Child\")");
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, key_of(c, "Args"), TETHER_PLAN_RESOLVER_WEAK, NULL, 0),
                 TETHER_E_ARGUMENT_MISMATCH);
    CHECK_ERROR_HAS("\"Args\" takes runtime arguments");
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, child, TETHER_PLAN_RESOLVER_CLOSED | TETHER_PLAN_RESOLVER_WEAK, NULL, 0),
                 TETHER_E_WRONG_CONTEXT);
    CHECK_ERROR_HAS("only valid during the callback that received it");
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, child, TETHER_PLAN_RESOLVER_OTHER_THREAD, NULL, 0), TETHER_E_WRONG_CONTEXT);
    CHECK_ERROR_HAS("that received it, on its thread");
    /* bad calls */
    size_t bad[] = { 0, 7 };
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, parent, 0, bad, 1), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_resolver(c, parent, 1, parent, 0, NULL, 0), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, parent, 8, NULL, 0), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_resolver(c, parent, 0, parent, 0, NULL, 1), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_resolver(NULL, parent, 0, parent, 0, NULL, 0), TETHER_E_INVALID_HANDLE);
    size_t count = 9;
    CHECK_STATUS(TB.plan_keys(c, parent, NULL, 0, &count), TETHER_E_BUFFER_TOO_SMALL);
    CHECK(count == 2);
    CHECK_STATUS(TB.plan_keys(c, parent, NULL, 1, &count), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_keys(c, parent, d.keys, 8, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(c));
}

/* Late strong edges: after A's callback took A -> Top strongly (no cycle, as the table says),
 * B -> Root closes B -> Root -> A -> Top -> B: the table alone would allow it, the library refuses it. */
static void test_late_edges_reach_the_library(void) {
    tether_container *c = NULL;
    tether_registration *ra = NULL, *rb = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(tether_register(c, "A", (tether_fn)make, NULL, 0, &ra));
    tether_param pa[] = { TETHER_DEP("A") };
    CHECK_OK(tether_register(c, "Root", (tether_fn)make_dep, pa, 1, NULL));
    tether_param pb[] = { TETHER_DEP("B") };
    CHECK_OK(tether_register(c, "B", (tether_fn)make, NULL, 0, &rb));
    CHECK_OK(tether_register(c, "Top", (tether_fn)make_dep, pb, 1, NULL));
    tether_param both[] = { TETHER_DEP("Root"), TETHER_DEP("Top") };
    CHECK_OK(tether_register(c, "Both", (tether_fn)make_dep, both, 2, NULL));
    CHECK_OK(tether_on_complete(ra, resolver_form, NULL));
    CHECK_OK(tether_on_complete(rb, resolver_form, NULL));
    uint32_t key = key_of(c, "Both");
    described d;
    CHECK_OK(describe_with_keys(c, "Both", &d));
    /* steps: A 0, Root 1, B 2, Top 3, Both 4; completions: A's (0), B's (1) */
    CHECK(d.step_count == 5 && d.completion_count == 2 && d.key_count == 5);
    CHECK(d.keys[1].key == key_of(c, "Root") && (d.keys[1].closes & (1u << 2)) == 0);
    /* A gets Top (no cycle), then B gets Root: B -> Root -> A -> Top -> B */
    CHECK_OK(TB.plan_resolver(c, key, 0, key_of(c, "Top"), 0, NULL, 0));
    size_t late[] = { 0, 3 };
    CHECK_STATUS(TB.plan_resolver(c, key, 1, key_of(c, "Root"), 0, late, 1), TETHER_E_RETAIN_CYCLE);
    CHECK_ERROR_HAS("\"Root\" -> \"A\" -> \"Top\" -> \"B\" -> \"Root\"");
    CHECK_OK(TB.plan_resolver(c, key, 1, key_of(c, "Root"), 0, NULL, 0));
    CHECK_OK(tether_container_free(c));
}

/* Declined: another key whose resolver-made instance could share the graph's (graph scope), and
 * one with a completion callback or a lazy slot of its own. */
static void test_declines_what_the_binding_could_not_answer(void) {
    described d;
    tether_container *c = s3();
    CHECK_OK(tether_register(c, "Other", (tether_fn)make, NULL, 0, NULL));  /* graph scope */
    CHECK_OK(describe_with_keys(c, "Parent", &d));
    CHECK(d.step_count == 0 && d.key_count == 0);
    CHECK_OK(tether_container_free(c));

    c = s3();
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, "Other", (tether_fn)make, NULL, 0, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));
    CHECK_OK(tether_on_complete(r, resolver_form, NULL));
    CHECK_OK(describe_with_keys(c, "Parent", &d));
    CHECK(d.step_count == 0);
    CHECK_OK(tether_container_free(c));

    c = s3();
    tether_param lazy[] = { TETHER_LAZY("Child") };
    CHECK_OK(tether_register(c, "Lazy", (tether_fn)make_dep, lazy, 1, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
    CHECK_OK(describe_with_keys(c, "Parent", &d));
    CHECK(d.step_count == 0);
    CHECK_OK(tether_container_free(c));

    /* a transient over a singleton: a singleton a callback created would outlive a failing
     * replay (the library's resolve destroys it with the rest): declined */
    c = s3();
    CHECK_OK(tether_register(c, "S", (tether_fn)make, NULL, 0, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_SINGLETON));
    tether_param s[] = { TETHER_DEP("S") };
    CHECK_OK(tether_register(c, "T", (tether_fn)make_dep, s, 1, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));
    CHECK_OK(describe_with_keys(c, "Parent", &d));
    CHECK(d.step_count == 0);
    CHECK_OK(tether_container_free(c));

    /* a transient over a transient is answered by a resolve: described */
    c = s3();
    CHECK_OK(tether_register(c, "U", (tether_fn)make, NULL, 0, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));
    tether_param u[] = { TETHER_DEP("U") };
    CHECK_OK(tether_register(c, "T", (tether_fn)make_dep, u, 1, &r));
    CHECK_OK(tether_set_scope(r, TETHER_SCOPE_TRANSIENT));
    CHECK_OK(describe_with_keys(c, "Parent", &d));
    CHECK(d.step_count == 2u);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_describes_a_resolver_form_callback_and_its_keys);
    RUN(test_the_library_answers_what_the_table_does_not);
    RUN(test_late_edges_reach_the_library);
    RUN(test_declines_what_the_binding_could_not_answer);
    return harness_finish();
}
