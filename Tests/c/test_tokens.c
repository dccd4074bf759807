/* Creation cells held by a binding's token (tether_binding.h, "Tokens"): a factory that
 * suspends (here: one that calls token_hold and fails) leaves its shared instance's cell with
 * the token, so nobody else starts that factory; a resolve acting for the token takes the cell
 * back and publishes; a resolve acting for another token is refused (TETHER_E_WOULD_BLOCK) and
 * woken by token_wait's callback when the cell is released; a token freed releases its cells;
 * waits that close a cycle through tokens (and threads) fail with TETHER_E_CYCLE naming both
 * paths; a forked child forgets every token's cells. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "binding.h"
#include "fixtures.h"

/* A factory that suspends while its kind's `suspend` says so: the cell goes to `holder`. */
typedef struct shared_kind {
    kind k;
    const char *key;
    tether_container *c;     /* the container token_hold names */
    tether_token *holder;    /* set: the next call suspends (holds the cell for it, fails) */
    tether_status held;      /* what token_hold returned */
    const char *inner;       /* set: the factory resolves this key from `c` first (a nested resolve) */
    tether_status inner_status;
    tether_token *inner_as;  /* set: the next nested resolve acts for it (a binding's nested call, entered here) */
} shared_kind;

static void *make_shared(shared_kind *s) {
    if (s->inner) {
        tether_ref *ref = NULL;
        if (s->inner_as) CHECK_OK(TB.token_enter(s->inner_as));
        s->inner_status = tether_resolve(s->c, s->inner, &ref);
        if (s->inner_as) CHECK_OK(TB.token_leave());
        s->inner_as = NULL;
        if (ref) tether_ref_release(ref);
    }
    if (s->holder) {
        uint32_t id = 0;
        CHECK_OK(tether_intern(s->c, s->key, &id));
        s->held = TB.token_hold(s->holder, s->c, id);
        s->holder = NULL;
        return NULL;  /* goes on outside the library */
    }
    return node_new(&s->k, NULL, NULL);
}

static void drop_shared(void *instance, void *context) {
    shared_kind *s = context;
    s->k.dropped++;
    free(instance);
}

/* A key of `c` made by make_shared (counted as `key`), not suspending; `inner`: its factory resolves that first. */
static shared_kind shared_key(const char *key, tether_container *c, const char *inner) {
    return (shared_kind){{key, 0, 0}, key, c, NULL, -1, inner, -1, NULL};
}

static void register_shared(tether_container *c, shared_kind *s, tether_scope scope) {
    tether_param p[] = {TETHER_CONTEXT};
    tether_registration_options o = {0};
    o.scope = scope;
    o.context = s;
    o.drop = drop_shared;
    CHECK_OK(TB.register_ex(c, s->key, (tether_fn)make_shared, p, 1, &o, NULL));
}

/* A new token, nested in `parent` (NULL: a task's own). */
static tether_token *new_token(tether_token *parent) {
    tether_token *t = NULL;
    CHECK_OK(TB.token_new(parent, &t));
    return t;
}

static int woken;
static void wake(void *context) { __atomic_add_fetch(&woken, (int)(intptr_t)context, __ATOMIC_SEQ_CST); }

static tether_status resolve_as(tether_token *t, tether_container *c, const char *key, void **instance) {
    if (t) CHECK_OK(TB.token_enter(t));
    tether_ref *ref = NULL;
    tether_status st = tether_resolve(c, key, &ref);
    if (st == TETHER_OK) {
        if (instance) *instance = tether_ref_get(ref);
        tether_ref_release(ref);
    }
    if (t) CHECK_OK(TB.token_leave());
    return st;
}

/* `s`'s factory suspends in a resolve from `c` acting for `as` (NULL: for none): the call fails and
 * `holder` holds the cell. */
