/* The binding protocol's table (tether_binding.h), opened once per test program: the tests call
 * its functions as TB.plan_describe(...), as a binding does. */
#ifndef TETHER_TEST_BINDING_H
#define TETHER_TEST_BINDING_H
#include <stdio.h>
#include <stdlib.h>
#include "tether_binding.h"

static tether_binding TB = TETHER_BINDING_INIT;

__attribute__((constructor)) static void open_binding(void) {
    if (tether_binding_open(&TB) != TETHER_OK) {
        fprintf(stderr, "tether_binding_open: %s\n", tether_last_error());
        abort();
    }
}
#endif
