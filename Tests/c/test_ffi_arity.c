/* Factories of any arity through libffi: arities 0, 1, 2, 5, 16, every slot kind
 * (DEP, WEAK, CONTEXT, RESOLVER, I64, F64, STR, PTR), doubles mixed with pointers
 * and int64s in odd positions (so that both register files and the stack are used),
 * and a C variadic factory. Every factory stores what it received into the
 * instance; the tests compare those values exactly after the resolve. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include "harness.h"

/* ---- recording instances ------------------------------------------------- */

enum { MAX_SLOTS = 16 };

/* One received argument, tagged with the kind of slot it came through. */
typedef struct slot {
    tether_param_kind kind;
    int64_t i64;
    double f64;
    void *ptr;          /* DEP, WEAK (a tether_weak *), CONTEXT, RESOLVER, PTR, STR (the pointer) */
    char str[64];       /* STR: a copy, since the string is borrowed for the call only */
} slot;

typedef struct rec {
    int count;
    slot v[MAX_SLOTS];
    void *extra;        /* what a factory fetched through its resolver */
} rec;

/* Leaves: the instances dependency slots point at. The tag says which key made it. */
typedef struct leaf { int tag; } leaf;

static int created, destroyed;

static rec *rec_new(void) { created++; return calloc(1, sizeof(rec)); }
static void put_i64(rec *r, int64_t x) { r->v[r->count].kind = TETHER_PARAM_I64; r->v[r->count++].i64 = x; }
static void put_f64(rec *r, double x) { r->v[r->count].kind = TETHER_PARAM_F64; r->v[r->count++].f64 = x; }
static void put_ptr(rec *r, tether_param_kind k, void *p) { r->v[r->count].kind = k; r->v[r->count++].ptr = p; }
static void put_str(rec *r, const char *s) {
    slot *sl = &r->v[r->count++];
    sl->kind = TETHER_PARAM_STR;
    sl->ptr = (void *)s;
    if (s) snprintf(sl->str, sizeof sl->str, "%s", s);
}

/* Destructor of every rec: a WEAK slot's handle belongs to the receiver. */
static void drop_rec(void *instance, void *context) {
    (void)context;
    rec *r = instance;
    for (int i = 0; i < r->count; i++)
        if (r->v[i].kind == TETHER_PARAM_WEAK && r->v[i].ptr) tether_weak_release(r->v[i].ptr);
    free(r);
    destroyed++;
}

