/* Providers (TETHER_LAZY / TETHER_WEAK_LAZY slots, tether_make_provider) are as
 * safe as handles: the owner and what a call resolves stay alive for the call,
 * a call whose owner died meanwhile returns NULL, and a stale provider (owner
 * destroyed, provider freed, container freed) returns NULL with
 * TETHER_E_INVALID_HANDLE. A lazy edge resolved while its owner is being made
 * counts for retain-cycle checks like any other. */
#include <unistd.h>
#include "fixtures.h"

static void *make_lazy(kind *k, tether_provider p) { node *o = node_new(k, NULL, NULL); o->lazy = p; return o; }

static tether_param lazy_params[] = {TETHER_CONTEXT, TETHER_LAZY("B")};
static tether_param weak_lazy_params[] = {TETHER_CONTEXT, TETHER_WEAK_LAZY("B")};

static tether_registration *reg_with(tether_container *c, const char *key, tether_fn fn, tether_param *p, size_t n,
                                     kind *k, tether_scope scope) {
    tether_registration *r = NULL;
    CHECK_OK(tether_register(c, key, fn, p, n, &r));
    CHECK_OK(tether_set_scope(r, scope));
    CHECK_OK(tether_set_context(r, k, drop_node));
    return r;
}

/* ---- 1a: the owner dies during the call ---------------------------------- */
static tether_ref *owner_ref;
static kind *owner_kind;
static int owner_dropped_in_factory = -1;
/* B's factory releases the last handle to A, whose provider is resolving B. */
static void *make_b_releasing_owner(kind *k) {
    if (owner_ref) { CHECK_OK(tether_ref_release(owner_ref)); owner_ref = NULL; }
    owner_dropped_in_factory = owner_kind->dropped;
    return node_new(k, NULL, NULL);
}

static void owner_dying_during_the_call(tether_scope b_scope, tether_param *a_params) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0};
    tether_container *c = new_container();
    reg_with(c, "A", (tether_fn)make_lazy, a_params, 2, &A, TETHER_SCOPE_GRAPH);
    tether_param b_params[] = {TETHER_CONTEXT};
    reg_with(c, "B", (tether_fn)make_b_releasing_owner, b_params, 1, &B, b_scope);
    node *a = resolve(c, "A", &owner_ref);
    owner_kind = &A;
    owner_dropped_in_factory = -1;
    tether_provider p = a ? a->lazy : NULL;    /* a is freed by the call: only p is used from here on */
    void *got = p ? p() : (void *)1;
    CHECK(got == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("destroyed during the call");
    CHECK(owner_dropped_in_factory == 0);      /* the owner stayed alive for the call */
    CHECK(A.made == 1 && A.dropped == 1);
    CHECK(B.made == 1);
    CHECK(b_scope == TETHER_SCOPE_SINGLETON ? B.dropped == 0 : B.dropped == 1);
    CHECK(p == NULL || p() == NULL);          /* stale from now on */
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
    CHECK(B.made == B.dropped);
}

static void lazy_provider_whose_owner_dies_during_the_call_returns_null(void) {
    owner_dying_during_the_call(TETHER_SCOPE_GRAPH, lazy_params);
    owner_dying_during_the_call(TETHER_SCOPE_TRANSIENT, lazy_params);
    owner_dying_during_the_call(TETHER_SCOPE_SINGLETON, lazy_params);
}

static void weak_lazy_provider_whose_owner_dies_during_the_call_returns_null(void) {
    owner_dying_during_the_call(TETHER_SCOPE_SINGLETON, weak_lazy_params);
}

/* ---- 1b: called after the owner died --------------------------------------- */
/* A container with A (graph scope, slots `a_params`) and B (singleton); A resolved into *ref: its provider. */
static tether_container *resolve_lazy_owner(kind *A, kind *B, tether_param *a_params, tether_ref **ref) {
    tether_container *c = new_container();
    reg_with(c, "A", (tether_fn)make_lazy, a_params, 2, A, TETHER_SCOPE_GRAPH);
    reg_node(c, "B", B, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_node);
    resolve(c, "A", ref);
    return c;
}

static tether_provider provider_of(tether_ref *ref) {
    node *a = ref ? tether_ref_get(ref) : NULL;
    return a ? a->lazy : NULL;
}

