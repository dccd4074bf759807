/* The conformance corpus through the C ABI: reads the line form of conformance/scenarios.json
 * (conformance/tolines.py), runs every scenario with one generic factory, one generic pair of
 * completion callbacks and one destructor, and compares each trace with the expected one.
 * The path's name (for `known`/`skip`) is "c" or "c-asan", "c-traced" or "c-asan-traced" with -t (every container
 * traced: the library's own plans run as traced runs, Python's "python-library" path; since the fix of a traced
 * child's plan reading a freed registration) ("c-noplans", TETHER_NO_PLANS=1, before branch noplansoff).
 * Usage: runner [-p] [-t] FILE.lines [SCENARIO...]; -p prints every actual trace, -t traces every container. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tether.h"

#if defined(__SANITIZE_ADDRESS__)
#define PATH_BASE "c-asan"
#else
#define PATH_BASE "c"
#endif

/* Ops a scenario's factories and callbacks may run, outside threads steps: past it each op list
 * ends with "; budget" (the model does the same). Generated scenarios can chain callbacks whose
 * ops build more callbacks exponentially; the budget keeps them finite, hand-written ones never reach it. */
enum { OP_BUDGET = 512 };
/* A threads step past THREADS_OP_BUDGET ops stops running them and traces only
 * "threads: over budget" (which ops were skipped depends on the interleaving, so the
 * differential replay sets such a scenario aside; the corpus's steps stay far below it). */
enum { THREADS_OP_BUDGET = 4096 };
enum { MAX_FIELDS = 16, MAX_SLOTS = 12, MAX_INPUTS = 32, MAX_OPS = 8, MAX_CBS = 6, MAX_TRACE = 512 };

/* ---- lines and fields ------------------------------------------------------------------ */

typedef struct line { char *tag; int n; char *k[MAX_FIELDS], *v[MAX_FIELDS]; } line;

static const char *field(const line *l, const char *key) {
    for (int i = 0; i < l->n; i++) if (strcmp(l->k[i], key) == 0) return l->v[i];
    return NULL;
}
static const char *field_or(const line *l, const char *key, const char *dflt) {
    const char *v = field(l, key);
    return v ? v : dflt;
}
static char *xstrdup(const char *s) {
    char *d = strdup(s ? s : "");
    if (!d) abort();
    return d;
}
static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n, size);
    if (!p) abort();
    return p;
}

/* ---- the scenario's state ------------------------------------------------------------------ */

typedef struct op { char kind[12]; char *arg; char *in; int else_weak, propagate; } op;
typedef struct slotdef { tether_param_kind kind; char *key; } slotdef;
typedef struct cbdef {
    int declared; char *fail, *fail_when; int index, count;
    struct regdef *reg;
    op ops[MAX_OPS]; int nops;
    tether_param targets[MAX_SLOTS]; int ntargets;
} cbdef;
typedef struct regdef {
    char *key, *in, *fail, *fail_when; tether_scope scope;
    uint32_t flags;   /* "mode": TETHER_OVERRIDE or TETHER_DECORATE */
    slotdef slots[MAX_SLOTS]; int nslots;
    op ops[MAX_OPS]; int nops;
    cbdef cbs[MAX_CBS]; int ncbs;
    tether_registration *handle;
    struct regdef *next;
} regdef;

/* One input of an object: what its factory received, then what its callbacks took. */
enum { IN_DEP, IN_WEAK, IN_LAZY, IN_WEAK_LAZY, IN_CTX, IN_RESOLVER, IN_I64, IN_F64, IN_STR, IN_PTR, IN_REF, IN_LIST, IN_FACTORY };
typedef struct input { int kind; const char *key; void *p; int64_t i; double f; char *s; } input;
typedef struct obj { char name[48]; const regdef *reg; input in[MAX_INPUTS]; int n; } obj;

typedef struct named { char name[32]; void *p; int weak; } named;   /* weak: 1 a weak handle, 2 a list's ref; for a container: freed */

static struct {
    const char *path;
    int traced;                            /* -t: every container has a trace hook that does nothing */
    regdef *regs;
    named containers[32]; int ncontainers;
    named vars[64]; int nvars;
    char *flags[16]; int nflags;
    char *trace[MAX_TRACE]; int ntrace;
    char *made[4096]; int nmade;          /* names of objects made, in order */
    char *dropped[4096]; int ndropped;    /* and dropped */
    struct { char key[48]; int n; } serial[128]; int nserial;
    int counting;                          /* while threads run: count events instead */
    struct { char ev[64]; int n; } counts[64]; int ncounts;
    struct { char key[48]; char names[1024][48]; int n; } seen[8]; int nseen;
    struct obj *live[4096]; int nlive;    /* objects made and not dropped yet */
    int ops_run;                           /* factory and callback ops run (OP_BUDGET) */
    int threads_ops;                       /* and in the threads step running (THREADS_OP_BUDGET) */
} S;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* -t: a hook set makes every resolve of the container a traced run (the library's own plans, no hit path, no
 * binding replay), the path Python's "python-library" takes; the trace itself is the runner's, as on every path. */
static void ignore_trace(const tether_trace_event *event, void *context) { (void)event; (void)context; }
static void new_container(tether_container *parent, tether_container **out) {
    tether_container_new(parent, out);
    if (S.traced && *out) tether_set_trace(*out, ignore_trace, NULL);
}

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&lock);
    if (S.ntrace < MAX_TRACE) S.trace[S.ntrace++] = xstrdup(buf);
    pthread_mutex_unlock(&lock);
}

/* An event of a factory, callback or destructor: traced, or counted as "<kind> <key>" in threads. */
static void event(const char *kind, const char *key, const char *text) {
    pthread_mutex_lock(&lock);
    if (S.counting) {
        char ev[64];
        snprintf(ev, sizeof ev, "%s %s", kind, key);
        int i = 0;
        while (i < S.ncounts && strcmp(S.counts[i].ev, ev) != 0) i++;
        if (i == S.ncounts && S.ncounts < 64) snprintf(S.counts[S.ncounts++].ev, sizeof S.counts[0].ev, "%s", ev);
        if (i < 64) S.counts[i].n++;
    } else if (S.ntrace < MAX_TRACE) {
        S.trace[S.ntrace++] = xstrdup(text);
    }
    pthread_mutex_unlock(&lock);
}

static const char *status_word(tether_status st) {
    const char *n = tether_status_name(st);
    return strncmp(n, "TETHER_E_", 9) == 0 ? n + 9 : strncmp(n, "TETHER_", 7) == 0 ? n + 7 : n;
}

static named *find(named *table, int n, const char *name) {
    for (int i = 0; i < n; i++) if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}
static tether_container *container(const char *name) {
    named *c = find(S.containers, S.ncontainers, name ? name : "root");
    return c ? c->p : NULL;
}
static int flag_on(const char *name) {
    for (int i = 0; i < S.nflags; i++) if (strcmp(S.flags[i], name) == 0) return 1;
    return 0;
}
static const char *failing(const char *fail, const char *when) {
    return fail && (!when || flag_on(when)) ? fail : NULL;
}

