/* tether_register_with (a versioned tether_options from TETHER_OPTIONS_INIT) and
 * the checked form TETHER_REGISTERn: every slot kind reaches a factory whose
 * prototype the compiler checked (Tests/compile_fail shows it rejecting others). */
#include "harness.h"
#include "register_forms.h"

static int undropped;   /* what registrations without a destructor make: nothing to free */
static void *make_static(void) { atomic_fetch_add(&made, 1); return &undropped; }
static tether_status complete_args(void *instance, void *const *args, size_t n, void *context) {
    (void)instance;
    /* runs after `complete` (declared order): completed is 1 by then, so this makes it 1*100+2 */
    atomic_store(&completed, atomic_load(&completed) * 100 + (n == 1 && args[0] ? *(int *)context : -1000));
    return TETHER_OK;
}

static void test_options_applied(void) {
    reset_counts();
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    CHECK_OK(TETHER_REGISTER0(c, "Dep", NULL, NULL, make_static));
    int one = 1, two = 2;
    tether_param targets[] = { TETHER_DEP("Dep") };
    tether_completion callbacks[] = {
        { complete, NULL, NULL, 0, &one },
        { NULL, complete_args, targets, 1, &two },
    };
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_SINGLETON;
    o.drop = drop;
    o.callbacks = callbacks;
    o.callback_count = 2;
    tether_registration *reg;
    CHECK_OK(tether_register_with(c, "S", (tether_fn)make, NULL, 0, &o, &reg));
    CHECK(reg != NULL);
    tether_ref *a, *b;
    CHECK_OK(tether_resolve(c, "S", &a));
    CHECK_OK(tether_resolve(c, "S", &b));
    CHECK(tether_ref_get(a) == tether_ref_get(b));    /* singleton */
    CHECK(made == 2 && completed == 102);              /* S and Dep; both callbacks, in order */
    tether_ref_release(a);
    tether_ref_release(b);
    CHECK_OK(tether_container_free(c));
    CHECK(dropped == 1);                               /* S's destructor from the options (Dep has none) */
}

