/* tether_resolve_key_collect: deferred drops (TETHER_DEFER_DROP), the result released by the
 * call, buffers too small (the rest run in place, or with TETHER_RESOLVE_MORE_DROPS kept in order),
 * failures, nesting, and TETHER_RESOLVE_NO_WAIT. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "fixtures.h"
#include "binding.h"

/* Registers `key` made by `fn` (NULL: makeN) like reg_node, in one tether_register_ex call with `flags`. */
static void reg_with(tether_container *c, const char *key, tether_fn fn, kind *k, tether_scope scope, uint32_t flags,
                     const char *dep_a, const char *dep_b) {
    tether_param p[3];
    size_t n = context_and_deps(p, dep_a, dep_b);
    if (!fn) fn = n == 1 ? (tether_fn)make0 : n == 2 ? (tether_fn)make1 : (tether_fn)make2;
    tether_registration_options o = {0};
    o.scope = scope;
    o.flags = flags;
    o.context = k;
    o.drop = drop_node;
    CHECK_OK(TB.register_ex(c, key, fn, p, n, &o, NULL));
}

static void reg(tether_container *c, const char *key, kind *k, tether_scope scope, uint32_t flags,
                const char *dep_a, const char *dep_b) {
    reg_with(c, key, NULL, k, scope, flags, dep_a, dep_b);
}

static uint32_t id(tether_container *c, const char *key) {
    uint32_t k = 0;
    CHECK_OK(tether_intern(c, key, &k));
    return k;
}

/* tether_resolve_key_collect with the io struct spelled out as separate out-parameters. */
static tether_status collect(tether_container *c, uint32_t key, unsigned flags, void **instance, tether_ref **out,
                             tether_drop *drops, size_t capacity, size_t *count) {
    tether_collect io = {drops, capacity, 99, (void *)1, (tether_ref *)1, 0, NULL};
    tether_status st = TB.resolve_key_collect(c, key, flags, &io);
    *instance = io.instance;
    *out = io.out;
    *count = io.count;
    return st;
}

static void run_drops(const tether_drop *d, size_t n) {
    for (size_t i = 0; i < n; i++) d[i].fn(d[i].instance, d[i].context);
}

/* A(B(C)), transient, every drop deferred. */
static tether_container *chain(kind *ka, kind *kb, kind *kc, uint32_t flags_c) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    reg(c, "C", kc, TETHER_SCOPE_TRANSIENT, flags_c, NULL, NULL);
    reg(c, "B", kb, TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, "C", NULL);
    reg(c, "A", ka, TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, "B", NULL);
    return c;
}

