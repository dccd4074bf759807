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

static int parents_made, children_made, parents_freed, children_freed;

static Child *make_child(void) {
    Child *child = calloc(1, sizeof *child);
    if (child) children_made++;
    return child;                        /* NULL fails the resolve */
}

static Parent *make_parent(Child *child) {
    Parent *parent = malloc(sizeof *parent);
    if (!parent) return NULL;
    parent->child = child;               /* kept alive by the container's edge */
    parents_made++;
    return parent;
}

/* Runs after every factory of the resolve has returned: the Parent exists. */
static tether_status child_completed(tether_resolver *r, void *instance, void *context) {
    (void)context;
    Child *child = instance;
    return tether_resolver_get_weak(r, "Parent", &child->parent);
}

static void free_parent(void *instance, void *context) {
    (void)context;
    parents_freed++;
    free(instance);
}

static void free_child(void *instance, void *context) {
    (void)context;
    Child *child = instance;
    if (child->parent) tether_weak_release(child->parent);   /* the child owns its weak handle */
    children_freed++;
    free(child);
}

#define TRY(call) do { tether_status st_ = (call); if (st_ != TETHER_OK) { \
    fprintf(stderr, "%s: %s\n  %s\n", #call, tether_status_name(st_), tether_last_error()); \
    return 1; } } while (0)

int main(void) {
    tether_container *c;
    tether_registration *parent_reg, *child_reg;
    tether_param parent_params[] = { TETHER_DEP("Child") };

    TRY(tether_container_new(NULL, &c));
    TRY(tether_register(c, "Parent", (tether_fn)make_parent, parent_params, 1, &parent_reg));
    TRY(tether_set_context(parent_reg, NULL, free_parent));
    TRY(tether_register(c, "Child", (tether_fn)make_child, NULL, 0, &child_reg));
    TRY(tether_set_context(child_reg, NULL, free_child));
    TRY(tether_on_complete(child_reg, child_completed, NULL));
    TRY(tether_validate(c));             /* checks the declared graph, runs nothing */

    tether_ref *ref;
    TRY(tether_resolve(c, "Parent", &ref));
    Parent *parent = tether_ref_get(ref);

    tether_ref *back;                    /* follow the weak edge back up */
    TRY(tether_weak_upgrade(parent->child->parent, &back));
    int same = tether_ref_get(back) == parent;
    TRY(tether_ref_release(back));

    printf("Tether %s: Parent(child) with a weak back-reference child->parent\n", tether_version());
    printf("  parent->child->parent == parent: %s\n", same ? "yes" : "NO");
    printf("  factories ran: Parent %d, Child %d (once each)\n", parents_made, children_made);

    char *dot;
    TRY(tether_export_dot(c, &dot));
    TRY(tether_ref_release(ref));        /* last handle: Parent goes, then its Child */
    printf("  handle released, destructors ran: Parent %d, Child %d\n", parents_freed, children_freed);
    TRY(tether_container_free(c));

    printf("\nThe declared graph as Graphviz DOT (render with `dot -Tsvg`):\n%s", dot);
    tether_string_free(dot);

    int ok = same && parents_made == 1 && children_made == 1 && parents_freed == 1 && children_freed == 1;
    return ok ? 0 : 1;
}
