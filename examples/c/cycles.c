/* cycles.c: Tether's headline in one screen.
 *
 * A Parent needs its Child through its constructor, and the Child points back
 * at its Parent. Nothing can build that with constructors alone, so the back
 * edge is patched in after both exist, by a completion callback, as a weak
 * handle (a strong one would be a retain cycle: Tether refuses those).
 *
 *   Parent(child)    factory parameter: the Child of this resolve
 *   Child.parent     weak, set by Child's completion callback
 *
 * Build and run: make demo
 */
#include <stdio.h>
#include <stdlib.h>
#include <tether.h>

typedef struct Child  { tether_weak *parent; } Child;
typedef struct Parent { Child *child; } Parent;

static int made, freed;

static void *make_child(void) {
    Child *child = calloc(1, sizeof *child);
    made += child != NULL;
    return child;                        /* NULL fails the resolve */
}

static void *make_parent(Child *child) { /* the slot is checked: TETHER_REGISTER1 below */
    Parent *parent = malloc(sizeof *parent);
    if (!parent) return NULL;
    parent->child = child;               /* kept alive by the container's edge */
    made++;
    return parent;
}

/* Runs after every factory of the resolve has returned: the Parent exists. */
static tether_status child_completed(tether_resolver *r, void *child, void *context) {
    (void)context;
    return tether_resolver_get_weak(r, "Parent", &((Child *)child)->parent);
}

static void free_child(void *child, void *context) {
    (void)context;
    tether_weak_release(((Child *)child)->parent);   /* the child owns its weak handle */
    freed++;
    free(child);
}

static void free_parent(void *parent, void *context) { (void)context; freed++; free(parent); }

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n  %s\n", what, tether_status_name(tether_last_status()), tether_last_error());
    return 1;
}

int main(void) {
    tether_container *c;
    if (tether_container_new(NULL, &c) != TETHER_OK) return fail("tether_container_new");
    tether_completion completed = { .fn = child_completed };
    tether_options child = TETHER_OPTIONS_INIT, parent = TETHER_OPTIONS_INIT;
    child.drop = free_child;
    child.callbacks = &completed;
    child.callback_count = 1;
    parent.drop = free_parent;
    if (TETHER_REGISTER0(c, "Child", &child, NULL, make_child) != TETHER_OK ||
        TETHER_REGISTER1(c, "Parent", &parent, NULL, make_parent, TETHER_AS(TETHER_DEP("Child"), Child *)) != TETHER_OK)
        return fail("register");
    if (tether_validate(c) != TETHER_OK) return fail("tether_validate");   /* checks the graph, runs nothing */

    tether_ref *keep, *back;
    Parent *p = tether_get(c, "Parent", &keep);
    if (!p) return fail("tether_get");
    int same = tether_weak_get(p->child->parent, &back) == p;             /* follow the weak edge back up */
    tether_ref_release(back);
    printf("Tether %s: Parent(child) with a weak back-reference child->parent\n", tether_version());
    printf("  parent->child->parent == parent: %s\n", same ? "yes" : "NO");
    printf("  factories ran: %d (Parent and Child, once each)\n", made);

    char *dot;
    if (tether_export_dot(c, &dot) != TETHER_OK) return fail("tether_export_dot");
    tether_ref_release(keep);            /* last handle: Parent goes, then its Child */
    printf("  handle released, destructors ran: %d\n", freed);
    if (tether_container_free(c) != TETHER_OK) return fail("tether_container_free");
    printf("\nThe declared graph as Graphviz DOT (render with `dot -Tsvg`):\n%s", dot);
    tether_string_free(dot);
    return same && made == 2 && freed == 2 ? 0 : 1;
}