static void test_result_released_and_drops_handed_back(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};
    tether_container *c = chain(&ka, &kb, &kc, TETHER_DEFER_DROP);
    tether_drop d[8];
    size_t n = 99;
    void *inst = NULL;
    tether_ref *ref = (tether_ref *)1;
    CHECK_OK(collect(c, id(c, "A"), 0, &inst, &ref, d, 8, &n));
    CHECK(ref == NULL && n == 3);
    node *a = inst;
    CHECK(a && a->magic == ALIVE && a->k == &ka && a->a->k == &kb && a->a->a->k == &kc);
    CHECK(ka.dropped + kb.dropped + kc.dropped == 0);  /* handed back, not called */
    /* dependents first, each with its own destructor and context */
    CHECK(d[0].instance == a && d[1].instance == a->a && d[2].instance == a->a->a);
    CHECK(d[0].fn == drop_node && d[0].context == &ka && d[1].context == &kb && d[2].context == &kc);
    run_drops(d, n);
    CHECK(ka.made == 1 && ka.dropped == 1 && kb.dropped == 1 && kc.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_undeferred_drops_run_in_place(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};
    tether_container *c = chain(&ka, &kb, &kc, 0);
    tether_drop d[8];
    size_t n = 0;
    void *inst = NULL;
    tether_ref *ref = NULL;
    CHECK_OK(collect(c, id(c, "A"), 0, &inst, &ref, d, 8, &n));
    CHECK(ref == NULL && n == 2 && d[0].instance == inst);
    CHECK(kc.dropped == 1 && ka.dropped == 0 && kb.dropped == 0);  /* C is not deferred */
    run_drops(d, n);
    /* a result whose own drop is not deferred comes with a handle */
    CHECK_OK(collect(c, id(c, "C"), 0, &inst, &ref, d, 8, &n));
    CHECK(ref != NULL && n == 0 && tether_ref_get(ref) == inst && kc.dropped == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK(kc.made == 2 && kc.dropped == 2 && ka.dropped == 1 && kb.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_small_buffers_run_the_rest_in_place(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};
    tether_container *c = chain(&ka, &kb, &kc, TETHER_DEFER_DROP);
    tether_drop d[2];
    size_t n = 99;
    void *inst = NULL;
    tether_ref *ref = NULL;
    /* no room: the result keeps a handle and its release runs every drop */
    CHECK_OK(collect(c, id(c, "A"), 0, &inst, &ref, NULL, 0, &n));
    CHECK(ref != NULL && n == 0 && ka.dropped == 0);
    CHECK_OK(tether_ref_release(ref));
    CHECK(ka.dropped == 1 && kb.dropped == 1 && kc.dropped == 1);
    for (size_t capacity = 1; capacity <= 2; capacity++) {
        CHECK_OK(collect(c, id(c, "A"), 0, &inst, &ref, d, capacity, &n));
        CHECK(ref == NULL && n == capacity && d[0].instance == inst);
        CHECK(kc.dropped == (int)capacity + 1);  /* C never fit: run in place */
        CHECK(kb.dropped == 2);  /* B fit only with capacity 2 */
        run_drops(d, n);
    }
    CHECK(ka.made == 3 && ka.dropped == 3 && kb.dropped == 3 && kc.made == 3 && kc.dropped == 3);
    CHECK_OK(tether_container_free(c));
}

static void test_shared_results_keep_handles(void) {
    kind ks = {"S", 0, 0}, kw = {"W", 0, 0};
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    reg(c, "S", &ks, TETHER_SCOPE_SINGLETON, TETHER_DEFER_DROP, NULL, NULL);
    reg(c, "W", &kw, TETHER_SCOPE_WEAK, TETHER_DEFER_DROP, NULL, NULL);
    tether_drop d[4];
    size_t n = 0;
    void *first = NULL, *again = NULL;
    tether_ref *r1 = NULL, *r2 = NULL;
    CHECK_OK(collect(c, id(c, "S"), 0, &first, &r1, d, 4, &n));
    CHECK(r1 != NULL && n == 0);
    CHECK_OK(collect(c, id(c, "S"), 0, &again, &r2, d, 4, &n));  /* a hit */
    CHECK(r2 != NULL && n == 0 && again == first && ks.made == 1);
    CHECK_OK(tether_ref_release(r1));
    CHECK_OK(tether_ref_release(r2));
    /* a weak-scoped result nobody else holds dies in the call */
    CHECK_OK(collect(c, id(c, "W"), 0, &first, &r1, d, 4, &n));
    CHECK(r1 == NULL && n == 1 && d[0].instance == first && kw.dropped == 0);
    run_drops(d, n);
    CHECK_OK(tether_container_free(c));  /* the singleton's drop runs in place */
    CHECK(ks.dropped == 1 && kw.made == 1 && kw.dropped == 1);
}

static void *make_fails(kind *k) {
    k->made++;
    tether_set_error("no");
    return NULL;
}

static void test_failures_hand_back_what_they_made(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kx = {"X", 0, 0};
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    reg(c, "B", &kb, TETHER_SCOPE_GRAPH, TETHER_DEFER_DROP, NULL, NULL);
    reg(c, "A", &ka, TETHER_SCOPE_GRAPH, TETHER_DEFER_DROP, "B", "X");
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration_options o = {0};
    o.context = &kx;
    CHECK_OK(TB.register_ex(c, "X", (tether_fn)make_fails, p, 1, &o, NULL));
    tether_drop d[4];
    size_t n = 0;
    void *inst = (void *)1;
    tether_ref *ref = (tether_ref *)1;
    CHECK_STATUS(collect(c, id(c, "A"), 0, &inst, &ref, d, 4, &n), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("\"X\" returned NULL: no");
    CHECK(inst == NULL && ref == NULL && n == 1 && kb.made == 1 && kb.dropped == 0 && ka.made == 0);
    run_drops(d, n);
    CHECK(kb.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

static void test_bad_arguments(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};
    tether_container *c = chain(&ka, &kb, &kc, TETHER_DEFER_DROP);
    uint32_t a = id(c, "A");
    tether_drop d[4];
    size_t n = 7;
    void *inst = (void *)1;
    tether_ref *ref = (tether_ref *)1;
    CHECK_STATUS(TB.resolve_key_collect(c, a, 0, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("io is NULL");
    CHECK_STATUS(collect(c, a, 0, &inst, &ref, NULL, 4, &n), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("io->drops is NULL");
    CHECK_STATUS(collect(c, a, 0, &inst, &ref, d, (size_t)-1, &n), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(collect(c, a, 8, &inst, &ref, d, 4, &n), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("flags 0x8");
    CHECK_STATUS(collect(NULL, a, 0, &inst, &ref, d, 4, &n), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(collect(c, 999999, 0, &inst, &ref, d, 4, &n), TETHER_E_INVALID_ARGUMENT);
    CHECK(inst == NULL && ref == NULL && n == 0 && ka.made == 0);
    tether_registration_options o = {0};
    o.flags = 0x10;  /* no such flag */
    tether_param p[] = {TETHER_CONTEXT};
    CHECK_STATUS(TB.register_ex(c, "Z", (tether_fn)make0, p, 1, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("options.flags 0x10");
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(collect(c, a, 0, &inst, &ref, d, 4, &n), TETHER_E_INVALID_HANDLE);
}

/* Nesting: Outer's factory resolves Inner with a collecting call of its own and with the ordinary calls. */
static tether_container *nest_c;
static kind k_inner = {"Inner", 0, 0};
static size_t inner_collected, outer_seen_inner_drops;

static void *make_outer(kind *k) {
    tether_drop d[4];
    size_t n = 0;
    void *inst = NULL;
    tether_ref *ref = NULL;
    CHECK_OK(collect(nest_c, id(nest_c, "Inner"), 0, &inst, &ref, d, 4, &n));
    inner_collected = n;
    CHECK(ref == NULL && k_inner.dropped == 0);
    run_drops(d, n);
    CHECK_OK(tether_resolve_key(nest_c, id(nest_c, "Inner"), &ref));
    CHECK_OK(tether_ref_release(ref));  /* comes due inside the outer call: the outer buffer takes it */
    outer_seen_inner_drops = (size_t)k_inner.dropped;
    return node_new(k, NULL, NULL);
}

static void test_nested_calls(void) {
    kind ko = {"Outer", 0, 0};
    CHECK_OK(tether_container_new(NULL, &nest_c));
    reg(nest_c, "Inner", &k_inner, TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, NULL, NULL);
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration_options o = {0};
    o.scope = TETHER_SCOPE_TRANSIENT;
    o.flags = TETHER_DEFER_DROP;
    o.context = &ko;
    o.drop = drop_node;
    CHECK_OK(TB.register_ex(nest_c, "Outer", (tether_fn)make_outer, p, 1, &o, NULL));
    tether_drop d[4];
    size_t n = 0;
    void *inst = NULL;
    tether_ref *ref = NULL;
    CHECK_OK(collect(nest_c, id(nest_c, "Outer"), 0, &inst, &ref, d, 4, &n));
    CHECK(inner_collected == 1 && outer_seen_inner_drops == 1);
    CHECK(ref == NULL && n == 2 && d[0].context == &k_inner && d[1].instance == inst);
    run_drops(d, n);
    CHECK(k_inner.made == 2 && k_inner.dropped == 2 && ko.dropped == 1);
    CHECK_OK(tether_container_free(nest_c));
}

/* No-wait: a thread holds Slow's creation cell (its singleton's factory waits for `go`). */
static atomic_int started, go;
static kind k_slow = {"Slow", 0, 0}, k_other = {"Other", 0, 0}, k_t = {"T", 0, 0}, k_nest = {"Nest", 0, 0};

static void *make_slow(kind *k) {
    atomic_store(&started, 1);
    while (!atomic_load(&go)) nanosleep(&(struct timespec){0, 1000000}, NULL);
    return node_new(k, NULL, NULL);
}

static void *hold_lock(void *c) {
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "Slow", &ref));
    CHECK_OK(tether_ref_release(ref));
    return NULL;
}

/* A C factory resolving a singleton the ordinary way: inside a no-wait call, that fails too. */
static tether_container *nowait_c;

static void *make_nest(kind *k) {
    tether_ref *ref = NULL;
    if (tether_resolve(nowait_c, "Slow", &ref) != TETHER_OK) return NULL;
    CHECK_OK(tether_ref_release(ref));
    return node_new(k, NULL, NULL);
}

static void test_no_wait(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    nowait_c = c;
    CHECK_OK(reg_kind_factory(c, "Slow", (tether_fn)make_slow, &k_slow, TETHER_SCOPE_SINGLETON));
    CHECK_OK(reg_kind_factory(c, "Nest", (tether_fn)make_nest, &k_nest, TETHER_SCOPE_TRANSIENT));
    reg(c, "Other", &k_other, TETHER_SCOPE_SINGLETON, TETHER_DEFER_DROP, NULL, NULL);
    reg(c, "T", &k_t, TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, NULL, NULL);
    reg(c, "Top", &k_t, TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, "T", "Other");
    reg(c, "TopSlow", &k_t, TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, "T", "Slow");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, hold_lock, c) == 0);
    while (!atomic_load(&started)) nanosleep(&(struct timespec){0, 1000000}, NULL);

    tether_drop d[4];
    size_t n = 0;
    void *inst = NULL;
    tether_ref *ref = NULL;
    /* creation is per key: Other is created while the other thread creates Slow */
    CHECK_OK(collect(c, id(c, "Top"), TETHER_RESOLVE_NO_WAIT, &inst, &ref, d, 4, &n));
    CHECK(ref == NULL && n == 2 && k_other.made == 1 && k_t.made == 2);
    run_drops(d, n);
    /* what needs Slow fails before any factory runs (TopSlow's T): a retry runs each once */
    CHECK_STATUS(collect(c, id(c, "TopSlow"), TETHER_RESOLVE_NO_WAIT, &inst, &ref, d, 4, &n),
                 TETHER_E_WOULD_BLOCK);
    CHECK_ERROR_HAS("another thread that is creating \"Slow\"");
    CHECK_ERROR_HAS("\"TopSlow\"");
    CHECK(inst == NULL && ref == NULL && n == 0 && k_t.made == 2 && k_slow.made == 0);
    /* needing no shared instance, a no-wait resolve goes through */
    CHECK_OK(collect(c, id(c, "T"), TETHER_RESOLVE_NO_WAIT, &inst, &ref, d, 4, &n));
    CHECK(ref == NULL && n == 1 && k_t.made == 3);
    run_drops(d, n);
    /* a nested ordinary resolve fails the same way; the failure it causes is reported as would-block */
    CHECK_STATUS(collect(c, id(c, "Nest"), TETHER_RESOLVE_NO_WAIT, &inst, &ref, d, 4, &n),
                 TETHER_E_WOULD_BLOCK);
    CHECK_ERROR_HAS("a resolve nested in this one");
    CHECK(n == 0 && k_nest.made == 0 && k_slow.made == 0);
    atomic_store(&go, 1);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_OK(collect(c, id(c, "TopSlow"), TETHER_RESOLVE_NO_WAIT, &inst, &ref, d, 4, &n));
    CHECK(ref == NULL && n == 2 && k_t.made == 5 && k_slow.made == 1);  /* T and TopSlow; Slow is cached */
    run_drops(d, n);
    CHECK_OK(collect(c, id(c, "Nest"), TETHER_RESOLVE_NO_WAIT, &inst, &ref, d, 4, &n));
    CHECK(ref != NULL && n == 0 && k_nest.made == 1);  /* Nest's drop is not deferred */
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(k_t.made == 5 && k_t.dropped == 5 && k_other.dropped == 1 && k_slow.made == 1 && k_slow.dropped == 1);
    CHECK(k_nest.dropped == 1);
}

/* No-wait claims ahead: a no-wait resolve of Top2(Early, Late) takes, before its first factory, the
 * cells of the shared instances its constructor edges reach and holds the weak ones it finds cached, so
 * no other thread claims Late between that look and the build: met only then, the resolve would fail
 * after Early ran, and the caller's retry would run Early again. Early's factory starts a thread
 * resolving Late no-wait (making it holds Late's cell until the first resolve returned). */
static atomic_int late_entered, other_returned, first_done;
static tether_status other_first, other_retry;
static int other_named;  /* a refusal named what it would wait for */
static void *other_inst;
static tether_container *ahead_c;
static tether_ref *release_in_early;  /* a handle Early lets go of first (the weak Late's last holder) */
static kind k_early, k_late, k_top2;
static pthread_t other;
static _Thread_local int on_other;

static void *make_late(kind *k) {
    atomic_store(&late_entered, 1);
    while (on_other && !atomic_load(&first_done)) nanosleep(&(struct timespec){0, 1000000}, NULL);
    return node_new(k, NULL, NULL);
}

/* Resolves Late no-wait, then (refused) the ordinary way, as a binding holding a lock retries. */
static void *resolve_late(void *unused) {
    (void)unused;
    on_other = 1;
    tether_drop d[2];
    tether_ref *ref = NULL;
    size_t n = 0;
    other_first = collect(ahead_c, id(ahead_c, "Late"), TETHER_RESOLVE_NO_WAIT, &other_inst, &ref, d, 2, &n);
    other_named = strstr(tether_last_error(), "another thread that is creating \"Late\"") != NULL;
    atomic_store(&other_returned, 1);
    if (other_first == TETHER_E_WOULD_BLOCK) other_retry = collect(ahead_c, id(ahead_c, "Late"), 0, &other_inst, &ref, d, 2, &n);
    if (ref) CHECK_OK(tether_ref_release(ref));
    return NULL;
}

static void *make_early(kind *k) {
    if (release_in_early) CHECK_OK(tether_ref_release(release_in_early));
    CHECK(pthread_create(&other, NULL, resolve_late, NULL) == 0);
    /* until the other thread is making Late (holding its cell) or has its answer */
    while (!atomic_load(&late_entered) && !atomic_load(&other_returned)) nanosleep(&(struct timespec){0, 1000000}, NULL);
    return node_new(k, NULL, NULL);
}

/* A container with Late in `scope`, Early and Top2(Early, Late); the gates reset. */
static tether_container *ahead_container(tether_scope scope) {
    k_early = (kind){"Early", 0, 0}, k_late = (kind){"Late", 0, 0}, k_top2 = (kind){"Top2", 0, 0};
    atomic_store(&late_entered, 0), atomic_store(&other_returned, 0), atomic_store(&first_done, 0);
    other_first = other_retry = TETHER_E_INVALID_ARGUMENT, other_named = 0, other_inst = NULL, release_in_early = NULL;
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    ahead_c = c;
    CHECK_OK(reg_kind_factory(c, "Late", (tether_fn)make_late, &k_late, scope));
    CHECK_OK(reg_kind_factory(c, "Early", (tether_fn)make_early, &k_early, TETHER_SCOPE_TRANSIENT));
    reg(c, "Top2", &k_top2, TETHER_SCOPE_TRANSIENT, 0, "Early", "Late");  /* Early is built first */
    return c;
}

/* The no-wait resolve of Top2 while the other thread resolves Late; its status, its Top2 in `*top`. */
static tether_status resolve_top2(tether_container *c, node **top, tether_ref **ref) {
    tether_drop d[2];
    size_t n = 0;
    void *inst = NULL;
    tether_status st = collect(c, id(c, "Top2"), TETHER_RESOLVE_NO_WAIT, &inst, ref, d, 2, &n);
    atomic_store(&first_done, 1);
    CHECK(pthread_join(other, NULL) == 0);
    CHECK(n == 0);  /* no drop is deferred */
    *top = inst;
    return st;
}

static void test_no_wait_claims_ahead(void) {
    tether_container *c = ahead_container(TETHER_SCOPE_SINGLETON);
    node *top = NULL;
    tether_ref *ref = NULL;
    CHECK_OK(resolve_top2(c, &top, &ref));
    CHECK(k_early.made == 1 && k_late.made == 1 && k_top2.made == 1);
    /* the other thread was refused before making anything, and its ordinary retry took this one's Late */
    CHECK_STATUS(other_first, TETHER_E_WOULD_BLOCK);
    CHECK(other_named);
    CHECK_OK(other_retry);
    CHECK(top && other_inst == top->b);
    if (ref) CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(k_early.dropped == 1 && k_late.dropped == 1 && k_top2.dropped == 1);
}

/* The weak Late is cached when the resolve looks; Early lets go of its last other holder: held by the
 * resolve since that look, it stays the published one, which the other thread takes without waiting. */
static void test_no_wait_holds_weak_instances_ahead(void) {
    tether_container *c = ahead_container(TETHER_SCOPE_WEAK);
    tether_ref *held = NULL;
    CHECK_OK(tether_resolve(c, "Late", &held));
    void *late = tether_ref_get(held);
    atomic_store(&late_entered, 0);
    release_in_early = held;
    node *top = NULL;
    tether_ref *ref = NULL;
    CHECK_OK(resolve_top2(c, &top, &ref));
    CHECK(k_early.made == 1 && k_late.made == 1 && k_late.dropped == 0 && k_top2.made == 1);
    CHECK_OK(other_first);
    CHECK(top && top->b == late && other_inst == late);
    if (ref) CHECK_OK(tether_ref_release(ref));
    CHECK(k_late.dropped == 1);  /* Top2 was its last holder */
    CHECK_OK(tether_container_free(c));
    CHECK(k_early.dropped == 1 && k_top2.dropped == 1);
}

/* TETHER_RESOLVE_MORE_DROPS: the drops past the buffer go on, in order, in io->more (none run in place). */
static tether_status collect_more(tether_container *c, uint32_t key, tether_drop *drops, size_t capacity,
                                  tether_collect *io) {
    *io = (tether_collect){drops, capacity, 99, (void *)1, (tether_ref *)1, 7, (tether_drop *)1};
    return TB.resolve_key_collect(c, key, TETHER_RESOLVE_MORE_DROPS, io);
}

/* The drops `io` handed back, the buffer's then `more`, copied into `all` before any runs (as a binding does). */
static size_t handed_back(const tether_collect *io, tether_drop *all) {
    size_t in_buffer = io->count < io->capacity ? io->count : io->capacity;
    if (in_buffer) memcpy(all, io->drops, in_buffer * sizeof *all);
    if (io->count > in_buffer) memcpy(all + in_buffer, io->more, (io->count - in_buffer) * sizeof *all);
    return io->count;
}

static void test_more_drops_past_the_buffer_keep_their_order(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};
    tether_container *c = chain(&ka, &kb, &kc, TETHER_DEFER_DROP);
    tether_drop d[3], all[3];
    tether_collect io;
    for (size_t capacity = 0; capacity <= 3; capacity++) {
        CHECK_OK(collect_more(c, id(c, "A"), capacity ? d : NULL, capacity, &io));
        node *a = io.instance;
        CHECK(io.out == NULL && io.count == 3 && io.token == 0 && a && a->k == &ka);
        CHECK(ka.dropped + kb.dropped + kc.dropped == 3 * (int)capacity);  /* none ran in place */
        CHECK(capacity < 3 ? io.more != NULL : io.more == NULL);
        CHECK(handed_back(&io, all) == 3);
        /* dependents first, each with its own destructor and context, across the buffer and `more` */
        CHECK(all[0].instance == a && all[1].instance == a->a && all[2].instance == a->a->a);
        CHECK(all[1].fn == drop_node && all[1].context == &kb && all[2].fn == drop_node && all[2].context == &kc);
        run_drops(all, 3);
    }
    /* without the flag `more` is neither read nor written, and what does not fit runs in place */
    io = (tether_collect){d, 1, 0, NULL, NULL, 0, (tether_drop *)1};
    CHECK_OK(TB.resolve_key_collect(c, id(c, "A"), 0, &io));
    CHECK(io.more == (tether_drop *)1 && io.count == 1 && kc.dropped == 5);
    run_drops(d, 1);
    CHECK(ka.made == 5 && ka.dropped == 5 && kb.dropped == 5 && kc.dropped == 5);
    CHECK_OK(tether_container_free(c));
}

/* The corpus's a_failure_after_a_container_step_past_the_64th_step_publishes_nothing in small: a failed
 * resolve lets go of more than a binding's buffer holds, last made first. */
static void test_more_drops_of_a_failure_past_64(void) {
    enum { N = 70 };
    kind k[N], kx = {"X", 0, 0}, kf = {"F", 0, 0};
    char names[N][8];
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "N%d", i);
        k[i] = (kind){names[i], 0, 0};
        reg(c, names[i], &k[i], TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, i ? names[i - 1] : NULL, NULL);
    }
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration_options o = {0};
    o.context = &kx;
    CHECK_OK(TB.register_ex(c, "X", (tether_fn)make_fails, p, 1, &o, NULL));
    reg(c, "F", &kf, TETHER_SCOPE_GRAPH, TETHER_DEFER_DROP, names[N - 1], "X");
    tether_drop d[64], all[N];
    tether_collect io;
    CHECK_STATUS(collect_more(c, id(c, "F"), d, 64, &io), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("\"X\" returned NULL: no");
    CHECK(io.count == N && io.instance == NULL && io.out == NULL && io.more != NULL && kf.made == 0);
    CHECK(handed_back(&io, all) == N);
    for (int i = 0; i < N; i++) {
        CHECK(k[i].made == 1 && k[i].dropped == 0);
        CHECK(all[i].context == &k[N - 1 - i]);  /* N69 (the dependents) first, N0 last */
    }
    run_drops(all, N);
    for (int i = 0; i < N; i++) CHECK(k[i].dropped == 1);
    CHECK_OK(tether_container_free(c));
}

/* A collecting call nested in a factory hands back its own `more`; the outer call's comes intact after it. */
static tether_container *more_c;
static kind k_more_outer = {"Outer", 0, 0};

static void *make_outer_more(kind *k, node *a) {
    tether_drop d[1], all[3];
    tether_collect io;
    CHECK_OK(collect_more(more_c, id(more_c, "A"), d, 1, &io));
    CHECK(io.count == 3 && io.more != NULL && handed_back(&io, all) == 3);
    run_drops(all, 3);
    return node_new(k, a, NULL);
}

static void test_more_drops_of_nested_calls(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};
    more_c = chain(&ka, &kb, &kc, TETHER_DEFER_DROP);
    reg_with(more_c, "Outer", (tether_fn)make_outer_more, &k_more_outer, TETHER_SCOPE_TRANSIENT, TETHER_DEFER_DROP, "A", NULL);
    tether_drop d[1], all[4];
    tether_collect io;
    CHECK_OK(collect_more(more_c, id(more_c, "Outer"), d, 1, &io));
    node *outer = io.instance;
    CHECK(io.out == NULL && io.count == 4 && outer && ka.dropped == 1 && k_more_outer.dropped == 0);
    CHECK(handed_back(&io, all) == 4);
    CHECK(all[0].instance == outer && all[1].instance == outer->a && all[2].instance == outer->a->a);
    CHECK(all[3].instance == outer->a->a->a && all[3].context == &kc);
    run_drops(all, 4);
    CHECK(k_more_outer.dropped == 1 && ka.made == 2 && ka.dropped == 2 && kb.dropped == 2 && kc.dropped == 2);
    CHECK_OK(tether_container_free(more_c));
}

/* A thread that exits after a call kept drops frees them (test-c-asan's leak check sees it). */
static void *collect_more_and_exit(void *c) {
    tether_drop all[3];
    tether_collect io;
    CHECK_OK(collect_more(c, id(c, "A"), NULL, 0, &io));
    CHECK(io.count == 3 && io.more != NULL && handed_back(&io, all) == 3);
    run_drops(all, 3);
    return NULL;
}

static void test_more_drops_of_an_exited_thread(void) {
    kind ka = {"A", 0, 0}, kb = {"B", 0, 0}, kc = {"C", 0, 0};
    tether_container *c = chain(&ka, &kb, &kc, TETHER_DEFER_DROP);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, collect_more_and_exit, c) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(ka.dropped == 1 && kb.dropped == 1 && kc.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_result_released_and_drops_handed_back);
    RUN(test_undeferred_drops_run_in_place);
    RUN(test_small_buffers_run_the_rest_in_place);
    RUN(test_shared_results_keep_handles);
    RUN(test_failures_hand_back_what_they_made);
    RUN(test_bad_arguments);
    RUN(test_nested_calls);
    RUN(test_no_wait);
    RUN(test_no_wait_claims_ahead);
    RUN(test_no_wait_holds_weak_instances_ahead);
    RUN(test_more_drops_past_the_buffer_keep_their_order);
    RUN(test_more_drops_of_a_failure_past_64);
    RUN(test_more_drops_of_nested_calls);
    RUN(test_more_drops_of_an_exited_thread);
    return harness_finish();
}
