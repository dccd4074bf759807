/* registration_weak_epoch (tether_binding.h): per registration, whether its weak instance was
 * forgotten other than by dying. (The cache words are the core's: CacheWordsTests.swift; a
 * binding reads the hit word, test_hit_word.c.) */
#include "harness.h"
#include "fixtures.h"
#include "binding.h"

static uint64_t weak_epoch(tether_registration *r) {
    uint64_t epoch = 0;
    CHECK_OK(TB.registration_weak_epoch(r, &epoch));
    return epoch;
}

static void test_the_weak_epoch(void) {
    kind kw = {"W", 0, 0}, kv = {"V", 0, 0};
    tether_container *c = new_container();
    tether_registration *rw = reg_node(c, "W", &kw, TETHER_SCOPE_WEAK, NULL, NULL, drop_node);
    tether_registration *rv = reg_node(c, "V", &kv, TETHER_SCOPE_WEAK, NULL, NULL, drop_node);
    uint64_t epoch = 0;
    CHECK_STATUS(TB.registration_weak_epoch(NULL, &epoch), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(TB.registration_weak_epoch(rw, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.registration_weak_epoch((tether_registration *)c, &epoch), TETHER_E_INVALID_HANDLE);

    uint64_t start = weak_epoch(rw);
    CHECK(start % 2 == 1);  /* nothing published yet */
    tether_ref *ref;
    node *w = resolve(c, "W", &ref);
    CHECK(weak_epoch(rw) == start + 1);  /* published: even */
    tether_ref *again;
    CHECK(resolve(c, "W", &again) == w);
    CHECK_OK(tether_ref_release(again));
    CHECK_OK(tether_ref_release(ref));  /* it dies: nothing moves */
    CHECK(kw.dropped == 1 && weak_epoch(rw) == start + 1);
    resolve(c, "W", &ref);  /* a new one into the same (not forgotten) cache */
    CHECK_OK(tether_ref_release(ref));
    CHECK(weak_epoch(rw) == start + 1);

    /* a reset forgets it; the next instance is published into the emptied cache */
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));
    CHECK(weak_epoch(rw) == start + 2);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));  /* nothing to forget */
    CHECK(weak_epoch(rw) == start + 2);
    uint64_t v = weak_epoch(rv);  /* never resolved: untouched by the resets */
    CHECK(v % 2 == 1);
    resolve(c, "W", &ref);
    CHECK_OK(tether_ref_release(ref));
    CHECK(weak_epoch(rw) == start + 3 && weak_epoch(rv) == v);

    /* a scope change forgets it; while the scope is not weak, the epoch stays odd */
    CHECK_OK(tether_set_scope(rw, TETHER_SCOPE_TRANSIENT));
    CHECK(weak_epoch(rw) == start + 4);
    resolve(c, "W", &ref);
    CHECK_OK(tether_ref_release(ref));
    CHECK(weak_epoch(rw) == start + 4);
    CHECK_OK(tether_set_scope(rw, TETHER_SCOPE_WEAK));
    CHECK(weak_epoch(rw) == start + 4);
    resolve(c, "W", &ref);
    CHECK_OK(tether_ref_release(ref));
    CHECK(weak_epoch(rw) == start + 5);

    /* re-registering the key retires the registration: its handle goes stale */
    resolve(c, "V", &ref);
    CHECK_OK(tether_ref_release(ref));
    kind kw2 = {"W again", 0, 0};
    tether_registration *rw2 = reg_node(c, "W", &kw2, TETHER_SCOPE_WEAK, NULL, NULL, drop_node);
    CHECK_STATUS(TB.registration_weak_epoch(rw, &epoch), TETHER_E_INVALID_HANDLE);
    CHECK(weak_epoch(rw2) % 2 == 1);
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(TB.registration_weak_epoch(rv, &epoch), TETHER_E_INVALID_HANDLE);
    CHECK(kw.made == kw.dropped && kv.made == kv.dropped && kw2.made == 0);
}

int main(void) {
    RUN(test_the_weak_epoch);
    return harness_finish();
}
