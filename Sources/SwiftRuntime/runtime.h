/* What TetherCore calls directly in the Swift runtime (see WeakRef.swift) and libc.
 * swift_tryRetain is exported by the runtime on every platform; declared here because Swift code
 * may not name runtime symbols itself. */

/* Retains `object` (a Swift heap object) and returns it, unless its strong count
 * already reached zero (it is being destroyed): then returns NULL. (Runtimes
 * before Swift 5.9 returned a bool; this is the signature of the toolchain the
 * build requires, checked by WeakRefTests.) */
void *swift_tryRetain(void *object);

/* The CPU the calling thread runs on, for choosing a stripe of a split count
 * (Runtime/SplitCount.swift); any value is correct there, this one keeps cores
 * apart. With glibc 2.35+ it is read inline from the thread's rseq area (what
 * sched_getcpu reads, without the call), else sched_getcpu; off Linux a
 * per-thread word stands in. sched_getcpu is declared here: Swift's Glibc module
 * leaves out that GNU extension. */
#if defined(__linux__)
#include <features.h>
#include <stddef.h>
int sched_getcpu(void);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35) && defined(__x86_64__)
extern const ptrdiff_t __rseq_offset;
extern const unsigned int __rseq_size;
static inline long tether_current_cpu(void) {
    if (__rseq_size == 0) return sched_getcpu();   /* rseq not registered (disabled, or under valgrind) */
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return *(volatile const int *)(tp + __rseq_offset + 4);   /* struct rseq's cpu_id */
}
#else
static inline long tether_current_cpu(void) { return sched_getcpu(); }
#endif
#else
#include <pthread.h>
#include <stdint.h>
static inline long tether_current_cpu(void) { return (long)((uintptr_t)pthread_self() >> 12); }
#endif
