/* Which cache lines two threads both touch, one of them writing, per operation of a bench body: the
 * lines behind a shape's 2-thread contention, found without hardware counters (this VM has none).
 * Two threads warm up the body (`warm` operations each: a thread's first calls set up its state, and
 * a lazy slot's trampolines come from a thread's own pool only after its quarantine), then run `n`
 * operations one after the other, both alive; a store to `marker` opens each thread's phase, so
 * valgrind's lackey trace of the whole run splits by thread (benchmarks/c/shared_lines.sh does it,
 * and names the code that writes each line). */
#define main bench_main
#include "bench.c"
#undef main

static volatile uintptr_t marker[4];
static pthread_barrier_t warmed, first_done, both_done;
static body_fn sl_body;
static void *sl_ctx;
static long sl_n, sl_warm;

static void *sl_thread(void *arg) {
    int idx = (int)(intptr_t)arg;
    sl_body(sl_ctx, sl_warm);
    pthread_barrier_wait(&warmed);
    if (idx == 1) pthread_barrier_wait(&first_done);
    marker[idx * 2] = 1;       /* the phase of thread idx starts */
    sl_body(sl_ctx, sl_n);
    marker[idx * 2 + 1] = 1;   /* and ends */
    if (idx == 0) pthread_barrier_wait(&first_done);
    pthread_barrier_wait(&both_done);
    return NULL;
}

/* S2W: S2's singleton hit, the singleton made by a worker's first resolve (not the setup's), each
 * operation also making and freeing a 32-byte object (a request's own work): whether anything the
 * hit reads sits in the creating thread's malloc arena beside what it allocates per request. */
static int s2w_body(void *ctx, long iters) {
    s2_ctx *x = ctx;
    for (long i = 0; i < iters; i++) {
        tether_ref *ref;
        tether_status st = tether_resolve_key(x->c, x->key, &ref);
        if (st != TETHER_OK) { report_failure("S2W resolve_key", st); return 1; }
        node *own = make0();
        g_sink = (uintptr_t)tether_ref_get(ref) + (uintptr_t)own;
        drop_free(own, NULL);
        tether_ref_release(ref);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *shape = argc > 1 ? argv[1] : "S2";
    sl_n = argc > 2 ? atol(argv[2]) : 50;
    sl_warm = argc > 3 ? atol(argv[3]) : 1500;
    static s1_ctx x1;
    static s2_ctx x2;
    static s3_ctx x3;
    static s4_ctx x4;
    static shape_ctx xs;
    int failed;
    if (!strcmp(shape, "S1")) { failed = s1_setup(&x1); sl_body = s1_tether_key; sl_ctx = &x1; }
    else if (!strcmp(shape, "S2")) { failed = s2_setup(&x2); sl_body = s2_tether_key; sl_ctx = &x2; }
    else if (!strcmp(shape, "S2W")) { failed = s2_register(&x2); sl_body = s2w_body; sl_ctx = &x2; }
    else if (!strcmp(shape, "S3")) { failed = s3_setup(&x3); sl_body = s3_tether_key; sl_ctx = &x3; }
    else if (!strcmp(shape, "S3L")) { failed = s3_setup_weaklazy(&x3); sl_body = s3_weaklazy_key; sl_ctx = &x3; }
    else if (!strcmp(shape, "S4")) { failed = s4_setup(&x4); sl_body = s4_tether_key; sl_ctx = &x4; }
    else {
        failed = shapes_setup(&xs);
        sl_ctx = &xs;
        const char *names[] = { "SG", "RC", "RQ0", "RQ1", "RQV", "RA", "RP" };
        body_fn bodies[] = { sg_tether, rc_tether, rq0_tether, rq1_tether, rqv_tether, ra_tether, rp_tether };
        sl_body = NULL;
        for (int i = 0; i < 7; i++) if (!strcmp(shape, names[i])) sl_body = bodies[i];
        if (!sl_body) { fprintf(stderr, "shared_lines: no shape %s\n", shape); return 2; }
    }
    if (failed) return 1;
    printf("marker %p\n", (void *)marker);
    fflush(stdout);
    pthread_barrier_init(&warmed, NULL, 2);
    pthread_barrier_init(&first_done, NULL, 2);
    pthread_barrier_init(&both_done, NULL, 2);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, sl_thread, (void *)(intptr_t)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    /* The mappings, to say which segment a line is in (the library's .data/.bss, or the heap). */
    FILE *in = fopen("/proc/self/maps", "r");
    char buf[512];
    while (in && fgets(buf, sizeof buf, in)) printf("map %s", buf);
    if (in) fclose(in);
    return 0;
}
