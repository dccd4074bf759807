/* Compiled once per CASE by `make test-compile-fail`, as C11 and as C++17, without
 * -Werror: CASE 0 must compile, every other CASE must be rejected by the compiler,
 * because the factory's prototype disagrees with the slots TETHER_REGISTERn declares. */
#include <tether.h>

static void *make_ok(void *dep, int64_t n) { (void)dep; (void)n; return 0; }
static void *make_two(void *a, void *b) { (void)a; (void)b; return 0; }
static void *make_swapped(int64_t n, void *dep) { (void)dep; (void)n; return 0; }
static void *make_int(int64_t n) { (void)n; return 0; }
static int make_returns_int(void) { return 0; }
static void *make_plain_pointer(void *weak) { (void)weak; return 0; }
static void *make_list_factory(const tether_list *all, tether_factory *f) { (void)all; (void)f; return 0; }
static void *make_list(const tether_list *all) { (void)all; return 0; }

int main(void) {
    tether_container *c = 0;
    tether_status st = TETHER_OK;
    (void)make_ok; (void)make_two; (void)make_swapped; (void)make_int; (void)make_returns_int; (void)make_plain_pointer;
    (void)make_list_factory; (void)make_list;
#if CASE == 0
    st = TETHER_REGISTER2(c, "K", NULL, NULL, make_ok, TETHER_DEP("D"), TETHER_I64);     /* matches */
    st = TETHER_REGISTER2(c, "K", NULL, NULL, make_list_factory, TETHER_ALL("D"), TETHER_FACTORY("E"));
#elif CASE == 1
    st = TETHER_REGISTER1(c, "K", NULL, NULL, make_two, TETHER_DEP("D"));                /* 2 params, 1 slot */
#elif CASE == 2
    st = TETHER_REGISTER2(c, "K", NULL, NULL, make_swapped, TETHER_DEP("D"), TETHER_I64); /* order swapped */
#elif CASE == 3
    st = TETHER_REGISTER1(c, "K", NULL, NULL, make_int, TETHER_F64);                     /* int64_t for F64 */
#elif CASE == 4
    st = TETHER_REGISTER0(c, "K", NULL, NULL, make_returns_int);                         /* returns int */
#elif CASE == 5
    st = TETHER_REGISTER1(c, "K", NULL, NULL, make_plain_pointer, TETHER_WEAK("D"));     /* void * for WEAK */
#elif CASE == 6
    st = TETHER_REGISTER1(c, "K", NULL, NULL, make_plain_pointer, TETHER_ALL("D"));      /* void * for ALL */
#elif CASE == 7
    st = TETHER_REGISTER1(c, "K", NULL, NULL, make_list, TETHER_FACTORY("D"));           /* a list for FACTORY */
#endif
    return st == TETHER_OK ? 0 : 1;
}
