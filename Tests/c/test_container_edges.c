/* Edges from a request child's CONTAINER-scoped instance to the root's singleton
 * (issue 27 item 3): Session(Request, Db) holds Db by a split reference, counted on
 * the CPU's own line (Runtime/SplitEdge.swift), not on Db's count. Whatever the
 * counting, Db must live as long as anything points at it and go exactly once,
 * after its dependents: a Session handle kept past its child's free and past the
 * root's; a Handler kept past both; Db reset in the root while a request holds it;
 * children freed on other threads than the one that resolved. Every destructor is
 * logged in order; each object is checked alive when a dependent is destroyed. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "harness.h"
#include "registering.h"

typedef struct counted { const char *tag; atomic_int made, dropped; } counted;
static counted k_db = {"Db", 0, 0}, k_session = {"Session", 0, 0}, k_handler = {"Handler", 0, 0},
               k_request = {"Request", 0, 0};

typedef struct obj { counted *k; struct obj *a, *b; atomic_int alive; } obj;

/* Destruction log: 'D' Db, 'S' Session, 'H' Handler, 'R' Request. */
static char log_buf[4096];
static atomic_int log_len;
static atomic_int dead_dependency;  /* a destructor found a dependency already destroyed */

/* Every object made, freed at the next test's start (checks read them after their destructor). */
enum { MAX_OBJECTS = 1024 };
static obj *all_objects[MAX_OBJECTS];
static atomic_int object_count;

static obj *obj_new(counted *k, obj *a, obj *b) {
    obj *o = calloc(1, sizeof *o);
    int at = atomic_fetch_add(&object_count, 1);
    if (!o || at >= MAX_OBJECTS) abort();
    all_objects[at] = o;
    o->k = k; o->a = a; o->b = b;
    atomic_init(&o->alive, 1);
    atomic_fetch_add(&k->made, 1);
    return o;
}
static void drop_obj(void *instance, void *context) {
    obj *o = instance;
    if ((o->a && !atomic_load(&o->a->alive)) || (o->b && !atomic_load(&o->b->alive))) atomic_fetch_add(&dead_dependency, 1);
    atomic_store(&o->alive, 0);
    atomic_fetch_add(&((counted *)context)->dropped, 1);
    int at = atomic_fetch_add(&log_len, 1);
    if (at < (int)sizeof log_buf - 1) log_buf[at] = ((counted *)context)->tag[0];
}
static void *make_db(counted *k) { return obj_new(k, NULL, NULL); }
static void *make_session(counted *k, obj *request, obj *db) { return obj_new(k, request, db); }
static void *make_handler(counted *k, obj *session) { return obj_new(k, session, NULL); }

static void reset_counts(void) {
    for (int i = 0; i < atomic_load(&object_count); i++) free(all_objects[i]);
    atomic_store(&object_count, 0);
    counted *all[] = {&k_db, &k_session, &k_handler, &k_request};
    for (int i = 0; i < 4; i++) { atomic_store(&all[i]->made, 0); atomic_store(&all[i]->dropped, 0); }
    memset(log_buf, 0, sizeof log_buf);
    atomic_store(&log_len, 0);
    atomic_store(&dead_dependency, 0);
}

/* The README's per-request pattern: Request a declared value, Db a singleton, Session per child, Handler per resolve. */
static tether_container *request_root(void) {
    tether_container *root = NULL;
    CHECK_OK(tether_container_new(NULL, &root));
    reg_request_shape(root, (tether_fn)make_db, &k_db, (tether_fn)make_session, &k_session, (tether_fn)make_handler,
                      &k_handler, drop_obj);
    return root;
}

/* A child of `root` with its Request; Handler resolved into `*handler` (NULL: released at once). */
static tether_container *request(tether_container *root, tether_ref **handler) {
    tether_container *child = request_child_of(root, obj_new(&k_request, NULL, NULL), drop_obj, &k_request);
    tether_ref *h = NULL;
    CHECK_OK(tether_resolve(child, "Handler", &h));
    if (handler) *handler = h; else tether_ref_release(h);
    return child;
}

