/* A first resolve over a singleton or weak key not cached yet: the plan compiled for that state of
 * the caches creates it (its cell claimed before any factory). Each scenario must log the factory and
 * destructor calls it expects in that order (the build's, which ran beside it as an oracle until
 * branch noplansoff), share the same instances and cache nothing after a failure. Threads racing the
 * first resolve create the singleton once. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "fixtures.h"

static char run_log[2048];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int fail_f;

static void note(char sign, const char *tag) {
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(run_log);
    if (n + strlen(tag) + 3 < sizeof run_log) { run_log[n] = sign; strcpy(run_log + n + 1, tag); strcat(run_log, " "); }
    pthread_mutex_unlock(&log_lock);
}
static void *logged0(kind *k) { note('+', k->tag); return node_new(k, NULL, NULL); }
static void *logged1(kind *k, node *a) { note('+', k->tag); return node_new(k, a, NULL); }
static void *logged2(kind *k, node *a, node *b) { note('+', k->tag); return node_new(k, a, b); }
static void *failing1(kind *k, node *a) {
    if (fail_f) { tether_set_error("no F"); return NULL; }
    return logged1(k, a);
}
static void drop_logged(void *instance, void *context) {
    node *o = instance;
    CHECK(o->k == context && o->magic == ALIVE);
    for (int i = 0; i < 2; i++) if (o->dep[i]) CHECK(o->dep[i]->magic == ALIVE);   /* dependents first */
    note('-', o->k->tag);
    o->magic = DEAD;
    o->k->dropped++;
    free(o);
}

static void reg(tether_container *c, const char *key, kind *k, tether_scope scope, tether_fn f, const char *a, const char *b) {
    tether_param p[3];
    size_t n = context_and_deps(p, a, b);
    if (!f) f = n == 1 ? (tether_fn)logged0 : n == 2 ? (tether_fn)logged1 : (tether_fn)logged2;
    reg_with_context(c, key, f, p, n, scope, k, drop_logged);
}

/* Root(transient) -> S(singleton) -> {G(graph), W(weak) -> G}, Root -> B(graph) -> {S, W}. */
static kind k_root = {"Root", 0, 0}, k_s = {"S", 0, 0}, k_w = {"W", 0, 0}, k_g = {"G", 0, 0}, k_b = {"B", 0, 0};

static void graph_over_uncached_shared(char *out, size_t size) {
    k_root.made = k_s.made = k_w.made = k_g.made = k_b.made = 0;
    k_root.dropped = k_s.dropped = k_w.dropped = k_g.dropped = k_b.dropped = 0;
    run_log[0] = 0;
    tether_container *c = new_container();
    reg(c, "Root", &k_root, TETHER_SCOPE_TRANSIENT, NULL, "S", "B");
    reg(c, "S", &k_s, TETHER_SCOPE_SINGLETON, NULL, "G", "W");
    reg(c, "W", &k_w, TETHER_SCOPE_WEAK, NULL, "G", NULL);
    reg(c, "G", &k_g, TETHER_SCOPE_GRAPH, NULL, NULL, NULL);
    reg(c, "B", &k_b, TETHER_SCOPE_GRAPH, NULL, "S", "W");
    tether_ref *first = NULL, *second = NULL;
    node *r1 = resolve(c, "Root", &first);
    node *r2 = resolve(c, "Root", &second);
    CHECK(r1 && r2 && r1->a == r2->a && r1->b->b == r1->a->b && r2->b->b == r1->a->b);   /* one S, one W */
    CHECK(k_s.made == 1 && k_w.made == 1 && k_g.made == 1 && k_b.made == 2 && k_root.made == 2);
    CHECK_OK(tether_ref_release(first));
    CHECK_OK(tether_ref_release(second));
    CHECK(k_w.dropped == 0);   /* S holds it */
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(k_s.dropped == 1 && k_w.dropped == 1);   /* both uncached again: the next resolve creates both */
    tether_ref *third = NULL;
    node *r3 = resolve(c, "Root", &third);
    CHECK(r3 && k_s.made == 2 && k_w.made == 2);
    CHECK_OK(tether_ref_release(third));
    CHECK_OK(tether_container_free(c));
    CHECK(k_s.made == k_s.dropped && k_w.made == k_w.dropped && k_g.made == k_g.dropped && k_root.made == k_root.dropped);
    snprintf(out, size, "%s", run_log);
}

