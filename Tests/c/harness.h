/* Minimal test harness for Tether's C tests: each TEST is a function, a test
 * passes when none of its CHECKs fail, and main() ends with harness_finish(),
 * which prints the closing line "N passed, N failed" and returns the exit code. */
#ifndef TETHER_TEST_HARNESS_H
#define TETHER_TEST_HARNESS_H
#include <stdio.h>
#include <string.h>
#include "tether.h"
#include "binding.h"  /* tests use binding calls (collect, register_ex) too */

static int harness_passed, harness_failed, harness_current_failed;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "  %s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #cond, tether_last_error()); \
    harness_current_failed = 1; } } while (0)

/* Asserts the exact status of a call. */
#define CHECK_STATUS(expr, expected) do { tether_status st_ = (expr); if (st_ != (expected)) { \
    fprintf(stderr, "  %s:%d: %s returned %s, expected %s (last error: %s)\n", __FILE__, __LINE__, #expr, \
            tether_status_name(st_), tether_status_name(expected), tether_last_error()); \
    harness_current_failed = 1; } } while (0)
#define CHECK_OK(expr) CHECK_STATUS(expr, TETHER_OK)

/* Asserts that the thread's last error message contains `fragment`. */
#define CHECK_ERROR_HAS(fragment) do { if (!strstr(tether_last_error(), (fragment))) { \
    fprintf(stderr, "  %s:%d: last error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, tether_last_error(), (fragment)); \
    harness_current_failed = 1; } } while (0)

#define RUN(test) do { harness_current_failed = 0; test(); \
    if (harness_current_failed) { harness_failed++; fprintf(stderr, "FAIL %s\n", #test); } \
    else { harness_passed++; printf("ok   %s\n", #test); } } while (0)

static int harness_finish(void) {
    printf("%d passed, %d failed\n", harness_passed, harness_failed);
    return harness_failed ? 1 : 0;
}
#endif
