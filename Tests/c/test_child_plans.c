/* A request's child with registrations of its own (one per request) whose graph a plan of its
 * per-request component serves (issue 28 item 1): the child's own CONTAINER-scoped Session, its
 * own Worker with a completion callback, a WEAK_LAZY back edge and a LAZY slot inside the
 * child's graph, many children in turn. Per child: one Session for all its resolves, published
 * there and destroyed when the child is freed (after the Handlers over it); the Worker's callback
 * runs once per Worker with that Worker's Part; the back edge answers the graph's own Worker;
 * every destructor once, dependents first. Run plain and under ASan
 * (make test).
 *
 *   root:  Db (singleton), Handler(CONTEXT, DEP Session, DEP Db), Job(CONTEXT, DEP Worker)
 *   child: Session (container, CONTEXT, DEP Db), Worker(CONTEXT, DEP Part), on_complete(Worker),
 *          Part(CONTEXT, WEAK_LAZY Worker, LAZY Tool), Tool (transient) */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

static char drops[4096];  /* the tags of the destructors run, in order, one letter each */

static void drop_tagged(void *instance, void *context) {
    kind *k = context;
    CHECK(((node *)instance)->k == k);
    k->dropped++;
    size_t n = strlen(drops);
    if (n + 1 < sizeof drops) drops[n] = k->tag[0], drops[n + 1] = 0;
    free(instance);
}

static kind kdb = {"Db", 0, 0}, khandler = {"Handler", 0, 0}, kjob = {"Job", 0, 0};

static tether_container *request_root(void) {
    tether_container *root = new_container();
    reg_node(root, "Db", &kdb, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_tagged);
    reg_node(root, "Handler", &khandler, TETHER_SCOPE_GRAPH, "Session", "Db", drop_tagged);
    reg_node(root, "Job", &kjob, TETHER_SCOPE_GRAPH, "Worker", NULL, drop_tagged);
    return root;
}

/* Many children, each with its own container-scoped Session over the root's Db: one Session per
 * child whatever the number of resolves, each Handler over it; the child's free destroys it. */
static void a_childs_own_container_scoped_session_once_per_child(void) {
    kdb.made = kdb.dropped = khandler.made = khandler.dropped = 0;
    drops[0] = 0;
    tether_container *root = request_root();
    enum { CHILDREN = 40 };
    kind sessions[CHILDREN];
    node *db = NULL;
    for (int i = 0; i < CHILDREN; i++) {
        sessions[i] = (kind){"Session", 0, 0};
        tether_container *child = new_container_in(root);
        reg_node(child, "Session", &sessions[i], TETHER_SCOPE_CONTAINER, "Db", NULL, drop_tagged);
        tether_ref *r1, *r2;
        node *h1 = resolve(child, "Handler", &r1), *h2 = resolve(child, "Handler", &r2);
        if (!h1 || !h2) break;
        CHECK(h1 != h2 && h1->a == h2->a && h1->a->k == &sessions[i]);
        if (!db) db = h1->b;
        CHECK(h1->b == db && h1->a->a == db);  /* the root's one Db under every Session */
        CHECK(sessions[i].made == 1);
        drops[0] = 0;
        CHECK_OK(tether_ref_release(r1));
        CHECK_OK(tether_ref_release(r2));
        CHECK(strcmp(drops, "HH") == 0 && sessions[i].dropped == 0);  /* the child still holds its Session */
        CHECK_OK(tether_container_free(child));
        CHECK(sessions[i].dropped == 1 && strcmp(drops, "HHS") == 0);
    }
    CHECK(kdb.made == 1 && kdb.dropped == 0 && khandler.made == 2 * CHILDREN && khandler.dropped == 2 * CHILDREN);
    CHECK_OK(tether_container_free(root));
    CHECK(kdb.dropped == 1);
}

/* A Handler kept past its child keeps that child's Session (freed with the Handler, dependents first). */
static void a_handler_kept_past_its_child_keeps_its_session(void) {
    kdb.made = kdb.dropped = khandler.made = khandler.dropped = 0;
    tether_container *root = request_root();
    kind session = {"Session", 0, 0};
    for (int round = 0; round < 3; round++) {
        tether_container *child = new_container_in(root);
        reg_node(child, "Session", &session, TETHER_SCOPE_CONTAINER, "Db", NULL, drop_tagged);
        tether_ref *r;
        node *h = resolve(child, "Handler", &r);
        CHECK(h && h->a->k == &session);
        CHECK_OK(tether_container_free(child));
        CHECK(session.dropped == round);
        drops[0] = 0;
        CHECK_OK(tether_ref_release(r));
        CHECK(strcmp(drops, "HS") == 0 && session.dropped == round + 1);
    }
    CHECK_OK(tether_container_free(root));
    CHECK(kdb.made == 1 && kdb.dropped == 1 && session.made == 3);
}

/* The child's Worker, Part and Tool: Part points back at the graph's Worker (WEAK_LAZY) and
 * resolves a Tool when asked (LAZY); the Worker's completion callback sees its own Part. */
typedef struct part { int magic; kind *k; tether_provider worker; tether_provider tool; } part;
typedef struct worker { int magic; kind *k; part *part; int completed; } worker;