static void suspended_for(tether_token *holder, shared_kind *s, tether_container *c, tether_token *as) {
    s->holder = holder;
    CHECK_STATUS(resolve_as(as, c, s->key, NULL), TETHER_E_FACTORY_FAILED);
    CHECK_OK(s->held);
}

static void held_then_taken_back(tether_scope scope) {
    woken = 0;
    tether_container *root = NULL, *c = NULL, *other = NULL;
    CHECK_OK(tether_container_new(NULL, &root));
    CHECK_OK(tether_container_new(root, &c));
    CHECK_OK(tether_container_new(root, &other));
    shared_kind x = shared_key("X", c, NULL);
    register_shared(root, &x, scope);
    tether_token *a = new_token(NULL), *b = new_token(NULL);

    /* A's resolve: the factory suspends; the cell stays A's */
    suspended_for(a, &x, c, NULL);
    /* B is refused without blocking, and waits */
    CHECK_STATUS(resolve_as(b, c, "X", NULL), TETHER_E_WOULD_BLOCK);
    CHECK_OK(TB.token_wait(b, wake, (void *)1));
    CHECK(woken == 0);
    if (scope == TETHER_SCOPE_CONTAINER) {  /* another container's cell is another cell */
        void *elsewhere = NULL;
        CHECK_OK(resolve_as(b, other, "X", &elsewhere));
        CHECK(x.k.made == 1);
    }
    /* A takes it back: the factory's second call makes it; B is woken then, once */
    void *made = NULL, *got = NULL;
    int before = x.k.made;
    CHECK_OK(resolve_as(a, c, "X", &made));
    CHECK(x.k.made == before + 1);
    CHECK(woken == 1);
    CHECK_OK(resolve_as(b, c, "X", &got));
    CHECK(got == made && x.k.made == before + 1);
    /* waiting for nothing: called at once */
    CHECK_OK(TB.token_wait(b, wake, (void *)10));
    CHECK(woken == 11);

    CHECK_OK(TB.token_free(a));
    CHECK_OK(TB.token_free(b));
    CHECK_OK(tether_container_free(c));
    CHECK_OK(tether_container_free(other));
    CHECK_OK(tether_container_free(root));
    CHECK(x.k.dropped == x.k.made);
}

static void test_a_held_singleton_is_taken_back_by_its_token(void) { held_then_taken_back(TETHER_SCOPE_SINGLETON); }
static void test_a_held_container_scoped_instance_is_taken_back_by_its_token(void) { held_then_taken_back(TETHER_SCOPE_CONTAINER); }

