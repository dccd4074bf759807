// The public headers compile as C++ (extern "C", macros usable) and link; the
// checked registration form registers and resolves from C++ as from C.
#include <tether.h>
#include <tether_binding.h>
static int made;
static void *make_a(void) { made++; return &made; }
static void *make_b(void *a, int64_t n) { return n == 5 ? a : nullptr; }
int main() {
    tether_param p[] = { TETHER_DEP("A"), TETHER_CONTEXT, TETHER_I64 };
    tether_value v[] = { TETHER_VAL_I64(5), TETHER_VAL_STR("x") };
    tether_registration_options legacy = {};
    (void)p; (void)legacy;
    tether_container *c = nullptr;
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = TETHER_SCOPE_SINGLETON;
    if (tether_container_new(nullptr, &c) != TETHER_OK || TETHER_REGISTER0(c, "A", &o, nullptr, make_a) != TETHER_OK ||
        TETHER_REGISTER2(c, "B", nullptr, nullptr, make_b, TETHER_DEP("A"), TETHER_I64) != TETHER_OK) return 1;
    tether_ref *keep = nullptr, *b = nullptr;
    void *a = tether_get(c, "A", &keep);
    if (!a || tether_resolve_args(c, "B", v, 1, &b) != TETHER_OK || tether_ref_get(b) != a || made != 1) return 1;
    tether_ref_release(b);
    tether_ref_release(keep);
    tether_container_free(c);
    tether_binding binding = TETHER_BINDING_INIT;
    return tether_version()[0] == '0' && tether_binding_open(&binding) == TETHER_OK && binding.plan_describe ? 0 : 1;
}
