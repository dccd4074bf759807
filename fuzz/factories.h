/* Factories of every prototype api_fuzz.c registers, one per sequence of ABI classes:
 * u = an integer-register slot (DEP, WEAK, LAZY, WEAK_LAZY, CONTEXT, RESOLVER, I64, STR, PTR), d = F64.
 * Every mix up to 4 slots, all-integer lists of 5 to 10 slots (9 and 10 go through libffi).
 * Each collects its arguments by class, in order, for fuzz_factory(proto, ints, doubles). */
static void *fac_void(void) { uint64_t i[] = {0}; double d[] = {0}; return fuzz_factory(0, i + 1, 0, d + 1, 0); }
static void *fac_u(uint64_t a0) { uint64_t i[] = {0, a0}; double d[] = {0}; return fuzz_factory(1, i + 1, 1, d + 1, 0); }
static void *fac_d(double a0) { uint64_t i[] = {0}; double d[] = {0, a0}; return fuzz_factory(2, i + 1, 0, d + 1, 1); }
static void *fac_uu(uint64_t a0, uint64_t a1) { uint64_t i[] = {0, a0, a1}; double d[] = {0}; return fuzz_factory(3, i + 1, 2, d + 1, 0); }
static void *fac_du(double a0, uint64_t a1) { uint64_t i[] = {0, a1}; double d[] = {0, a0}; return fuzz_factory(4, i + 1, 1, d + 1, 1); }
static void *fac_ud(uint64_t a0, double a1) { uint64_t i[] = {0, a0}; double d[] = {0, a1}; return fuzz_factory(5, i + 1, 1, d + 1, 1); }
static void *fac_dd(double a0, double a1) { uint64_t i[] = {0}; double d[] = {0, a0, a1}; return fuzz_factory(6, i + 1, 0, d + 1, 2); }
static void *fac_uuu(uint64_t a0, uint64_t a1, uint64_t a2) { uint64_t i[] = {0, a0, a1, a2}; double d[] = {0}; return fuzz_factory(7, i + 1, 3, d + 1, 0); }
static void *fac_duu(double a0, uint64_t a1, uint64_t a2) { uint64_t i[] = {0, a1, a2}; double d[] = {0, a0}; return fuzz_factory(8, i + 1, 2, d + 1, 1); }
static void *fac_udu(uint64_t a0, double a1, uint64_t a2) { uint64_t i[] = {0, a0, a2}; double d[] = {0, a1}; return fuzz_factory(9, i + 1, 2, d + 1, 1); }
static void *fac_ddu(double a0, double a1, uint64_t a2) { uint64_t i[] = {0, a2}; double d[] = {0, a0, a1}; return fuzz_factory(10, i + 1, 1, d + 1, 2); }
static void *fac_uud(uint64_t a0, uint64_t a1, double a2) { uint64_t i[] = {0, a0, a1}; double d[] = {0, a2}; return fuzz_factory(11, i + 1, 2, d + 1, 1); }
static void *fac_dud(double a0, uint64_t a1, double a2) { uint64_t i[] = {0, a1}; double d[] = {0, a0, a2}; return fuzz_factory(12, i + 1, 1, d + 1, 2); }
static void *fac_udd(uint64_t a0, double a1, double a2) { uint64_t i[] = {0, a0}; double d[] = {0, a1, a2}; return fuzz_factory(13, i + 1, 1, d + 1, 2); }
static void *fac_ddd(double a0, double a1, double a2) { uint64_t i[] = {0}; double d[] = {0, a0, a1, a2}; return fuzz_factory(14, i + 1, 0, d + 1, 3); }
static void *fac_uuuu(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3) { uint64_t i[] = {0, a0, a1, a2, a3}; double d[] = {0}; return fuzz_factory(15, i + 1, 4, d + 1, 0); }
static void *fac_duuu(double a0, uint64_t a1, uint64_t a2, uint64_t a3) { uint64_t i[] = {0, a1, a2, a3}; double d[] = {0, a0}; return fuzz_factory(16, i + 1, 3, d + 1, 1); }
static void *fac_uduu(uint64_t a0, double a1, uint64_t a2, uint64_t a3) { uint64_t i[] = {0, a0, a2, a3}; double d[] = {0, a1}; return fuzz_factory(17, i + 1, 3, d + 1, 1); }
static void *fac_dduu(double a0, double a1, uint64_t a2, uint64_t a3) { uint64_t i[] = {0, a2, a3}; double d[] = {0, a0, a1}; return fuzz_factory(18, i + 1, 2, d + 1, 2); }
static void *fac_uudu(uint64_t a0, uint64_t a1, double a2, uint64_t a3) { uint64_t i[] = {0, a0, a1, a3}; double d[] = {0, a2}; return fuzz_factory(19, i + 1, 3, d + 1, 1); }
static void *fac_dudu(double a0, uint64_t a1, double a2, uint64_t a3) { uint64_t i[] = {0, a1, a3}; double d[] = {0, a0, a2}; return fuzz_factory(20, i + 1, 2, d + 1, 2); }
static void *fac_uddu(uint64_t a0, double a1, double a2, uint64_t a3) { uint64_t i[] = {0, a0, a3}; double d[] = {0, a1, a2}; return fuzz_factory(21, i + 1, 2, d + 1, 2); }
static void *fac_dddu(double a0, double a1, double a2, uint64_t a3) { uint64_t i[] = {0, a3}; double d[] = {0, a0, a1, a2}; return fuzz_factory(22, i + 1, 1, d + 1, 3); }
static void *fac_uuud(uint64_t a0, uint64_t a1, uint64_t a2, double a3) { uint64_t i[] = {0, a0, a1, a2}; double d[] = {0, a3}; return fuzz_factory(23, i + 1, 3, d + 1, 1); }
static void *fac_duud(double a0, uint64_t a1, uint64_t a2, double a3) { uint64_t i[] = {0, a1, a2}; double d[] = {0, a0, a3}; return fuzz_factory(24, i + 1, 2, d + 1, 2); }
static void *fac_udud(uint64_t a0, double a1, uint64_t a2, double a3) { uint64_t i[] = {0, a0, a2}; double d[] = {0, a1, a3}; return fuzz_factory(25, i + 1, 2, d + 1, 2); }
static void *fac_ddud(double a0, double a1, uint64_t a2, double a3) { uint64_t i[] = {0, a2}; double d[] = {0, a0, a1, a3}; return fuzz_factory(26, i + 1, 1, d + 1, 3); }
static void *fac_uudd(uint64_t a0, uint64_t a1, double a2, double a3) { uint64_t i[] = {0, a0, a1}; double d[] = {0, a2, a3}; return fuzz_factory(27, i + 1, 2, d + 1, 2); }
static void *fac_dudd(double a0, uint64_t a1, double a2, double a3) { uint64_t i[] = {0, a1}; double d[] = {0, a0, a2, a3}; return fuzz_factory(28, i + 1, 1, d + 1, 3); }
static void *fac_uddd(uint64_t a0, double a1, double a2, double a3) { uint64_t i[] = {0, a0}; double d[] = {0, a1, a2, a3}; return fuzz_factory(29, i + 1, 1, d + 1, 3); }
static void *fac_dddd(double a0, double a1, double a2, double a3) { uint64_t i[] = {0}; double d[] = {0, a0, a1, a2, a3}; return fuzz_factory(30, i + 1, 0, d + 1, 4); }
static void *fac_uuuuu(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4) { uint64_t i[] = {0, a0, a1, a2, a3, a4}; double d[] = {0}; return fuzz_factory(31, i + 1, 5, d + 1, 0); }
static void *fac_uuuuuu(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5) { uint64_t i[] = {0, a0, a1, a2, a3, a4, a5}; double d[] = {0}; return fuzz_factory(32, i + 1, 6, d + 1, 0); }
static void *fac_uuuuuuu(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6) { uint64_t i[] = {0, a0, a1, a2, a3, a4, a5, a6}; double d[] = {0}; return fuzz_factory(33, i + 1, 7, d + 1, 0); }
static void *fac_uuuuuuuu(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7) { uint64_t i[] = {0, a0, a1, a2, a3, a4, a5, a6, a7}; double d[] = {0}; return fuzz_factory(34, i + 1, 8, d + 1, 0); }
static void *fac_uuuuuuuuu(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8) { uint64_t i[] = {0, a0, a1, a2, a3, a4, a5, a6, a7, a8}; double d[] = {0}; return fuzz_factory(35, i + 1, 9, d + 1, 0); }
static void *fac_uuuuuuuuuu(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8, uint64_t a9) { uint64_t i[] = {0, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9}; double d[] = {0}; return fuzz_factory(36, i + 1, 10, d + 1, 0); }

