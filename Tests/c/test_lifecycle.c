#define _DEFAULT_SOURCE /* usleep */
/* Lifecycle: values (tether_declare_value in a parent, tether_provide_value in a
 * child), the container scope (one instance per resolving container, let go of
 * when it is freed), and teardown order (last made first, dependents before
 * their dependencies, every destructor once, also after a failed resolve). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "fixtures.h"
#include "binding.h"

/* Destructor order, as "A B C ". */
static char order[512];

static void drop_logged(void *instance, void *context) {
    node *o = instance;
    kind *k = context;
    CHECK(o->k == k);
    if (o->weak && tether_weak_release(o->weak) != TETHER_OK) bad_release++;
    k->dropped++;
    strcat(order, k->tag);
    strcat(order, " ");
    free(o);
}

static tether_registration *reg(tether_container *c, kind *k, tether_scope scope, const char *dep_a, const char *dep_b) {
    return reg_node(c, k->tag, k, scope, dep_a, dep_b, drop_logged);
}

/* A value made outside the container, counted by `k`. */
static node *value_of(kind *k) { return node_new(k, NULL, NULL); }

static void release(tether_ref *r) { CHECK_OK(tether_ref_release(r)); }

/* ---- values --------------------------------------------------------------- */

static void declared_value_is_valid_but_missing_until_provided(void) {
    kind Handler = {"Handler", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, &Handler, TETHER_SCOPE_GRAPH, "Req", NULL);
    CHECK_OK(tether_validate(root));

    tether_ref *r = (tether_ref *)1;
    CHECK_STATUS(tether_resolve(root, "Req", &r), TETHER_E_NOT_FOUND);
    CHECK(r == NULL);
    CHECK_ERROR_HAS("no value for \"Req\"");
    CHECK_ERROR_HAS("provide it in a child container and resolve from that child");
    CHECK_STATUS(tether_resolve(root, "Handler", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no value for \"Req\"");
    CHECK_ERROR_HAS("(needed by \"Handler\")");
    tether_error_parts parts;                       /* what a binding renders in its own words */
    CHECK_OK(TB.last_error_parts(&parts));
    CHECK(parts.fix == TETHER_FIX_PROVIDE_VALUE && parts.status == TETHER_E_NOT_FOUND);
    CHECK(parts.key && strcmp(parts.key, "Req") == 0);
    CHECK(parts.path_count == 1 && strcmp(parts.path[0], "Handler") == 0);
    CHECK(Handler.made == 0);
    CHECK_OK(tether_container_free(root));
}

static void each_child_provides_its_own_value(void) {
    kind Handler = {"Handler", 0, 0}, Req1 = {"Req1", 0, 0}, Req2 = {"Req2", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, &Handler, TETHER_SCOPE_GRAPH, "Req", NULL);
    tether_container *c1 = new_container_in(root), *c2 = new_container_in(root);
    node *v1 = value_of(&Req1), *v2 = value_of(&Req2);
    CHECK_OK(tether_provide_value(c1, "Req", v1, drop_logged, &Req1));
    CHECK_OK(tether_provide_value(c2, "Req", v2, drop_logged, &Req2));
    CHECK_OK(tether_validate(c1));

    tether_ref *h1, *h1b, *h2, *req;
    node *a = resolve(c1, "Handler", &h1), *b = resolve(c1, "Handler", &h1b), *c = resolve(c2, "Handler", &h2);
    CHECK(a->a == v1 && b->a == v1 && c->a == v2);
    CHECK(a != b);                                  /* graph scope: one per resolve */
    CHECK(resolve(c1, "Req", &req) == v1);
    CHECK(Req1.made == 1 && Req2.made == 1);        /* no factory ever made a value */
    release(req);

    order[0] = 0;
    CHECK_OK(tether_reset(c1, TETHER_SCOPE_SINGLETON)); /* a value is not a cache */
    CHECK(Req1.dropped == 0);
    CHECK_OK(tether_container_free(c1));            /* the handles still hold v1 */
    CHECK(Req1.dropped == 0);
    release(h1);
    release(h1b);
    CHECK(Req1.dropped == 1 && Handler.dropped == 2);
    CHECK_STATUS(tether_container_free(root), TETHER_E_INVALID_ARGUMENT); /* c2 still exists */
    release(h2);
    CHECK_OK(tether_container_free(c2));
    CHECK(Req2.dropped == 1 && Handler.dropped == 3);
    CHECK(strcmp(order, "Handler Handler Req1 Handler Req2 ") == 0);
    CHECK_OK(tether_container_free(root));
}

static void providing_again_drops_the_old_value_once(void) {
    kind Old = {"Old", 0, 0}, New = {"New", 0, 0};
    tether_container *c = new_container();
    CHECK_OK(tether_provide_value(c, "Req", value_of(&Old), drop_logged, &Old));
    CHECK_OK(tether_provide_value(c, "Req", value_of(&New), drop_logged, &New));
    CHECK(Old.dropped == 1 && New.dropped == 0);
    tether_ref *r;
    CHECK(resolve(c, "Req", &r)->k == &New);
    release(r);
    CHECK_OK(tether_container_free(c));
    CHECK(Old.dropped == 1 && New.dropped == 1);
}

static void bad_values_are_refused(void) {
    kind V = {"V", 0, 0};
    tether_container *c = new_container();
    node *v = value_of(&V);
    CHECK_STATUS(tether_provide_value(c, "Req", NULL, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("NULL");
    CHECK_STATUS(tether_provide_value(c, "", v, drop_logged, &V), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_provide_value(NULL, "Req", v, drop_logged, &V), TETHER_E_INVALID_HANDLE);
    CHECK_STATUS(tether_declare_value(c, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_declare_value(NULL, "Req"), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_container_free(c));
    CHECK_STATUS(tether_provide_value(c, "Req", v, drop_logged, &V), TETHER_E_INVALID_HANDLE);
    CHECK(V.dropped == 0);                          /* refused: still the caller's */
    free(v);
}

static void a_singleton_cannot_take_a_childs_value(void) {
    kind S = {"S", 0, 0}, V = {"V", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, &S, TETHER_SCOPE_SINGLETON, "Req", NULL);
    tether_container *child = new_container_in(root);
    CHECK_OK(tether_provide_value(child, "Req", value_of(&V), drop_logged, &V));
    tether_ref *r;
    CHECK_STATUS(tether_resolve(child, "S", &r), TETHER_E_NOT_FOUND);
    CHECK_ERROR_HAS("no value for \"Req\"");
    CHECK_ERROR_HAS("(needed by \"S\")");
    CHECK(S.made == 0);
    CHECK_OK(tether_container_free(child));
    CHECK(V.dropped == 1);
    CHECK_OK(tether_container_free(root));
}

/* ---- container scope ---------------------------------------------------------- */

/* Root: Session (CONTAINER, needs the value Req), RepoA and RepoB (GRAPH, need
 * Session), Handler (GRAPH, needs both repos). */
static tether_container *request_root(kind *Session, kind *RepoA, kind *RepoB, kind *Handler) {
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, Session, TETHER_SCOPE_CONTAINER, "Req", NULL);
    reg(root, RepoA, TETHER_SCOPE_GRAPH, "Session", NULL);
    reg(root, RepoB, TETHER_SCOPE_GRAPH, "Session", NULL);
    reg(root, Handler, TETHER_SCOPE_GRAPH, "RepoA", "RepoB");
    return root;
}

static void container_scope_is_one_per_resolving_container(void) {
    kind Session = {"Session", 0, 0}, RepoA = {"RepoA", 0, 0}, RepoB = {"RepoB", 0, 0}, Handler = {"Handler", 0, 0};
    kind V1 = {"V1", 0, 0}, V2 = {"V2", 0, 0};
    tether_container *root = request_root(&Session, &RepoA, &RepoB, &Handler);
    tether_container *c1 = new_container_in(root), *c2 = new_container_in(root);
    node *v1 = value_of(&V1), *v2 = value_of(&V2);
    CHECK_OK(tether_provide_value(c1, "Req", v1, drop_logged, &V1));
    CHECK_OK(tether_provide_value(c2, "Req", v2, drop_logged, &V2));

    tether_ref *h1, *h1b, *h2, *s1;
    node *a = resolve(c1, "Handler", &h1);
    node *b = resolve(c1, "Handler", &h1b);
    node *c = resolve(c2, "Handler", &h2);
    CHECK(Session.made == 2);
    CHECK(a->a->a == a->b->a);                      /* both repos share the request's session */
    CHECK(a->a->a == b->a->a);                      /* ... across resolves from c1 */
    CHECK(c->a->a != a->a->a);                      /* c2 has its own */
    CHECK(a->a->a->a == v1 && c->a->a->a == v2);    /* each built over its own value */
    CHECK(resolve(c1, "Session", &s1) == a->a->a);  /* resolved directly too */
    release(s1);
    release(h1);
    release(h1b);
    CHECK(Session.dropped == 0);                    /* c1 still caches it */

    order[0] = 0;
    CHECK_OK(tether_container_free(c1));            /* made last, let go of first */
    CHECK(strcmp(order, "Session V1 ") == 0);
    CHECK(Session.dropped == 1 && V1.dropped == 1 && V2.dropped == 0);
    release(h2);
    CHECK(Session.dropped == 1);                    /* c2's lives on with c2 */
    CHECK_OK(tether_container_free(c2));
    CHECK(Session.dropped == 2 && V2.dropped == 1);
    CHECK_OK(tether_container_free(root));
}

static void container_scope_reset_and_reregistration(void) {
    kind P = {"P", 0, 0}, P2 = {"P2", 0, 0};
    tether_container *root = new_container();
    reg(root, &P, TETHER_SCOPE_CONTAINER, NULL, NULL);
    tether_container *child = new_container_in(root);
    tether_ref *r;
    node *x = resolve(child, "P", &r);
    release(r);
    CHECK(resolve(child, "P", &r) == x);
    release(r);
    CHECK(resolve(root, "P", &r) != x);             /* the root resolving: the root's own */
    release(r);
    CHECK(P.made == 2 && P.dropped == 0);
    CHECK_OK(tether_reset(child, TETHER_SCOPE_SINGLETON));
    CHECK(P.dropped == 0);
    CHECK_OK(tether_reset(child, TETHER_SCOPE_CONTAINER)); /* the child's only */
    CHECK(P.dropped == 1);
    resolve(child, "P", &r);
    release(r);
    CHECK(P.made == 3);
    /* Re-registering in the child drops what the child cached for the old registration... */
    tether_registration *own = reg(child, &P2, TETHER_SCOPE_CONTAINER, NULL, NULL);
    (void)own;
    CHECK(P.dropped == 1);                          /* the root's registration: still cached */
    CHECK(resolve(child, "P2", &r) != NULL);
    release(r);
    reg(child, &P2, TETHER_SCOPE_CONTAINER, NULL, NULL);
    CHECK(P2.made == 1 && P2.dropped == 1);         /* ... exactly once */
    CHECK_OK(tether_container_free(child));
    CHECK(P.dropped == 2);
    CHECK_OK(tether_container_free(root));
    CHECK(P.dropped == 3);
}

/* Many threads, two children: one session per child, made once each. */
static tether_container *threads_child[2];
/* The two children's sessions are made at once (per-key creation cells): the count is shared. */
static pthread_mutex_t slow_count = PTHREAD_MUTEX_INITIALIZER;
static void *make_slow(kind *k) {
    usleep(2000);
    pthread_mutex_lock(&slow_count);
    node *n = node_new(k, NULL, NULL);
    pthread_mutex_unlock(&slow_count);
    return n;
}
static void *hammer(void *arg) {
    tether_container *c = threads_child[(size_t)arg % 2];
    for (int i = 0; i < 50; i++) {
        tether_ref *r = NULL;
        if (tether_resolve(c, "Slow", &r) != TETHER_OK) return (void *)1;
        tether_ref_release(r);
    }
    return NULL;
}

static void container_scope_is_made_once_under_concurrent_resolves(void) {
    kind Slow = {"Slow", 0, 0};
    tether_container *root = new_container();
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_CONTAINER;
    o.context = &Slow;
    o.drop = drop_logged;
    tether_param p[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register_with(root, "Slow", (tether_fn)make_slow, p, 1, &o, NULL));
    threads_child[0] = new_container_in(root);
    threads_child[1] = new_container_in(root);
    pthread_t t[8];
    for (size_t i = 0; i < 8; i++) pthread_create(&t[i], NULL, hammer, (void *)i);
    for (int i = 0; i < 8; i++) { void *failed; pthread_join(t[i], &failed); CHECK(failed == NULL); }
    CHECK(Slow.made == 2 && Slow.dropped == 0);
    CHECK_OK(tether_container_free(threads_child[0]));
    CHECK_OK(tether_container_free(threads_child[1]));
    CHECK(Slow.dropped == 2);
    CHECK_OK(tether_container_free(root));
}

/* ---- teardown order -------------------------------------------------------- */

static void freeing_drops_cached_instances_last_made_first(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0}, C = {"C", 0, 0}, D = {"D", 0, 0};
    tether_container *c = new_container();
    reg(c, &A, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &B, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &C, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &D, TETHER_SCOPE_CONTAINER, "A", NULL);
    tether_ref *r;
    const char *made[] = {"C", "A", "D", "B"};      /* creation order C, A, D, B */
    for (int i = 0; i < 4; i++) { resolve(c, made[i], &r); release(r); }
    order[0] = 0;
    CHECK_OK(tether_container_free(c));
    CHECK(strcmp(order, "B D A C ") == 0);
    CHECK(A.dropped == 1 && B.dropped == 1 && C.dropped == 1 && D.dropped == 1);
}

static void a_singleton_goes_before_what_it_needs(void) {
    kind Top = {"Top", 0, 0}, Mid = {"Mid", 0, 0}, Low = {"Low", 0, 0};
    tether_container *c = new_container();
    reg(c, &Low, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(c, &Mid, TETHER_SCOPE_SINGLETON, "Low", NULL);
    reg(c, &Top, TETHER_SCOPE_SINGLETON, "Mid", NULL);
    tether_ref *r;
    resolve(c, "Top", &r);
    release(r);
    order[0] = 0;
    CHECK_OK(tether_reset(c, TETHER_SCOPE_SINGLETON));
    CHECK(strcmp(order, "Top Mid Low ") == 0);
    CHECK_OK(tether_container_free(c));
    CHECK(Top.dropped == 1 && Mid.dropped == 1 && Low.dropped == 1);
}

static void a_graph_goes_in_reverse_creation_order(void) {
    /* Top(A(C), B(C, D)): made C, A, D, B, Top. */
    kind Top = {"Top", 0, 0}, A = {"A", 0, 0}, B = {"B", 0, 0}, C = {"C", 0, 0}, D = {"D", 0, 0};
    tether_container *c = new_container();
    reg(c, &C, TETHER_SCOPE_GRAPH, NULL, NULL);
    reg(c, &D, TETHER_SCOPE_GRAPH, NULL, NULL);
    reg(c, &A, TETHER_SCOPE_GRAPH, "C", NULL);
    reg(c, &B, TETHER_SCOPE_GRAPH, "C", "D");
    reg(c, &Top, TETHER_SCOPE_GRAPH, "A", "B");
    for (int round = 0; round < 3; round++) {       /* the first resolve builds, later ones may replay a plan */
        tether_ref *r;
        resolve(c, "Top", &r);
        order[0] = 0;
        release(r);
        CHECK(strcmp(order, "Top B D A C ") == 0);
    }
    CHECK(C.made == 3 && C.dropped == 3);
    CHECK_OK(tether_container_free(c));
}

/* A needs B; B's completion callback takes A weakly: a cycle. */
static tether_status take_a_weakly(void *instance, void *const *args, size_t n, void *context) {
    (void)n; (void)context;
    ((node *)instance)->weak = args[0];
    return TETHER_OK;
}

static void a_cycle_goes_in_reverse_completion_order(void) {
    kind A = {"A", 0, 0}, B = {"B", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "A", &A, TETHER_SCOPE_GRAPH, "B", NULL, drop_logged);
    tether_registration *rb = reg_node(c, "B", &B, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
    tether_param back[] = {TETHER_WEAK("A")};
    CHECK_OK(tether_on_complete_params(rb, take_a_weakly, back, 1, NULL));
    tether_ref *r;
    node *a = resolve(c, "A", &r);
    CHECK(a->a->weak != NULL);
    order[0] = 0;
    release(r);                                     /* B completed first, A last: A goes first */
    CHECK(strcmp(order, "A B ") == 0 && A.dropped == 1 && B.dropped == 1 && bad_release == 0);
    CHECK_OK(tether_container_free(c));
}

static void *make_failing(kind *k) { (void)k; tether_set_error("no connection"); return NULL; }

static void a_failed_resolve_destroys_what_it_made_once_and_caches_nothing(void) {
    kind Top = {"Top", 0, 0}, S = {"S", 0, 0}, G = {"G", 0, 0}, Single = {"Single", 0, 0};
    tether_container *root = new_container();
    reg(root, &Single, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(root, &S, TETHER_SCOPE_CONTAINER, "Single", NULL);
    reg(root, &G, TETHER_SCOPE_GRAPH, "S", NULL);
    tether_param fp[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register(root, "F", (tether_fn)make_failing, fp, 1, NULL));
    reg(root, &Top, TETHER_SCOPE_GRAPH, "G", "F");
    tether_container *child = new_container_in(root);
    tether_ref *r = NULL;
    order[0] = 0;
    CHECK_STATUS(tether_resolve(child, "Top", &r), TETHER_E_FACTORY_FAILED);
    CHECK_ERROR_HAS("no connection");
    CHECK(strcmp(order, "G S Single ") == 0);       /* last made first, each once */
    CHECK(S.made == 1 && S.dropped == 1 && G.dropped == 1 && Single.dropped == 1 && Top.made == 0);
    resolve(child, "S", &r);                        /* nothing was cached */
    release(r);
    CHECK(S.made == 2 && Single.made == 2);
    CHECK_OK(tether_container_free(child));
    CHECK(S.dropped == 2);
    CHECK_OK(tether_container_free(root));
    CHECK(Single.dropped == 2);
}

/* A request's child resolving through a plan (the second resolve of a key from any child records
 * it): the CONTAINER-scoped step is made once per child, over the child's value and the root's
 * cached singleton, kept by the child and let go of at its free, after what was made later. */
static void a_container_step_is_made_once_per_child_by_the_plan(void) {
    kind Single = {"Single", 0, 0}, S = {"S", 0, 0}, H = {"H", 0, 0}, V1 = {"V1", 0, 0}, V2 = {"V2", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, &Single, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(root, &S, TETHER_SCOPE_CONTAINER, "Req", "Single");
    reg(root, &H, TETHER_SCOPE_GRAPH, "S", NULL);
    tether_ref *r;
    release((resolve(root, "Single", &r), r));      /* cached, so plans take it */
    for (int round = 0; round < 3; round++) {       /* the first records, the others replay */
        kind *v = round % 2 ? &V2 : &V1;
        tether_container *child = new_container_in(root);
        node *value = value_of(v);
        CHECK_OK(tether_provide_value(child, "Req", value, drop_logged, v));
        tether_ref *h1, *h2;
        node *a = resolve(child, "H", &h1), *b = resolve(child, "H", &h2);
        CHECK(a != b && a->a == b->a);              /* one S per child, in both graphs */
        CHECK(a->a->a == value && a->a->b->k == &Single);
        CHECK(S.made == round + 1);
        release(h1);
        release(h2);
        CHECK(S.dropped == round);                  /* the child keeps it */
        order[0] = 0;
        CHECK_OK(tether_container_free(child));
        CHECK(strcmp(order, round % 2 ? "S V2 " : "S V1 ") == 0);
    }
    CHECK(S.dropped == 3 && H.made == 6 && H.dropped == 6 && Single.made == 1 && Single.dropped == 0);
    CHECK_OK(tether_container_free(root));
    CHECK(Single.dropped == 1);
}

/* A resolve whose plan made a CONTAINER-scoped step and then failed destroys it, caches nothing
 * (the next resolve makes it again) and leaves the cached singleton it took alone. */
static void a_failed_plan_destroys_its_container_step_and_caches_nothing(void) {
    kind Single = {"Single", 0, 0}, S = {"S", 0, 0}, Top = {"Top", 0, 0}, V = {"V", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, &Single, TETHER_SCOPE_SINGLETON, NULL, NULL);
    reg(root, &S, TETHER_SCOPE_CONTAINER, "Req", "Single");
    tether_param fp[] = {TETHER_CONTEXT};
    CHECK_OK(tether_register(root, "F", (tether_fn)make_failing, fp, 1, NULL));
    reg(root, &Top, TETHER_SCOPE_GRAPH, "S", "F");
    tether_ref *r;
    release((resolve(root, "Single", &r), r));
    for (int round = 0; round < 2; round++) {       /* built, then replayed by the plan */
        tether_container *child = new_container_in(root);
        CHECK_OK(tether_provide_value(child, "Req", value_of(&V), drop_logged, &V));
        order[0] = 0;
        CHECK_STATUS(tether_resolve(child, "Top", &r), TETHER_E_FACTORY_FAILED);
        CHECK_ERROR_HAS("no connection");
        CHECK(strcmp(order, "S ") == 0);            /* made, then destroyed once */
        CHECK(S.made == 2 * round + 1 && S.dropped == 2 * round + 1);
        node *s = resolve(child, "S", &r);          /* nothing was cached */
        CHECK(S.made == 2 * round + 2 && s->a->k == &V);
        release(r);
        CHECK_OK(tether_container_free(child));
        CHECK(S.dropped == 2 * round + 2 && V.dropped == round + 1);
    }
    CHECK(Top.made == 0 && Single.made == 1 && Single.dropped == 0);
    CHECK_OK(tether_container_free(root));
}

/* A value for a key a parent declared is the child's (a slot, no registration): a reset keeps it,
 * the child's descendants see it, registering the key in the child hides it and lets go of it. */
static void a_declared_value_lives_with_its_child(void) {
    kind H = {"H", 0, 0}, V = {"V", 0, 0}, R = {"R", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, &H, TETHER_SCOPE_GRAPH, "Req", NULL);
    tether_container *mid = new_container_in(root), *leaf = new_container_in(mid);
    node *value = value_of(&V);
    CHECK_OK(tether_provide_value(mid, "Req", value, drop_logged, &V));
    CHECK_OK(tether_reset(mid, TETHER_SCOPE_CONTAINER)); /* a value is not a cache */
    tether_ref *a, *b;
    for (int i = 0; i < 3; i++) {                   /* built, recorded, replayed */
        CHECK(resolve(leaf, "H", &a)->a == value);
        release(a);
    }
    CHECK(resolve(leaf, "Req", &a) == value);
    CHECK_STATUS(tether_resolve(root, "H", &b), TETHER_E_NOT_FOUND); /* the root has none */
    reg(mid, &R, TETHER_SCOPE_GRAPH, NULL, NULL);   /* an unrelated key changes nothing */
    CHECK(V.dropped == 0);
    reg_node(mid, "Req", &R, TETHER_SCOPE_GRAPH, NULL, NULL, drop_logged);
    CHECK(V.dropped == 0);                          /* hidden; the handle still holds it */
    CHECK(resolve(leaf, "H", &b)->a->k == &R);
    release(b);
    release(a);
    CHECK(V.dropped == 1);                          /* let go of with the registration that hid it */
    CHECK_OK(tether_container_free(leaf));
    CHECK_OK(tether_container_free(mid));
    CHECK(V.dropped == 1);
    CHECK_OK(tether_container_free(root));
}

/* A test's override of a declared key in the root reaches the children that provide it (their
 * values are slots under the declaration, which the override covers); cleared, they see their own. */
static void an_override_of_a_declared_key_reaches_childrens_values(void) {
    kind H = {"H", 0, 0}, V = {"V", 0, 0}, F = {"F", 0, 0};
    tether_container *root = new_container();
    CHECK_OK(tether_declare_value(root, "Req"));
    reg(root, &H, TETHER_SCOPE_GRAPH, "Req", NULL);
    tether_container *child = new_container_in(root);
    node *value = value_of(&V), *fake = value_of(&F);
    CHECK_OK(tether_provide_value(child, "Req", value, drop_logged, &V));
    tether_ref *r;
    CHECK(resolve(child, "H", &r)->a == value);
    release(r);
    CHECK_OK(tether_override(root, "Req", fake, drop_logged, &F));
    CHECK(resolve(child, "H", &r)->a == fake);
    release(r);
    CHECK_OK(tether_override_clear(root, "Req"));
    CHECK(resolve(child, "H", &r)->a == value && F.dropped == 1);
    release(r);
    CHECK_OK(tether_container_free(child));
    CHECK(V.dropped == 1);
    CHECK_OK(tether_container_free(root));
}

static void reregistering_drops_the_cached_singleton_once(void) {
    kind Old = {"Old", 0, 0}, New = {"New", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "S", &Old, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_logged);
    tether_ref *r;
    resolve(c, "S", &r);
    release(r);
    reg_node(c, "S", &New, TETHER_SCOPE_SINGLETON, NULL, NULL, drop_logged);
    CHECK(Old.dropped == 1);
    resolve(c, "S", &r);
    release(r);
    CHECK_OK(tether_container_free(c));
    CHECK(Old.dropped == 1 && New.dropped == 1);
}

int main(void) {
    RUN(declared_value_is_valid_but_missing_until_provided);
    RUN(each_child_provides_its_own_value);
    RUN(providing_again_drops_the_old_value_once);
    RUN(bad_values_are_refused);
    RUN(a_singleton_cannot_take_a_childs_value);
    RUN(container_scope_is_one_per_resolving_container);
    RUN(container_scope_reset_and_reregistration);
    RUN(container_scope_is_made_once_under_concurrent_resolves);
    RUN(freeing_drops_cached_instances_last_made_first);
    RUN(a_singleton_goes_before_what_it_needs);
    RUN(a_graph_goes_in_reverse_creation_order);
    RUN(a_cycle_goes_in_reverse_completion_order);
    RUN(a_failed_resolve_destroys_what_it_made_once_and_caches_nothing);
    RUN(reregistering_drops_the_cached_singleton_once);
    RUN(a_container_step_is_made_once_per_child_by_the_plan);
    RUN(a_failed_plan_destroys_its_container_step_and_caches_nothing);
    RUN(a_declared_value_lives_with_its_child);
    RUN(an_override_of_a_declared_key_reaches_childrens_values);
    return harness_finish();
}