static void stale_slot_provider(tether_param *a_params, int call_first) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0};
    tether_ref *ref;
    tether_container *c = resolve_lazy_owner(&A, &B, a_params, &ref);
    tether_provider p = provider_of(ref);
    if (call_first) CHECK(p && p() != NULL);
    CHECK_OK(tether_ref_release(ref));
    CHECK(A.dropped == 1);
    CHECK(p && p() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("stale provider");
    CHECK_OK(tether_container_free(c));
    CHECK(p && p() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK(B.made == B.dropped && A.made == A.dropped);
}

static void slot_provider_called_after_its_owner_died_is_stale(void) {
    stale_slot_provider(lazy_params, 1);
    stale_slot_provider(lazy_params, 0);
    stale_slot_provider(weak_lazy_params, 1);
    stale_slot_provider(weak_lazy_params, 0);
}

/* A freed provider's address is not handed out again at once: it stays stale
 * while many other providers come and go. */
static void stale_provider_survives_later_providers(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0};
    tether_ref *ref;
    tether_container *c = resolve_lazy_owner(&A, &B, lazy_params, &ref);
    tether_provider stale = provider_of(ref);
    CHECK_OK(tether_ref_release(ref));
    node *a;
    int reused = 0;
    for (int i = 0; i < 500; i++) {
        tether_provider p = NULL;
        CHECK_OK(tether_make_provider(c, "B", &p));
        a = resolve(c, "A", &ref);
        if (p == stale || (a && a->lazy == stale)) reused++;
        CHECK_OK(tether_ref_release(ref));
        CHECK_OK(tether_provider_free(p));
    }
    CHECK(reused == 0);
    CHECK(stale && stale() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
    CHECK(A.made == A.dropped && B.made == B.dropped);
}

/* A root's lazy cells hold it by split references (no count every core writes per lazy slot),
 * given up at tether_container_free: the owners kept past the free keep the closed root alive
 * (their providers answer NULL + "freed", not a freed container), and the last of them lets it go.
 * Under ASan a root let go of early, or kept, fails (make test-c-asan). */
static void slot_providers_kept_past_their_roots_free(tether_param *a_params) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0};
    enum { KEPT = 5 };
    tether_ref *refs[KEPT];
    tether_container *c = resolve_lazy_owner(&A, &B, a_params, &refs[0]);
    for (int i = 1; i < KEPT; i++) CHECK(resolve(c, "A", &refs[i]) != NULL);
    CHECK(provider_of(refs[0]) && provider_of(refs[0])() != NULL);  /* B made through a cell */
    CHECK_OK(tether_container_free(c));
    CHECK(A.made == KEPT && A.dropped == 0 && B.made == 1);
    for (int i = 0; i < KEPT; i++) {
        tether_provider p = provider_of(refs[i]);
        CHECK(p && p() == NULL);
        CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
        CHECK_ERROR_HAS("freed");
        CHECK_OK(tether_ref_release(refs[i]));
        CHECK(A.dropped == i + 1);
    }
    CHECK(B.made == B.dropped);
}

static void lazy_and_weak_lazy_providers_kept_past_their_roots_free(void) {
    slot_providers_kept_past_their_roots_free(lazy_params);
    slot_providers_kept_past_their_roots_free(weak_lazy_params);
}

