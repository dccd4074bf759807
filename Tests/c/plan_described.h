/* What tether_plan_describe (and tether_plan_keys) give for one key, in fixed buffers,
 * for the tests of described plans. */
#ifndef PLAN_DESCRIBED_H
#define PLAN_DESCRIBED_H
#include "harness.h"
#include "fixtures.h"
#include "binding.h"

typedef struct described {
    tether_plan_step steps[8];
    int32_t inputs[16];
    tether_plan_completion completions[8];
    size_t step_count, input_count, completion_count;
    tether_plan_key keys[8];
    size_t key_count;
} described;

/* The plan of `key` from `c` (counts start at 99, so a call that leaves them is seen). */
static inline tether_status describe(tether_container *c, const char *key, described *d) {
    d->step_count = d->input_count = d->completion_count = d->key_count = 99;
    return TB.plan_describe(c, key_of(c, key), d->steps, 8, d->inputs, 16, d->completions, 8,
                                &d->step_count, &d->input_count, &d->completion_count);
}

/* `describe`, then the plan's key table (tether_plan_keys). */
static inline tether_status describe_with_keys(tether_container *c, const char *key, described *d) {
    tether_status st = describe(c, key, d);
    return st != TETHER_OK ? st : TB.plan_keys(c, key_of(c, key), d->keys, 8, &d->key_count);
}

/* A resolver-form completion callback that does nothing. */
static inline tether_status resolver_form(tether_resolver *r, void *instance, void *context) {
    (void)r; (void)instance; (void)context;
    return TETHER_OK;
}
#endif
