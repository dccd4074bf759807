/* How fast this vCPU runs library code, over time: one thread alternates S2 (a cached singleton by
 * interned key, 3M resolves) with four kernels that touch no library code (a one-chain xorshift loop,
 * eight chains, a pointer chase over 4 KB, calls through a table of function pointers), and prints
 * each chunk's CPU time per iteration (CLOCK_THREAD_CPUTIME_ID: preemption does not count).
 * On the session's VM S2 read 12.8-13.5 or 23-25.5 ns/op, switching every few seconds within one
 * thread, while the one-chain loop (bench -t's machine check) moved 2% (benchmarks/README, "scaling").
 * From the repository root after `make build`:
 *   cc -std=c11 -O2 -Iinclude benchmarks/c/vcpu_drift.c -o build/bench/vcpu_drift -Lbuild/lib -ltether \
 *      -Wl,-rpath,$PWD/build/lib -pthread
 *   taskset -c 0 build/bench/vcpu_drift 40 & taskset -c 1 build/bench/vcpu_drift 40    (both vCPUs at once) */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tether.h"
static void *make0(void *ctx) { (void)ctx; return malloc(16); }
static void drop_free(void *ctx, void *p) { (void)ctx; free(p); }
static tether_container *c; static uint32_t key;
static volatile uintptr_t sink;
static double cpu_now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static void s2(long n) { for (long i = 0; i < n; i++) { tether_ref *ref; tether_resolve_key(c, key, &ref); sink = (uintptr_t)tether_ref_get(ref); tether_ref_release(ref); } }
static void spin(long n) { uint64_t x = 88172645463325252ull; for (long i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; } sink = x; }
static void wide(long n) { uint64_t x[8] = {1,2,3,4,5,6,7,8}; for (long i = 0; i < n; i++) for (int j = 0; j < 8; j++) { x[j] ^= x[j] << 13; x[j] ^= x[j] >> 7; x[j] ^= x[j] << 17; } sink = x[0]^x[7]; }
/* pointer chase over 64 lines (4 KB), one load after another */
static uintptr_t *chain;
static void chase(long n) { uintptr_t *p = chain; for (long i = 0; i < n; i++) p = (uintptr_t *)*p; sink = (uintptr_t)p; }
/* calls through a table of function pointers, each loading and storing thread-private words */
typedef uint64_t (*op_fn)(uint64_t *, uint64_t);
__attribute__((noinline)) static uint64_t op0(uint64_t *w, uint64_t x) { w[0] += x; return w[1] ^ x; }
__attribute__((noinline)) static uint64_t op1(uint64_t *w, uint64_t x) { w[8] ^= x; return w[9] + x; }
__attribute__((noinline)) static uint64_t op2(uint64_t *w, uint64_t x) { w[16] = x; return w[17] - x; }
__attribute__((noinline)) static uint64_t op3(uint64_t *w, uint64_t x) { w[24] += 1; return w[25] + (x >> 3); }
static op_fn ops[4] = { op0, op1, op2, op3 };
static uint64_t words[64];
static void calls(long n) { uint64_t x = 12345; for (long i = 0; i < n; i++) { x = ops[(x >> 7) & 3](words, x * 6364136223846793005ull + 1442695040888963407ull); } sink = x; }
int main(int argc, char **argv) {
    int chunks = argc > 1 ? atoi(argv[1]) : 20;
    tether_registration *r;
    tether_container_new(NULL, &c);
    tether_register(c, "Config", (tether_fn)make0, NULL, 0, &r);
    tether_set_scope(r, TETHER_SCOPE_SINGLETON);
    tether_set_context(r, NULL, drop_free);
    tether_intern(c, "Config", &key);
    chain = aligned_alloc(4096, 4096);
    int perm[64]; for (int i = 0; i < 64; i++) perm[i] = i;
    srand(1); for (int i = 63; i > 0; i--) { int j = rand() % (i + 1); int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
    for (int i = 0; i < 64; i++) chain[perm[i] * 8] = (uintptr_t)&chain[perm[(i + 1) % 64] * 8];
    void (*fs[5])(long) = { s2, spin, wide, chase, calls };
    long ns[5] = { 3000000, 30000000, 10000000, 30000000, 20000000 };
    printf("s2 spin wide chase calls (cpu-ns per iteration)\n");
    for (int ch = 0; ch < chunks; ch++) {
        for (int f = 0; f < 5; f++) { double t0 = cpu_now(); fs[f](ns[f]); printf("%6.2f ", (cpu_now() - t0) / ns[f]); }
        printf(" cpu %d\n", sched_getcpu());
    }
    return 0;
}