/* Runs `scenario`: it must log `expected` (factories `+`, callbacks `*`, destructors `-`). */
static void expect_log(void (*scenario)(char *, size_t), const char *expected) {
    char planned[2048];
    scenario(planned, sizeof planned);
    CHECK(strcmp(planned, expected) == 0);
    if (strcmp(planned, expected) != 0) fprintf(stderr, "  planned:  %s\n  expected: %s\n", planned, expected);
}

static void a_first_resolve_creates_as_the_build_does(void) {
    /* The second Root takes the cached S and the live W (only a new B); a release lets go of Root then B (S holds
     * G and W); the reset drops S, then what only it held; the third resolve creates all again. */
    expect_log(graph_over_uncached_shared, "+G +W +S +B +Root +B +Root -Root -B -Root -B -S -W -G "
                                          "+G +W +S +B +Root -Root -B -S -W -G ");
}

/* Root -> {D(graph), S(singleton) -> {D, E(singleton), F(fails while fail_f)}}: the failed
 * resolve destroys what it made (E, a new singleton, too), last first, and caches nothing. */
static kind k_d = {"D", 0, 0}, k_e = {"E", 0, 0}, k_f = {"F", 0, 0};

static void failure_mid_creation(char *out, size_t size) {
    k_root.made = k_s.made = k_d.made = k_e.made = k_f.made = 0;
    k_root.dropped = k_s.dropped = k_d.dropped = k_e.dropped = k_f.dropped = 0;
    run_log[0] = 0;
    tether_container *c = new_container();
    tether_param sp[] = {TETHER_CONTEXT, TETHER_DEP("D"), TETHER_DEP("E"), TETHER_DEP("F")};
    tether_registration_options o = {0};
    o.scope = TETHER_SCOPE_SINGLETON;
    o.context = &k_s;
    o.drop = drop_logged;
    reg(c, "Root", &k_root, TETHER_SCOPE_TRANSIENT, NULL, "D", "S");
    CHECK_OK(TB.register_ex(c, "S", (tether_fn)logged2, sp, 4, &o, NULL));   /* its third slot unread */
    reg(c, "D", &k_d, TETHER_SCOPE_GRAPH, NULL, NULL, NULL);
    reg(c, "E", &k_e, TETHER_SCOPE_SINGLETON, NULL, NULL, NULL);
    reg(c, "F", &k_f, TETHER_SCOPE_GRAPH, (tether_fn)failing1, "D", NULL);
    fail_f = 1;
    tether_ref *ref = NULL;
    CHECK_STATUS(tether_resolve(c, "Root", &ref), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("no F (while resolving \"Root\" -> \"S\" -> \"F\")");
    CHECK(ref == NULL && k_d.made == 1 && k_d.dropped == 1 && k_e.made == 1 && k_e.dropped == 1 && k_s.made == 0);
    fail_f = 0;
    node *root = resolve(c, "Root", &ref);
    CHECK(root && k_s.made == 1 && k_e.made == 2 && root->b->a == root->a);   /* the cells were let go of: made now */
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_container_free(c));
    CHECK(k_s.made == k_s.dropped && k_e.made == k_e.dropped && k_d.made == k_d.dropped);
    snprintf(out, size, "%s", run_log);
}

static void a_failure_mid_creation_caches_nothing(void) {
    /* F fails: E and D let go of, last made first; then all made, Root released (S holds D, E, F) and the
     * container's close drops S, then its graph (F, then D), then the singleton E, which S no longer holds. */
    expect_log(failure_mid_creation, "+D +E -E -D +D +E +F +S +Root -Root -S -F -D -E ");
}

