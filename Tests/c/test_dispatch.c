#define _POSIX_C_SOURCE 200809L
/* Typed dispatch vs ffi_call: factories whose slots are all pointer-sized and
 * number at most 8 are called through a typed function pointer; everything else
 * through libffi. TETHER_FORCE_FFI=1 sends every call through ffi_call. This
 * test runs the same factories both ways (a child process with the variable set)
 * and requires identical, exact results. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"

#define MAX_ARITY 8

/* What each factory saw, as words; the instance is the record itself. */
typedef struct Record { int arity; uint64_t seen[MAX_ARITY]; } Record;

static Record *record(int arity, const uint64_t *words) {
    Record *r = calloc(1, sizeof *r);
    r->arity = arity;
    for (int i = 0; i < arity; i++) r->seen[i] = words[i];
    return r;
}

#define W(x) ((uint64_t)(uintptr_t)(x))
static void *f0(void) { return record(0, NULL); }
static void *f1(void *a) { uint64_t w[] = {W(a)}; return record(1, w); }
static void *f2(void *a, int64_t b) { uint64_t w[] = {W(a), (uint64_t)b}; return record(2, w); }
static void *f3(void *a, const char *b, void *c) { uint64_t w[] = {W(a), W(b), W(c)}; return record(3, w); }
static void *f4(void *a, void *b, void *c, int64_t d) { uint64_t w[] = {W(a), W(b), W(c), (uint64_t)d}; return record(4, w); }
static void *f5(void *a, void *b, void *c, void *d, void *e) { uint64_t w[] = {W(a), W(b), W(c), W(d), W(e)}; return record(5, w); }
static void *f6(void *a, void *b, void *c, void *d, void *e, int64_t f) {
    uint64_t w[] = {W(a), W(b), W(c), W(d), W(e), (uint64_t)f}; return record(6, w); }
static void *f7(void *a, void *b, void *c, void *d, void *e, void *f, void *g) {
    uint64_t w[] = {W(a), W(b), W(c), W(d), W(e), W(f), W(g)}; return record(7, w); }
static void *f8(void *a, void *b, void *c, void *d, void *e, void *f, void *g, int64_t h) {
    uint64_t w[] = {W(a), W(b), W(c), W(d), W(e), W(f), W(g), (uint64_t)h}; return record(8, w); }
static tether_fn factories[] = { (tether_fn)f0, (tether_fn)f1, (tether_fn)f2, (tether_fn)f3, (tether_fn)f4,
                                 (tether_fn)f5, (tether_fn)f6, (tether_fn)f7, (tether_fn)f8 };
static void drop(void *instance, void *context) { (void)context; free(instance); }

static int context_value;
static const char *text = "text";

/* Each arity's slots: runtime arguments where the factory takes int64/str, else the context. */
static size_t slots(int arity, tether_param *params, tether_value *args, size_t *argc) {
    *argc = 0;
    for (int i = 0; i < arity; i++) {
        int last = i == arity - 1;
        if ((arity == 2 || arity == 4 || arity == 6 || arity == 8) && last) {
            params[i] = TETHER_I64;
            args[(*argc)++] = TETHER_VAL_I64(INT64_MIN + arity);
        } else if (arity == 3 && i == 1) {
            params[i] = TETHER_STR;
            args[(*argc)++] = TETHER_VAL_STR(text);
        } else if (i % 2) {
            params[i] = TETHER_PTR;
            args[(*argc)++] = TETHER_VAL_PTR((void *)(uintptr_t)(0x1000 + i));
        } else {
            params[i] = TETHER_CONTEXT;
        }
    }
    return (size_t)arity;
}

/* Resolves every arity and folds what the factories saw into one checksum;
 * also checks every word exactly. */
static uint64_t run_all(void) {
    tether_container *c;
    tether_container_new(NULL, &c);
    uint64_t sum = 1469598103934665603ull;
    for (int arity = 0; arity <= MAX_ARITY; arity++) {
        tether_param params[MAX_ARITY];
        tether_value args[MAX_ARITY];
        size_t argc;
        size_t n = slots(arity, params, args, &argc);
        tether_registration *reg;
        char key[8] = "F0";
        key[1] = (char)('0' + arity);
        CHECK_OK(tether_register(c, key, factories[arity], params, n, &reg));
        tether_set_context(reg, &context_value, drop);
        tether_ref *ref;
        CHECK_OK(tether_resolve_args(c, key, args, argc, &ref));
        Record *r = tether_ref_get(ref);
        CHECK(r && r->arity == arity);
        size_t next = 0;
        for (int i = 0; r && i < arity; i++) {
            uint64_t expected = params[i].kind == TETHER_PARAM_CONTEXT ? W(&context_value)
                              : params[i].kind == TETHER_PARAM_I64 ? (uint64_t)args[next].u.i64
                              : W(args[next].u.ptr);
            if (params[i].kind != TETHER_PARAM_CONTEXT) next++;
            CHECK(r->seen[i] == expected);
            /* Addresses differ between processes (ASLR): fold in what they point to. */
            uint64_t stable = params[i].kind == TETHER_PARAM_CONTEXT ? (r->seen[i] == W(&context_value) ? 0xC0 : 0)
                            : params[i].kind == TETHER_PARAM_STR ? (uint64_t)strlen((const char *)(uintptr_t)r->seen[i])
                            : r->seen[i];
            sum = (sum ^ stable) * 1099511628211ull;
        }
        tether_ref_release(ref);
    }
    tether_container_free(c);
    return sum;
}

static void test_typed_and_ffi_paths_agree(void) {
    uint64_t typed = run_all();
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* A fresh process: the library reads TETHER_FORCE_FFI once, at first use. */
        close(fds[0]);
        dup2(fds[1], STDOUT_FILENO);
        setenv("TETHER_FORCE_FFI", "1", 1);
        setenv("TETHER_DISPATCH_CHILD", "1", 1);
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len > 0) { self[len] = 0; execl(self, self, (char *)NULL); }
        _exit(127);
    }
    close(fds[1]);
    char buffer[64] = {0};
    ssize_t got = read(fds[0], buffer, sizeof buffer - 1);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strtoull(buffer, NULL, 16) == typed);
}

int main(void) {
    if (getenv("TETHER_DISPATCH_CHILD")) {       /* the ffi_call run: print the checksum */
        uint64_t sum = run_all();
        printf("%llx\n", (unsigned long long)sum);
        return harness_current_failed;
    }
    RUN(test_typed_and_ffi_paths_agree);
    return harness_finish();
}