/* ---- showing inputs ------------------------------------------------------------------------ */

static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...) {
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* The object a weak handle points to, by name ("expired" when gone). */
static void weak_name(tether_weak *w, char *out, size_t size) {
    tether_ref *r = NULL;
    tether_status st = tether_weak_upgrade(w, &r);
    if (st == TETHER_OK) {
        obj *o = tether_ref_get(r);
        snprintf(out, size, "%s", o ? o->name : "?");
        tether_ref_release(r);
    } else {
        snprintf(out, size, "%s", st == TETHER_E_EXPIRED ? "expired" : status_word(st));
    }
}

static void show_input(const input *in, char *buf, size_t size) {
    char name[64];
    switch (in->kind) {
    case IN_DEP: append(buf, size, "%s", ((obj *)in->p)->name); break;
    case IN_REF: append(buf, size, "%s", ((obj *)tether_ref_get(in->p))->name); break;
    case IN_WEAK: weak_name(in->p, name, sizeof name); append(buf, size, "~%s", name); break;
    case IN_LAZY: append(buf, size, "lazy:%s", in->key); break;
    case IN_WEAK_LAZY: append(buf, size, "weak_lazy:%s", in->key); break;
    case IN_CTX: append(buf, size, "%s", in->p ? "context" : "context?"); break;
    case IN_RESOLVER: append(buf, size, "resolver"); break;
    case IN_LIST: {
        const tether_list *list = in->p;
        append(buf, size, "[");
        for (size_t i = 0; i < list->count; i++) append(buf, size, "%s%s", i ? "," : "", ((obj *)list->items[i])->name);
        append(buf, size, "]");
        break;
    }
    case IN_FACTORY: append(buf, size, "factory:%s", in->key); break;
    case IN_I64: append(buf, size, "%lld", (long long)in->i); break;
    case IN_F64: append(buf, size, "%g", in->f); break;
    case IN_STR: append(buf, size, "\"%s\"", in->s); break;
    default: append(buf, size, "ptr"); break;
    }
}

/* The object an input leads to (calling a provider, upgrading a weak handle into `*held`),
 * or NULL with a word saying why. */
static obj *target(const input *in, tether_ref **held, char *why, size_t size) {
    *held = NULL;
    switch (in->kind) {
    case IN_DEP: return in->p;
    case IN_REF: return tether_ref_get(in->p);
    case IN_WEAK: {
        tether_status st = tether_weak_upgrade(in->p, held);
        if (st == TETHER_OK) return tether_ref_get(*held);
        snprintf(why, size, "%s", st == TETHER_E_EXPIRED ? "expired" : status_word(st));
        return NULL;
    }
    case IN_LAZY: case IN_WEAK_LAZY: {
        obj *o = ((tether_provider)in->p)();
        if (!o) {
            tether_status st = tether_last_status();
            if (in->kind == IN_WEAK_LAZY && st == TETHER_E_EXPIRED) snprintf(why, size, "none");
            else snprintf(why, size, "!%s", status_word(st));
        }
        return o;
    }
    default: snprintf(why, size, "not an object"); return NULL;
    }
}

/* Follows `path` ("0.1": input 0's object, its input 1) from `o`'s inputs; shows the last one. */
static void peek_path(const input *inputs, int n, const char *path, char *out, size_t size) {
    char copy[64];
    snprintf(copy, sizeof copy, "%s", path);
    char *save = NULL, *tok = strtok_r(copy, ".", &save);
    tether_ref *holds[8] = {0};
    int nholds = 0;
    out[0] = 0;
    while (tok) {
        int index = atoi(tok);
        char *next = strtok_r(NULL, ".", &save);
        if (index < 0 || index >= n) { snprintf(out, size, "no input %d", index); break; }
        const input *in = &inputs[index];
        if (!next && in->kind != IN_DEP && in->kind != IN_REF && in->kind != IN_WEAK && in->kind != IN_LAZY &&
            in->kind != IN_WEAK_LAZY) {
            show_input(in, out, size);
            break;
        }
        tether_ref *held = NULL;
        char why[64] = "";
        obj *o = target(in, &held, why, sizeof why);
        if (held && nholds < 8) holds[nholds++] = held;
        if (!o) { snprintf(out, size, "%s", why); break; }
        if (!next) { snprintf(out, size, "%s", o->name); break; }
        inputs = o->in;
        n = o->n;
        tok = next;
    }
    while (nholds > 0) tether_ref_release(holds[--nholds]);
}

/* ---- ops (inside factories and callbacks) ------------------------------------------------- */

/* Appends to an object's inputs under the lock: `drop` reads every live object's inputs,
 * from any thread. Returns the new input. */
static input *add_input(obj *o, input in) {
    pthread_mutex_lock(&lock);
    if (o->n >= MAX_INPUTS) abort();
    o->in[o->n] = in;
    input *added = &o->in[o->n++];
    pthread_mutex_unlock(&lock);
    return added;
}

/* Runs `ops` with `r` (NULL when the factory has no resolver slot), appending what they took to
 * `o`'s inputs and a description to `text`. Returns the status a `propagate` op failed with. */
static tether_status run_ops(const op *ops, int nops, tether_resolver *r, obj *o, char *text, size_t size) {
    for (int i = 0; i < nops; i++) {
        const op *p = &ops[i];
        if (S.counting ? __atomic_add_fetch(&S.threads_ops, 1, __ATOMIC_RELAXED) > THREADS_OP_BUDGET
                       : ++S.ops_run > OP_BUDGET) {
            append(text, size, "; budget");
            return TETHER_OK;
        }
        tether_status st = TETHER_OK;
        if (strcmp(p->kind, "get") == 0) {
            void *got = NULL;
            st = tether_resolver_get(r, p->arg, &got);
            if (st == TETHER_OK) {
                add_input(o, (input){.kind = IN_DEP, .p = got});
                append(text, size, "; get %s=%s", p->arg, ((obj *)got)->name);
            }
        } else if (strcmp(p->kind, "weak") == 0) {
            tether_weak *w = NULL;
            st = tether_resolver_get_weak(r, p->arg, &w);
            if (st == TETHER_OK) {
                add_input(o, (input){.kind = IN_WEAK, .p = w});
                char name[64];
                weak_name(w, name, sizeof name);
                append(text, size, "; weak %s=~%s", p->arg, name);
            }
        } else if (strcmp(p->kind, "resolve") == 0) {
            tether_ref *ref = NULL;
            st = tether_resolve(container(p->in), p->arg, &ref);
            if (st == TETHER_OK) {
                add_input(o, (input){.kind = IN_REF, .p = ref});
                append(text, size, "; resolve %s=%s", p->arg, ((obj *)tether_ref_get(ref))->name);
            }
        } else if (strcmp(p->kind, "call") == 0) {
            char shown[128];
            peek_path(o->in, o->n, p->arg, shown, sizeof shown);
            append(text, size, "; call %s=%s", p->arg, shown);
        }
        if (st != TETHER_OK) {
            append(text, size, "; %s %s!%s", p->kind, p->arg, status_word(st));
            if (p->else_weak) {
                tether_weak *w = NULL;
                if (tether_resolver_get_weak(r, p->arg, &w) == TETHER_OK) {
                    add_input(o, (input){.kind = IN_WEAK, .p = w});
                    char name[64];
                    weak_name(w, name, sizeof name);
                    append(text, size, "; weak %s=~%s", p->arg, name);
                }
            }
            if (p->propagate) return st;
        }
    }
    return TETHER_OK;
}

/* ---- the generic factory, callbacks and destructor ---------------------------------------- */

/* Releases what an object owns: weak handles and strong handles (edges are the library's). */
static void release_inputs(obj *o) {
    for (int i = 0; i < o->n; i++) {
        if (o->in[i].kind == IN_WEAK) tether_weak_release(o->in[i].p);
        else if (o->in[i].kind == IN_FACTORY) tether_factory_release(o->in[i].p);
        else if (o->in[i].kind == IN_REF) tether_ref_release(o->in[i].p);
        else if (o->in[i].kind == IN_STR) free(o->in[i].s);
    }
}

static void drop(void *instance, void *context) {
    obj *o = instance;
    (void)context;
    char text[80];
    snprintf(text, sizeof text, "drop %s", o->name);
    /* Dependents die before their dependencies: no live object may still hold this one. */
    char holder[64] = "";
    pthread_mutex_lock(&lock);
    if (S.ndropped < 4096) S.dropped[S.ndropped++] = xstrdup(o->name);
    for (int i = 0; i < S.nlive; i++) {
        if (S.live[i] == o) { S.live[i--] = S.live[--S.nlive]; continue; }
        for (int k = 0; k < S.live[i]->n; k++) {
            const input *in = &S.live[i]->in[k];
            if (in->kind == IN_DEP && in->p == o) snprintf(holder, sizeof holder, "%s", S.live[i]->name);
            if (in->kind != IN_LIST) continue;
            const tether_list *list = in->p;
            for (size_t j = 0; j < list->count; j++)
                if (list->items[j] == o) snprintf(holder, sizeof holder, "%s", S.live[i]->name);
        }
    }
    pthread_mutex_unlock(&lock);
    event("drop", o->reg->key, text);
    if (holder[0]) trace("dropped %s while %s holds it", o->name, holder);
    release_inputs(o);
    free(o);
}

/* `words[i]` is slot i's argument (the hidden context slot excluded). */
static void *make(const regdef *reg, const uint64_t *words, const double *doubles) {
    obj *o = xcalloc(1, sizeof *o);
    o->reg = reg;
    char text[1024] = "";
    for (int i = 0; i < reg->nslots; i++) {
        input *in = &o->in[o->n++];
        in->key = reg->slots[i].key;
        void *p = (void *)(uintptr_t)words[i];
        switch (reg->slots[i].kind) {
        case TETHER_PARAM_DEP: *in = (input){.kind = IN_DEP, .p = p}; break;
        case TETHER_PARAM_WEAK: *in = (input){.kind = IN_WEAK, .p = p}; break;
        case TETHER_PARAM_LAZY: *in = (input){.kind = IN_LAZY, .p = p, .key = reg->slots[i].key}; break;
        case TETHER_PARAM_WEAK_LAZY: *in = (input){.kind = IN_WEAK_LAZY, .p = p, .key = reg->slots[i].key}; break;
        case TETHER_PARAM_CONTEXT: *in = (input){.kind = IN_CTX, .p = p == reg ? p : NULL}; break;
        case TETHER_PARAM_RESOLVER: *in = (input){.kind = IN_RESOLVER, .p = p}; break;
        case TETHER_PARAM_I64: *in = (input){.kind = IN_I64, .i = (int64_t)words[i]}; break;
        case TETHER_PARAM_F64: *in = (input){.kind = IN_F64, .f = doubles[i]}; break;
        case TETHER_PARAM_STR: *in = (input){.kind = IN_STR, .s = xstrdup(p)}; break;
        case TETHER_PARAM_PTR: *in = (input){.kind = IN_PTR, .p = p}; break;
        case TETHER_PARAM_ALL: *in = (input){.kind = IN_LIST, .p = p}; break;
        case TETHER_PARAM_FACTORY: *in = (input){.kind = IN_FACTORY, .p = p, .key = reg->slots[i].key}; break;
        }
        if (i) append(text, sizeof text, ",");
        show_input(in, text, sizeof text);
    }
    append(text, sizeof text, ")");
    tether_resolver *r = NULL;
    for (int i = 0; i < o->n; i++) if (o->in[i].kind == IN_RESOLVER) r = o->in[i].p;
    run_ops(reg->ops, reg->nops, r, o, text, sizeof text);
    const char *fail = failing(reg->fail, reg->fail_when);
    char line[1200];
    if (fail) {
        snprintf(line, sizeof line, "fail %s(%s", reg->key, text);
        event("fail", reg->key, line);
        release_inputs(o);
        free(o);
        tether_set_error(fail);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    int k = 0;
    while (k < S.nserial && strcmp(S.serial[k].key, reg->key) != 0) k++;
    if (k == S.nserial) snprintf(S.serial[S.nserial++].key, sizeof S.serial[0].key, "%s", reg->key);
    snprintf(o->name, sizeof o->name, "%s%d", reg->key, ++S.serial[k].n);
    if (S.nmade < 4096) S.made[S.nmade++] = xstrdup(o->name);
    if (S.nlive < 4096) S.live[S.nlive++] = o;
    pthread_mutex_unlock(&lock);
    snprintf(line, sizeof line, "make %s(%s", o->name, text);
    event("make", reg->key, line);
    return o;
}

/* Typed entry points: the hidden context slot (the regdef) first, then up to 9 pointer-sized slots. */
#define W(x) ((uint64_t)(uintptr_t)(x))
static void *make0(regdef *g) { uint64_t w[1] = {0}; return make(g, w, NULL); }
static void *make1(regdef *g, void *a) { uint64_t w[] = {W(a)}; return make(g, w, NULL); }
static void *make2(regdef *g, void *a, void *b) { uint64_t w[] = {W(a), W(b)}; return make(g, w, NULL); }
static void *make3(regdef *g, void *a, void *b, void *c) { uint64_t w[] = {W(a), W(b), W(c)}; return make(g, w, NULL); }
static void *make4(regdef *g, void *a, void *b, void *c, void *d) {
    uint64_t w[] = {W(a), W(b), W(c), W(d)};
    return make(g, w, NULL);
}
static void *make5(regdef *g, void *a, void *b, void *c, void *d, void *e) {
    uint64_t w[] = {W(a), W(b), W(c), W(d), W(e)};
    return make(g, w, NULL);
}
static void *make6(regdef *g, void *a, void *b, void *c, void *d, void *e, void *f) {
    uint64_t w[] = {W(a), W(b), W(c), W(d), W(e), W(f)};
    return make(g, w, NULL);
}
static void *make7(regdef *g, void *a, void *b, void *c, void *d, void *e, void *f, void *h) {
    uint64_t w[] = {W(a), W(b), W(c), W(d), W(e), W(f), W(h)};
    return make(g, w, NULL);
}
static const tether_fn typed[] = {
    (tether_fn)make0, (tether_fn)make1, (tether_fn)make2, (tether_fn)make3,
    (tether_fn)make4, (tether_fn)make5, (tether_fn)make6, (tether_fn)make7,
};
/* Any other slot list (doubles): a variadic factory, called through libffi. */
static void *make_variadic(regdef *g, ...) {
    uint64_t w[MAX_SLOTS] = {0};
    double d[MAX_SLOTS] = {0};
    va_list ap;
    va_start(ap, g);
    for (int i = 0; i < g->nslots; i++) {
        if (g->slots[i].kind == TETHER_PARAM_F64) d[i] = va_arg(ap, double);
        else if (g->slots[i].kind == TETHER_PARAM_I64) w[i] = (uint64_t)va_arg(ap, int64_t);
        else w[i] = W(va_arg(ap, void *));
    }
    va_end(ap);
    return make(g, w, d);
}

static tether_status callback_end(cbdef *cb, obj *o, const char *head, char *text, size_t size, tether_status st) {
    const char *fail = failing(cb->fail, cb->fail_when);
    if (fail) append(text, size, "; fail");
    char line[1200];
    snprintf(line, sizeof line, "%s%s", head, text);
    event("complete", o->reg->key, line);
    if (fail) { tether_set_error(fail); return TETHER_E_FACTORY_FAILED; }
    return st;
}

static void callback_head(cbdef *cb, obj *o, char *head, size_t size) {
    if (cb->count > 1) snprintf(head, size, "complete %s/%d", o->name, cb->index + 1);
    else snprintf(head, size, "complete %s", o->name);
}

static tether_status complete_resolver(tether_resolver *r, void *instance, void *context) {
    cbdef *cb = context;
    obj *o = instance;
    char head[96], text[1024] = "";
    callback_head(cb, o, head, sizeof head);
    tether_status st = run_ops(cb->ops, cb->nops, r, o, text, sizeof text);
    return callback_end(cb, o, head, text, sizeof text, st);
}

static tether_status complete_declared(void *instance, void *const *args, size_t count, void *context) {
    cbdef *cb = context;
    obj *o = instance;
    char head[96], text[1024] = "(";
    callback_head(cb, o, head, sizeof head);
    for (size_t i = 0; i < count; i++) {
        input *in = add_input(o, cb->targets[i].kind == TETHER_PARAM_WEAK ? (input){.kind = IN_WEAK, .p = args[i]}
                                                                            : (input){.kind = IN_DEP, .p = args[i]});
        if (i) append(text, sizeof text, ",");
        show_input(in, text, sizeof text);
    }
    append(text, sizeof text, ")");
    return callback_end(cb, o, head, text, sizeof text, TETHER_OK);
}

/* ---- reading a registration ---------------------------------------------------------------- */

static tether_scope scope_of(const char *s) {
    return strcmp(s, "transient") == 0 ? TETHER_SCOPE_TRANSIENT : strcmp(s, "singleton") == 0 ? TETHER_SCOPE_SINGLETON
         : strcmp(s, "weak") == 0 ? TETHER_SCOPE_WEAK : strcmp(s, "container") == 0 ? TETHER_SCOPE_CONTAINER : TETHER_SCOPE_GRAPH;
}
static tether_param_kind kind_of(const char *s) {
    static const char *const names[] = {"dep", "weak", "lazy", "weak_lazy", "context", "resolver", "i64", "f64", "str", "ptr",
                                        "all", "factory"};
    for (int i = 0; i < 12; i++) if (strcmp(s, names[i]) == 0) return (tether_param_kind)i;
    fprintf(stderr, "unknown slot kind %s\n", s);
    exit(2);
}
static void read_op(op *p, const line *l) {
    static const char *const kinds[] = {"get", "weak", "resolve", "call"};
    for (int i = 0; i < 4; i++) {
        const char *v = field(l, kinds[i]);
        if (v) { snprintf(p->kind, sizeof p->kind, "%s", kinds[i]); p->arg = xstrdup(v); }
    }
    p->in = xstrdup(field_or(l, "in", "root"));
    p->else_weak = field(l, "else_weak") != NULL;
    p->propagate = field(l, "propagate") != NULL;
}

static void registration(regdef *g) {
    tether_param params[MAX_SLOTS + 1] = {TETHER_CONTEXT};
    int plain = g->nslots <= 7;
    for (int i = 0; i < g->nslots; i++) {
        params[i + 1] = (tether_param){g->slots[i].kind, g->slots[i].key};
        if (g->slots[i].kind == TETHER_PARAM_F64) plain = 0;
    }
    tether_completion cbs[MAX_CBS];
    for (int i = 0; i < g->ncbs; i++) {
        cbdef *cb = &g->cbs[i];
        cbs[i] = cb->declared ? (tether_completion){NULL, complete_declared, cb->targets, (size_t)cb->ntargets, cb}
                              : (tether_completion){complete_resolver, NULL, NULL, 0, cb};
    }
    tether_options o = TETHER_OPTIONS_INIT;
    o.scope = g->scope;
    o.context = g;
    o.drop = drop;
    o.callbacks = cbs;
    o.callback_count = (size_t)g->ncbs;
    o.variadic_fixed = plain ? 0 : 1;
    o.flags = g->flags;
    tether_status st = tether_register_with(container(g->in), g->key, plain ? typed[g->nslots] : (tether_fn)make_variadic,
                                            params, (size_t)g->nslots + 1, &o, &g->handle);
    if (st != TETHER_OK) trace("register %s: %s", g->key, status_word(st));
}

/* ---- actions ------------------------------------------------------------------------------- */

static named *var(const char *name) { return find(S.vars, S.nvars, name); }
static void set_var(const char *name, void *p, int weak) {
    named *v = var(name);
    if (!v) { v = &S.vars[S.nvars++]; snprintf(v->name, sizeof v->name, "%s", name); }
    v->p = p;
    v->weak = weak;
}
/* Keeps the others in binding order: finish() releases what is left newest first. */
/* The handle variable an action names, bound to a handle of `kind` (0 an object's ref, 1 a weak
 * handle, -1 any); else NULL, traced "OP NAME: no such handle" (a generated scenario, fuzz/README.md,
 * may name a handle whose step failed). */
static named *handle(const char *op, const char *name, int kind) {
    char var_name[32];
    snprintf(var_name, sizeof var_name, "%.*s", (int)strcspn(name, "."), name);
    named *v = var(var_name);
    if (v && (kind < 0 || v->weak == kind)) return v;
    trace("%s %s: no such handle", op, name);
    return NULL;
}

static void drop_var(const char *name) {
    named *v = var(name);
    if (!v) return;
    memmove(v, v + 1, (size_t)(S.vars + --S.nvars - v) * sizeof *v);
}

typedef struct action { line head; tether_value args[8]; int nargs; const char *has[8], *lacks[8]; int nhas, nlacks; } action;

/* Traces `head: STATUS` for a failure and checks the message; true when the call succeeded. */
static int outcome(const action *a, const char *head, tether_status st) {
    if (st == TETHER_OK) {
        if (a->nhas) trace("succeeded, but a message was expected");
        return 1;
    }
    const char *msg = tether_last_error();
    trace("%s: %s", head, status_word(st));
    for (int i = 0; i < a->nhas; i++) if (!strstr(msg, a->has[i])) trace("message lacks '%s': %s", a->has[i], msg);
    for (int i = 0; i < a->nlacks; i++) if (strstr(msg, a->lacks[i])) trace("message has '%s': %s", a->lacks[i], msg);
    return 0;
}

static int by_name(const void *x, const void *y) {
    const char *a = *(char *const *)x, *b = *(char *const *)y;
    size_t la = strcspn(a, "0123456789"), lb = strcspn(b, "0123456789");
    int c = strncmp(a, b, la < lb ? la : lb);
    if (c || la != lb) return c ? c : (la < lb ? -1 : 1);
    int d = atoi(a + la) - atoi(b + lb);
    return d ? d : strcmp(a, b);   /* "K0#a1", "K0#a2": a total order */
}

static int count_of(char **names, int n, const char *name) {
    int k = 0;
    for (int i = 0; i < n; i++) if (strcmp(names[i], name) == 0) k++;
    return k;
}

static void live(void) {
    char *names[4096];
    int n = 0;
    for (int i = 0; i < S.nmade; i++) if (!count_of(S.dropped, S.ndropped, S.made[i])) names[n++] = S.made[i];
    qsort(names, (size_t)n, sizeof *names, by_name);
    char text[2048] = "live";
    for (int i = 0; i < n; i++) append(text, sizeof text, " %s", names[i]);
    trace("%s", n ? text : "live none");
}

/* "OP ARG(args...)": how resolve and factory actions name themselves in the trace. */
static void action_head(const action *a, const char *op, const char *arg, char *head, size_t size) {
    snprintf(head, size, "%s %s", op, arg);
    for (int i = 0; i < a->nargs; i++) {
        append(head, size, i ? "," : "(");
        const tether_value *v = &a->args[i];
        if (v->kind == TETHER_PARAM_I64) append(head, size, "%lld", (long long)v->u.i64);
        else if (v->kind == TETHER_PARAM_F64) append(head, size, "%g", v->u.f64);
        else append(head, size, "\"%s\"", v->u.str);
    }
    if (a->nargs) append(head, size, ")");
}

static void do_action(action *a) {
    const line *l = &a->head;
    const char *op = field(l, "op"), *arg = field(l, "arg0"), *as = field(l, "as");
    tether_container *c = container(field(l, "in"));
    if (strcmp(op, "resolve") == 0) {
        char head[256];
        action_head(a, "resolve", arg, head, sizeof head);
        tether_ref *ref = NULL;
        tether_status st;
        if (field(l, "by")) {
            uint32_t id = 0;
            st = tether_intern(c, arg, &id);
            if (st == TETHER_OK) st = tether_resolve_key_args(c, id, a->args, (size_t)a->nargs, &ref);
        } else {
            st = tether_resolve_args(c, arg, a->args, (size_t)a->nargs, &ref);
        }
        if (outcome(a, head, st)) {
            trace("%s = %s", head, ((obj *)tether_ref_get(ref))->name);
            if (as) set_var(as, ref, 0);
            else tether_ref_release(ref);
        }
    } else if (strcmp(op, "resolve_all") == 0) {
        char head[256], shown[512] = "";
        snprintf(head, sizeof head, "resolve_all %s", arg);
        tether_ref *ref = NULL;
        const tether_list *list = NULL;
        if (outcome(a, head, tether_resolve_all(c, arg, &ref, &list))) {
            show_input(&(input){.kind = IN_LIST, .p = (void *)list}, shown, sizeof shown);
            trace("%s = %s", head, shown);
            if (as) set_var(as, ref, 2);
            else tether_ref_release(ref);
        }
    } else if (strcmp(op, "factory") == 0) {
        if (!handle(op, arg, 0)) return;
        /* "v.N": the factory input N of handle v's object, called with the action's args */
        char name[32], head[256];
        size_t len = strcspn(arg, ".");
        snprintf(name, sizeof name, "%.*s", (int)len, arg);
        obj *o = tether_ref_get(var(name)->p);
        const input *in = &o->in[atoi(arg + len + 1)];
        action_head(a, "factory", arg, head, sizeof head);
        tether_ref *ref = NULL;
        if (in->kind != IN_FACTORY) {
            trace("%s: not a factory input", head);
        } else if (outcome(a, head, tether_factory_call(in->p, a->args, (size_t)a->nargs, &ref))) {
            trace("%s = %s", head, ((obj *)tether_ref_get(ref))->name);
            if (as) set_var(as, ref, 0);
            else tether_ref_release(ref);
        }
    } else if (strcmp(op, "release") == 0) {
        named *v = handle(op, arg, -1);
        if (!v) return;
        if (v->weak == 1) tether_weak_release(v->p);
        else tether_ref_release(v->p);
        drop_var(arg);
        trace("release %s", arg);
    } else if (strcmp(op, "clone") == 0) {
        if (!handle(op, arg, 0)) return;
        tether_ref *ref = NULL;
        if (outcome(a, "clone", tether_ref_clone(var(arg)->p, &ref))) {
            set_var(as, ref, 0);
            trace("clone %s = %s", arg, ((obj *)tether_ref_get(ref))->name);
        }
    } else if (strcmp(op, "downgrade") == 0) {
        if (!handle(op, arg, 0)) return;
        tether_weak *w = NULL;
        if (outcome(a, "downgrade", tether_ref_downgrade(var(arg)->p, &w))) {
            set_var(as, w, 1);
            trace("downgrade %s", arg);
        }
    } else if (strcmp(op, "upgrade") == 0) {
        if (!handle(op, arg, 1)) return;
        tether_ref *ref = NULL;
        char head[64];
        snprintf(head, sizeof head, "upgrade %s", arg);
        if (outcome(a, head, tether_weak_upgrade(var(arg)->p, &ref))) {
            set_var(as, ref, 0);
            trace("upgrade %s = %s", arg, ((obj *)tether_ref_get(ref))->name);
        }
    } else if (strcmp(op, "peek") == 0) {
        if (!handle(op, arg, 0)) return;
        char name[32], shown[128];
        size_t len = strcspn(arg, ".");
        snprintf(name, sizeof name, "%.*s", (int)len, arg);
        obj *o = tether_ref_get(var(name)->p);
        peek_path(o->in, o->n, arg + len + (arg[len] ? 1 : 0), shown, sizeof shown);
        trace("peek %s = %s", arg, shown);
    } else if (strcmp(op, "container") == 0) {
        named *n = &S.containers[S.ncontainers++];
        *n = (named){.weak = 0};
        snprintf(n->name, sizeof n->name, "%s", arg);
        new_container(container(field_or(l, "parent", "root")), (tether_container **)&n->p);
        trace("container %s", arg);
    } else if (strcmp(op, "free") == 0) {
        char head[64];
        snprintf(head, sizeof head, "free %s", arg);
        if (outcome(a, head, tether_container_free(container(arg)))) {
            find(S.containers, S.ncontainers, arg)->weak = 1;   /* freed: its stale handle stays for later calls */
            trace("free %s", arg);
        }
    } else if (strcmp(op, "reset") == 0) {
        tether_reset(c, scope_of(arg));
        trace("reset %s", arg);
    } else if (strcmp(op, "set_scope") == 0) {
        const char *in = field_or(l, "in", "root");
        regdef *g = S.regs;   /* the newest registration of the key there */
        while (g && (strcmp(g->key, arg) != 0 || strcmp(g->in, in) != 0)) g = g->next;
        char head[96];
        snprintf(head, sizeof head, "set_scope %s", arg);
        if (g && outcome(a, head, tether_set_scope(g->handle, scope_of(field(l, "scope")))))
            trace("set_scope %s %s", arg, field(l, "scope"));
    } else if (strcmp(op, "clear_override") == 0) {
        char head[96];
        snprintf(head, sizeof head, "clear_override %s", arg);
        if (outcome(a, head, tether_override_clear(container(field_or(l, "in", "root")), arg))) trace("clear_override %s", arg);
    } else if (strcmp(op, "validate") == 0) {
        if (outcome(a, "validate", tether_validate(container(arg)))) trace("validate = OK");
    } else if (strcmp(op, "flag") == 0) {
        int on = strcmp(field_or(l, "on", "1"), "0") != 0;
        if (on && !flag_on(arg)) S.flags[S.nflags++] = xstrdup(arg);
        for (int i = 0; !on && i < S.nflags; i++)
            if (strcmp(S.flags[i], arg) == 0) { free(S.flags[i]); S.flags[i--] = S.flags[--S.nflags]; }
    } else if (strcmp(op, "live") == 0) {
        live();
    } else {
        trace("unknown action %s", op);
    }
}

/* ---- threads ------------------------------------------------------------------------------- */

/* One step of a worker or of the writer: op, its argument, container, variable; or a registration. */
typedef struct tstep { char op[12], arg[48], in[32], as[32]; regdef *reg; } tstep;
typedef struct threads {
    int count, repeat, writer_repeat, nbody, nwriter;
    tstep body[8], writer[8];
    char report[256];                      /* ",K,K," or "" for every key */
    pthread_barrier_t gate;
    struct { char status[32]; int n; } errors[8]; int nerrors;
} threads;
typedef struct worker_arg { threads *t; const tstep *steps; int nsteps, times; } worker_arg;

static void seen(const char *key, const char *name) {
    pthread_mutex_lock(&lock);
    int k = 0;
    while (k < S.nseen && strcmp(S.seen[k].key, key) != 0) k++;
    if (k == S.nseen) snprintf(S.seen[S.nseen++].key, sizeof S.seen[0].key, "%s", key);
    int i = 0;
    while (i < S.seen[k].n && strcmp(S.seen[k].names[i], name) != 0) i++;
    if (i == S.seen[k].n && i < 1024) snprintf(S.seen[k].names[S.seen[k].n++], 48, "%s", name);
    pthread_mutex_unlock(&lock);
}

static void count_error(threads *t, tether_status st) {
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < t->nerrors && strcmp(t->errors[i].status, status_word(st)) != 0) i++;
    if (i == t->nerrors && i < 8) snprintf(t->errors[t->nerrors++].status, sizeof t->errors[0].status, "%s", status_word(st));
    if (i < 8) t->errors[i].n++;
    pthread_mutex_unlock(&lock);
}

/* A thread's steps: its handles are its own; the main thread's are read only. */
static void *worker(void *arg) {
    worker_arg *w = arg;
    named mine[16];
    int nmine = 0;
    pthread_barrier_wait(&w->t->gate);
    for (int r = 0; r < w->times; r++)
        for (int b = 0; b < w->nsteps; b++) {
            const tstep *p = &w->steps[b];
            named *v = find(mine, nmine, p->arg);
            if (!v) v = var(p->arg);
            named *out = NULL;
            if (p->as[0]) {
                out = find(mine, nmine, p->as);
                if (!out) { out = &mine[nmine++]; *out = (named){.weak = 0}; snprintf(out->name, sizeof out->name, "%s", p->as); }
            }
            tether_status st = TETHER_OK;
            tether_ref *ref = NULL;
            if (strcmp(p->op, "register") == 0) {
                registration(p->reg);
            } else if (strcmp(p->op, "resolve") == 0) {
                st = tether_resolve(container(p->in), p->arg, &ref);
                if (st == TETHER_OK) {
                    seen(p->arg, ((obj *)tether_ref_get(ref))->name);
                    if (out) *out = (named){.p = ref}, snprintf(out->name, sizeof out->name, "%s", p->as);
                    else tether_ref_release(ref);
                }
            } else if (strcmp(p->op, "clone") == 0) {
                st = tether_ref_clone(v->p, &ref);
                if (st == TETHER_OK) out->p = ref, out->weak = 0;
            } else if (strcmp(p->op, "downgrade") == 0) {
                tether_weak *wk = NULL;
                st = tether_ref_downgrade(v->p, &wk);
                if (st == TETHER_OK) out->p = wk, out->weak = 1;
            } else if (strcmp(p->op, "upgrade") == 0) {
                st = tether_weak_upgrade(v->p, &ref);
                if (st == TETHER_OK) out->p = ref, out->weak = 0;
            } else if (strcmp(p->op, "release") == 0) {
                st = v->weak ? tether_weak_release(v->p) : tether_ref_release(v->p);
                *v = mine[--nmine];
            }
            if (st != TETHER_OK) count_error(w->t, st);
        }
    while (nmine > 0) {   /* what the steps left */
        named *v = &mine[--nmine];
        if (v->weak) tether_weak_release(v->p);
        else tether_ref_release(v->p);
    }
    return NULL;
}

static int by_string(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

static int reported(const threads *t, const char *key) {
    char probe[64];
    snprintf(probe, sizeof probe, ",%s,", key);
    return !t->report[0] || strstr(t->report, probe) != NULL;
}

static void run_threads(threads *t) {
    S.ncounts = S.nseen = 0;
    memset(S.counts, 0, sizeof S.counts);
    memset(S.seen, 0, sizeof S.seen);
    S.counting = 1;
    S.threads_ops = 0;
    pthread_t ids[64];
    worker_arg body = {t, t->body, t->nbody, t->repeat}, writer = {t, t->writer, t->nwriter, t->writer_repeat};
    int n = t->count + (t->nwriter ? 1 : 0);
    pthread_barrier_init(&t->gate, NULL, (unsigned)n);
    for (int i = 0; i < t->count; i++) pthread_create(&ids[i], NULL, worker, &body);
    if (t->nwriter) pthread_create(&ids[t->count], NULL, worker, &writer);
    for (int i = 0; i < n; i++) pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&t->gate);
    S.counting = 0;
    if (S.threads_ops > THREADS_OP_BUDGET) {
        trace("threads: over budget");
        return;
    }
    char *items[160];
    int m = 0;
    for (int i = 0; i < S.ncounts; i++) {
        if (!reported(t, strchr(S.counts[i].ev, ' ') + 1)) continue;
        items[m] = xcalloc(1, 96);
        snprintf(items[m++], 96, "%s=%d", S.counts[i].ev, S.counts[i].n);
    }
    for (int i = 0; i < S.nseen; i++) {
        if (!reported(t, S.seen[i].key)) continue;
        items[m] = xcalloc(1, 96);
        snprintf(items[m++], 96, "distinct %s=%d", S.seen[i].key, S.seen[i].n);
    }
    for (int i = 0; i < t->nerrors; i++) {
        items[m] = xcalloc(1, 96);
        snprintf(items[m++], 96, "error %s=%d", t->errors[i].status, t->errors[i].n);
    }
    qsort(items, (size_t)m, sizeof *items, by_string);
    char text[2048] = "threads:";
    for (int i = 0; i < m; i++) { append(text, sizeof text, "%s %s", i ? "," : "", items[i]); free(items[i]); }
    trace("%s", text);
}

/* ---- scenarios ----------------------------------------------------------------------------- */

static int applies(const char *pattern) {
    size_t len = strlen(pattern);
    if (len && pattern[len - 1] == '*') return strncmp(S.path, pattern, len - 1) == 0;
    return strcmp(S.path, pattern) == 0;
}

static void new_scenario(void) {
    S.containers[0] = (named){"root", NULL, 0};
    new_container(NULL, (tether_container **)&S.containers[0].p);
    S.ncontainers = 1;
}

/* Lets go of everything, then checks that every object made was dropped exactly once. */
static void finish(void) {
    while (S.nvars) {
        named *v = &S.vars[S.nvars - 1];
        if (v->weak == 1) tether_weak_release(v->p);
        else tether_ref_release(v->p);
        S.nvars--;
    }
    for (int i = S.ncontainers - 1; i >= 0; i--) if (!S.containers[i].weak) tether_container_free(S.containers[i].p);
    for (int i = 0; i < S.nmade; i++) {
        int k = count_of(S.dropped, S.ndropped, S.made[i]);
        if (k != 1) trace(k ? "dropped twice: %s" : "never dropped: %s", S.made[i]);
    }
}

static void clear(void) {
    for (int i = 0; i < S.ntrace; i++) free(S.trace[i]);
    for (int i = 0; i < S.nmade; i++) free(S.made[i]);
    for (int i = 0; i < S.ndropped; i++) free(S.dropped[i]);
    for (int i = 0; i < S.nflags; i++) free(S.flags[i]);
    while (S.regs) {
        regdef *g = S.regs;
        S.regs = g->next;
        for (int i = 0; i < g->nslots; i++) free(g->slots[i].key);
        for (int i = 0; i < g->nops; i++) { free(g->ops[i].arg); free(g->ops[i].in); }
        for (int c = 0; c < g->ncbs; c++) {
            for (int i = 0; i < g->cbs[c].nops; i++) { free(g->cbs[c].ops[i].arg); free(g->cbs[c].ops[i].in); }
            for (int i = 0; i < g->cbs[c].ntargets; i++) free((char *)g->cbs[c].targets[i].key);
            free(g->cbs[c].fail); free(g->cbs[c].fail_when);
        }
        free(g->key); free(g->in); free(g->fail); free(g->fail_when);
        free(g);
    }
    S.ntrace = S.nmade = S.ndropped = S.nflags = S.nserial = S.nvars = S.nlive = S.ops_run = 0;
    memset(S.serial, 0, sizeof S.serial);
}

static int parse(char *text, line *l) {
    text[strcspn(text, "\n")] = 0;
    char *save = NULL;
    l->tag = strtok_r(text, "\t", &save);
    l->n = 0;
    if (!l->tag) return 0;
    for (char *f; (f = strtok_r(NULL, "\t", &save)) && l->n < MAX_FIELDS; l->n++) {
        char *eq = strchr(f, '=');
        if (!eq) { fprintf(stderr, "bad field %s\n", f); exit(2); }
        *eq = 0;
        l->k[l->n] = f;
        l->v[l->n] = eq + 1;
    }
    return 1;
}

/* What a caller embedding the runner gets for each scenario: its name and actual trace. */
typedef void (*trace_hook)(const char *name, char *const *trace, int n, void *ctx);

/* Runs the scenarios of `f` (the line form) selected by `names` (all when none); compares each
 * trace with the expected one, or hands it to `hook`. Returns 1 if any failed, 2 on bad input. */
static int run_stream(FILE *f, char **names, int nnames, int print, trace_hook hook, void *ctx) {
    static char buf[4096], name[128], known[512], flaky[512], skip[512];
    char *expected[MAX_TRACE];
    int nexpected = 0, selected = 1, passed = 0, failed = 0, xfailed = 0, skipped = 0;
    regdef *g = NULL;
    cbdef *cb = NULL;
    action a;
    threads t;
    int in_action = 0, in_threads = 0;
    while (fgets(buf, sizeof buf, f)) {
        line l;
        if (!parse(buf, &l)) continue;
        const char *tag = l.tag;
        if (strcmp(tag, "S") == 0) {
            snprintf(name, sizeof name, "%s", field(&l, "name"));
            selected = nnames == 0;
            for (int i = 0; i < nnames; i++) if (strcmp(names[i], name) == 0) selected = 1;
            known[0] = flaky[0] = skip[0] = 0;
            nexpected = 0;
            if (selected) new_scenario();
        } else if (strcmp(tag, "known") == 0 || strcmp(tag, "flaky") == 0 || strcmp(tag, "skip") == 0) {
            if (applies(field(&l, "path"))) snprintf(tag[0] == 'k' ? known : tag[0] == 'f' ? flaky : skip, 512, "%s", field(&l, "reason"));
        } else if (strcmp(tag, "T") == 0) {
            expected[nexpected++] = xstrdup(field(&l, "line"));
        } else if (strcmp(tag, "E") == 0) {
            if (selected && hook) {
                finish();
                hook(name, S.trace, S.ntrace, ctx);
                clear();
            } else if (selected) {
                if (!skip[0]) finish();
                int same = S.ntrace == nexpected;
                for (int i = 0; same && i < nexpected; i++) same = strcmp(S.trace[i], expected[i]) == 0;
                if (skip[0]) { skipped++; printf("skip %s (%s)\n", name, skip); }
                else if (same && !known[0]) { passed++; printf("ok   %s\n", name); }
                else if (!same && known[0]) { xfailed++; printf("xfail %s (%s)\n", name, known); }
                else if (!same && flaky[0]) { xfailed++; printf("xfail %s (flaky: %s)\n", name, flaky); }
                else {
                    failed++;
                    printf("FAIL %s%s\n", name, known[0] ? " (a known failure passes now: remove it from the data)" : "");
                }
                if (print && !skip[0]) {
                    printf("## %s\n", name);
                    for (int i = 0; i < S.ntrace; i++) printf("%s\n", S.trace[i]);
                } else if (!skip[0] && !same && !known[0]) {
                    int n = S.ntrace > nexpected ? S.ntrace : nexpected;
                    for (int i = 0; i < n; i++) {
                        const char *got = i < S.ntrace ? S.trace[i] : "", *want = i < nexpected ? expected[i] : "";
                        printf("  %s %-60s | %s\n", strcmp(got, want) ? "!" : " ", got, want);
                    }
                }
                clear();
            }
            for (int i = 0; i < nexpected; i++) free(expected[i]);
            nexpected = 0;
        } else if (!selected || skip[0]) {
            continue;
        } else if (strcmp(tag, "reg") == 0) {
            g = xcalloc(1, sizeof *g);
            g->key = xstrdup(field(&l, "key"));
            g->in = xstrdup(field_or(&l, "in", "root"));
            g->scope = scope_of(field_or(&l, "scope", "graph"));
            const char *mode = field_or(&l, "mode", "register");
            g->flags = strcmp(mode, "override") == 0 ? TETHER_OVERRIDE : strcmp(mode, "decorate") == 0 ? TETHER_DECORATE : 0;
            g->fail = field(&l, "fail") ? xstrdup(field(&l, "fail")) : NULL;
            g->fail_when = field(&l, "fail_when") ? xstrdup(field(&l, "fail_when")) : NULL;
            g->next = S.regs;
            S.regs = g;
            cb = NULL;
        } else if (strcmp(tag, "slot") == 0) {
            g->slots[g->nslots++] = (slotdef){kind_of(field(&l, "kind")), field(&l, "key") ? xstrdup(field(&l, "key")) : NULL};
        } else if (strcmp(tag, "fop") == 0) {
            read_op(&g->ops[g->nops++], &l);
        } else if (strcmp(tag, "cb") == 0) {
            cb = &g->cbs[g->ncbs++];
            cb->declared = strcmp(field(&l, "form"), "declared") == 0;
            cb->fail = field(&l, "fail") ? xstrdup(field(&l, "fail")) : NULL;
            cb->fail_when = field(&l, "fail_when") ? xstrdup(field(&l, "fail_when")) : NULL;
            cb->reg = g;
        } else if (strcmp(tag, "cop") == 0) {
            read_op(&cb->ops[cb->nops++], &l);
        } else if (strcmp(tag, "tgt") == 0) {
            cb->targets[cb->ntargets++] = (tether_param){kind_of(field(&l, "kind")), xstrdup(field(&l, "key"))};
        } else if (strcmp(tag, "endreg") == 0) {
            for (int i = 0; i < g->ncbs; i++) { g->cbs[i].index = i; g->cbs[i].count = g->ncbs; }
            if (!in_threads) registration(g);   /* in a threads block: a thread registers it */
        } else if (strcmp(tag, "do") == 0) {
            memset(&a, 0, sizeof a);
            static char copy[4096];   /* the action's fields point into the line: keep it */
            memcpy(copy, buf, sizeof copy);
            a.head.n = 0;
            for (int i = 0; i < l.n; i++) {
                a.head.k[i] = copy + (l.k[i] - buf);
                a.head.v[i] = copy + (l.v[i] - buf);
            }
            a.head.n = l.n;
            in_action = 1;
        } else if (strcmp(tag, "arg") == 0) {
            const char *v;
            tether_value *x = &a.args[a.nargs++];
            static char strs[8][256];
            if ((v = field(&l, "i64"))) *x = TETHER_VAL_I64(atoll(v));
            else if ((v = field(&l, "f64"))) *x = TETHER_VAL_F64(atof(v));
            else {
                snprintf(strs[a.nargs - 1], sizeof strs[0], "%s", field(&l, "str"));
                *x = TETHER_VAL_STR(strs[a.nargs - 1]);
            }
        } else if (strcmp(tag, "msg") == 0) {
            static char msgs[16][512];
            int slot = a.nhas + a.nlacks;
            const char *v = field(&l, "has");
            snprintf(msgs[slot], sizeof msgs[0], "%s", v ? v : field(&l, "lacks"));
            if (v) a.has[a.nhas++] = msgs[slot];
            else a.lacks[a.nlacks++] = msgs[slot];
        } else if (strcmp(tag, "end") == 0 && in_action) {
            do_action(&a);
            in_action = 0;
        } else if (strcmp(tag, "threads") == 0) {
            memset(&t, 0, sizeof t);
            t.count = atoi(field(&l, "count"));
            t.repeat = atoi(field(&l, "repeat"));
            t.writer_repeat = atoi(field_or(&l, "writer_repeat", "1"));
            if (field(&l, "report")) snprintf(t.report, sizeof t.report, ",%s,", field(&l, "report"));
            in_threads = 1;
        } else if (strcmp(tag, "tstep") == 0 || strcmp(tag, "wstep") == 0) {
            tstep *p = tag[0] == 't' ? &t.body[t.nbody++] : &t.writer[t.nwriter++];
            snprintf(p->op, sizeof p->op, "%s", field(&l, "op"));
            snprintf(p->arg, sizeof p->arg, "%s", field_or(&l, "arg0", ""));
            snprintf(p->in, sizeof p->in, "%s", field_or(&l, "in", "root"));
            snprintf(p->as, sizeof p->as, "%s", field_or(&l, "as", ""));
            p->reg = strcmp(p->op, "register") == 0 ? g : NULL;
        } else if (strcmp(tag, "endthreads") == 0) {
            run_threads(&t);
            in_threads = 0;
        } else {
            fprintf(stderr, "unknown record %s\n", tag);
            return 2;   /* (the caller closes f) */
        }
    }
    if (!hook) printf("%s: %d passed, %d known failures, %d skipped, %d failed\n", S.path, passed, xfailed, skipped, failed);
    return failed ? 1 : 0;
}

#ifdef CONFORMANCE_EMBED
/* For the fuzz target's differential mode (fuzz/README.md): runs the scenarios of `text`. */
void conformance_run_text(const char *text, size_t len, trace_hook hook, void *ctx);
void conformance_run_text(const char *text, size_t len, trace_hook hook, void *ctx) {
    S.path = "c-fuzz";
    FILE *f = fmemopen((void *)text, len, "r");
    if (!f) abort();
    run_stream(f, NULL, 0, 0, hook, ctx);
    fclose(f);
}
#else
int main(int argc, char **argv) {
    S.path = PATH_BASE;
    int print = 0, first = 1;
    for (; first < argc && argv[first][0] == '-' && argv[first][1] && !argv[first][2]; first++) {
        if (argv[first][1] == 'p') print = 1;
        else if (argv[first][1] == 't') { S.traced = 1; S.path = PATH_BASE "-traced"; }
        else break;
    }
    if (argc <= first) { fprintf(stderr, "usage: %s [-p] [-t] FILE.lines [SCENARIO...]\n", argv[0]); return 2; }
    FILE *f = fopen(argv[first], "r");
    if (!f) { perror(argv[first]); return 2; }
    int st = run_stream(f, argv + first + 1, argc - first - 1, print, NULL, NULL);
    fclose(f);
    return st;
}
#endif
