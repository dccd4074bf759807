/* tether_plan_describe: plans whose completion callbacks are all declared, described with
 * the callbacks a resolve runs, in its order, and their targets' steps; the plans it declines. */
#include <stdlib.h>
#include "plan_described.h"

static void *make(void) { static int instance; return &instance; }
static void *make_dep(void *a) { return a; }
static tether_status declared(void *instance, void *const *args, size_t count, void *context) {
    (void)instance; (void)args; (void)count; (void)context;
    return TETHER_OK;
}

/* Parent(Child), Child{weak Parent}: the S3 graph. */
static tether_container *s3(tether_registration **parent, tether_registration **child, tether_param_kind back) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param pp[] = { TETHER_DEP("Child") };
    CHECK_OK(tether_register(c, "Parent", (tether_fn)make_dep, pp, 1, parent));
    CHECK_OK(tether_register(c, "Child", (tether_fn)make, NULL, 0, child));
    tether_param targets[] = { { back, "Parent" } };
    CHECK_OK(tether_on_complete_params(*child, declared, targets, 1, NULL));
    return c;
}

static void test_describes_s3_with_its_completion(void) {
    tether_registration *rp, *rc;
    tether_container *c = s3(&rp, &rc, TETHER_PARAM_WEAK);
    described d;
    CHECK_OK(describe(c, "Parent", &d));
    CHECK(d.step_count == 2 && d.completion_count == 1 && d.input_count == 2);
    CHECK(d.steps[0].registration == rc && d.steps[1].registration == rp);
    CHECK(d.steps[1].first_input == 0 && d.inputs[0] == 0);
    CHECK(d.completions[0].step == 0 && d.completions[0].number == 0);
    CHECK(d.completions[0].first_target == 1 && d.completions[0].target_count == 1);
    CHECK(d.inputs[1] == 1);  /* the target is the Parent step */
    /* without completion_count (a caller that cannot run callbacks) there is no plan */
    size_t steps = 99, inputs = 99;
    CHECK_OK(TB.plan_describe(c, key_of(c, "Parent"), d.steps, 8, d.inputs, 16, NULL, 0, &steps, &inputs, NULL));
    CHECK(steps == 0 && inputs == 0);
    CHECK_OK(tether_container_free(c));
}

/* Several callbacks: by step (creation order), then in the order added. */
static void test_completion_order(void) {
    tether_registration *rp, *rc;
    tether_container *c = s3(&rp, &rc, TETHER_PARAM_WEAK);
    tether_param none[] = { TETHER_DEP("Child") };
    CHECK_OK(tether_on_complete_params(rp, declared, none, 1, NULL));
    CHECK_OK(tether_on_complete_params(rp, declared, NULL, 0, NULL));
    CHECK_OK(tether_on_complete_params(rc, declared, NULL, 0, NULL));
    described d;
    CHECK_OK(describe(c, "Parent", &d));
    CHECK(d.completion_count == 4 && d.input_count == 1 + 1 + 0 + 1 + 0);
    CHECK(d.completions[0].step == 0 && d.completions[0].number == 0 && d.completions[0].target_count == 1);
    CHECK(d.completions[1].step == 0 && d.completions[1].number == 1 && d.completions[1].target_count == 0);
    CHECK(d.completions[2].step == 1 && d.completions[2].number == 0 && d.completions[2].target_count == 1);
    CHECK(d.inputs[d.completions[2].first_target] == 0);  /* Parent's DEP target: the Child step */
    CHECK(d.completions[3].step == 1 && d.completions[3].number == 1);
    CHECK_OK(tether_container_free(c));
}

