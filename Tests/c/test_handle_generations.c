/* Handle generations: a released handle never becomes equal to a later handle
 * of its slot, however often the slot is reused (before: 24 bits, so the
 * 2^24th reuse of a slot made a released tether_ref bit-identical to a live one). */
#include "fixtures.h"

static void released_ref_stays_stale_across_2_pow_24_reuses(void) {
    kind A = {"A", 0, 0};
    tether_container *c = new_container();
    reg_node(c, "A", &A, TETHER_SCOPE_GRAPH, NULL, NULL, drop_node);
    tether_ref *ref;
    resolve(c, "A", &ref);
    tether_ref *stale = NULL;
    CHECK_OK(tether_ref_clone(ref, &stale));
    CHECK_OK(tether_ref_release(stale));
    /* a freed slot is the next one its thread takes: every clone below reuses stale's slot */
    long collisions = 0, failures = 0;
    for (long i = 0; i < (1L << 24) + 16; i++) {
        tether_ref *again = NULL;
        if (tether_ref_clone(ref, &again) != TETHER_OK) { failures++; continue; }
        if (again == stale) collisions++;
        if (tether_ref_release(again) != TETHER_OK) failures++;
    }
    CHECK(failures == 0);
    CHECK(collisions == 0);
    CHECK_STATUS(tether_ref_release(stale), TETHER_E_INVALID_HANDLE);
    CHECK_ERROR_HAS("already released");
    CHECK(tether_ref_get(ref) != NULL);    /* the live handle was not released through the stale one */
    CHECK_OK(tether_ref_release(ref));
    CHECK(A.made == 1 && A.dropped == 1);
    CHECK_OK(tether_container_free(c));
}

int main(void) {
    RUN(released_ref_stays_stale_across_2_pow_24_reuses);
    return harness_finish();
}
