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
 * apart. sched_getcpu: glibc 2.35+ reads it from the thread's rseq area, older
 * ones from the vDSO. (Reading the rseq area inline saves the call but binds the
 * library to GLIBC_2.35's __rseq_offset, which the wheel's manylinux tag would
 * have to name.) Off Linux a per-thread word stands in. Declared here: Swift's
 * Glibc module leaves out that GNU extension. */
#if defined(__linux__)
int sched_getcpu(void);
static inline long tether_current_cpu(void) { return sched_getcpu(); }
#else
#include <pthread.h>
#include <stdint.h>
static inline long tether_current_cpu(void) { return (long)((uintptr_t)pthread_self() >> 12); }
#endif
