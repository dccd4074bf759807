/* Every slot kind in one graph, resolved again and again: the recorded plan runs it (issue 28
 * item 1) with the same
 * instances, handles, factory and destructor counts and order.
 *
 *   Root(CONTEXT, DEP Child, ALL Plugin, FACTORY Gadget, WEAK Child)
 *   Child(CONTEXT, WEAK_LAZY Root, WEAK Leaf)      the README's cycle: Child points back at Root
 *   Plugin, Plugin#b (transient), Leaf (transient), Gadget(CONTEXT, I64)
 *
 * Child's provider answers the graph's Root (never a second one); Root's WEAK handle upgrades
 * to its own Child; a Leaf made only for a WEAK slot is gone once the resolve returns; the ALL
 * list has both plugins, held by Root; the FACTORY handle builds a Gadget from its argument. */
#include <stdlib.h>
#include "harness.h"
#include "fixtures.h"

typedef struct child { kind *k; tether_provider back; tether_weak *leaf; } child;
typedef struct root {
    kind *k;
    child *child;
    size_t plugins;
    void *plugin[2];
    tether_factory *gadget;
    tether_weak *weak_child;
} root;
typedef struct gadget { kind *k; int64_t n; } gadget;

static kind kroot, kchild, kplugin, kplugin_b, kleaf, kgadget;
static char drops[256];  /* the tags of the destructors run, in order */

static void note_drop(kind *k) {
    k->dropped++;
    strncat(drops, k->tag, sizeof drops - strlen(drops) - 2);
    strncat(drops, " ", sizeof drops - strlen(drops) - 1);
}
static void *make_root(kind *k, child *c, const tether_list *plugins, tether_factory *f, tether_weak *w) {
    root *r = xcalloc(sizeof *r);
    r->k = k, r->child = c, r->plugins = plugins->count, r->gadget = f, r->weak_child = w;
    for (size_t i = 0; i < plugins->count && i < 2; i++) r->plugin[i] = plugins->items[i];
    k->made++;
    return r;
}
static void drop_root(void *instance, void *context) {
    root *r = instance;
    CHECK_OK(tether_weak_release(r->weak_child));
    CHECK_OK(tether_factory_release(r->gadget));
    note_drop(context);
    free(r);
}
static void *make_child(kind *k, tether_provider back, tether_weak *leaf) {
    child *c = xcalloc(sizeof *c);
    c->k = k, c->back = back, c->leaf = leaf;
    k->made++;
    return c;
}
static void drop_child(void *instance, void *context) {
    child *c = instance;
    CHECK_OK(tether_weak_release(c->leaf));
    note_drop(context);
    free(c);
}
static void *make_gadget(kind *k, int64_t n) {
    gadget *g = xcalloc(sizeof *g);
    g->k = k, g->n = n;
    k->made++;
    return g;
}
static void drop_counted(void *instance, void *context) { note_drop(context); free(instance); }

static tether_container *every_slot_kind(void) {
    kind *kinds[] = {&kroot, &kchild, &kplugin, &kplugin_b, &kleaf, &kgadget};
    const char *tags[] = {"Root", "Child", "Plugin", "Plugin#b", "Leaf", "Gadget"};
    for (int i = 0; i < 6; i++) memset(kinds[i], 0, sizeof *kinds[i]), kinds[i]->tag = tags[i];
    drops[0] = 0;
    tether_container *c = new_container();
    tether_param proot[] = {TETHER_CONTEXT, TETHER_DEP("Child"), TETHER_ALL("Plugin"), TETHER_FACTORY("Gadget"),
                            TETHER_WEAK("Child")};
    tether_param pchild[] = {TETHER_CONTEXT, TETHER_WEAK_LAZY("Root"), TETHER_WEAK("Leaf")};
    tether_param pleaf[] = {TETHER_CONTEXT};
    tether_param pgadget[] = {TETHER_CONTEXT, TETHER_I64};
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &kroot, o.drop = drop_root;
    CHECK_OK(tether_register_with(c, "Root", (tether_fn)make_root, proot, 5, &o, NULL));
    o = (tether_options)TETHER_OPTIONS_INIT, o.context = &kchild, o.drop = drop_child;
    CHECK_OK(tether_register_with(c, "Child", (tether_fn)make_child, pchild, 3, &o, NULL));
    o = (tether_options)TETHER_OPTIONS_INIT, o.context = &kplugin, o.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "Plugin", (tether_fn)make0, pleaf, 1, &o, NULL));
    o.context = &kplugin_b, o.scope = TETHER_SCOPE_TRANSIENT;
    CHECK_OK(tether_register_with(c, "Plugin#b", (tether_fn)make0, pleaf, 1, &o, NULL));
    o.context = &kleaf;
    CHECK_OK(tether_register_with(c, "Leaf", (tether_fn)make0, pleaf, 1, &o, NULL));
    o = (tether_options)TETHER_OPTIONS_INIT, o.context = &kgadget, o.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "Gadget", (tether_fn)make_gadget, pgadget, 2, &o, NULL));
    return c;
}