/* Indexed by proto_of(): (1 << n) - 1 + mask for n <= 4 slots (bit k set: slot k is F64), then 31 + n - 5. */
static const tether_fn factories[] = {
    (tether_fn)fac_void, (tether_fn)fac_u, (tether_fn)fac_d, (tether_fn)fac_uu,
    (tether_fn)fac_du, (tether_fn)fac_ud, (tether_fn)fac_dd, (tether_fn)fac_uuu,
    (tether_fn)fac_duu, (tether_fn)fac_udu, (tether_fn)fac_ddu, (tether_fn)fac_uud,
    (tether_fn)fac_dud, (tether_fn)fac_udd, (tether_fn)fac_ddd, (tether_fn)fac_uuuu,
    (tether_fn)fac_duuu, (tether_fn)fac_uduu, (tether_fn)fac_dduu, (tether_fn)fac_uudu,
    (tether_fn)fac_dudu, (tether_fn)fac_uddu, (tether_fn)fac_dddu, (tether_fn)fac_uuud,
    (tether_fn)fac_duud, (tether_fn)fac_udud, (tether_fn)fac_ddud, (tether_fn)fac_uudd,
    (tether_fn)fac_dudd, (tether_fn)fac_uddd, (tether_fn)fac_dddd, (tether_fn)fac_uuuuu,
    (tether_fn)fac_uuuuuu, (tether_fn)fac_uuuuuuu, (tether_fn)fac_uuuuuuuu, (tether_fn)fac_uuuuuuuuu,
    (tether_fn)fac_uuuuuuuuuu,
};