static int tags[MAX_SLOTS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const char *leaf_keys[MAX_SLOTS] = {"L0", "L1", "L2", "L3", "L4", "L5", "L6", "L7",
                                           "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15"};

static void *make_leaf(void *ctx) {
    leaf *l = malloc(sizeof *l);
    l->tag = *(int *)ctx;
    created++;
    return l;
}
static void drop_leaf(void *instance, void *context) { (void)context; free(instance); destroyed++; }

/* A container with 16 singleton leaves L0..L15 (tag = index). */
static tether_container *new_container(void) {
    tether_container *c = NULL;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_param ctx = TETHER_CONTEXT;
    for (int i = 0; i < MAX_SLOTS; i++) {
        tether_registration *reg = NULL;
        CHECK_OK(tether_register(c, leaf_keys[i], (tether_fn)make_leaf, &ctx, 1, &reg));
        CHECK_OK(tether_set_scope(reg, TETHER_SCOPE_SINGLETON));
        CHECK_OK(tether_set_context(reg, &tags[i], drop_leaf));
    }
    return c;
}

/* Registers `fn` under `key` with `params`, destructor drop_rec and context `ctx`. */
static tether_registration *reg_rec(tether_container *c, const char *key, tether_fn fn,
                                    const tether_param *params, size_t n, void *ctx) {
    tether_registration *reg = NULL;
    CHECK_OK(tether_register(c, key, fn, params, n, &reg));
    if (reg) CHECK_OK(tether_set_context(reg, ctx, drop_rec));
    return reg;
}

/* The singleton instance of leaf key i (resolved separately, for identity checks). */
static void *leaf_instance(tether_container *c, int i) {
    tether_ref *r = NULL;
    CHECK_OK(tether_resolve(c, leaf_keys[i], &r));
    void *p = tether_ref_get(r);
    CHECK_OK(tether_ref_release(r)); /* the singleton cache still holds it */
    return p;
}

/* Bitwise equality, so that -0.0, subnormals and NaN payloads count too. */
static int same_f64(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void finish(tether_container *c) {
    CHECK_OK(tether_container_free(c));
    CHECK(created == destroyed);
}

static void reset_counts(void) { created = destroyed = 0; }

/* ---- factories ----------------------------------------------------------- */

static int f0_calls;
static void *f0(void) { f0_calls++; return rec_new(); }

static void *f1_ctx(void *ctx) { rec *r = rec_new(); put_ptr(r, TETHER_PARAM_CONTEXT, ctx); return r; }

static void *f2_dep_i64(void *dep, int64_t x) {
    rec *r = rec_new(); put_ptr(r, TETHER_PARAM_DEP, dep); put_i64(r, x); return r;
}

/* f(void*, double, int64_t, double, const char*) */
static void *f5_mixed(void *p, double a, int64_t i, double b, const char *s) {
    rec *r = rec_new();
    put_ptr(r, TETHER_PARAM_PTR, p); put_f64(r, a); put_i64(r, i); put_f64(r, b); put_str(r, s);
    return r;
}

/* Every slot kind, 8 doubles interleaved with 8 integer-class arguments: the 7th and
 * 8th integer-class arguments go on the stack (x86-64 SysV has 6 integer registers). */
static void *f16_all_kinds(void *dep, double d1, int64_t i1, double d2, const char *s, double d3,
                           tether_weak *w, double d4, void *ctx, double d5, tether_resolver *res,
                           double d6, void *ptr, double d7, int64_t i2, double d8) {
    rec *r = rec_new();
    put_ptr(r, TETHER_PARAM_DEP, dep); put_f64(r, d1); put_i64(r, i1); put_f64(r, d2);
    put_str(r, s); put_f64(r, d3); put_ptr(r, TETHER_PARAM_WEAK, w); put_f64(r, d4);
    put_ptr(r, TETHER_PARAM_CONTEXT, ctx); put_f64(r, d5); put_ptr(r, TETHER_PARAM_RESOLVER, res);
    put_f64(r, d6); put_ptr(r, TETHER_PARAM_PTR, ptr); put_f64(r, d7); put_i64(r, i2); put_f64(r, d8);
    return r;
}

/* 11 doubles and 5 others: the 9th..11th doubles go on the stack (x86-64 SysV has
 * 8 SSE registers) while the integer-class arguments around them stay in registers. */
static void *f16_many_doubles(double a0, void *p1, double a2, double a3, int64_t i4, double a5,
                              double a6, const char *s7, double a8, double a9, double a10,
                              void *dep11, double a12, double a13, int64_t i14, double a15) {
    rec *r = rec_new();
    put_f64(r, a0); put_ptr(r, TETHER_PARAM_PTR, p1); put_f64(r, a2); put_f64(r, a3); put_i64(r, i4);
    put_f64(r, a5); put_f64(r, a6); put_str(r, s7); put_f64(r, a8); put_f64(r, a9); put_f64(r, a10);
    put_ptr(r, TETHER_PARAM_DEP, dep11); put_f64(r, a12); put_f64(r, a13); put_i64(r, i14); put_f64(r, a15);
    return r;
}

static void *f16_deps(void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7,
                      void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15) {
    rec *r = rec_new();
    void *all[MAX_SLOTS] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    for (int i = 0; i < MAX_SLOTS; i++) put_ptr(r, TETHER_PARAM_DEP, all[i]);
    return r;
}

/* 16 int64 runtime arguments: 10 of them on the stack. */
static void *f16_i64(int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4, int64_t a5, int64_t a6,
                     int64_t a7, int64_t a8, int64_t a9, int64_t a10, int64_t a11, int64_t a12,
                     int64_t a13, int64_t a14, int64_t a15) {
    rec *r = rec_new();
    int64_t all[MAX_SLOTS] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    for (int i = 0; i < MAX_SLOTS; i++) put_i64(r, all[i]);
    return r;
}

/* 16 double runtime arguments: 8 of them on the stack. */
static void *f16_f64(double a0, double a1, double a2, double a3, double a4, double a5, double a6,
                     double a7, double a8, double a9, double a10, double a11, double a12,
                     double a13, double a14, double a15) {
    rec *r = rec_new();
    double all[MAX_SLOTS] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    for (int i = 0; i < MAX_SLOTS; i++) put_f64(r, all[i]);
    return r;
}

/* 32 parameters, alternating int64 and double: most of them go on the stack. */
typedef struct pairs { int64_t i[16]; double d[16]; } pairs;
#define PAIR(n) int64_t i##n, double d##n
#define PUT(n) p->i[n] = i##n; p->d[n] = d##n;
static void *f32_pairs(PAIR(0), PAIR(1), PAIR(2), PAIR(3), PAIR(4), PAIR(5), PAIR(6), PAIR(7),
                       PAIR(8), PAIR(9), PAIR(10), PAIR(11), PAIR(12), PAIR(13), PAIR(14), PAIR(15)) {
    pairs *p = malloc(sizeof *p);
    PUT(0) PUT(1) PUT(2) PUT(3) PUT(4) PUT(5) PUT(6) PUT(7)
    PUT(8) PUT(9) PUT(10) PUT(11) PUT(12) PUT(13) PUT(14) PUT(15)
    created++;
    return p;
}
#undef PAIR
#undef PUT
static void drop_pairs(void *instance, void *context) { (void)context; free(instance); destroyed++; }

/* RESOLVER slot: fetch L3 through it while the factory runs. */
static void *f_resolver(tether_resolver *res, void *dep) {
    rec *r = rec_new();
    put_ptr(r, TETHER_PARAM_RESOLVER, res);
    put_ptr(r, TETHER_PARAM_DEP, dep);
    void *got = NULL;
    if (tether_resolver_get(res, "L3", &got) == TETHER_OK) r->extra = got;
    return r;
}

/* C variadic factory: `ctx` describes the kinds of the variadic part, `n` how many. */
static void *f_variadic(void *ctx, int64_t n, ...) {
    const tether_param_kind *kinds = ctx;
    rec *r = rec_new();
    put_ptr(r, TETHER_PARAM_CONTEXT, ctx);
    put_i64(r, n);
    va_list ap;
    va_start(ap, n);
    for (int64_t i = 0; i < n && r->count < MAX_SLOTS; i++) {
        switch (kinds[i]) {
        case TETHER_PARAM_I64: put_i64(r, va_arg(ap, int64_t)); break;
        case TETHER_PARAM_F64: put_f64(r, va_arg(ap, double)); break;
        case TETHER_PARAM_STR: put_str(r, va_arg(ap, const char *)); break;
        case TETHER_PARAM_DEP: put_ptr(r, TETHER_PARAM_DEP, va_arg(ap, void *)); break;
        default: put_ptr(r, kinds[i], va_arg(ap, void *)); break;
        }
    }
    va_end(ap);
    return r;
}

/* ---- helpers for checking ------------------------------------------------ */

static rec *resolve_rec(tether_container *c, const char *key, const tether_value *args, size_t n,
                        tether_ref **out) {
    *out = NULL;
    CHECK_OK(tether_resolve_args(c, key, args, n, out));
    return *out ? tether_ref_get(*out) : NULL;
}

/* The leaf a weak handle points to (NULL if expired). */
static void *weak_target(tether_weak *w) {
    tether_ref *r = NULL;
    if (tether_weak_upgrade(w, &r) != TETHER_OK) return NULL;
    void *p = tether_ref_get(r);
    CHECK_OK(tether_ref_release(r));
    return p;
}

/* ---- tests --------------------------------------------------------------- */

static void arity_0(void) {
    reset_counts();
    tether_container *c = new_container();
    reg_rec(c, "F0", (tether_fn)f0, NULL, 0, NULL);
    f0_calls = 0;
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve(c, "F0", &ref));
    rec *r = tether_ref_get(ref);
    CHECK(r != NULL);
    if (r) CHECK(r->count == 0);
    CHECK(f0_calls == 1);
    CHECK_OK(tether_ref_release(ref));
    CHECK(destroyed == 1);
    finish(c);
}

static void arity_1_context(void) {
    reset_counts();
    static int context_object;
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT};
    reg_rec(c, "F1", (tether_fn)f1_ctx, p, 1, &context_object);
    tether_ref *ref;
    rec *r = resolve_rec(c, "F1", NULL, 0, &ref);
    if (r) {
        CHECK(r->count == 1);
        CHECK(r->v[0].ptr == &context_object);
    }
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_2_dep_and_i64(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[] = {TETHER_DEP("L7"), TETHER_I64};
    reg_rec(c, "F2", (tether_fn)f2_dep_i64, p, 2, NULL);
    int64_t values[] = {0, -1, INT64_MIN, INT64_MAX, 0x0123456789abcdefLL};
    for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
        tether_value a[] = {TETHER_VAL_I64(values[k])};
        tether_ref *ref;
        rec *r = resolve_rec(c, "F2", a, 1, &ref);
        if (r) {
            CHECK(r->count == 2);
            CHECK(r->v[0].ptr == leaf_instance(c, 7));
            CHECK(((leaf *)r->v[0].ptr)->tag == 7);
            CHECK(r->v[1].i64 == values[k]);
        }
        CHECK_OK(tether_ref_release(ref));
    }
    finish(c);
}