static void test_every_slot_kind_resolves_alike_again_and_again(void) {
    tether_container *c = every_slot_kind();
    CHECK_OK(tether_validate(c));
    for (int i = 1; i <= 4; i++) {
        tether_ref *keep = NULL, *held = NULL;
        CHECK_OK(tether_resolve(c, "Root", &keep));
        root *r = keep ? tether_ref_get(keep) : NULL;
        CHECK(r && r->child);
        if (!r || !r->child) break;
        /* The README's cycle: the graph's Root, never a second one. */
        CHECK(r->child->back() == r);
        CHECK(kroot.made == i && kchild.made == i);
        /* WEAK: Root's handle is its own Child's; the Leaf only a weak slot took is gone. */
        CHECK_OK(tether_weak_upgrade(r->weak_child, &held));
        CHECK(held && tether_ref_get(held) == r->child);
        CHECK_OK(tether_ref_release(held));
        CHECK_STATUS(tether_weak_upgrade(r->child->leaf, &held), TETHER_E_EXPIRED);
        CHECK(kleaf.made == i && kleaf.dropped == i);
        /* ALL: both plugins, in registration order, held by Root. */
        CHECK(r->plugins == 2 && ((node *)r->plugin[0])->k == &kplugin && ((node *)r->plugin[1])->k == &kplugin_b);
        CHECK(kplugin.made == i && kplugin_b.made == i && kplugin.dropped == i - 1 && kplugin_b.dropped == i - 1);
        /* FACTORY: builds a Gadget with its argument, from the resolving container. */
        tether_value seven = TETHER_VAL_I64(7);
        tether_ref *made = NULL;
        CHECK_OK(tether_factory_call(r->gadget, &seven, 1, &made));
        CHECK(made && ((gadget *)tether_ref_get(made))->n == 7);
        CHECK_OK(tether_ref_release(made));
        drops[0] = 0;
        CHECK_OK(tether_ref_release(keep));
        /* Root first, then its strong edges last first: the ALL items, then Child. */
        CHECK(strcmp(drops, "Root Plugin#b Plugin Child ") == 0);
        if (strcmp(drops, "Root Plugin#b Plugin Child ") != 0) fprintf(stderr, "  drops: %s\n", drops);
        CHECK(kroot.dropped == i && kchild.dropped == i && kplugin.dropped == i && kplugin_b.dropped == i);
        CHECK(kgadget.made == i && kgadget.dropped == i);
    }
    CHECK_OK(tether_container_free(c));
}

/* A factory that fails after every slot kind was filled: what was made is destroyed once,
 * dependents first, and the error names the path, on the plan as in the build. */
static void *failing_root(kind *k, child *c, const tether_list *plugins, tether_factory *f, tether_weak *w) {
    (void)k, (void)c, (void)plugins;
    tether_factory_release(f);  /* the receiver owns its handles even when it fails */
    tether_weak_release(w);
    return NULL;
}