static void test_bad_options(void) {
    reset_counts();
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_options o = TETHER_OPTIONS_INIT;
    o.version = 2;   /* a header newer than the library */
    CHECK_STATUS(tether_register_with(c, "K", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("options.version is 2");
    o.version = 0;   /* not started from TETHER_OPTIONS_INIT */
    CHECK_STATUS(tether_register_with(c, "K", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("TETHER_OPTIONS_INIT");
    o.version = TETHER_OPTIONS_VERSION;
    o.flags = 2;     /* TETHER_OPTIONS_CALLBACKS belongs to the older struct */
    CHECK_STATUS(tether_register_with(c, "K", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("options.flags 0x2");
    o.flags = 0;
    o.scope = (tether_scope)42;
    CHECK_STATUS(tether_register_with(c, "K", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("options.scope 42");
    o.scope = TETHER_SCOPE_GRAPH;
    tether_completion both = { complete, complete_args, NULL, 0, NULL };
    o.callbacks = &both;
    o.callback_count = 1;
    CHECK_STATUS(tether_register_with(c, "K", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("options.callbacks[0] must set exactly one of fn and args_fn");
    o.callbacks = NULL;
    o.callback_count = 0;
    o.variadic_fixed = 1;
    CHECK_STATUS(tether_register_with(c, "K", (tether_fn)make, NULL, 0, &o, NULL), TETHER_E_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("variadic_fixed");
    tether_ref *ref;
    CHECK_STATUS(tether_resolve(c, "K", &ref), TETHER_E_NOT_FOUND);   /* nothing half registered */
    CHECK(made == 0);
    CHECK_OK(tether_register_with(c, "K", (tether_fn)make_static, NULL, 0, NULL, NULL));   /* NULL: tether_register */
    CHECK_OK(tether_resolve(c, "K", &ref));
    CHECK(tether_ref_get(ref) == &undropped);
    tether_ref_release(ref);
    CHECK(made == 1 && dropped == 0);                  /* no destructor from NULL options */
    CHECK_OK(tether_container_free(c));
}

/* One factory per slot kind, each checked by the compiler against its slots. */
typedef struct got { int64_t i; double f; const char *s; void *p, *ctx, *dep; int *typed; tether_weak *weak;
                     tether_provider lazy, weak_lazy; tether_resolver *r; } got;
static got last;
static int value = 7;

static void *make_value(void) { return &value; }
static void *make_all(void *dep, int *typed, tether_weak *weak, tether_provider lazy, tether_provider weak_lazy,
                      void *ctx, tether_resolver *r, int64_t i) {
    last = (got){ .i = i, .ctx = ctx, .dep = dep, .typed = typed, .weak = weak, .lazy = lazy, .weak_lazy = weak_lazy, .r = r };
    return &last;
}
static void *make_args(int64_t i, double f, const char *s, void *p) {
    last = (got){ .i = i, .f = f, .s = s, .p = p };
    return &last;
}

static void test_checked_forms(void) {
    tether_container *c;
    CHECK_OK(tether_container_new(NULL, &c));
    tether_options o = TETHER_OPTIONS_INIT;
    o.context = &value;
    o.scope = TETHER_SCOPE_SINGLETON;
    CHECK_OK(TETHER_REGISTER0(c, "V", &o, NULL, make_value));
    o.scope = TETHER_SCOPE_GRAPH;
    CHECK_OK(TETHER_REGISTER8(c, "All", &o, NULL, make_all, TETHER_DEP("V"), TETHER_AS(TETHER_DEP("V"), int *), TETHER_WEAK("V"),
                              TETHER_LAZY("V"), TETHER_WEAK_LAZY("V"), TETHER_CONTEXT, TETHER_RESOLVER, TETHER_I64));
    CHECK_OK(TETHER_REGISTER4(c, "Args", NULL, NULL, make_args, TETHER_I64, TETHER_F64, TETHER_STR, TETHER_PTR));

    tether_value all_args[] = { TETHER_VAL_I64(-3) };
    tether_ref *ref;
    CHECK_OK(tether_resolve_args(c, "All", all_args, 1, &ref));
    CHECK(tether_ref_get(ref) == &last);
    CHECK(last.dep == &value && last.typed == &value && last.ctx == &value && last.i == -3 && last.r != NULL);
    CHECK(last.lazy && last.lazy() == &value && last.weak_lazy && last.weak_lazy() == &value);
    tether_ref *keep = NULL;
    CHECK(tether_weak_get(last.weak, &keep) == &value);
    tether_ref_release(keep);
    CHECK_OK(tether_weak_release(last.weak));          /* the receiver owns its WEAK slot */
    tether_ref_release(ref);

    tether_value args[] = { TETHER_VAL_I64(42), TETHER_VAL_F64(2.5), TETHER_VAL_STR("s"), TETHER_VAL_PTR(&value) };
    CHECK(args[0].u.i64 == 42 && args[1].u.f64 == 2.5 && args[0].as.i64 == 42);   /* `as` is the old name of `u` */
    CHECK_OK(tether_resolve_args(c, "Args", args, 4, &ref));
    CHECK(last.i == 42 && last.f == 2.5 && last.s && !strcmp(last.s, "s") && last.p == &value);
    tether_ref_release(ref);
    CHECK_OK(tether_container_free(c));
}

/* Registering with options while another thread resolves: never half configured,
   so every instance made has its destructor. */
static tether_status register_k(void) {
    tether_options o = TETHER_OPTIONS_INIT;
    o.drop = drop;
    return TETHER_REGISTER0(shared, "K", &o, NULL, make);
}
static void test_registering_under_load(void) { registered_under_load(register_k); }

int main(void) {
    RUN(test_options_applied);
    RUN(test_bad_options);
    RUN(test_checked_forms);
    RUN(test_registering_under_load);
    return harness_finish();
}