static void test_a_freed_token_releases_its_cells_to_the_waiters(void) {
    woken = 0;
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    shared_kind x = shared_key("X", c, NULL);
    register_shared(c, &x, TETHER_SCOPE_SINGLETON);
    tether_token *a = new_token(NULL), *b = new_token(NULL);
    suspended_for(a, &x, c, a);
    CHECK_STATUS(resolve_as(b, c, "X", NULL), TETHER_E_WOULD_BLOCK);
    CHECK_OK(TB.token_wait(b, wake, (void *)1));
    /* entered: refused */
    CHECK_OK(TB.token_enter(a));
    CHECK_STATUS(TB.token_free(a), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(TB.token_leave());
    CHECK_STATUS(TB.token_leave(), TETHER_E_INVALID_ARGUMENT);
    CHECK(woken == 0);
    CHECK_OK(TB.token_free(a));  /* A gives up (a cancelled task): B is woken and makes its own */
    CHECK(woken == 1);
    void *got = NULL;
    CHECK_OK(resolve_as(b, c, "X", &got));
    CHECK(got != NULL && x.k.made == 1);
    CHECK_OK(TB.token_free(b));
    /* a failure that was not a suspension releases the cell as ever */
    CHECK_STATUS(TB.token_hold(NULL, c, 0), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(TB.token_wait(NULL, wake, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_OK(tether_container_free(c));
    CHECK(x.k.dropped == 1);
}

static void test_hold_outside_the_factory_finds_no_cell(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    shared_kind x = shared_key("X", c, NULL);
    register_shared(c, &x, TETHER_SCOPE_SINGLETON);
    tether_token *a = new_token(NULL);
    uint32_t id = 0;
    CHECK_OK(tether_intern(c, "X", &id));
    CHECK_STATUS(TB.token_hold(a, c, id), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("\"X\"");
    CHECK_OK(TB.token_free(a));
    CHECK_OK(tether_container_free(c));
}

/* A (holding X) awaits, through its nested call A2, Y; B (holding Y) awaits, through B2, X. */
static void test_a_wait_cycle_across_tokens_is_reported_at_once(void) {
    woken = 0;
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    shared_kind x = shared_key("X", c, NULL), y = shared_key("Y", c, NULL);
    register_shared(c, &x, TETHER_SCOPE_SINGLETON);
    register_shared(c, &y, TETHER_SCOPE_SINGLETON);
    tether_token *a = new_token(NULL), *b = new_token(NULL);
    suspended_for(a, &x, c, NULL);
    suspended_for(b, &y, c, NULL);
    tether_token *a2 = new_token(a), *b2 = new_token(b);
    CHECK_STATUS(resolve_as(a2, c, "Y", NULL), TETHER_E_WOULD_BLOCK);
    CHECK_STATUS(resolve_as(b2, c, "X", NULL), TETHER_E_CYCLE);
    CHECK_ERROR_HAS("\"X\"");
    CHECK_ERROR_HAS("\"Y\"");
    CHECK_ERROR_HAS("cycle");
    /* a nested call asking for what its own task holds is a cycle too (not a wait) */
    CHECK_STATUS(resolve_as(a2, c, "X", NULL), TETHER_E_CYCLE);
    /* B's task fails: its cells go, A2 is woken and gets Y */
    CHECK_OK(TB.token_wait(a2, wake, (void *)1));
    CHECK_OK(TB.token_free(b2));
    CHECK_OK(TB.token_free(b));
    CHECK(woken == 1);
    CHECK_OK(resolve_as(a2, c, "Y", NULL));
    CHECK_OK(resolve_as(a, c, "X", NULL));
    CHECK(x.k.made == 1 && y.k.made == 1);
    CHECK_OK(TB.token_free(a2));
    CHECK_OK(TB.token_free(a));
    CHECK_OK(tether_container_free(c));
}

/* Y's factory makes its nested call before it suspends (Python: an async factory awaiting a nested
 * aresolve at once): that call's token B2 (nested in B, Y's call) is entered inside the resolve that
 * holds Y on this thread. It acts for B2 all the same: refused, B2 now waiting for X (held by A), and
 * the outer resolve, though asked not to wait, fails as the suspension it is (its cell goes to B), not
 * as blocked. A's nested call A2 asking for Y then closes the cycle at once: the cycle's path, each
 * key once, A2's own edge X -> Y last. */
static void test_a_call_entered_inside_a_factory_acts_for_its_token(void) {
    woken = 0;
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    shared_kind x = shared_key("X", c, NULL), y = shared_key("Y", c, "X");
    register_shared(c, &x, TETHER_SCOPE_SINGLETON);
    register_shared(c, &y, TETHER_SCOPE_SINGLETON);
    tether_token *a = new_token(NULL);
    suspended_for(a, &x, c, NULL);
    tether_token *b = new_token(NULL), *b2 = new_token(b);
    y.inner_as = b2;
    y.holder = b;
    uint32_t key_y = 0;
    CHECK_OK(tether_intern(c, "Y", &key_y));
    tether_collect io = {NULL, 0, 0, NULL, NULL, 0, NULL};
    CHECK_STATUS(TB.resolve_key_collect(c, key_y, TETHER_RESOLVE_NO_WAIT, &io), TETHER_E_FACTORY_FAILED);
    CHECK_STATUS(y.inner_status, TETHER_E_WOULD_BLOCK);
    CHECK_OK(y.held);
    CHECK_OK(TB.token_wait(b2, wake, (void *)1));
    CHECK(woken == 0);  /* B2 waits for X */

    tether_token *a2 = new_token(a);
    CHECK_STATUS(resolve_as(a2, c, "Y", NULL), TETHER_E_CYCLE);
    tether_error_parts p;
    CHECK_OK(TB.last_error_parts(&p));
    CHECK(p.status == TETHER_E_CYCLE && p.fix == TETHER_FIX_WAIT_CYCLE && p.key && strcmp(p.key, "Y") == 0);
    CHECK(p.path_count == 3 && strcmp(p.path[0], "Y") == 0 && strcmp(p.path[1], "X") == 0 && strcmp(p.path[2], "Y") == 0);
    if (getenv("SHOW")) fprintf(stderr, "  message: %s\n", tether_last_error());
    CHECK_ERROR_HAS("cross-task dependency cycle");
    CHECK_ERROR_HAS("builds \"Y\" -> \"X\" and waits for \"X\"");
    CHECK_ERROR_HAS("edge \"X\" -> \"Y\": declare the slot TETHER_WEAK_LAZY(\"Y\") in \"X\"");

    /* B's task gives up; A2 gets Y, whose factory's nested resolve of X
     * (held by A, further out on A2's task) is a cycle of one task's calls */
    CHECK_OK(TB.token_free(b2));
    CHECK_OK(TB.token_free(b));
    CHECK(woken == 0);
    CHECK_OK(resolve_as(a2, c, "Y", NULL));
    CHECK_STATUS(y.inner_status, TETHER_E_CYCLE);
    CHECK_OK(resolve_as(a, c, "X", NULL));
    CHECK(woken == 1);  /* X published: the wake-up B2 asked for is called, once */
    CHECK(x.k.made == 1 && y.k.made == 1);
    CHECK_OK(TB.token_free(a2));
    CHECK_OK(TB.token_free(a));
    CHECK_OK(tether_container_free(c));
    CHECK(x.k.dropped == 1 && y.k.dropped == 1);
}

/* A thread blocked in a resolve for X (held by token A) while it holds Y; A's nested call
 * asking for Y closes the cycle: TETHER_E_CYCLE for the token, no hang. */
typedef struct blocked_job { tether_container *c; tether_status status; int started; } blocked_job;
static void *resolve_y(void *arg) {
    blocked_job *j = arg;
    __atomic_store_n(&j->started, 1, __ATOMIC_SEQ_CST);
    j->status = resolve_as(NULL, j->c, "Y", NULL);
    return NULL;
}

static void test_a_cycle_through_a_blocked_thread_is_reported_to_the_token(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    shared_kind x = shared_key("X", c, NULL), y = shared_key("Y", c, "X");
    register_shared(c, &x, TETHER_SCOPE_SINGLETON);
    register_shared(c, &y, TETHER_SCOPE_SINGLETON);
    tether_token *a = new_token(NULL);
    suspended_for(a, &x, c, NULL);
    tether_token *a2 = new_token(a);
    blocked_job j = {c, -1, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, resolve_y, &j) == 0);
    /* Whichever of the two waits second is told of the cycle: A2, refused until then (the thread
     * runs), or the thread's nested resolve of X (then Y is made without it and A2 gets it). */
    tether_status st = TETHER_E_WOULD_BLOCK;
    for (int i = 0; i < 20000 && st == TETHER_E_WOULD_BLOCK; i++) {
        st = resolve_as(a2, c, "Y", NULL);
        if (st == TETHER_E_WOULD_BLOCK) nanosleep(&(struct timespec){0, 500000}, NULL);
    }
    if (st == TETHER_E_CYCLE) {
        CHECK_ERROR_HAS("\"Y\"");
        CHECK_ERROR_HAS("\"X\"");
    } else {
        CHECK_OK(st);
        CHECK_STATUS(y.inner_status, TETHER_E_CYCLE);
    }
    /* A's task gives up: the thread gets X (made by it) and Y */
    CHECK_OK(TB.token_free(a2));
    CHECK_OK(TB.token_free(a));
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_OK(j.status);
    CHECK(y.k.made == 1);
    if (st == TETHER_E_CYCLE) CHECK(y.inner_status == TETHER_OK && x.k.made == 1);
    CHECK_OK(tether_container_free(c));
}

/* A plain resolve on the thread a token last acted on would wait for that task, which cannot
 * run while it waits: refused (as a no-wait resolve is), not a hang. */
static void test_a_thread_never_waits_for_a_token_of_its_own(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    shared_kind x = shared_key("X", c, NULL);
    register_shared(c, &x, TETHER_SCOPE_SINGLETON);
    tether_token *a = new_token(NULL);
    suspended_for(a, &x, c, a);
    CHECK_STATUS(resolve_as(NULL, c, "X", NULL), TETHER_E_WOULD_BLOCK);
    CHECK_ERROR_HAS("\"X\"");
    CHECK_ERROR_HAS("task that runs on this thread");
    CHECK_OK(TB.token_free(a));
    CHECK_OK(resolve_as(NULL, c, "X", NULL));
    CHECK(x.k.made == 1);
    CHECK_OK(tether_container_free(c));
}

/* fork() while a token holds X: the child forgets the token's cells (its own resolve makes X,
 * no hang); the parent's token still holds X and takes it back. */
static void test_a_forked_child_forgets_the_tokens_cells(void) {
    tether_container *root = NULL, *c = NULL;
    CHECK_OK(tether_container_new(NULL, &root));
    CHECK_OK(tether_container_new(root, &c));
    shared_kind x = shared_key("X", root, NULL);
    shared_kind s = shared_key("S", c, NULL);
    register_shared(root, &x, TETHER_SCOPE_SINGLETON);
    register_shared(root, &s, TETHER_SCOPE_CONTAINER);
    tether_token *a = new_token(NULL), *b = new_token(NULL);
    suspended_for(a, &x, root, NULL);
    suspended_for(a, &s, c, NULL);
    CHECK_STATUS(resolve_as(b, root, "X", NULL), TETHER_E_WOULD_BLOCK);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(20);  /* a hang fails the child */
        int ok = resolve_as(NULL, root, "X", NULL) == TETHER_OK && resolve_as(NULL, c, "S", NULL) == TETHER_OK
              && resolve_as(b, root, "X", NULL) == TETHER_OK && x.k.made == 1 && s.k.made == 1;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the parent: still A's */
    CHECK_STATUS(resolve_as(b, root, "X", NULL), TETHER_E_WOULD_BLOCK);
    CHECK_OK(resolve_as(a, root, "X", NULL));
    CHECK_OK(resolve_as(a, c, "S", NULL));
    CHECK(x.k.made == 1 && s.k.made == 1);
    CHECK_OK(TB.token_free(a));
    CHECK_OK(TB.token_free(b));
    CHECK_OK(tether_container_free(c));
    CHECK_OK(tether_container_free(root));
}

int main(void) {
    RUN(test_a_held_singleton_is_taken_back_by_its_token);
    RUN(test_a_held_container_scoped_instance_is_taken_back_by_its_token);
    RUN(test_a_freed_token_releases_its_cells_to_the_waiters);
    RUN(test_hold_outside_the_factory_finds_no_cell);
    RUN(test_a_wait_cycle_across_tokens_is_reported_at_once);
    RUN(test_a_call_entered_inside_a_factory_acts_for_its_token);
    RUN(test_a_cycle_through_a_blocked_thread_is_reported_to_the_token);
    RUN(test_a_thread_never_waits_for_a_token_of_its_own);
    RUN(test_a_forked_child_forgets_the_tokens_cells);
    return harness_finish();
}