/* Svc(graph) resolves Svc#a(singleton) from its factory and holds it; Svc#a's completion callback
 * asks its resolver for Svc, under construction then (CYCLE). resolve_all(Svc) lists both: its
 * plan creates Svc#a after Svc, so the run takes the instance Svc's nested resolve published
 * under the plan's claim. That one completed in the nested resolve: its callback must not run
 * again (it would take Svc1 strongly, a cycle through the handle Svc1 holds: neither ever dropped). */
static kind k_svc = {"Svc", 0, 0}, k_svc_a = {"Svc#a", 0, 0};
static tether_container *nested_c;
static int svc_a_completions;
static tether_status svc_a_first_status;
typedef struct { node n; tether_ref *held; } holder;

static void *make_holder(kind *k) {
    holder *h = xcalloc(sizeof *h);
    h->n.magic = ALIVE; h->n.k = k;
    k->made++;
    note('+', k->tag);
    CHECK_OK(tether_resolve(nested_c, "Svc#a", &h->held));
    h->n.a = h->held ? tether_ref_get(h->held) : NULL;
    return h;
}
static void drop_holder(void *instance, void *context) {
    holder *h = instance;
    CHECK(h->n.k == context);
    note('-', h->n.k->tag);
    if (h->held) CHECK_OK(tether_ref_release(h->held));
    h->n.k->dropped++;
    free(h);
}
static tether_status complete_svc_a(tether_resolver *r, void *instance, void *context) {
    (void)context;
    node *o = instance;
    void *svc = NULL;
    tether_status status = tether_resolver_get(r, "Svc", &svc);
    if (svc_a_completions++ == 0) svc_a_first_status = status;
    note('*', o->k->tag);
    if (status == TETHER_OK) o->got = svc;
    return TETHER_OK;
}

static void singleton_nested_under_the_claim(char *out, size_t size) {
    k_svc.made = k_svc.dropped = k_svc_a.made = k_svc_a.dropped = 0;
    svc_a_completions = 0;
    svc_a_first_status = TETHER_OK;
    run_log[0] = 0;
    tether_container *c = nested_c = new_container();
    tether_param hp[] = {TETHER_CONTEXT};
    tether_registration_options o = {0};
    o.context = &k_svc;
    o.drop = drop_holder;
    CHECK_OK(TB.register_ex(c, "Svc", (tether_fn)make_holder, hp, 1, &o, NULL));
    tether_registration *a = NULL;
    o.scope = TETHER_SCOPE_SINGLETON;
    o.context = &k_svc_a;
    o.drop = drop_logged;
    CHECK_OK(TB.register_ex(c, "Svc#a", (tether_fn)logged0, hp, 1, &o, &a));
    CHECK_OK(tether_on_complete(a, complete_svc_a, NULL));
    node *shared = NULL;
    for (int round = 0; round < 2; round++) {
        tether_ref *ref = NULL;
        const tether_list *list = NULL;
        CHECK_OK(tether_resolve_all(c, "Svc", &ref, &list));
        CHECK(list && list->count == 2);
        if (list && list->count == 2) {
            holder *svc = list->items[0];
            if (!shared) shared = list->items[1];
            CHECK(svc->n.k == &k_svc && svc->n.a == shared && list->items[1] == shared);
        }
        CHECK_OK(tether_ref_release(ref));
        CHECK(k_svc.dropped == round + 1);   /* graph-scoped: nothing holds it after the list */
    }
    CHECK(svc_a_completions == 1 && svc_a_first_status == TETHER_E_CYCLE);
    CHECK_OK(tether_container_free(c));
    CHECK(k_svc.made == 2 && k_svc.dropped == 2 && k_svc_a.made == 1 && k_svc_a.dropped == 1);
    snprintf(out, size, "%s", run_log);
}

static void a_singleton_published_under_the_plans_claim_completes_once(void) {
    expect_log(singleton_nested_under_the_claim, "+Svc +Svc#a *Svc#a -Svc +Svc -Svc -Svc#a ");
}

/* Threads racing the first resolve of Root -> {S(singleton, slow) -> Q(singleton), B}. */
enum { RACERS = 4 };
static tether_container *race_c;
static pthread_barrier_t race_start;
static kind k_q = {"Q", 0, 0}, k_slow = {"S", 0, 0};
static atomic_int slow_made;
static node *raced[RACERS];
static tether_ref *raced_refs[RACERS];