/* ---- tether_make_provider -------------------------------------------------- */
static void made_provider_after_free_is_stale(void) {
    kind S = {"S", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "S", &S, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    tether_provider p = NULL, q = NULL;
    CHECK_OK(tether_make_provider(c, "S", &p));
    CHECK_OK(tether_make_provider(c, "S", &q));
    CHECK(p && p() != NULL);
    CHECK(S.made == 1);
    CHECK_OK(tether_provider_free(p));
    CHECK(S.dropped == 1);
    CHECK(p() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("stale provider");
    CHECK_STATUS(tether_provider_free(p), TETHER_E_INVALID_HANDLE);

    CHECK(q && q() != NULL);
    CHECK_OK(tether_container_free(c));
    CHECK(q() == NULL);                        /* the container is gone */
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_provider_free(q));
    CHECK(q() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK(S.made == 2 && S.dropped == 2);
}

/* The provider is freed by the factory its own call runs. */
static tether_provider freed_in_call;
static void *make_freeing_provider(kind *k) {
    CHECK_OK(tether_provider_free(freed_in_call));
    return node_new(k, NULL, NULL);
}

static void made_provider_freed_during_its_call_returns_null(void) {
    kind K = {"K", 0, 0};
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    reg_with(c, "K", (tether_fn)make_freeing_provider, p, 1, &K, TETHER_SCOPE_GRAPH);
    CHECK_OK(tether_make_provider(c, "K", &freed_in_call));
    CHECK(freed_in_call() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK(K.made == 1 && K.dropped == 1);
    CHECK(freed_in_call() == NULL);
    CHECK(tether_last_status() == TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
}

/* ---- 3: a lazy edge made while its owner is built ------------------------- */
/* A calls its LAZY(B) provider in its factory; B later calls its LAZY(A)
 * provider: A -> B -> A is a strong cycle, reported, and nothing leaks. */
static void *make_calling_lazy(kind *k, tether_provider p) {
    node *o = make_lazy(k, p);
    o->got = p();
    return o;
}

static void lazy_edge_made_in_a_factory_counts_for_retain_cycles(tether_scope scope) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0};
    tether_container *c = new_container();
    reg_with(c, "A", (tether_fn)make_calling_lazy, lazy_params, 2, &A, scope);
    tether_param b_params[] = {TETHER_CONTEXT, TETHER_LAZY("A")};
    reg_with(c, "B", (tether_fn)make_lazy, b_params, 2, &B, scope);
    tether_ref *ref;
    node *a = resolve(c, "A", &ref);
    node *b = a ? a->got : NULL;
    CHECK(b != NULL && b->magic == ALIVE);
    CHECK(b && b->lazy() == NULL);
    CHECK(tether_last_status() == TETHER_E_RETAIN_CYCLE);
    CHECK_ERROR_HAS("\"B\" -> \"A\"");
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(A.made == 1 && A.dropped == 1);
    CHECK(B.made == 1 && B.dropped == 1);
}

static void lazy_edge_made_in_a_factory_counts_for_retain_cycles_all_scopes(void) {
    lazy_edge_made_in_a_factory_counts_for_retain_cycles(TETHER_SCOPE_SINGLETON);
    lazy_edge_made_in_a_factory_counts_for_retain_cycles(TETHER_SCOPE_WEAK);
}

/* LAZY(own key): a factory calling its own provider is a constructor cycle;
 * a later call from the instance is a retain cycle; nothing leaks. */
static tether_status own_call_status;
static void *make_calling_own_lazy(kind *k, tether_provider self) {
    node *o = make_lazy(k, self);
    o->got = self();
    own_call_status = tether_last_status();
    return o;
}

static void lazy_own_key(tether_scope scope) {
    kind A = {"A", 0, 0};
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT, TETHER_LAZY("A")};
    reg_with(c, "A", (tether_fn)make_calling_own_lazy, p, 2, &A, scope);
    own_call_status = TETHER_OK;
    tether_ref *ref;
    node *a = resolve(c, "A", &ref);
    CHECK(A.made == 1);
    CHECK(a && a->got == NULL);
    CHECK(own_call_status == TETHER_E_CYCLE);
    if (a) {
        CHECK(a->lazy() == NULL);
        CHECK(tether_last_status() == TETHER_E_RETAIN_CYCLE);
    }
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(A.made == 1 && A.dropped == 1);
}

static void lazy_own_key_on_shared_scopes_leaks_nothing(void) {
    lazy_own_key(TETHER_SCOPE_SINGLETON);
    lazy_own_key(TETHER_SCOPE_WEAK);
}

int main(void) {
    alarm(60);
    RUN(lazy_provider_whose_owner_dies_during_the_call_returns_null);
    RUN(weak_lazy_provider_whose_owner_dies_during_the_call_returns_null);
    RUN(slot_provider_called_after_its_owner_died_is_stale);
    RUN(stale_provider_survives_later_providers);
    RUN(lazy_and_weak_lazy_providers_kept_past_their_roots_free);
    RUN(made_provider_after_free_is_stale);
    RUN(made_provider_freed_during_its_call_returns_null);
    RUN(lazy_edge_made_in_a_factory_counts_for_retain_cycles_all_scopes);
    RUN(lazy_own_key_on_shared_scopes_leaks_nothing);
    return harness_finish();
}
