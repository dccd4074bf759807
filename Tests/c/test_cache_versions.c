/* tether_container_cache_versions: the words that say when a singleton a binding saw handed out
 * (a TETHER_RESOLVE_HELD answer) may no longer be the one a resolve returns, or a weak-scope
 * instance was forgotten. Which changes move them (and which move no version word), in the
 * container and its parents (test_plan_describe.c checks the statuses); and
 * tether_registration_weak_epoch, which says per registration whether its weak instance was
 * forgotten other than by dying. */
#include "harness.h"
#include "fixtures.h"
#include "tether_binding.h"

static size_t sum(const volatile size_t **words, size_t count) {
    size_t total = 0;
    for (size_t i = 0; i < count; i++) total += *words[i];
    return total;
}

/* Whether `held` is the published singleton of `key` from `c`: no handle, no drop. */
static int published(tether_container *c, const char *key, void *held) {
    tether_drop d[2];
    tether_collect io = {d, 2, 9, held, NULL, 0};
    CHECK_OK(tether_resolve_key_collect(c, key_of(c, key), TETHER_RESOLVE_HELD, &io));
    if (io.out) CHECK_OK(tether_ref_release(io.out));
    return io.out == NULL && io.instance == held && io.count == 0;
}

static void test_words_move_when_a_singleton_is_let_go_of(void) {
    kind ks = {"S", 0, 0}, kt = {"T", 0, 0};
    tether_container *parent = new_container(), *child = new_container_in(parent);
    tether_registration *rs = reg_node(parent, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(child, "T", &kt, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    const volatile size_t *words[2] = {0}, *versions[2] = {0};
    size_t count = 0;
    CHECK_OK(tether_container_cache_versions(child, words, 2, &count));
    CHECK(count == 2 && words[0] && words[1] && words[0] != words[1]);
    CHECK_OK(tether_container_versions(child, versions, 2, &count));
    CHECK(count == 2 && versions[0] != words[0] && versions[1] != words[1]);

    /* a resolve from the child confirms the parent's singleton: valid while the sum stays */
    tether_ref *ref;
    node *s = resolve(child, "S", &ref);
    CHECK_OK(tether_ref_release(ref));
    size_t before = sum(words, 2), configuration = sum(versions, 2);
    CHECK(published(child, "S", s) && published(parent, "S", s));
    resolve(child, "T", &ref);
    CHECK_OK(tether_ref_release(ref));
    CHECK(sum(words, 2) == before);  /* making and hitting singletons moves nothing */

    /* a reset with nothing of that scope cached, or of another scope, moves nothing */
    tether_container *empty = new_container_in(parent);
    CHECK_OK(tether_reset(empty, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_reset(child, TETHER_SCOPE_WEAK));
    CHECK(sum(words, 2) == before);

    /* the child's reset drops T: its word moves, the parent's does not, no version word does */
    size_t parent_word = *words[1];
    CHECK_OK(tether_reset(child, TETHER_SCOPE_SINGLETON));
    CHECK(sum(words, 2) > before && *words[1] == parent_word && sum(versions, 2) == configuration);
    CHECK(kt.dropped == 1 && published(child, "S", s));

    /* the parent's reset: the child's sum moves, and S is no longer what a resolve gives */
    before = sum(words, 2);
    CHECK_OK(tether_reset(parent, TETHER_SCOPE_SINGLETON));
    CHECK(sum(words, 2) > before && sum(versions, 2) == configuration && ks.dropped == 1);
    s = resolve(child, "S", &ref);
    CHECK_OK(tether_ref_release(ref));
    CHECK(ks.made == 2 && published(child, "S", s));

    /* configuration changes move the cache words too: a scope change (which drops S), a key
       registered in the child (which now hides the parent's) */
    before = sum(words, 2);
    CHECK_OK(tether_set_scope(rs, TETHER_SCOPE_TRANSIENT));
    CHECK(sum(words, 2) > before && ks.dropped == 2);
    CHECK_OK(tether_set_scope(rs, TETHER_SCOPE_SINGLETON));
    s = resolve(child, "S", &ref);
    CHECK_OK(tether_ref_release(ref));
    before = sum(words, 2);
    kind kc = {"S in the child", 0, 0};
    reg_node(child, "S", &kc, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    CHECK(sum(words, 2) > before && !published(child, "S", s) && published(parent, "S", s));

    /* freeing moves the words (readable after the free: ASan checks it), and they never go back */
    CHECK_OK(tether_container_free(empty));
    before = sum(words, 2);
    CHECK_OK(tether_container_free(child));
    CHECK(sum(words, 2) > before);
    CHECK_OK(tether_container_free(parent));
    CHECK(ks.made == ks.dropped && kt.made == kt.dropped && kc.made == kc.dropped);
}

static uint64_t weak_epoch(tether_registration *r) {
    uint64_t epoch = 0;
    CHECK_OK(tether_registration_weak_epoch(r, &epoch));
    return epoch;
}

static void test_words_move_when_a_cached_weak_instance_is_forgotten(void) {
    kind kw = {"W", 0, 0};
    tether_container *c = new_container();
    tether_registration *rw = reg_node(c, "W", &kw, TETHER_SCOPE_WEAK, NULL, NULL, drop_node);
    const volatile size_t *words[1] = {0};
    size_t count = 0;
    CHECK_OK(tether_container_cache_versions(c, words, 1, &count));
    size_t before = *words[0];
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));  /* nothing cached: nothing moves */
    CHECK(*words[0] == before);

    tether_ref *ref;
    resolve(c, "W", &ref);
    CHECK(*words[0] == before);  /* making one moves nothing */
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));  /* forgotten while alive */
    CHECK(*words[0] == before + 1 && kw.dropped == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK(kw.dropped == 1);

    resolve(c, "W", &ref);
    CHECK_OK(tether_ref_release(ref));  /* dead, but still what the cache published */
    before = *words[0];
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));
    CHECK(*words[0] == before + 1);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_WEAK));  /* forgotten already */
    CHECK(*words[0] == before + 1);
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));  /* another scope */
    CHECK(*words[0] == before + 1);

    /* a scope change forgets it too (and is a configuration change: at least one more) */
    resolve(c, "W", &ref);
    CHECK_OK(tether_ref_release(ref));
    before = *words[0];
    CHECK_OK(tether_set_scope(rw, TETHER_SCOPE_TRANSIENT));
    CHECK(*words[0] >= before + 2);
    CHECK_OK(tether_container_free(c));
    CHECK(kw.made == 3 && kw.dropped == 3);
}

