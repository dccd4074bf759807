/* tether_container_cache_versions: the words that say when a singleton a binding saw handed out
 * (a TETHER_RESOLVE_HELD answer) may no longer be the one a resolve returns. Which changes move
 * them (and which move no version word), in the container and its parents (test_plan_describe.c
 * checks the statuses). */
#include "harness.h"
#include "fixtures.h"

static size_t sum(const volatile size_t **words, size_t count) {
    size_t total = 0;
    for (size_t i = 0; i < count; i++) total += *words[i];
    return total;
}

/* Whether `held` is the published singleton of `key` from `c`: no handle, no drop. */
static int published(tether_container *c, const char *key, void *held) {
    tether_drop d[2];
    tether_collect io = {d, 2, 9, held, NULL};
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

int main(void) {
    RUN(test_words_move_when_a_singleton_is_let_go_of);
    return harness_finish();
}
