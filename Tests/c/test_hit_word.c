/* tether_container_hit_word and tether_collect.token: a binding that serves a singleton itself
 * compares one word with one token, and the library decides what moves the word: every change in
 * the container or up its chain that could change the answer (resets from any caller, a parent's
 * reset or registration, a scope change, a trace hook, a free), nothing done in a child, a sibling
 * or an unrelated container. */
#include "harness.h"
#include "fixtures.h"
#include "binding.h"

static const volatile size_t *hit_word(tether_container *c) {
    const volatile size_t *word = NULL;
    CHECK_OK(TB.container_hit_word(c, &word));
    CHECK(word != NULL && *word != 0);
    return word;
}

/* The token of a held resolve of `key` from `c` holding `held`: 0 unless answered as published. */
static size_t token_of(tether_container *c, const char *key, void *held) {
    tether_drop d[2];
    tether_collect io = {d, 2, 9, held, NULL, 77, NULL};
    CHECK_OK(TB.resolve_key_collect(c, key_of(c, key), TETHER_RESOLVE_HELD, &io));
    if (io.out) CHECK_OK(tether_ref_release(io.out));
    CHECK((io.token != 0) == (io.out == NULL && io.instance == held && io.count == 0));
    return io.token;
}

/* A held answer's token is the word's value; what is only made or not held has none. */
static void test_a_held_answer_gives_the_word_it_holds_under(void) {
    kind ks = {"S", 0, 0}, kt = {"T", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(c, "T", &kt, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_node);
    const volatile size_t *word = hit_word(c);

    tether_drop d[2];
    int other;
    tether_collect io = {d, 2, 9, &other, NULL, 77, NULL};
    CHECK_OK(TB.resolve_key_collect(c, key_of(c, "S"), TETHER_RESOLVE_HELD, &io));  /* makes S */
    CHECK(io.token == 0 && io.out != NULL && io.instance != &other);
    node *s = io.instance;
    CHECK_OK(tether_ref_release(io.out));
    CHECK(token_of(c, "S", s) == *word && token_of(c, "S", &other) == 0);
    tether_ref *ref;
    node *t = resolve(c, "T", &ref);
    CHECK(token_of(c, "T", t) == 0 && kt.made == 2);  /* transient: a new one, never published */
    CHECK_OK(tether_ref_release(ref));

    /* without TETHER_RESOLVE_HELD there is no token either */
    tether_collect plain = {d, 2, 9, NULL, NULL, 77, NULL};
    CHECK_OK(TB.resolve_key_collect(c, key_of(c, "S"), 0, &plain));
    CHECK(plain.token == 0 && plain.instance == s);
    CHECK_OK(tether_ref_release(plain.out));

    /* a trace hook set: every resolve reaches the library, no held answer, and the word moved */
    size_t before = *word;
    CHECK_OK(tether_set_trace(c, NULL, NULL));  /* removing none moves it too: a configuration change */
    CHECK(*word > before && token_of(c, "S", s) == *word);
    CHECK_OK(tether_container_free(c));
    CHECK(ks.dropped == 1 && kt.dropped == 2);
}

static void test_resets_from_any_caller_move_the_word_of_the_chain_only(void) {
    kind ks = {"S", 0, 0}, kt = {"T", 0, 0}, ku = {"U", 0, 0};
    tether_container *root = new_container(), *child = new_container_in(root);
    tether_container *grandchild = new_container_in(child), *sibling = new_container_in(root);
    tether_container *other = new_container();
    reg_node(root, "S", &ks, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(child, "T", &kt, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(sibling, "U", &ku, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    reg_node(other, "U", &ku, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    const volatile size_t *w_root = hit_word(root), *w_child = hit_word(child);
    const volatile size_t *w_grand = hit_word(grandchild), *w_sibling = hit_word(sibling);
    CHECK(w_root != w_child && w_child != w_grand && w_root != w_sibling);

    tether_ref *ref;
    node *s = resolve(grandchild, "S", &ref);
    CHECK_OK(tether_ref_release(ref));
    node *t = resolve(grandchild, "T", &ref);
    CHECK_OK(tether_ref_release(ref));
    resolve(sibling, "U", &ref);
    CHECK_OK(tether_ref_release(ref));
    resolve(other, "U", &ref);
    CHECK_OK(tether_ref_release(ref));
    size_t tg = token_of(grandchild, "S", s), tc = token_of(child, "S", s), tr = token_of(root, "S", s);
    CHECK(tg == *w_grand && tc == *w_child && tr == *w_root && token_of(grandchild, "T", t) == tg);

    /* outside the chain, or below it: the sibling's reset and free, another container's reset,
       a registration in the grandchild's sibling branch, resets of scopes with nothing cached */
    CHECK_OK(tether_reset(sibling, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_reset(other, TETHER_SCOPE_SINGLETON));
    CHECK_OK(tether_reset(root, TETHER_SCOPE_WEAK));
    CHECK_OK(tether_reset(grandchild, TETHER_SCOPE_SINGLETON));  /* nothing cached there */
    CHECK(ku.dropped == 2 && *w_root == tr && *w_child == tc && *w_grand == tg);
    kind kv = {"V", 0, 0};
    reg_node(sibling, "V", &kv, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    CHECK_OK(tether_container_free(sibling));
    CHECK(*w_root == tr && *w_child == tc && *w_grand == tg);

    /* a registration in the grandchild moves its word only */
    reg_node(grandchild, "W", &kv, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK(*w_grand > tg && *w_child == tc && *w_root == tr);
    tg = token_of(grandchild, "S", s);
    CHECK(tg == *w_grand);

    /* the child's reset drops T: the child's and grandchild's words move, the root's does not */
    CHECK_OK(tether_reset(child, TETHER_SCOPE_SINGLETON));
    CHECK(kt.dropped == 1 && *w_grand > tg && *w_child > tc && *w_root == tr);
    tg = token_of(grandchild, "S", s);
    CHECK(tg == *w_grand && token_of(grandchild, "T", t) == 0 && kt.made == 2);  /* S still published; T made anew */

    /* the root's reset reaches every word below it */
    tc = *w_child;
    CHECK_OK(tether_reset(root, TETHER_SCOPE_SINGLETON));
    CHECK(ks.dropped == 1 && *w_root > tr && *w_child > tc && *w_grand > tg);
    CHECK(token_of(grandchild, "S", s) == 0);
    s = resolve(grandchild, "S", &ref);
    CHECK_OK(tether_ref_release(ref));
    tg = token_of(grandchild, "S", s);
    CHECK(tg == *w_grand && ks.made == 2);

    /* a child nobody asked about yet: its first held answer's token moves with the root too */
    tether_container *late = new_container_in(root);
    size_t tl = token_of(late, "S", s);
    CHECK(tl != 0 && tl == *hit_word(late));
    CHECK_OK(tether_reset(root, TETHER_SCOPE_SINGLETON));
    CHECK(*hit_word(late) > tl && token_of(late, "S", s) == 0 && ks.dropped == 2);
    CHECK_OK(tether_container_free(late));
    s = resolve(grandchild, "S", &ref);
    CHECK_OK(tether_ref_release(ref));
    tg = token_of(grandchild, "S", s);

    /* a registration in the root (any key: it may hide nothing, the word still moves) */
    tr = *w_root;
    reg_node(root, "X", &kv, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    CHECK(*w_root > tr && *w_grand > tg);
    tg = token_of(grandchild, "S", s);

    /* freeing the grandchild moves its own word (readable after the free) and no other */
    tc = *w_child;
    tr = *w_root;
    CHECK_OK(tether_container_free(grandchild));
    CHECK(*w_grand > tg && *w_child == tc && *w_root == tr);
    /* a freed container's word is no longer moved by its former parents, nor does it matter */
    CHECK_OK(tether_reset(root, TETHER_SCOPE_SINGLETON));
    CHECK(*w_child > tc && *w_root > tr);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
    CHECK_OK(tether_container_free(other));
    CHECK(ks.made == 3 && ks.dropped == 3 && kt.made == 2 && kt.dropped == 2);
}

static void test_statuses(void) {
    const volatile size_t *word = (const volatile size_t *)&word;
    CHECK(TB.container_hit_word(NULL, &word) == TETHER_E_INVALID_HANDLE && word == NULL);
    tether_container *c = new_container();
    CHECK(TB.container_hit_word(c, NULL) == TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("word must not be NULL");
    CHECK_OK(tether_container_free(c));
    CHECK(TB.container_hit_word(c, &word) == TETHER_E_INVALID_HANDLE);
}

int main(void) {
    RUN(test_a_held_answer_gives_the_word_it_holds_under);
    RUN(test_resets_from_any_caller_move_the_word_of_the_chain_only);
    RUN(test_statuses);
    return harness_finish();
}
