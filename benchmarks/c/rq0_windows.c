/* Is RQ0's slow mode the library's state or the machine's? One thread alternates short chunks
 * (each ~CHUNK_MS of its own CPU time) of library bodies and library-free kernels, and prints one
 * line per round: each body's CPU time per op (CLOCK_THREAD_CPUTIME_ID, so preemption does not
 * count), the process's RSS and malloc's in-use and free bytes. A slow mode of the library's own
 * state (a backlog, a growing table or free list, the heap) shows in the library bodies alone,
 * and in the counters; a slow mode of the machine (a vCPU whose physical core's caches, TLBs or
 * branch predictors another tenant takes) shows in the kernels too, the more the larger their
 * footprint of code and data. Around every chunk, 1 ms of a pointer chase over 32 KB (the L1 data
 * cache's size here) tells the mode: ~1.3 ns per load in the fast one, ~3 in the slow one. At the
 * end, per body: its median, 10th and 90th percentiles, its share of slow rounds (over 1.3x its
 * 10th percentile), the correlation of its per-round times with RQ0's; then its median over the
 * chunks the probe put in the fast mode and over those it put in the slow one.
 *
 * Bodies: rq0 (bench.c's rq0_tether: a child, Svc resolved from it, freed), rc (the child alone),
 * sg (Svc from the root), s2 (a cached singleton from the root); rqh (RQ0 by hand: the five blocks
 * RQ0 allocates, 392 + 168 + 3 x 32 bytes, written, linked, read back and freed, through calls by
 * pointer), big (256 distinct functions, ~20 KB of code, walked in order, each touching its own
 * line of 16 KB of data), spin (bench -t's machine check), calls (vcpu_drift's calls by a
 * function-pointer table), and pointer chases over 8, 16, 24, 32 and 64 KB (one load after the
 * other, the lines in a random cycle): they say how much of the L1 data cache (32 KB a core here)
 * a thread keeps in each mode.
 * From the repository root after `make build`:
 *   cc -std=c11 -O2 -Iinclude benchmarks/c/rq0_windows.c -o build/bench/rq0_windows -Lbuild/lib -ltether \
 *      -Wl,-rpath,$PWD/build/lib -lm
 *   taskset -c 0 build/bench/rq0_windows 30      (seconds; rows on stdout, the summary on stderr) */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tether.h"

#define NOINLINE __attribute__((noinline))
#define CHUNK_MS 10.0
static volatile uintptr_t sink;
static double cpu_now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static double wall_now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

typedef struct node { void *d[3]; uint64_t payload; } node;
NOINLINE static void *make0(void) { node *n = malloc(sizeof *n); n->d[0] = n->d[1] = n->d[2] = NULL; n->payload = 42; return n; }
NOINLINE static void *make1(void *a) { node *n = malloc(sizeof *n); n->d[0] = a; n->d[1] = n->d[2] = NULL; n->payload = 1; return n; }
NOINLINE static void *make2(void *a, void *b) { node *n = malloc(sizeof *n); n->d[0] = a; n->d[1] = b; n->d[2] = NULL; n->payload = 2; return n; }
NOINLINE static void drop_free(void *inst, void *ctx) { (void)ctx; free(inst); }

static tether_container *root;
static uint32_t svc, db;
static int reg(const char *key, tether_fn f, const tether_param *p, size_t n, tether_scope s) {
    tether_registration *r;
    return tether_register(root, key, f, p, n, &r) || tether_set_scope(r, s) || tether_set_context(r, NULL, drop_free);
}

static void rq0(long n) {
    for (long i = 0; i < n; i++) {
        tether_container *child;
        tether_ref *ref;
        if (tether_container_new(root, &child) || tether_resolve_key(child, svc, &ref)) abort();
        sink = (uintptr_t)tether_ref_get(ref);
        tether_ref_release(ref);
        tether_container_free(child);
    }
}
static void rc(long n) {
    for (long i = 0; i < n; i++) {
        tether_container *child;
        if (tether_container_new(root, &child)) abort();
        sink = (uintptr_t)child;
        tether_container_free(child);
    }
}
static void sg(long n) {
    for (long i = 0; i < n; i++) {
        tether_ref *ref;
        if (tether_resolve_key(root, svc, &ref)) abort();
        sink = (uintptr_t)tether_ref_get(ref);
        tether_ref_release(ref);
    }
}
static void s2(long n) {
    for (long i = 0; i < n; i++) {
        tether_ref *ref;
        if (tether_resolve_key(root, db, &ref)) abort();
        sink = (uintptr_t)tether_ref_get(ref);
        tether_ref_release(ref);
    }
}

