/* Messages and pictures stay readable whatever the input (test_error_parts.c has
 * the caps themselves): a validate report quotes keys and paths capped and lists
 * the first 100 problems, DOT shortens long keys as messages quote them (two long
 * keys stay two nodes), a very deep failing chain gives a short message. */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

static void *make0(void) { return malloc(1); }
static void *make1(void *a) { (void)a; return malloc(1); }
static void drop_free(void *instance, void *context) { (void)context; free(instance); }

/* A key of `n` bytes: `fill` repeated, then `tail`. */
static char *long_key(size_t n, char fill, const char *tail) {
    size_t t = strlen(tail);
    char *k = malloc(n + 1);
    memset(k, fill, n - t);
    memcpy(k + n - t, tail, t + 1);
    return k;
}

static void a_huge_key_is_quoted_short(void) {
    enum { MIB = 1 << 20 };
    char *huge = long_key(MIB, 'k', "END");
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param p[] = { TETHER_DEP(huge) };
    CHECK_OK(tether_register(c, "Service", (tether_fn)make1, p, 1, NULL));
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Service", &ref), TETHER_E_NOT_FOUND);
    CHECK(strlen(tether_last_error()) < 400);
    CHECK_ERROR_HAS("kkkk...kkkk");
    CHECK_ERROR_HAS("kkkkEND\" (needed by \"Service\")");
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    CHECK(strlen(tether_last_error()) < 400);
    CHECK_ERROR_HAS("kkkk...kkkk");
    CHECK_ERROR_HAS("kkkkEND\" (needed by \"Service\")");

    /* Two registered long keys differing only at the end: two short nodes. */
    char *other = long_key(MIB, 'k', "END2");
    CHECK_OK(tether_register(c, huge, (tether_fn)make0, NULL, 0, NULL));
    CHECK_OK(tether_register(c, other, (tether_fn)make0, NULL, 0, NULL));
    char *dot = NULL;
    CHECK_OK(tether_export_dot(c, &dot));
    if (dot) {
        CHECK(strlen(dot) < 2000);
        CHECK(strstr(dot, "kkkk...kkkk") != NULL);  /* shortened, with the key's id */
        CHECK(strstr(dot, "kkkkEND#") != NULL);
        CHECK(strstr(dot, "kkkkEND2#") != NULL);
        if (harness_current_failed) fprintf(stderr, "%.3000s\n", dot);
    }
    tether_string_free(dot);
    CHECK_OK(tether_container_free(c));
    free(huge);
    free(other);
}

/* K0 -> K1 -> ... -> K(DEPTH-1) -> "Missing": the path is shortened in the middle. */
static void a_deep_failing_chain_gives_a_short_message(void) {
    enum { DEPTH = 50000 };
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    char key[32], dep[32];
    for (int i = 0; i < DEPTH; i++) {
        snprintf(key, sizeof key, "K%d", i);
        if (i + 1 < DEPTH) snprintf(dep, sizeof dep, "K%d", i + 1); else snprintf(dep, sizeof dep, "Missing");
        tether_param p[] = { TETHER_DEP(dep) };
        tether_registration *r = NULL;
        CHECK_OK(tether_register(c, key, (tether_fn)make1, p, 1, &r));
        CHECK_OK(tether_set_context(r, NULL, drop_free));
    }
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "K0", &ref), TETHER_E_NOT_FOUND);
    CHECK(strlen(tether_last_error()) < 1000);
    CHECK_ERROR_HAS("no registration for \"Missing\" (needed by \"K0\" -> \"K1\" -> ");
    CHECK_ERROR_HAS("\"K2\" -> ... (49994 more) -> \"K49997\"");
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no registration for \"Missing\" (needed by \"K49999\")");
    CHECK_OK(tether_container_free(c));
}

/* Hundreds of problems: the report lists the first 100 and counts the rest. */
static void a_long_validate_report_is_capped(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    char key[32], dep[32];
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "S%d", i);
        snprintf(dep, sizeof dep, "Gone%d", i);
        tether_param p[] = { TETHER_DEP(dep) };
        CHECK_OK(tether_register(c, key, (tether_fn)make1, p, 1, NULL));
    }
    CHECK_STATUS(tether_validate(c), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("tether_validate: 300 problem(s)");
    CHECK_ERROR_HAS("... and 200 more");
    CHECK(strlen(tether_last_error()) < 100 * 80);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(a_huge_key_is_quoted_short);
    RUN(a_deep_failing_chain_gives_a_short_message);
    RUN(a_long_validate_report_is_capped);
    return harness_finish();
}