static void *make_slow(kind *k, node *q) {
    atomic_fetch_add(&slow_made, 1);
    for (volatile int i = 0; i < 200000; i++) {}
    return node_new(k, q, NULL);
}
/* B and Root: made on every thread, so counted by no shared kind. */
static void *make_racer(void *context, node *a, node *b) {
    (void)context;
    node *o = xcalloc(sizeof *o);
    o->magic = ALIVE; o->a = a; o->b = b;
    return o;
}
static void *make_racer0(void *context) { return make_racer(context, NULL, NULL); }
static void drop_racer(void *instance, void *context) { (void)context; free(instance); }
static void *race(void *arg) {
    intptr_t i = (intptr_t)arg;
    pthread_barrier_wait(&race_start);
    raced[i] = NULL;
    if (tether_resolve(race_c, "Root", &raced_refs[i]) == TETHER_OK) raced[i] = tether_ref_get(raced_refs[i]);
    return NULL;
}

static void threads_racing_the_first_resolve_create_it_once(void) {
    for (int round = 0; round < 20; round++) {
        atomic_store(&slow_made, 0);
        race_c = new_container();
        tether_param sp[] = {TETHER_CONTEXT, TETHER_DEP("Q")}, rp[] = {TETHER_CONTEXT, TETHER_DEP("S"), TETHER_DEP("B")};
        tether_param qp[] = {TETHER_CONTEXT};
        tether_registration_options o = {0};
        o.scope = TETHER_SCOPE_SINGLETON;
        o.context = &k_slow;
        o.drop = drop_racer;
        CHECK_OK(TB.register_ex(race_c, "S", (tether_fn)make_slow, sp, 2, &o, NULL));
        o.context = &k_q;
        CHECK_OK(TB.register_ex(race_c, "Q", (tether_fn)make0, qp, 1, &o, NULL));
        o.scope = TETHER_SCOPE_GRAPH;
        o.context = NULL;
        CHECK_OK(TB.register_ex(race_c, "B", (tether_fn)make_racer0, qp, 1, &o, NULL));
        CHECK_OK(TB.register_ex(race_c, "Root", (tether_fn)make_racer, rp, 3, &o, NULL));
        pthread_t t[RACERS];
        CHECK(pthread_barrier_init(&race_start, NULL, RACERS) == 0);
        for (intptr_t i = 0; i < RACERS; i++) CHECK(pthread_create(&t[i], NULL, race, (void *)i) == 0);
        for (int i = 0; i < RACERS; i++) CHECK(pthread_join(t[i], NULL) == 0);
        pthread_barrier_destroy(&race_start);
        CHECK(atomic_load(&slow_made) == 1);
        for (int i = 0; i < RACERS; i++) CHECK(raced[i] != NULL && raced[i]->a == raced[0]->a && raced[i]->a->a == raced[0]->a->a);
        for (int i = 0; i < RACERS; i++) {
            if (raced_refs[i]) CHECK_OK(tether_ref_release(raced_refs[i]));
            raced_refs[i] = NULL;
        }
        CHECK_OK(tether_container_free(race_c));
    }
}

/* A diamond of singletons, Root(transient) -> {B -> D, C -> {X(transient), D}}: first resolves racing from
 * 2 to 4 threads, of Root, B and C (so one thread's plan finds keys another published between its pick and
 * its claims: taken cached, what is under them not made). Each singleton's factory runs exactly once, every
 * thread sees the same instances, and every destructor runs once. */