static void test_a_session_kept_past_its_child_and_the_root_keeps_db(void) {
    reset_counts();
    tether_container *root = request_root();
    for (int i = 0; i < 3; i++) CHECK_OK(tether_container_free(request(root, NULL)));  /* plans recorded */
    tether_ref *handler = NULL, *session = NULL;
    tether_container *child = request(root, &handler);
    CHECK_OK(tether_resolve(child, "Session", &session));
    obj *s = tether_ref_get(session), *db = s->b;
    CHECK(((obj *)tether_ref_get(handler))->a == s);
    CHECK_OK(tether_container_free(child));
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&k_db.dropped) == 0 && atomic_load(&db->alive));
    tether_ref_release(handler);
    CHECK(atomic_load(&k_handler.dropped) == 4 && atomic_load(&k_session.dropped) == 3);
    CHECK(atomic_load(&db->alive));
    tether_ref_release(session);
    CHECK(atomic_load(&k_session.dropped) == 4 && atomic_load(&k_db.dropped) == 1 && !atomic_load(&db->alive));
    CHECK(atomic_load(&k_request.dropped) == 4);
    const char *tail = log_buf + atomic_load(&log_len) - 4;
    CHECK(strchr(tail, 'H') && strchr(tail, 'S') < strchr(tail, 'D'));  /* Handler, Session, then Db */
    CHECK(atomic_load(&dead_dependency) == 0);
}

static void test_db_goes_once_at_the_root_free_after_every_session(void) {
    reset_counts();
    tether_container *root = request_root();
    tether_ref *kept[4];
    tether_container *open[4];
    for (int i = 0; i < 4; i++) open[i] = request(root, &kept[i]);
    for (int i = 0; i < 4; i++) { tether_ref_release(kept[i]); CHECK_OK(tether_container_free(open[i])); }
    CHECK(atomic_load(&k_session.dropped) == 4 && atomic_load(&k_db.dropped) == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&k_db.made) == 1 && atomic_load(&k_db.dropped) == 1);
    CHECK(log_buf[atomic_load(&log_len) - 1] == 'D');
    CHECK(atomic_load(&dead_dependency) == 0);
}

static void test_a_reset_keeps_db_for_the_request_holding_it(void) {
    reset_counts();
    tether_container *root = request_root();
    CHECK_OK(tether_container_free(request(root, NULL)));
    tether_ref *handler = NULL;
    tether_container *child = request(root, &handler);
    obj *first = ((obj *)tether_ref_get(handler))->a->b;
    CHECK_OK(tether_reset(root, TETHER_SCOPE_SINGLETON));
    CHECK(atomic_load(&k_db.dropped) == 0 && atomic_load(&first->alive));
    tether_ref *next = NULL;
    tether_container *other = request(root, &next);
    obj *second = ((obj *)tether_ref_get(next))->a->b;
    CHECK(second != first && atomic_load(&k_db.made) == 2);
    CHECK_OK(tether_container_free(child));
    CHECK(atomic_load(&first->alive));  /* the Handler's Session keeps it */
    tether_ref_release(handler);
    CHECK(!atomic_load(&first->alive) && atomic_load(&k_db.dropped) == 1 && atomic_load(&second->alive));
    tether_ref_release(next);
    CHECK_OK(tether_container_free(other));
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&k_db.dropped) == 2 && atomic_load(&dead_dependency) == 0);
}

/* Handlers resolved on one thread, released and their children freed on another. */
enum { HANDED = 64 };
static tether_ref *handed[HANDED];
static tether_container *handed_children[HANDED];
static void *release_handed(void *arg) {
    (void)arg;
    for (int i = 0; i < HANDED; i++) {
        tether_ref_release(handed[i]);
        if (tether_container_free(handed_children[i]) != TETHER_OK) abort();
    }
    return NULL;
}

static void test_requests_released_on_another_thread(void) {
    reset_counts();
    tether_container *root = request_root();
    for (int i = 0; i < HANDED; i++) handed_children[i] = request(root, &handed[i]);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, release_handed, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(atomic_load(&k_session.dropped) == HANDED && atomic_load(&k_request.dropped) == HANDED);
    CHECK(atomic_load(&k_db.dropped) == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(atomic_load(&k_db.made) == 1 && atomic_load(&k_db.dropped) == 1);
    CHECK(atomic_load(&dead_dependency) == 0);
}

int main(void) {
    RUN(test_a_session_kept_past_its_child_and_the_root_keeps_db);
    RUN(test_db_goes_once_at_the_root_free_after_every_session);
    RUN(test_a_reset_keeps_db_for_the_request_holding_it);
    RUN(test_requests_released_on_another_thread);
    reset_counts();
    return harness_finish();
}
