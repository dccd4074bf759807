#ifndef TETHER_CFFI_SHIM_H
#define TETHER_CFFI_SHIM_H
#include <ffi.h>

/* libffi's type descriptors are C globals Swift cannot take the address of. */
static inline ffi_type *tether_ffi_type_pointer(void) { return &ffi_type_pointer; }
static inline ffi_type *tether_ffi_type_sint64(void) { return &ffi_type_sint64; }
static inline ffi_type *tether_ffi_type_double(void) { return &ffi_type_double; }
#endif
