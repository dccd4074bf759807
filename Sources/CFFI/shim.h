#ifndef TETHER_CFFI_SHIM_H
#define TETHER_CFFI_SHIM_H
#include <ffi.h>

/* libffi's type descriptors are C globals Swift cannot take the address of. */
static inline ffi_type *tether_ffi_type_pointer(void) { return &ffi_type_pointer; }
static inline ffi_type *tether_ffi_type_sint64(void) { return &ffi_type_sint64; }
static inline ffi_type *tether_ffi_type_double(void) { return &ffi_type_double; }

/* Asymmetric fences for the singleton hit path (Sources/Tether/Barrier.swift). */
#include <unistd.h>
#include <sys/syscall.h>

/* Orders the compiler only: the cheap side of an asymmetric fence. */
static inline void tether_compiler_barrier(void) { __asm__ __volatile__("" ::: "memory"); }

/* A word unique to each live thread, read without a call: the thread pointer
   where it is one instruction away, else pthread_self(). */
#include <pthread.h>
#include <stdint.h>
static inline uintptr_t tether_thread_id(void) {
#if defined(__x86_64__) && defined(__linux__)
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
#elif defined(__aarch64__) && defined(__linux__)
    uintptr_t tp;
    __asm__("mrs %0, tpidr_el0" : "=r"(tp));
    return tp;
#else
    return (uintptr_t)pthread_self();
#endif
}

/* membarrier(2); -1 where the system has none. */
static inline long tether_membarrier(int cmd) {
#ifdef __NR_membarrier
    return syscall(__NR_membarrier, cmd, 0, 0);
#else
    (void)cmd;
    return -1;
#endif
}
#endif