static void arity_5_pointer_double_int_double_string(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[] = {TETHER_PTR, TETHER_F64, TETHER_I64, TETHER_F64, TETHER_STR};
    reg_rec(c, "F5", (tether_fn)f5_mixed, p, 5, NULL);
    int marker;
    const char *text = "h\xc3\xa9llo \xe2\x9c\x93"; /* UTF-8 passes through untouched */
    tether_value a[] = {TETHER_VAL_PTR(&marker), TETHER_VAL_F64(1.5), TETHER_VAL_I64(-42),
                        TETHER_VAL_F64(-2.25e-300), TETHER_VAL_STR(text)};
    tether_ref *ref;
    rec *r = resolve_rec(c, "F5", a, 5, &ref);
    if (r) {
        CHECK(r->count == 5);
        CHECK(r->v[0].ptr == &marker);
        CHECK(same_f64(r->v[1].f64, 1.5));
        CHECK(r->v[2].i64 == -42);
        CHECK(same_f64(r->v[3].f64, -2.25e-300));
        CHECK(r->v[4].ptr == text);            /* strings are passed through as-is */
        CHECK(strcmp(r->v[4].str, text) == 0);
    }
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_5_special_values(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[] = {TETHER_PTR, TETHER_F64, TETHER_I64, TETHER_F64, TETHER_STR};
    reg_rec(c, "F5", (tether_fn)f5_mixed, p, 5, NULL);
    double nan_payload;
    uint64_t bits = 0x7ff8000000012345ULL;
    memcpy(&nan_payload, &bits, sizeof bits);
    tether_value a[] = {TETHER_VAL_PTR(NULL), TETHER_VAL_F64(-0.0), TETHER_VAL_I64(INT64_MIN),
                        TETHER_VAL_F64(nan_payload), TETHER_VAL_STR("")};
    tether_ref *ref;
    rec *r = resolve_rec(c, "F5", a, 5, &ref);
    if (r) {
        CHECK(r->v[0].ptr == NULL);
        CHECK(same_f64(r->v[1].f64, -0.0) && signbit(r->v[1].f64));
        CHECK(r->v[2].i64 == INT64_MIN);
        CHECK(same_f64(r->v[3].f64, nan_payload));
        CHECK(strcmp(r->v[4].str, "") == 0);
    }
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_16_every_slot_kind(void) {
    reset_counts();
    static int context_object;
    tether_container *c = new_container();
    tether_param p[] = {TETHER_DEP("L1"), TETHER_F64, TETHER_I64, TETHER_F64, TETHER_STR, TETHER_F64,
                        TETHER_WEAK("L2"), TETHER_F64, TETHER_CONTEXT, TETHER_F64, TETHER_RESOLVER,
                        TETHER_F64, TETHER_PTR, TETHER_F64, TETHER_I64, TETHER_F64};
    reg_rec(c, "F16", (tether_fn)f16_all_kinds, p, 16, &context_object);
    int marker;
    const char *text = "sixteen";
    /* runtime arguments in slot order: f64 i64 f64 str f64 f64 f64 f64 ptr f64 i64 f64 */
    tether_value a[] = {TETHER_VAL_F64(0.1), TETHER_VAL_I64(1LL << 40), TETHER_VAL_F64(0.2),
                        TETHER_VAL_STR(text), TETHER_VAL_F64(0.3), TETHER_VAL_F64(0.4),
                        TETHER_VAL_F64(0.5), TETHER_VAL_F64(0.6), TETHER_VAL_PTR(&marker),
                        TETHER_VAL_F64(0.7), TETHER_VAL_I64(-7), TETHER_VAL_F64(0.8)};
    tether_ref *ref;
    rec *r = resolve_rec(c, "F16", a, 12, &ref);
    if (r) {
        CHECK(r->count == 16);
        CHECK(r->v[0].ptr == leaf_instance(c, 1));
        CHECK(same_f64(r->v[1].f64, 0.1));
        CHECK(r->v[2].i64 == (1LL << 40));
        CHECK(same_f64(r->v[3].f64, 0.2));
        CHECK(r->v[4].ptr == text && strcmp(r->v[4].str, text) == 0);
        CHECK(same_f64(r->v[5].f64, 0.3));
        CHECK(r->v[6].ptr != NULL);
        CHECK(weak_target(r->v[6].ptr) == leaf_instance(c, 2));
        CHECK(same_f64(r->v[7].f64, 0.4));
        CHECK(r->v[8].ptr == &context_object);
        CHECK(same_f64(r->v[9].f64, 0.5));
        CHECK(r->v[10].ptr != NULL);           /* a resolver handle */
        CHECK(same_f64(r->v[11].f64, 0.6));
        CHECK(r->v[12].ptr == &marker);
        CHECK(same_f64(r->v[13].f64, 0.7));
        CHECK(r->v[14].i64 == -7);
        CHECK(same_f64(r->v[15].f64, 0.8));
    }
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_16_doubles_spill_to_stack(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[] = {TETHER_F64, TETHER_PTR, TETHER_F64, TETHER_F64, TETHER_I64, TETHER_F64,
                        TETHER_F64, TETHER_STR, TETHER_F64, TETHER_F64, TETHER_F64, TETHER_DEP("L11"),
                        TETHER_F64, TETHER_F64, TETHER_I64, TETHER_F64};
    reg_rec(c, "F16d", (tether_fn)f16_many_doubles, p, 16, NULL);
    int marker;
    double d[11] = {1.0, -2.0, 3.5, 1e100, -1e-100, 6.25, 7.125, 8e8, 9.0625, 10.5, 11.75};
    tether_value a[] = {TETHER_VAL_F64(d[0]), TETHER_VAL_PTR(&marker), TETHER_VAL_F64(d[1]),
                        TETHER_VAL_F64(d[2]), TETHER_VAL_I64(444), TETHER_VAL_F64(d[3]),
                        TETHER_VAL_F64(d[4]), TETHER_VAL_STR("seven"), TETHER_VAL_F64(d[5]),
                        TETHER_VAL_F64(d[6]), TETHER_VAL_F64(d[7]), TETHER_VAL_F64(d[8]),
                        TETHER_VAL_F64(d[9]), TETHER_VAL_I64(-1414), TETHER_VAL_F64(d[10])};
    tether_ref *ref;
    rec *r = resolve_rec(c, "F16d", a, 15, &ref);
    if (r) {
        CHECK(r->count == 16);
        int di = 0;
        for (int i = 0; i < 16; i++)
            if (r->v[i].kind == TETHER_PARAM_F64) CHECK(same_f64(r->v[i].f64, d[di++]));
        CHECK(di == 11);
        CHECK(r->v[1].ptr == &marker);
        CHECK(r->v[4].i64 == 444);
        CHECK(strcmp(r->v[7].str, "seven") == 0);
        CHECK(r->v[11].ptr == leaf_instance(c, 11));
        CHECK(r->v[14].i64 == -1414);
    }
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_16_dependencies_on_distinct_keys(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[MAX_SLOTS];
    for (int i = 0; i < MAX_SLOTS; i++) p[i] = TETHER_DEP(leaf_keys[i]);
    reg_rec(c, "Deps16", (tether_fn)f16_deps, p, MAX_SLOTS, NULL);
    tether_ref *ref;
    rec *r = resolve_rec(c, "Deps16", NULL, 0, &ref);
    if (r) {
        CHECK(r->count == MAX_SLOTS);
        for (int i = 0; i < MAX_SLOTS; i++) {
            CHECK(r->v[i].ptr == leaf_instance(c, i));
            CHECK(r->v[i].ptr && ((leaf *)r->v[i].ptr)->tag == i);
        }
    }
    CHECK(created == 1 + MAX_SLOTS);
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_16_int64_runtime_arguments(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[MAX_SLOTS];
    tether_value a[MAX_SLOTS];
    for (int i = 0; i < MAX_SLOTS; i++) {
        p[i] = TETHER_I64;
        uint64_t bits = 0x0123456789abcdefULL * (uint64_t)(i + 1) ^ (i % 2 ? ~0ULL : 0);
        a[i] = TETHER_VAL_I64((int64_t)bits);
    }
    reg_rec(c, "I16", (tether_fn)f16_i64, p, MAX_SLOTS, NULL);
    tether_ref *ref;
    rec *r = resolve_rec(c, "I16", a, MAX_SLOTS, &ref);
    if (r)
        for (int i = 0; i < MAX_SLOTS; i++) CHECK(r->v[i].i64 == a[i].u.i64);
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_16_double_runtime_arguments(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[MAX_SLOTS];
    tether_value a[MAX_SLOTS];
    for (int i = 0; i < MAX_SLOTS; i++) {
        p[i] = TETHER_F64;
        a[i] = TETHER_VAL_F64((i + 1) * 1.0625 * (i % 2 ? -1 : 1));
    }
    reg_rec(c, "D16", (tether_fn)f16_f64, p, MAX_SLOTS, NULL);
    tether_ref *ref;
    rec *r = resolve_rec(c, "D16", a, MAX_SLOTS, &ref);
    if (r)
        for (int i = 0; i < MAX_SLOTS; i++) CHECK(same_f64(r->v[i].f64, a[i].u.f64));
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void arity_32_alternating_int64_and_double(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[32];
    tether_value a[32];
    for (int n = 0; n < 16; n++) {
        p[2 * n] = TETHER_I64;
        p[2 * n + 1] = TETHER_F64;
        a[2 * n] = TETHER_VAL_I64((int64_t)n * 1000003 - 7);
        a[2 * n + 1] = TETHER_VAL_F64(n / 8.0 - 1.0);
    }
    tether_registration *reg = NULL;
    CHECK_OK(tether_register(c, "P32", (tether_fn)f32_pairs, p, 32, &reg));
    CHECK_OK(tether_set_context(reg, NULL, drop_pairs));
    uint32_t id;
    CHECK_OK(tether_intern(c, "P32", &id));
    tether_ref *ref = NULL;
    CHECK_OK(tether_resolve_key_args(c, id, a, 32, &ref));
    pairs *got = ref ? tether_ref_get(ref) : NULL;
    if (got)
        for (int n = 0; n < 16; n++) {
            CHECK(got->i[n] == a[2 * n].u.i64);
            CHECK(same_f64(got->d[n], a[2 * n + 1].u.f64));
        }
    if (ref) CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void null_string_argument_passes_through(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[] = {TETHER_PTR, TETHER_F64, TETHER_I64, TETHER_F64, TETHER_STR};
    reg_rec(c, "F5", (tether_fn)f5_mixed, p, 5, NULL);
    tether_value a[] = {TETHER_VAL_PTR(NULL), TETHER_VAL_F64(1), TETHER_VAL_I64(2), TETHER_VAL_F64(3),
                        TETHER_VAL_STR(NULL)};
    tether_ref *ref;
    rec *r = resolve_rec(c, "F5", a, 5, &ref);
    if (r) CHECK(r->v[4].ptr == NULL);
    if (ref) CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void resolver_slot_reaches_the_graph(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[] = {TETHER_RESOLVER, TETHER_DEP("L4")};
    reg_rec(c, "R", (tether_fn)f_resolver, p, 2, NULL);
    tether_ref *ref;
    rec *r = resolve_rec(c, "R", NULL, 0, &ref);
    if (r) {
        CHECK(r->v[0].ptr != NULL);
        CHECK(r->v[1].ptr == leaf_instance(c, 4));
        CHECK(r->extra == leaf_instance(c, 3));
        /* the resolver is only valid during the factory call */
        void *late = NULL;
        CHECK_STATUS(tether_resolver_get(r->v[0].ptr, "L3", &late), TETHER_E_WRONG_CONTEXT);
    }
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void variadic_factory(void) {
    reset_counts();
    /* kinds of the variadic part, also the factory's context */
    static const tether_param_kind kinds[] = {TETHER_PARAM_F64, TETHER_PARAM_PTR, TETHER_PARAM_F64,
                                              TETHER_PARAM_DEP, TETHER_PARAM_I64, TETHER_PARAM_F64,
                                              TETHER_PARAM_STR, TETHER_PARAM_F64, TETHER_PARAM_F64,
                                              TETHER_PARAM_F64, TETHER_PARAM_F64, TETHER_PARAM_F64,
                                              TETHER_PARAM_F64, TETHER_PARAM_F64};
    enum { NV = sizeof kinds / sizeof *kinds };
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT, TETHER_I64, TETHER_F64, TETHER_PTR, TETHER_F64, TETHER_DEP("L9"),
                        TETHER_I64, TETHER_F64, TETHER_STR, TETHER_F64, TETHER_F64, TETHER_F64,
                        TETHER_F64, TETHER_F64, TETHER_F64, TETHER_F64};
    tether_registration *reg = reg_rec(c, "V", (tether_fn)f_variadic, p, 2 + NV, (void *)kinds);
    CHECK_OK(tether_set_variadic(reg, 2));
    int marker;
    double d[] = {3.25, -4.5, 5e-5, 6.0, 7.5, 8.75, 9.125, 10.0625, -11.5, 1e300}; /* 10: two on the stack */
    tether_value a[] = {TETHER_VAL_I64(NV), TETHER_VAL_F64(d[0]), TETHER_VAL_PTR(&marker),
                        TETHER_VAL_F64(d[1]), TETHER_VAL_I64(INT64_MAX), TETHER_VAL_F64(d[2]),
                        TETHER_VAL_STR("va"), TETHER_VAL_F64(d[3]), TETHER_VAL_F64(d[4]),
                        TETHER_VAL_F64(d[5]), TETHER_VAL_F64(d[6]), TETHER_VAL_F64(d[7]),
                        TETHER_VAL_F64(d[8]), TETHER_VAL_F64(d[9])};
    tether_ref *ref;
    rec *r = resolve_rec(c, "V", a, sizeof a / sizeof *a, &ref);
    if (r) {
        CHECK(r->count == 2 + NV);
        CHECK(r->v[0].ptr == kinds);
        CHECK(r->v[1].i64 == NV);
        CHECK(same_f64(r->v[2].f64, d[0]));
        CHECK(r->v[3].ptr == &marker);
        CHECK(same_f64(r->v[4].f64, d[1]));
        CHECK(r->v[5].ptr == leaf_instance(c, 9));
        CHECK(r->v[6].i64 == INT64_MAX);
        CHECK(same_f64(r->v[7].f64, d[2]));
        CHECK(strcmp(r->v[8].str, "va") == 0);
        for (int i = 0; i < 7; i++) CHECK(same_f64(r->v[9 + i].f64, d[3 + i]));
    }
    CHECK_OK(tether_ref_release(ref));
    finish(c);
}

static void variadic_fixed_count_is_checked(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p[] = {TETHER_CONTEXT, TETHER_I64, TETHER_F64};
    tether_registration *reg = reg_rec(c, "V", (tether_fn)f_variadic, p, 3, NULL);
    CHECK_STATUS(tether_set_variadic(reg, 0), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_set_variadic(reg, 4), TETHER_E_INVALID_ARGUMENT);
    CHECK_STATUS(tether_set_variadic(NULL, 2), TETHER_E_INVALID_HANDLE);
    CHECK_OK(tether_set_variadic(reg, 3)); /* all fixed: allowed, variadic part empty */
    finish(c);
}

/* One function registered with two slot lists (all words: one typed factory serves both, the
 * thread's), then one registration made variadic: that one calls through its own variadic cif,
 * the other still passes all its words (a factory shared and re-prepared in place would pass
 * the variadic one's two only). A first resolve before tether_set_variadic reads no variadic
 * argument (n = 0), so the change is taken by a registration already resolved (and planned). */
static void a_function_shared_by_registrations_made_variadic_for_one(void) {
    reset_counts();
    static const tether_param_kind ints[] = {TETHER_PARAM_I64, TETHER_PARAM_I64};
    tether_container *c = new_container();
    tether_param p3[] = {TETHER_CONTEXT, TETHER_I64, TETHER_I64};
    tether_param p4[] = {TETHER_CONTEXT, TETHER_I64, TETHER_I64, TETHER_I64};
    tether_registration *one = reg_rec(c, "One", (tether_fn)f_variadic, p3, 3, (void *)ints);
    reg_rec(c, "Two", (tether_fn)f_variadic, p4, 4, (void *)ints);
    tether_ref *ref;
    tether_value first[] = {TETHER_VAL_I64(0), TETHER_VAL_I64(7)};
    rec *r = resolve_rec(c, "One", first, 2, &ref);
    CHECK(r && r->count == 2 && r->v[1].i64 == 0);
    if (ref) CHECK_OK(tether_ref_release(ref));
    CHECK_OK(tether_set_variadic(one, 2));
    for (int round = 0; round < 2; round++) {
        tether_value a1[] = {TETHER_VAL_I64(1), TETHER_VAL_I64(11 + round)};
        r = resolve_rec(c, "One", a1, 2, &ref);
        CHECK(r && r->count == 3 && r->v[0].ptr == ints && r->v[1].i64 == 1 && r->v[2].i64 == 11 + round);
        if (ref) CHECK_OK(tether_ref_release(ref));
        tether_value a2[] = {TETHER_VAL_I64(2), TETHER_VAL_I64(21 + round), TETHER_VAL_I64(0x5eed0000 + round)};
        r = resolve_rec(c, "Two", a2, 3, &ref);
        CHECK(r && r->count == 4 && r->v[0].ptr == ints && r->v[1].i64 == 2 && r->v[2].i64 == 21 + round
              && r->v[3].i64 == 0x5eed0000 + round);
        if (ref) CHECK_OK(tether_ref_release(ref));
    }
    finish(c);
}

/* The same factory registered twice with different slot lists: one cif per registration. */
static void one_call_interface_per_registration(void) {
    reset_counts();
    tether_container *c = new_container();
    tether_param p5[] = {TETHER_PTR, TETHER_F64, TETHER_I64, TETHER_F64, TETHER_STR};
    tether_param p2[] = {TETHER_DEP("L5"), TETHER_I64};
    reg_rec(c, "A", (tether_fn)f5_mixed, p5, 5, NULL);
    reg_rec(c, "B", (tether_fn)f2_dep_i64, p2, 2, NULL);
    for (int round = 0; round < 3; round++) {
        tether_value a5[] = {TETHER_VAL_PTR(c), TETHER_VAL_F64(round + 0.5), TETHER_VAL_I64(round),
                             TETHER_VAL_F64(-round - 0.25), TETHER_VAL_STR("x")};
        tether_value a2[] = {TETHER_VAL_I64(round * 1000)};
        tether_ref *ra, *rb;
        rec *ra_ = resolve_rec(c, "A", a5, 5, &ra);
        rec *rb_ = resolve_rec(c, "B", a2, 1, &rb);
        if (ra_) {
            CHECK(ra_->v[0].ptr == (void *)c);
            CHECK(same_f64(ra_->v[1].f64, round + 0.5));
            CHECK(ra_->v[2].i64 == round);
            CHECK(same_f64(ra_->v[3].f64, -round - 0.25));
        }
        if (rb_) {
            CHECK(rb_->v[0].ptr == leaf_instance(c, 5));
            CHECK(rb_->v[1].i64 == round * 1000);
        }
        CHECK_OK(tether_ref_release(ra));
        CHECK_OK(tether_ref_release(rb));
    }
    finish(c);
}

int main(void) {
    RUN(arity_0);
    RUN(arity_1_context);
    RUN(arity_2_dep_and_i64);
    RUN(arity_5_pointer_double_int_double_string);
    RUN(arity_5_special_values);
    RUN(arity_16_every_slot_kind);
    RUN(arity_16_doubles_spill_to_stack);
    RUN(arity_16_dependencies_on_distinct_keys);
    RUN(arity_16_int64_runtime_arguments);
    RUN(arity_16_double_runtime_arguments);
    RUN(arity_32_alternating_int64_and_double);
    RUN(null_string_argument_passes_through);
    RUN(resolver_slot_reaches_the_graph);
    RUN(variadic_factory);
    RUN(variadic_fixed_count_is_checked);
    RUN(a_function_shared_by_registrations_made_variadic_for_one);
    RUN(one_call_interface_per_registration);
    return harness_finish();
}
