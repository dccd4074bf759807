/* Checks inside worker threads: a failed T_CHECK is counted (the harness's CHECK state is the
 * main thread's) and the main thread asserts thread_failures == 0 after joining. */
#ifndef TETHER_TEST_THREAD_CHECK_H
#define TETHER_TEST_THREAD_CHECK_H
#include <stdatomic.h>
#include <stdio.h>
#include "tether.h"

static atomic_int thread_failures;
#define T_CHECK(cond) do { if (!(cond)) { atomic_fetch_add(&thread_failures, 1); \
    fprintf(stderr, "  %s:%d: T_CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #cond, \
            tether_last_error()); } } while (0)

#endif