/* RQ0 by hand: a "container" of 392 bytes and a "graph" of 168 over three nodes, as RQ0 allocates. */
static node *g_db, *g_cache, *g_settings;
typedef struct { uint64_t w[49]; } fake_child;  /* 392 bytes */
typedef struct { void *n[3]; uint64_t w[18]; } fake_graph; /* 168 bytes */
NOINLINE static fake_child *child_new(void) {
    fake_child *c = malloc(sizeof *c);
    for (int i = 0; i < 49; i += 8) c->w[i] = (uint64_t)i;
    return c;
}
NOINLINE static void *hand_resolve(fake_child *c) {
    fake_graph *g = malloc(sizeof *g);
    memset(g, 0, sizeof *g);
    node *repo = make2(g_db, g_cache), *mailer = make1(g_settings), *s = make2(repo, mailer);
    g->n[0] = s; g->n[1] = repo; g->n[2] = mailer;
    c->w[8] = (uint64_t)g;
    return s;
}
NOINLINE static void child_free(fake_child *c) {
    fake_graph *g = (fake_graph *)c->w[8];
    for (int i = 0; i < 3; i++) drop_free(g->n[i], NULL);
    free(g);
    free(c);
}
static fake_child *(*volatile p_new)(void) = child_new;
static void *(*volatile p_resolve)(fake_child *) = hand_resolve;
static void (*volatile p_free)(fake_child *) = child_free;
static void rqh(long n) {
    for (long i = 0; i < n; i++) {
        fake_child *c = p_new();
        node *s = p_resolve(c);
        sink = (uintptr_t)((node *)s->d[0])->d[0];
        p_free(c);
    }
}

/* 256 distinct functions (distinct constants and offsets, so none is merged), walked in order. */
static uint64_t bigdata[2048]; /* 16 KB: one line per function */
#define BF(n) NOINLINE static uint64_t bf##n(uint64_t x) { \
    uint64_t *w = &bigdata[((n) * 8) % 2048]; \
    x ^= x << ((n) % 13 + 1); x += w[0] * (2 * (n) + 1); w[1] ^= x; x ^= x >> ((n) % 7 + 3); \
    w[2] += x + (n); x *= 0x9E3779B97F4A7C15ull + (n); w[3] = x ^ w[4]; return x + w[5]; }
#define BF4(n) BF(n##0) BF(n##1) BF(n##2) BF(n##3)
#define BF16(n) BF4(n##0) BF4(n##1) BF4(n##2) BF4(n##3)
BF16(10) BF16(11) BF16(12) BF16(13) BF16(20) BF16(21) BF16(22) BF16(23)
BF16(30) BF16(31) BF16(32) BF16(33) BF16(40) BF16(41) BF16(42) BF16(43)
#define BC(n) x = bf##n(x);
#define BC4(n) BC(n##0) BC(n##1) BC(n##2) BC(n##3)
#define BC16(n) BC4(n##0) BC4(n##1) BC4(n##2) BC4(n##3)
static void big(long n) {
    uint64_t x = 1;
    for (long i = 0; i < n; i++) {
        BC16(10) BC16(11) BC16(12) BC16(13) BC16(20) BC16(21) BC16(22) BC16(23)
        BC16(30) BC16(31) BC16(32) BC16(33) BC16(40) BC16(41) BC16(42) BC16(43)
    }
    sink = x;
}

static void spin(long n) { uint64_t x = 88172645463325252ull; for (long i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; } sink = x; }
#define NCHAINS 5
static const long chain_kb[NCHAINS] = { 8, 16, 24, 32, 64 };
static uintptr_t *chains[NCHAINS];
static void make_chain(int j) {
    long lines = chain_kb[j] * 1024 / 64;
    uintptr_t *c = aligned_alloc(4096, (size_t)chain_kb[j] * 1024);
    long *perm = malloc(sizeof *perm * (size_t)lines);
    for (long i = 0; i < lines; i++) perm[i] = i;
    srand(j + 1);
    for (long i = lines - 1; i > 0; i--) { long r = rand() % (i + 1), t = perm[i]; perm[i] = perm[r]; perm[r] = t; }
    for (long i = 0; i < lines; i++) c[perm[i] * 8] = (uintptr_t)&c[perm[(i + 1) % lines] * 8];
    free(perm);
    chains[j] = c;
}
static void chase(int j, long n) { uintptr_t *p = chains[j]; for (long i = 0; i < n; i++) p = (uintptr_t *)*p; sink = (uintptr_t)p; }
static void chase8(long n) { chase(0, n); }
static void chase16(long n) { chase(1, n); }
static void chase24(long n) { chase(2, n); }
static void chase32(long n) { chase(3, n); }
static void chase64(long n) { chase(4, n); }
typedef uint64_t (*op_fn)(uint64_t *, uint64_t);
NOINLINE static uint64_t op0(uint64_t *w, uint64_t x) { w[0] += x; return w[1] ^ x; }
NOINLINE static uint64_t op1(uint64_t *w, uint64_t x) { w[8] ^= x; return w[9] + x; }
NOINLINE static uint64_t op2(uint64_t *w, uint64_t x) { w[16] = x; return w[17] - x; }
NOINLINE static uint64_t op3(uint64_t *w, uint64_t x) { w[24] += 1; return w[25] + (x >> 3); }
static op_fn ops[4] = { op0, op1, op2, op3 };
static uint64_t words[64];
static void calls(long n) { uint64_t x = 12345; for (long i = 0; i < n; i++) x = ops[(x >> 7) & 3](words, x * 6364136223846793005ull + 1442695040888963407ull); sink = x; }