enum { DIA_B, DIA_C, DIA_D, DIA_X, DIA_ROOT, DIA_KINDS };
static int dia_tag[DIA_KINDS] = {DIA_B, DIA_C, DIA_D, DIA_X, DIA_ROOT};
static atomic_int dia_made[DIA_KINDS], dia_dropped[DIA_KINDS];
static node *dia_new(int *tag, node *a, node *b) {
    atomic_fetch_add(&dia_made[*tag], 1);
    sched_yield();
    node *o = xcalloc(sizeof *o);
    o->magic = ALIVE; o->a = a; o->b = b;
    return o;
}
static void *dia0(int *tag) { return dia_new(tag, NULL, NULL); }
static void *dia1(int *tag, node *a) { return dia_new(tag, a, NULL); }
static void *dia2(int *tag, node *a, node *b) { return dia_new(tag, a, b); }
static void dia_drop(void *instance, void *context) {
    atomic_fetch_add(&dia_dropped[*(int *)context], 1);
    free(instance);
}
static void dia_reg(tether_container *c, const char *key, int kind, tether_scope scope, const char *a, const char *b) {
    tether_param p[3];
    size_t n = context_and_deps(p, a, b);
    reg_with_context(c, key, n == 1 ? (tether_fn)dia0 : n == 2 ? (tether_fn)dia1 : (tether_fn)dia2, p, n, scope,
                     &dia_tag[kind], dia_drop);
}
static const char *const dia_keys[] = {"Root", "B", "C", "Root"};
static int dia_threads;
static void *dia_race(void *arg) {
    intptr_t i = (intptr_t)arg;
    pthread_barrier_wait(&race_start);
    raced[i] = NULL;
    if (tether_resolve(race_c, dia_keys[i], &raced_refs[i]) == TETHER_OK) raced[i] = tether_ref_get(raced_refs[i]);
    return NULL;
}

static void threads_racing_over_a_diamond_of_singletons_make_each_once(void) {
    for (dia_threads = 2; dia_threads <= RACERS; dia_threads++) {
        for (int round = 0; round < 30; round++) {
            for (int k = 0; k < DIA_KINDS; k++) { atomic_store(&dia_made[k], 0); atomic_store(&dia_dropped[k], 0); }
            race_c = new_container();
            dia_reg(race_c, "Root", DIA_ROOT, TETHER_SCOPE_TRANSIENT, "B", "C");
            dia_reg(race_c, "B", DIA_B, TETHER_SCOPE_SINGLETON, "D", NULL);
            dia_reg(race_c, "C", DIA_C, TETHER_SCOPE_SINGLETON, "X", "D");
            dia_reg(race_c, "D", DIA_D, TETHER_SCOPE_SINGLETON, NULL, NULL);
            dia_reg(race_c, "X", DIA_X, TETHER_SCOPE_TRANSIENT, NULL, NULL);
            pthread_t t[RACERS];
            CHECK(pthread_barrier_init(&race_start, NULL, (unsigned)dia_threads) == 0);
            for (intptr_t i = 0; i < dia_threads; i++) CHECK(pthread_create(&t[i], NULL, dia_race, (void *)i) == 0);
            for (int i = 0; i < dia_threads; i++) CHECK(pthread_join(t[i], NULL) == 0);
            pthread_barrier_destroy(&race_start);
            int roots = 0;
            for (int i = 0; i < dia_threads; i++) roots += dia_keys[i][0] == 'R';
            CHECK(atomic_load(&dia_made[DIA_B]) == 1 && atomic_load(&dia_made[DIA_C]) == 1 && atomic_load(&dia_made[DIA_D]) == 1);
            CHECK(atomic_load(&dia_made[DIA_X]) == 1 && atomic_load(&dia_made[DIA_ROOT]) == roots);
            /* The same instances everywhere: B's D is C's, each Root's B and C are the ones resolved. */
            tether_ref *b_ref = NULL, *c_ref = NULL;
            CHECK_OK(tether_resolve(race_c, "B", &b_ref));
            CHECK_OK(tether_resolve(race_c, "C", &c_ref));
            node *b = tether_ref_get(b_ref), *c = tether_ref_get(c_ref);
            CHECK(b->a == c->b);
            for (int i = 0; i < dia_threads; i++) {
                CHECK(raced[i] != NULL);
                if (dia_keys[i][0] == 'R') CHECK(raced[i]->a == b && raced[i]->b == c);
                else CHECK(raced[i] == (dia_keys[i][0] == 'B' ? b : c));
            }
            CHECK_OK(tether_ref_release(b_ref));
            CHECK_OK(tether_ref_release(c_ref));
            for (int i = 0; i < dia_threads; i++) {
                if (raced_refs[i]) CHECK_OK(tether_ref_release(raced_refs[i]));
                raced_refs[i] = NULL;
            }
            CHECK_OK(tether_container_free(race_c));
            for (int k = 0; k < DIA_KINDS; k++) CHECK(atomic_load(&dia_dropped[k]) == atomic_load(&dia_made[k]));
        }
    }
}