static void test_the_weak_epoch(void) {
    kind kw = {"W", 0, 0}, kv = {"V", 0, 0};
    tether_container *c = new_container();
    tether_registration *rw = reg_node(c, "W", &kw, TETHER_SCOPE_WEAK, NULL, NULL, drop_node);
    tether_registration *rv = reg_node(c, "V", &kv, TETHER_SCOPE_WEAK, NULL, NULL, drop_node);
    uint64_t epoch = 0;
    CHECK_STATUS(tether_registration_weak_epoch(NULL, &epoch), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_registration_weak_epoch(rw, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_registration_weak_epoch((tether_registration *)c, &epoch), TETHER_E_INVALID_HANDLE);

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
    CHECK_STATUS(tether_registration_weak_epoch(rw, &epoch), TETHER_E_INVALID_HANDLE);
    CHECK(weak_epoch(rw2) % 2 == 1);
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(tether_registration_weak_epoch(rv, &epoch), TETHER_E_INVALID_HANDLE);
    CHECK(kw.made == kw.dropped && kv.made == kv.dropped && kw2.made == 0);
}

int main(void) {
    RUN(test_words_move_when_a_singleton_is_let_go_of);
    RUN(test_words_move_when_a_cached_weak_instance_is_forgotten);
    RUN(test_the_weak_epoch);
    return harness_finish();
}