#define NB 13
static const char *names[NB] = { "rq0", "rc", "sg", "s2", "rqh", "big", "spin", "calls", "ch8K", "ch16K", "ch24K", "ch32K", "ch64K" };
static void (*bodies[NB])(long) = { rq0, rc, sg, s2, rqh, big, spin, calls, chase8, chase16, chase24, chase32, chase64 };

static double median_of(double *v, int n) {
    double *t = malloc(sizeof *t * (size_t)n);
    memcpy(t, v, sizeof *t * (size_t)n);
    for (int i = 1; i < n; i++) for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double s = t[j]; t[j] = t[j - 1]; t[j - 1] = s; }
    double m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    free(t);
    return m;
}
static double corr(const double *a, const double *b, int n) {
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) { ma += a[i]; mb += b[i]; }
    ma /= n; mb /= n;
    for (int i = 0; i < n; i++) { sab += (a[i] - ma) * (b[i] - mb); saa += (a[i] - ma) * (a[i] - ma); sbb += (b[i] - mb) * (b[i] - mb); }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}
static long rss_kb(void) {
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) { if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0; fclose(f); }
    return res * 4;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 30;
    tether_param repo[] = { TETHER_DEP("Db"), TETHER_DEP("Cache") }, mailer[] = { TETHER_DEP("Settings") };
    tether_param svcp[] = { TETHER_DEP("Repo"), TETHER_DEP("Mailer") };
    if (tether_container_new(NULL, &root) ||
        reg("Db", (tether_fn)make0, NULL, 0, TETHER_SCOPE_SINGLETON) || reg("Cache", (tether_fn)make0, NULL, 0, TETHER_SCOPE_SINGLETON) ||
        reg("Settings", (tether_fn)make0, NULL, 0, TETHER_SCOPE_SINGLETON) || reg("Repo", (tether_fn)make2, repo, 2, TETHER_SCOPE_GRAPH) ||
        reg("Mailer", (tether_fn)make1, mailer, 1, TETHER_SCOPE_GRAPH) || reg("Svc", (tether_fn)make2, svcp, 2, TETHER_SCOPE_GRAPH) ||
        tether_intern(root, "Svc", &svc) || tether_intern(root, "Db", &db)) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    g_db = make0(); g_cache = make0(); g_settings = make0();
    for (int j = 0; j < NCHAINS; j++) make_chain(j);
    /* calibrate: iterations for one chunk of CHUNK_MS, after a warm-up */
    long iters[NB];
    for (int b = 0; b < NB; b++) {
        long n = 1000;
        double t;
        bodies[b](n);
        for (;;) {
            double t0 = cpu_now();
            bodies[b](n);
            t = cpu_now() - t0;
            if (t > 2e6) break;
            n *= 4;
        }
        iters[b] = (long)(n * CHUNK_MS * 1e6 / t);
    }
    /* the mode probe: 1 ms of the 32 KB chase before and after every chunk */
    long probe_iters = (long)(iters[11] / CHUNK_MS);
    int maxr = (int)(seconds * 1000 / (CHUNK_MS * NB)) + 8;
    double *v[NB], *pa[NB], *pb[NB];
    for (int b = 0; b < NB; b++) {
        v[b] = malloc(sizeof(double) * (size_t)maxr);
        pa[b] = malloc(sizeof(double) * (size_t)maxr);
        pb[b] = malloc(sizeof(double) * (size_t)maxr);
    }
    printf("round t_s cpu");
    for (int b = 0; b < NB; b++) printf(" %s", names[b]);
    printf(" rss_kb inuse_kb free_kb   (CPU ns per op)\n");
    double start = wall_now();
    int r = 0;
    while (r < maxr && wall_now() - start < seconds * 1e9) {
        for (int b = 0; b < NB; b++) {
            double p0 = cpu_now();
            chase32(probe_iters);
            double t0 = cpu_now();
            bodies[b](iters[b]);
            double t1 = cpu_now();
            chase32(probe_iters);
            double p1 = cpu_now();
            v[b][r] = (t1 - t0) / (double)iters[b];
            pa[b][r] = (t0 - p0) / (double)probe_iters;
            pb[b][r] = (p1 - t1) / (double)probe_iters;
        }
        struct mallinfo2 mi = mallinfo2();
        printf("%d %.2f %d", r, (wall_now() - start) / 1e9, sched_getcpu());
        for (int b = 0; b < NB; b++) printf(" %.2f", v[b][r]);
        printf(" %ld %zu %zu\n", rss_kb(), mi.uordblks / 1024, mi.fordblks / 1024);
        r++;
    }
    fflush(stdout);
    fprintf(stderr, "%d rounds of %d chunks of %.0f ms CPU each\n", r, NB, CHUNK_MS);
    fprintf(stderr, "body    median    p10    p90  slow%% (>1.3x p10)  corr with rq0\n");
    double med[NB], p10[NB];
    for (int b = 0; b < NB; b++) {
        med[b] = median_of(v[b], r);
        double *t = malloc(sizeof(double) * (size_t)r);
        memcpy(t, v[b], sizeof(double) * (size_t)r);
        for (int i = 1; i < r; i++) for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double s = t[j]; t[j] = t[j - 1]; t[j - 1] = s; }
        p10[b] = t[r / 10];
        free(t);
    }
    double *rel[NB];
    for (int b = 0; b < NB; b++) {
        rel[b] = malloc(sizeof(double) * (size_t)r);
        for (int i = 0; i < r; i++) rel[b][i] = v[b][i] / p10[b];
    }
    for (int b = 0; b < NB; b++) {
        int slow = 0;
        double *t = malloc(sizeof(double) * (size_t)r);
        memcpy(t, v[b], sizeof(double) * (size_t)r);
        for (int i = 1; i < r; i++) for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double s = t[j]; t[j] = t[j - 1]; t[j - 1] = s; }
        for (int i = 0; i < r; i++) slow += rel[b][i] > 1.3;
        fprintf(stderr, "%-6s %7.2f %6.2f %6.2f  %5.1f%%            %+.2f\n", names[b], med[b], t[r / 10], t[r * 9 / 10], 100.0 * slow / r,
                corr(rel[0], rel[b], r));
        free(t);
    }
    /* The two modes, told by the probe around each chunk (not by RQ0): a chunk is fast when both
       its probes read under 1.2x the probes' 10th percentile, slow when both read over 1.8x. Each
       body's median CPU ns per op over its fast chunks and its slow ones. */
    double *all = malloc(sizeof(double) * (size_t)(2 * r * NB)), *fr = malloc(sizeof(double) * (size_t)r),
           *sr = malloc(sizeof(double) * (size_t)r);
    int na = 0;
    for (int b = 0; b < NB; b++) for (int i = 0; i < r; i++) { all[na++] = pa[b][i]; all[na++] = pb[b][i]; }
    for (int i = 1; i < na; i++) for (int j = i; j > 0 && all[j] < all[j - 1]; j--) { double t = all[j]; all[j] = all[j - 1]; all[j - 1] = t; }
    double pfast = all[na / 10];
    fprintf(stderr, "mode probe (32 KB chase, 1 ms around each chunk): 10th percentile %.2f ns, median %.2f, 90th %.2f\n",
            pfast, all[na / 2], all[na * 9 / 10]);
    fprintf(stderr, "per body, median CPU ns per op over its chunks in the fast mode -> the slow mode (slow / fast; chunks):\n");
    for (int b = 0; b < NB; b++) {
        int kf = 0, ks = 0;
        for (int i = 0; i < r; i++) {
            if (pa[b][i] < 1.2 * pfast && pb[b][i] < 1.2 * pfast) fr[kf++] = v[b][i];
            else if (pa[b][i] > 1.8 * pfast && pb[b][i] > 1.8 * pfast) sr[ks++] = v[b][i];
        }
        if (!kf || !ks) { fprintf(stderr, "  %-6s (%d fast, %d slow chunks)\n", names[b], kf, ks); continue; }
        double f = median_of(fr, kf), sl = median_of(sr, ks);
        fprintf(stderr, "  %-6s %8.2f -> %8.2f  %.2fx  (%d, %d)\n", names[b], f, sl, sl / f, kf, ks);
    }
    return 0;
}