/* A factory (A, or list item K0) whose resolve nested in it resolves a shared key its own plan makes later
 * (B, or the list's other item K0#a) and then asks its resolver for it: R(transient) -> {A, B}, A's factory
 * resolves B and gets B; and the list of K0, whose K0's factory resolves and gets K0#a (the fuzz hour's
 * find on 8cb8126: the get built B into the graph, then the plan took the published B over that word, so
 * B's instance kept a reference nobody held and was never dropped). Each scope:
 * one B, the one the nested resolve got is the one R or the list holds, and every destructor runs once. */
static kind k_a = {"A", 0, 0}, k_r = {"R", 0, 0}, k_nb = {"B", 0, 0};
static const char *nested_key;
static tether_ref *nested_ref;
static node *nested_got;
static void *make_resolving_then_getting(kind *k, tether_resolver *r) {
    void *got = NULL;
    CHECK_OK(tether_resolve(nested_c, nested_key, &nested_ref));
    CHECK_OK(tether_resolver_get(r, nested_key, &got));
    CHECK(got == tether_ref_get(nested_ref));
    nested_got = got;
    return node_new(k, NULL, NULL);
}

static void nested_resolve_then_get(tether_scope scope, int list) {
    k_a.made = k_a.dropped = k_r.made = k_r.dropped = k_nb.made = k_nb.dropped = 0;
    nested_c = new_container();
    nested_key = list ? "K0#a" : "B";
    nested_ref = NULL;
    tether_param ap[] = {TETHER_CONTEXT, TETHER_RESOLVER};
    tether_registration *a = NULL;
    CHECK_OK(tether_register(nested_c, list ? "K0" : "A", (tether_fn)make_resolving_then_getting, ap, 2, &a));
    CHECK_OK(tether_set_context(a, &k_a, drop_node));
    reg_node(nested_c, nested_key, &k_nb, scope, NULL, NULL, drop_node);
    tether_ref *ref = NULL;
    if (list) {
        const tether_list *items = NULL;
        CHECK_OK(tether_resolve_all(nested_c, "K0", &ref, &items));
        CHECK(items->count == 2 && ((node *)items->items[0])->k == &k_a && items->items[1] == nested_got);
    } else {
        reg_node(nested_c, "R", &k_r, TETHER_SCOPE_TRANSIENT, "A", "B", drop_node);
        node *root = resolve(nested_c, "R", &ref);
        CHECK(root->a->k == &k_a && root->b == nested_got);
    }
    CHECK(k_a.made == 1 && k_nb.made == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_ref_release(nested_ref));
    CHECK_OK(tether_container_free(nested_c));
    CHECK(k_a.dropped == 1 && k_nb.dropped == 1 && k_r.dropped == k_r.made);
}

static void a_shared_key_a_nested_resolve_made_and_a_resolver_got_is_dropped_once(void) {
    tether_scope scopes[] = {TETHER_SCOPE_SINGLETON, TETHER_SCOPE_WEAK, TETHER_SCOPE_CONTAINER};
    for (int s = 0; s < 3; s++)
        for (int list = 0; list < 2; list++) nested_resolve_then_get(scopes[s], list);
}

int main(void) {
    RUN(a_first_resolve_creates_as_the_build_does);
    RUN(a_failure_mid_creation_caches_nothing);
    RUN(a_singleton_published_under_the_plans_claim_completes_once);
    RUN(threads_racing_the_first_resolve_create_it_once);
    RUN(threads_racing_over_a_diamond_of_singletons_make_each_once);
    RUN(a_shared_key_a_nested_resolve_made_and_a_resolver_got_is_dropped_once);
    return harness_finish();
}