/* A DEP back-edge closes Parent -> Child -> Parent: no plan; the resolve reports the retain cycle. */
static void test_declines_a_strong_cycle(void) {
    tether_registration *rp, *rc;
    tether_container *c = s3(&rp, &rc, TETHER_PARAM_DEP);
    described d;
    CHECK_OK(describe(c, "Parent", &d));
    CHECK(d.step_count == 0 && d.input_count == 0 && d.completion_count == 0);
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Parent", &ref), TETHER_E_RETAIN_CYCLE);
    /* a self-target too */
    tether_param self[] = { TETHER_DEP("Parent") };
    CHECK_OK(tether_register(c, "Self", (tether_fn)make, NULL, 0, &rp));
    self[0].key = "Self";
    CHECK_OK(tether_on_complete_params(rp, declared, self, 1, NULL));
    CHECK_OK(describe(c, "Self", &d));
    CHECK(d.step_count == 0);
    CHECK_STATUS(tether_resolve(c, "Self", &ref), TETHER_E_RETAIN_CYCLE);
    CHECK_OK(tether_container_free(c));
}

/* Declined: a resolver-form callback mixed with a declared strong target (test_plan_resolvers.c
 * has the rest of resolver-form plans), a target outside the build, a transient target. */
static void test_declines_what_it_cannot_describe(void) {
    tether_registration *rp, *rc;
    described d;
    tether_container *c = s3(&rp, &rc, TETHER_PARAM_WEAK);
    tether_param child_target[] = { TETHER_DEP("Child") };
    CHECK_OK(tether_on_complete_params(rp, declared, child_target, 1, NULL));
    CHECK_OK(tether_on_complete(rc, resolver_form, NULL));
    CHECK_OK(describe(c, "Parent", &d));
    CHECK(d.step_count == 0);
    CHECK_OK(tether_container_free(c));

    c = s3(&rp, &rc, TETHER_PARAM_WEAK);
    CHECK_OK(tether_register(c, "Other", (tether_fn)make, NULL, 0, NULL));
    tether_param other[] = { TETHER_WEAK("Other") };
    CHECK_OK(tether_on_complete_params(rp, declared, other, 1, NULL));
    CHECK_OK(describe(c, "Parent", &d));
    CHECK(d.step_count == 0);
    CHECK_OK(tether_container_free(c));

    c = s3(&rp, &rc, TETHER_PARAM_WEAK);
    CHECK_OK(tether_set_scope(rc, TETHER_SCOPE_TRANSIENT));
    tether_param child[] = { TETHER_WEAK("Child") };
    CHECK_OK(tether_on_complete_params(rp, declared, child, 1, NULL));  /* a transient: a new one */
    CHECK_OK(describe(c, "Parent", &d));
    CHECK(d.step_count == 0);
    CHECK_OK(tether_container_free(c));
}

static void test_bad_arguments_and_small_buffers(void) {
    tether_registration *rp, *rc;
    tether_container *c = s3(&rp, &rc, TETHER_PARAM_WEAK);
    described d;
    uint32_t key = key_of(c, "Parent");
    CHECK_STATUS(TB.plan_describe(c, key, d.steps, 8, d.inputs, 16, NULL, 1, &d.step_count, &d.input_count,
                                         &d.completion_count), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.plan_describe(NULL, key, d.steps, 8, d.inputs, 16, d.completions, 8, &d.step_count,
                                         &d.input_count, &d.completion_count), TETHER_E_INVALID_HANDLE);
    tether_status st = TB.plan_describe(c, key, d.steps, 8, d.inputs, 1, d.completions, 0, &d.step_count,
                                               &d.input_count, &d.completion_count);
    CHECK_STATUS(st, TETHER_E_BUFFER_TOO_SMALL);
    CHECK(d.step_count == 2 && d.input_count == 2 && d.completion_count == 1);
    CHECK_ERROR_HAS("*completion_count");
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_describes_s3_with_its_completion);
    RUN(test_completion_order);
    RUN(test_declines_a_strong_cycle);
    RUN(test_declines_what_it_cannot_describe);
    RUN(test_bad_arguments_and_small_buffers);
    return harness_finish();
}
