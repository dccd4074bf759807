// The public headers compile as C++ (extern "C", macros usable) and link.
#include <tether.h>
#include <tether_binding.h>
int main() {
    tether_param p[] = { TETHER_DEP("A"), TETHER_CONTEXT, TETHER_I64 };
    tether_value v[] = { TETHER_VAL_I64(1), TETHER_VAL_STR("x") };
    tether_registration_options o = {};
    (void)p; (void)v; (void)o;
    return tether_version()[0] == '0' && tether_binding_api_version() == TETHER_BINDING_API_VERSION ? 0 : 1;
}