static void test_a_failing_factory_with_every_slot_kind_destroys_what_was_made(void) {
    tether_container *c = every_slot_kind();
    tether_param proot[] = {TETHER_CONTEXT, TETHER_DEP("Child"), TETHER_ALL("Plugin"), TETHER_FACTORY("Gadget"),
                            TETHER_WEAK("Child")};
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &kroot, o.drop = drop_root;
    CHECK_OK(tether_register_with(c, "Top", (tether_fn)failing_root, proot, 5, &o, NULL));
    for (int i = 1; i <= 3; i++) {
        tether_ref *out = NULL;
        drops[0] = 0;
        CHECK_STATUS(tether_resolve(c, "Top", &out), TETHER_E_FACTORY_FAILED);
        CHECK_ERROR_HAS("factory for \"Top\" returned NULL");
        CHECK(out == NULL);
        /* The newest first, as made: the plugins, the Child, the Leaf (made for the Child's WEAK slot). */
        CHECK(strcmp(drops, "Plugin#b Plugin Child Leaf ") == 0);
        if (strcmp(drops, "Plugin#b Plugin Child Leaf ") != 0) fprintf(stderr, "  drops: %s\n", drops);
        CHECK(kchild.made == i && kchild.dropped == i && kplugin.dropped == i && kleaf.dropped == i && kroot.made == 0);
    }
    CHECK_OK(tether_container_free(c));
}

/* From a request's child, H's LAZY slot of a CONTAINER-scoped Session and WEAK_LAZY slot of the declared
 * value Request: the plan makes no step of either (no decline), and each provider answers the child's
 * own: its Session (made on the first call, cached there: the one tether_resolve gives), its Request. */
typedef struct hreq { kind *k; tether_provider session; tether_provider request; } hreq;
static kind khreq, ksession, krequest;
static void *make_hreq(kind *k, tether_provider session, tether_provider request) {
    hreq *h = xcalloc(sizeof *h);
    h->k = k, h->session = session, h->request = request;
    k->made++;
    return h;
}

static void test_lazy_slots_of_a_container_scoped_and_a_value_key_answer_the_childs(void) {
    kind *kinds[] = {&khreq, &ksession, &krequest};
    const char *tags[] = {"H", "Session", "Request"};
    for (int i = 0; i < 3; i++) memset(kinds[i], 0, sizeof *kinds[i]), kinds[i]->tag = tags[i];
    tether_container *c = new_container();
    CHECK_OK(tether_declare_value(c, "Request"));
    tether_param ph[] = {TETHER_CONTEXT, TETHER_LAZY("Session"), TETHER_WEAK_LAZY("Request")}, psession[] = {TETHER_CONTEXT};
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &khreq, o.drop = drop_counted;
    CHECK_OK(tether_register_with(c, "H", (tether_fn)make_hreq, ph, 3, &o, NULL));
    o.context = &ksession, o.scope = TETHER_SCOPE_CONTAINER;
    CHECK_OK(tether_register_with(c, "Session", (tether_fn)make0, psession, 1, &o, NULL));
    for (int n = 1; n <= 3; n++) {
        tether_container *child = new_container_in(c);
        node *request = node_new(&krequest, NULL, NULL);
        CHECK_OK(tether_provide_value(child, "Request", request, drop_counted, &krequest));
        tether_ref *r1 = NULL, *r2 = NULL, *session = NULL;
        CHECK_OK(tether_resolve(child, "H", &r1));
        CHECK_OK(tether_resolve(child, "H", &r2));
        hreq *h1 = r1 ? tether_ref_get(r1) : NULL, *h2 = r2 ? tether_ref_get(r2) : NULL;
        CHECK(h1 && h2 && h1 != h2);
        if (!h1 || !h2) break;
        CHECK(ksession.made == n - 1);  /* not made until a provider asks */
        void *s1 = h1->session();
        CHECK_OK(tether_resolve(child, "Session", &session));
        CHECK(s1 && s1 == h2->session() && session && s1 == tether_ref_get(session));
        CHECK(h1->request() == request && h2->request() == request);
        CHECK(ksession.made == n && khreq.made == 2 * n);
        CHECK_OK(tether_ref_release(session));
        CHECK_OK(tether_ref_release(r1));
        CHECK_OK(tether_ref_release(r2));
        CHECK_OK(tether_container_free(child));
        CHECK(khreq.dropped == 2 * n && ksession.dropped == n && krequest.dropped == n);
    }
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(test_every_slot_kind_resolves_alike_again_and_again);
    RUN(test_a_failing_factory_with_every_slot_kind_destroys_what_was_made);
    RUN(test_lazy_slots_of_a_container_scoped_and_a_value_key_answer_the_childs);
    return harness_finish();
}