static void *make_part(kind *k, tether_provider w, tether_provider tool) {
    part *p = xcalloc(sizeof *p);
    p->magic = ALIVE, p->k = k, p->worker = w, p->tool = tool;
    k->made++;
    return p;
}
static void *make_worker(kind *k, part *p) {
    worker *w = xcalloc(sizeof *w);
    w->magic = ALIVE, w->k = k, w->part = p;
    k->made++;
    return w;
}
static void drop_counted(void *instance, void *context) {
    kind *k = context;
    k->dropped++;
    size_t n = strlen(drops);
    if (n + 1 < sizeof drops) drops[n] = k->tag[0], drops[n + 1] = 0;
    free(instance);
}
static int completions;
static tether_status worker_completes(tether_resolver *r, void *instance, void *context) {
    worker *w = instance;
    void *p = NULL;
    CHECK_OK(tether_resolver_get(r, "Part", &p));  /* the graph's own Part: its dependency */
    CHECK(p == w->part && w->k == context);
    w->completed++;
    completions++;
    return TETHER_OK;
}

static void a_childs_worker_completes_and_its_part_points_back(void) {
    kjob.made = kjob.dropped = 0;
    completions = 0;
    tether_container *root = request_root();
    enum { CHILDREN = 30 };
    int tools_made = 0, tools_dropped = 0;
    for (int i = 0; i < CHILDREN; i++) {
        kind kworker = {"Worker", 0, 0}, kpart = {"Part", 0, 0}, ktool = {"Tool", 0, 0};
        tether_container *child = new_container_in(root);
        tether_param pw[] = {TETHER_CONTEXT, TETHER_DEP("Part")};
        tether_param pp[] = {TETHER_CONTEXT, TETHER_WEAK_LAZY("Worker"), TETHER_LAZY("Tool")};
        tether_registration *rw = NULL, *rp = NULL;
        CHECK_OK(tether_register(child, "Worker", (tether_fn)make_worker, pw, 2, &rw));
        CHECK_OK(tether_set_context(rw, &kworker, drop_counted));
        CHECK_OK(tether_on_complete(rw, worker_completes, &kworker));
        CHECK_OK(tether_register(child, "Part", (tether_fn)make_part, pp, 3, &rp));
        CHECK_OK(tether_set_context(rp, &kpart, drop_counted));
        reg_node(child, "Tool", &ktool, TETHER_SCOPE_TRANSIENT, NULL, NULL, drop_counted);
        for (int n = 0; n < 2; n++) {
            tether_ref *r;
            node *job = resolve(child, "Job", &r);
            if (!job) break;
            worker *w = (worker *)job->a;
            CHECK(w->k == &kworker && w->part->k == &kpart && w->completed == 1);
            CHECK(w->part->worker() == w);  /* the back edge: this graph's Worker, never a second */
            node *tool = w->part->tool();
            CHECK(tool && tool->k == &ktool && w->part->tool() == tool);  /* resolved once, then held */
            drops[0] = 0;
            CHECK_OK(tether_ref_release(r));
            CHECK(strcmp(drops, "JWPT") == 0);  /* dependents first; the Tool the Part's cell held last */
        }
        CHECK(kworker.made == 2 && kworker.dropped == 2 && kpart.made == 2 && kpart.dropped == 2);
        tools_made += ktool.made, tools_dropped += ktool.dropped;
        CHECK_OK(tether_container_free(child));
    }
    CHECK(completions == 2 * CHILDREN && kjob.made == 2 * CHILDREN && kjob.dropped == 2 * CHILDREN);
    CHECK(tools_made == 2 * CHILDREN && tools_dropped == 2 * CHILDREN);
    CHECK_OK(tether_container_free(root));
}

/* A child's Worker whose completion callback fails: the resolve fails with the callback's status,
 * what it made destroyed once (dependents first); the next child's resolve is whole. */
static tether_status failing_completion(tether_resolver *r, void *instance, void *context) {
    (void)r, (void)instance, (void)context;
    return TETHER_E_FACTORY_FAILED;
}

static void a_childs_failing_completion_destroys_the_graph(void) {
    kjob.made = kjob.dropped = 0;
    tether_container *root = request_root();
    for (int i = 0; i < 6; i++) {
        kind kworker = {"Worker", 0, 0}, kpart = {"Part", 0, 0};
        tether_container *child = new_container_in(root);
        tether_registration *rw = reg_node(child, "Worker", &kworker, TETHER_SCOPE_GRAPH, "Part", NULL, drop_counted);
        if (i % 2) CHECK_OK(tether_on_complete(rw, failing_completion, NULL));
        reg_node(child, "Part", &kpart, TETHER_SCOPE_GRAPH, NULL, NULL, drop_counted);
        tether_ref *r = NULL;
        drops[0] = 0;
        if (i % 2) {
            CHECK_STATUS(tether_resolve(child, "Job", &r), TETHER_E_FACTORY_FAILED);
            CHECK_ERROR_HAS("completion callback #1 of \"Worker\"");
            CHECK(r == NULL && strcmp(drops, "JWP") == 0);
        } else {
            CHECK_OK(tether_resolve(child, "Job", &r));
            CHECK_OK(tether_ref_release(r));
        }
        CHECK(kworker.made == 1 && kworker.dropped == 1 && kpart.made == 1 && kpart.dropped == 1);
        CHECK_OK(tether_container_free(child));
    }
    CHECK(kjob.made == 6 && kjob.dropped == 6);
    CHECK_OK(tether_container_free(root));
}

int main(void) {
    RUN(a_childs_own_container_scoped_session_once_per_child);
    RUN(a_handler_kept_past_its_child_keeps_its_session);
    RUN(a_childs_worker_completes_and_its_part_points_back);
    RUN(a_childs_failing_completion_destroys_the_graph);
    return harness_finish();
}
