/* libFuzzer target over sequences of Tether API calls (fuzz/README.md says how to run it).
 *
 * The input is a byte stream read by one cursor: the top-level loop takes an operation
 * from it, and so does every factory, destructor and completion callback the library
 * calls, so callbacks re-enter the API as the input says. A few containers, keys K0..K4 and
 * K0#5 (a named variant of K0: TETHER_ALL("K0") lists both; Kx is never registered),
 * registrations with generated factories whose prototypes match the declared slots
 * (factories.h), handles kept in pools after release so stale
 * handles are used too, and forged handles.
 *
 * Checked after every call (a violation prints what and aborts, which libFuzzer reports):
 *  - every status is one the header documents for that call, and a stale, forged or
 *    foreign handle gets TETHER_E_INVALID_HANDLE;
 *  - a factory receives, per slot, what the slot kind promises: its context, live
 *    instances of the dependency's key (an ALL slot: of the key or its named variants),
 *    a factory handle that builds the key, the runtime arguments passed;
 *  - no registration's factory is entered again while it runs (a constructor cycle);
 *  - a destructor runs once per instance (ASan sees a second one), dependents first;
 *  - a failed resolve leaves none of the instances it made alive;
 *  - handles give back the instance they were made for;
 *  - after everything is freed, no instance with a destructor is alive.
 * The library is not instrumented (Swift, statically linked runtime); the harness is.
 * With FUZZ_DIFF=1 the input is read as a conformance scenario instead, checked against the
 * reference model (the differential mode, below and in fuzz/README.md). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tether.h"
#include "tether_binding.h"   /* register_ex, with its options and callbacks of both forms */

/* The binding protocol's table, opened once (tether_binding_open). */
static tether_binding TB = TETHER_BINDING_INIT;
__attribute__((constructor)) static void open_binding(void) {
    if (tether_binding_open(&TB) != TETHER_OK) abort();
}

/* ---- known library bugs the harness can steer around (FUZZ_AVOID, fuzz/README.md) ---- */

static int trace;                    /* FUZZ_TRACE=1: print every call (to read a crashing input) */
#define T(...) do { if (trace) { fprintf(stderr, "%*s", 2 * depth + 2 * nframes, ""); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
static unsigned avoid;               /* bit n: avoid the pattern of issue 16 item n */
#define AVOIDS(item) (avoid & (1u << (item)))

static void read_avoid(void) {
    trace = getenv("FUZZ_TRACE") != NULL;
    const char *s = getenv("FUZZ_AVOID");
    for (; s && *s; s++) {
        int n = (int)strtol(s, (char **)&s, 10);
        if (n > 0 && n < 32) avoid |= 1u << n;
        if (!*s) break;
    }
}

/* ---- input ---------------------------------------------------------------------- */

static const uint8_t *in_p;
static size_t in_n;

static uint8_t u8(void) {
    if (!in_n) return 0;
    in_n--;
    return *in_p++;
}
static uint64_t u64(void) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | u8();
    return v;
}

#define FAIL(...) do { fprintf(stderr, "api_fuzz: invariant broken: " __VA_ARGS__); \
    fprintf(stderr, "\n  last error: %s\n", tether_last_error()); abort(); } while (0)

#define ST(s) (1u << (s))
static void expect(tether_status s, unsigned allowed, const char *what) {
    if ((unsigned)s > 31 || !(allowed & ST(s)))
        FAIL("%s returned %s (%d)", what, tether_status_name(s), (int)s);
    if (s != TETHER_OK && tether_last_error()[0] == '\0') FAIL("%s failed with an empty message", what);
}
#define RESOLVE_STATUSES (ST(TETHER_OK) | ST(TETHER_E_INVALID_HANDLE) | ST(TETHER_E_NOT_FOUND) | ST(TETHER_E_CYCLE) | \
    ST(TETHER_E_RETAIN_CYCLE) | ST(TETHER_E_FACTORY_FAILED) | ST(TETHER_E_ARGUMENT_MISMATCH) | ST(TETHER_E_NO_MEMORY))

/* ---- model ------------------------------------------------------------------------ */

enum { NCONT = 5, NKEYS = 6, NSPEC = 96, NREF = 64, NWEAK = 64, NPROV = 12, NLAZY = 32, NOBJ = 1024,
       MAXSLOT = 10, MAXCOMP = 3, MAXTARGET = 2, MAXDEPTH = 4, MAXCALLS = 400, OBJEDGES = 12 };
static const char *const keys[NKEYS + 1] = {"K0", "K1", "K2", "K3", "K4", "K0#5", "Kx"};

/* Whether key `item` is key `family` or a named variant of it ("K0#5" of "K0"): what an ALL slot lists. */
static int in_family(int item, int family) {
    size_t n = strlen(keys[family]);
    return item == family || (!strncmp(keys[item], keys[family], n) && keys[item][n] == '#');
}

typedef struct spec spec;
typedef struct comp {                /* one completion callback, its context when it has its own */
    spec *owner;
    int declared;                    /* tether_on_complete_params form */
    int ntargets;
    tether_param targets[MAXTARGET];
} comp;

struct spec {                        /* one registration; its address is the registration's context */
    int key, cont, scope, nslots, proto, variadic, has_drop, ready, running, ncomp;
    tether_param slots[MAXSLOT];
    comp comps[MAXCOMP];
    int run_frame;                   /* the last resolve it made a graph-scoped instance in */
};

typedef struct obj {
    uint32_t magic;
    int index;                       /* in objs[] */
    spec *s;
    int counted;                     /* made with a destructor: the library must drop it */
    int frame;                       /* the resolve that made it */
    uint64_t args;                   /* digest of the runtime arguments it was made with */
    struct obj *deps[OBJEDGES];      /* strong edges: must outlive it */
    int ndeps;
    tether_weak *weaks[OBJEDGES];    /* weak handles it owns */
    int nweaks;
} obj;
enum { ALIVE = 0x0b7ec7a1, DEAD = 0xdeadd00d };

typedef struct { tether_container *h; int live, parent, freeing; } cont_t;
typedef struct { tether_registration *h; spec *s; int live, registered, ovr, plain; } reg_t;   /* ovr: an override; plain: neither it nor a decorator */
typedef struct { tether_ref *h; obj *o; int live; } ref_t;
typedef struct { tether_weak *h; int live; } weak_t;
typedef struct { tether_provider p; int live; } prov_t;
typedef struct { tether_provider p; int owner, key; } lazy_t;   /* a lazy slot's provider; owner: index in objs[] */

static cont_t conts[NCONT];
/* Per container and key, the specs of its overrides, oldest first (tether_override_clear ends the newest). */
enum { MAXOVR = 8 };
static int ovr[NCONT][NKEYS + 1][MAXOVR], novr[NCONT][NKEYS + 1];
static spec specs[NSPEC];
static int nspecs;
static reg_t regs[NSPEC];
static ref_t refs[NREF];
static weak_t weaks[NWEAK];
static prov_t provs[NPROV];
static lazy_t lazies[NLAZY];
static int nlazies;
static obj *objs[NOBJ];
static int nobjs, live_counted;
static tether_resolver *old_resolvers[4];   /* from completion callbacks, with the resolve each ran in */
static int old_resolver_frames[4];
static int calls, depth;
static int factories_running;        /* factories on the stack, of any registration */

/* The frames of the resolves under way (top-level API calls and provider calls that run
 * factories), innermost last, with the runtime arguments each passed. */
typedef struct { int id, key, adopted, changes; const tether_value *args; size_t nargs;
                 const char *handed_by; const obj *handed_out; int handed_key, handed_index; } frame_t;
static frame_t frames[MAXDEPTH * 4 + 8];
static int nframes, next_frame;
static int changes;                  /* successful registrations and scope changes so far */

static int frame_push(int key, const tether_value *args, size_t nargs) {
    if (nframes == (int)(sizeof frames / sizeof *frames)) FAIL("harness: more nested resolves than MAXDEPTH allows");
    frames[nframes] = (frame_t){++next_frame, key, 0, changes, args, nargs, NULL, NULL, 0, 0};
    return frames[nframes++].id;
}

static int in_drop;                  /* destructors running on the stack */
static int deferred[64], ndeferred;  /* failed resolves to check at the next top-level step */

static void check_failed(int id) {
    for (int i = 0; i < nobjs; i++)
        if (objs[i] && objs[i]->counted && objs[i]->frame == id)
            FAIL("a failed resolve (frame %d) left %s#%d alive", id, keys[objs[i]->s->key], i);
}

/* After a resolve failed: nothing it made is alive. Inside a destructor or another resolve
 * the library may queue those releases until that returns: checked at the next top-level step. */
static void frame_pop(int id, tether_status st) {
    nframes--;
    const frame_t *f = &frames[nframes];
    if (st != TETHER_OK && f->handed_out)
        FAIL("%s handed out %s#%d while the resolve making it (frame %d) was unfinished, and that resolve then failed (%s)",
             f->handed_by, keys[f->handed_key], f->handed_index, id, tether_status_name(st));
    if (st == TETHER_OK || f->adopted) return;
    if (!in_drop && !nframes) check_failed(id);
    else if (ndeferred < 64) deferred[ndeferred++] = id;
}

/* `o` was handed out (a handle, a provider's result, a dependency of another resolve's
 * instance) while the resolve that makes it is still under way: if that resolve fails, `o`
 * (and what it holds) survives. Through a weak handle's upgrade that is the caller's doing;
 * through a resolve or a provider only an instance that resolve can no longer fail (it
 * published it) may be handed out: fuzz/README.md, pattern 14, fixed. `user`: the resolve
 * that received it (0: none under way). */
static void adopt(const obj *o, int by_resolve, const char *what, int user) {
    for (int i = 0; i < nframes; i++)
        if (frames[i].id == o->frame && o->frame != user) {
            /* (the key and index are copied: a failed resolve frees `o` before frame_pop reports it) */
            if (by_resolve) frames[i].handed_by = what, frames[i].handed_out = o, frames[i].handed_key = o->s->key, frames[i].handed_index = o->index;
            else frames[i].adopted = 1;
        }
}

static uint64_t digest(const tether_value *v, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i].kind == TETHER_PARAM_STR ? (uint64_t)strlen(v[i].as.str) * 31 + (uint8_t)v[i].as.str[0]
                                                   : (uint64_t)v[i].as.i64;
        h = (h ^ x ^ (uint64_t)v[i].kind) * 1099511628211ull;
    }
    return h;
}

/* Whether `h` is a handle the harness holds live (a forged value equal to one is not forged). */
static int is_live_handle(const void *h) {
    for (int i = 0; i < NCONT; i++) if (conts[i].live && conts[i].h == h) return 1;
    for (int i = 0; i < nspecs; i++) if (regs[i].live && regs[i].h == h) return 1;
    for (int i = 0; i < NREF; i++) if (refs[i].live && refs[i].h == h) return 1;
    for (int i = 0; i < NWEAK; i++) if (weaks[i].live && weaks[i].h == h) return 1;
    for (int i = 0; i < nobjs; i++)
        if (objs[i]) for (int j = 0; j < objs[i]->nweaks; j++) if (objs[i]->weaks[j] == h) return 1;
    return 0;
}

/* A value that is no live handle: random bits, a kind byte over random bits, a live
 * handle with its generation or index moved, or a pointer into the harness. */
static void *forged(void) {
    uint64_t v;
    switch (u8() % 5) {
    case 0: v = u64(); break;
    case 1: v = (uint64_t)(0x71 + u8() % 6) << 56 | (u64() & 0xffffffffffffull); break;
    case 2: v = (uint64_t)(uintptr_t)(refs[u8() % NREF].h) + ((uint64_t)1 << 32) * (1 + u8() % 3); break;
    case 3: v = (uint64_t)(uintptr_t)(conts[u8() % NCONT].h) + 1 + u8() % 4; break;
    default: v = (uint64_t)(uintptr_t)&specs[u8() % NSPEC]; break;
    }
    return is_live_handle((void *)(uintptr_t)v) ? (void *)(uintptr_t)0x7100000000000000ull : (void *)(uintptr_t)v;
}

static int pick_live_cont(void) {
    int i = u8() % NCONT;
    for (int k = 0; k < NCONT; k++) if (conts[(i + k) % NCONT].live) return (i + k) % NCONT;
    return -1;
}

static int has_live_child(int c) {
    for (int i = 0; i < NCONT; i++) if (conts[i].live && conts[i].parent == c) return 1;
    return 0;
}

static void weak_keep(tether_weak *w) {
    for (int i = 0; i < NWEAK; i++) if (!weaks[i].live && (!weaks[i].h || u8() & 1)) { weaks[i] = (weak_t){w, 1}; return; }
    expect(tether_weak_release(w), ST(TETHER_OK), "tether_weak_release (pool full)");
}
static void ref_keep(tether_ref *r, obj *o) {
    for (int i = 0; i < NREF; i++) if (!refs[i].live && (!refs[i].h || u8() & 1)) { refs[i] = (ref_t){r, o, 1}; return; }
    expect(tether_ref_release(r), ST(TETHER_OK), "tether_ref_release (pool full)");
}

static void check_instance(const void *p, int key, const char *what) {
    const obj *o = p;
    if (!o) FAIL("%s: NULL instance", what);
    if (o->magic != ALIVE) FAIL("%s: instance of %s is not alive (magic %x)", what, keys[o->s ? o->s->key : 6], o->magic);
    if (key >= 0 && o->s->key != key) FAIL("%s: got an instance of %s for %s", what, keys[o->s->key], keys[key]);
}

static void obj_add_dep(obj *o, obj *d) { if (o->ndeps < OBJEDGES) o->deps[o->ndeps++] = d; }

/* A list from an ALL slot or tether_resolve_all of `key`: live instances of the key or its named
 * variants, each handed out to `user`'s resolve (see adopt) and, if `o`, held by it. */
static void check_list(const tether_list *l, int key, obj *o, int user, const char *what) {
    if (!l || (l->count && !l->items)) FAIL("%s: no list", what);
    for (size_t j = 0; j < l->count; j++) {
        obj *item = l->items[j];
        check_instance(item, -1, what);
        if (key >= 0 && !in_family(item->s->key, key)) FAIL("%s of %s listed an instance of %s", what, keys[key], keys[item->s->key]);
        adopt(item, 1, what, user);
        if (o) obj_add_dep(o, item);
    }
}
static void obj_add_weak(obj *o, tether_weak *w) {
    if (o->nweaks < OBJEDGES) o->weaks[o->nweaks++] = w;
    else expect(tether_weak_release(w), ST(TETHER_OK), "tether_weak_release (object full)");
}

static void op(void);

/* Up to two API calls from inside a callback, as the input says. */
static void reenter(void) {
    int n = u8() % 4;
    if (n == 3) n = 0;
    for (int i = 0; i < n && depth < MAXDEPTH && calls < MAXCALLS; i++) {
        depth++;
        op();
        depth--;
    }
}

/* ---- callbacks ---------------------------------------------------------------------- */

static void drop(void *instance, void *context) {
    obj *o = instance;
    if (o->magic != ALIVE) FAIL("destructor ran on an instance that is not alive (magic %x)", o->magic);
    if ((void *)o->s != context) FAIL("destructor got context %p for an instance of %s", context, keys[o->s->key]);
    if (!o->counted) FAIL("destructor ran for an instance made without one (%s)", keys[o->s->key]);
    for (int i = 0; i < o->ndeps; i++)
        if (o->deps[i]->magic != ALIVE) FAIL("%s destroyed after its dependency %s", keys[o->s->key], keys[o->deps[i]->s->key]);
    T("drop %s#%d", keys[o->s->key], o->index);
    o->magic = DEAD;
    objs[o->index] = NULL;
    live_counted--;
    in_drop++;
    reenter();
    in_drop--;
    for (int i = 0; i < o->nweaks; i++) expect(tether_weak_release(o->weaks[i]), ST(TETHER_OK), "tether_weak_release in a destructor");
    free(o);
}

/* One resolver use from a callback or a RESOLVER slot, recording what it hands out on `o`. */
static void use_resolver(tether_resolver *r, obj *o) {
    calls++;
    int key = u8() % (NKEYS + 1);
    if (u8() & 1) {
        void *p = NULL;
        tether_status st = tether_resolver_get(r, keys[key], &p);
        expect(st, RESOLVE_STATUSES | ST(TETHER_E_WRONG_CONTEXT), "tether_resolver_get");
        if (st == TETHER_OK) {
            check_instance(p, key, "tether_resolver_get");
            adopt(p, 1, "tether_resolver_get", nframes ? frames[nframes - 1].id : 0);
            obj_add_dep(o, p);
        }
    } else {
        tether_weak *w = NULL;
        tether_status st = tether_resolver_get_weak(r, keys[key], &w);
        expect(st, RESOLVE_STATUSES | ST(TETHER_E_WRONG_CONTEXT), "tether_resolver_get_weak");
        if (st == TETHER_OK) obj_add_weak(o, w);
    }
}


/* Whether a lazy slot's provider failed only because its owner may not hold what it resolved:
 * the strong edge owner -> key, outside any callback, would close a retain cycle. */
static int lazy_edge_refused(tether_status st, int owner, int key) {
    if (st != TETHER_E_RETAIN_CYCLE || owner < 0 || !objs[owner] || key < 0) return 0;
    tether_error_parts parts;
    if (TB.last_error_parts(&parts) != TETHER_OK) return 0;
    return (parts.fix == TETHER_FIX_WEAK_EDGE || parts.fix == TETHER_FIX_WEAK_LAZY) && parts.callback == 0 && !parts.callback_of && parts.key && parts.target
        && !strcmp(parts.key, keys[objs[owner]->s->key]) && !strcmp(parts.target, keys[key]);
}

/* Calls a lazy slot's provider. `owner` (index in objs[], or -1: its instance is being
 * built) must be alive for the result to be read: if a callback destroyed it meanwhile,
 * the pointer returned is not the caller's to use. */
static void call_lazy(tether_provider p, int owner, int key) {
    int id = frame_push(key, NULL, 0);
    T("lazy provider of %s (owner #%d, frame %d)", key >= 0 ? keys[key] : "?", owner, id);
    calls++;
    void *got = p();
    tether_status st = got ? TETHER_OK : tether_last_status();
    T("lazy provider of %s -> %s", key >= 0 ? keys[key] : "?", tether_status_name(st));
    /* TETHER_E_EXPIRED: the resolve succeeded (what it published stays) but nothing else holds
     * the weak-lazy result, so it is gone already; the cell's own strong edge refused (a retain
     * cycle with no callback and no factory on its path): the resolve succeeded, the owner may
     * not hold it; the owner destroyed during the call (INVALID_HANDLE): the result is withheld,
     * what the resolve published stays. None of these is a failed resolve. */
    int owner_died = owner >= 0 && !objs[owner];
    frame_pop(id, st == TETHER_E_EXPIRED || (st == TETHER_E_INVALID_HANDLE && owner_died) || lazy_edge_refused(st, owner, key)
                  ? TETHER_OK : st);
    if (owner >= 0 && !objs[owner]) return;
    /* A lazy slot answers the instance of the graph it was filled in, also while that graph
     * completes (tether.h, TETHER_PARAM_LAZY): given to a member of that graph (the owner's, or
     * the resolve calling it), it leaves no resolve, as a resolver's get does not. */
    int graph = owner >= 0 ? objs[owner]->frame : nframes ? frames[nframes - 1].id : 0;
    if (got) { check_instance(got, key, "a lazy slot's provider"); adopt(got, 1, "a lazy slot's provider", graph); }
    else expect(st, (RESOLVE_STATUSES & ~ST(TETHER_OK)) | ST(TETHER_E_EXPIRED), "a lazy slot's provider");
}

static int matching_values(int ci, int key, tether_value *v, size_t *n);
static void values(tether_value *v, size_t n);

/* Calls a FACTORY slot's handle (of `key`, its receiver registered in container `ci`) with the
 * arguments the key declares, or others, as the input says: a top-level resolve of its own. */
static void call_factory(tether_factory *fy, int key, int ci) {
    tether_value args[MAXSLOT];
    size_t nargs = 0;
    if (!((u8() & 3) && matching_values(ci, key, args, &nargs))) { nargs = u8() % 3; values(args, nargs); }
    int id = frame_push(key, args, nargs);
    T("factory handle of %s (%zu args, frame %d)", key >= 0 ? keys[key] : "?", nargs, id);
    calls++;
    tether_ref *out = NULL;
    tether_status st = tether_factory_call(fy, args, nargs, &out);
    T("factory handle of %s -> %s", key >= 0 ? keys[key] : "?", tether_status_name(st));
    frame_pop(id, st);
    expect(st, RESOLVE_STATUSES, "tether_factory_call");
    if ((st == TETHER_OK) != (out != NULL)) FAIL("tether_factory_call returned %s with out %p", tether_status_name(st), (void *)out);
    if (st != TETHER_OK) return;
    obj *o = tether_ref_get(out);
    check_instance(o, key, "tether_factory_call");
    adopt(o, 1, "tether_factory_call", 0);
    ref_keep(out, o);
}

static const char *const strs[] = {"", "a", "value", "\xe2\x82\xac", "longer string argument"};
static const int64_t i64s[] = {0, 1, -1, 42, INT64_MIN, INT64_MAX, 1ll << 32, -7};
static const double f64s[] = {0.0, -0.0, 1.5, -2.25, 1e300, 5e-324};

static spec *spec_at(uint64_t v) {
    uintptr_t base = (uintptr_t)specs;
    if (v < base || v >= base + sizeof specs || (v - base) % sizeof(spec)) return NULL;
    return &specs[(v - base) / sizeof(spec)];
}

void *fuzz_factory(int proto, const uint64_t *iv, int ni, const double *dv, int nd);

/* The factory of every registration: reads its slots, checks them, builds an obj, and
 * re-enters the API or fails as the input says. */
void *fuzz_factory(int proto, const uint64_t *iv, int ni, const double *dv, int nd) {
    spec *s = NULL;
    for (int i = 0; i < ni && !s; i++) s = spec_at(iv[i]);
    if (!s || !s->ready) { tether_set_error("called before its registration was configured"); return NULL; }
    if (s->proto != proto) FAIL("factory of prototype %d called for a registration of prototype %d", proto, s->proto);
    if (s->running) FAIL("the factory of %s was entered again while it runs (a constructor cycle)", keys[s->key]);
    frame_t *f = nframes ? &frames[nframes - 1] : NULL;
    if (!f) FAIL("a factory ran outside any resolve");
    obj *o = calloc(1, sizeof *o);
    if (!o) abort();
    o->magic = ALIVE; o->s = s; o->counted = s->has_drop; o->frame = f->id;
    tether_resolver *res = NULL;
    tether_provider lz[MAXSLOT];
    tether_factory *fy[MAXSLOT];
    int lzkey[MAXSLOT], nlz = 0, fykey[MAXSLOT], nfy = 0, ii = 0, di = 0, nargs = 0;
    tether_value args[MAXSLOT];
    for (int k = 0; k < s->nslots; k++) {
        tether_param_kind kind = s->slots[k].kind;
        int key = -1;
        for (int j = 0; j <= NKEYS; j++) if (s->slots[k].key && !strcmp(s->slots[k].key, keys[j])) key = j;
        if (kind == TETHER_PARAM_F64) {
            if (di >= nd) FAIL("too few double arguments");
            args[nargs++] = TETHER_VAL_F64(dv[di++]);
            continue;
        }
        if (ii >= ni) FAIL("too few integer arguments");
        uint64_t v = iv[ii++];
        switch (kind) {
        case TETHER_PARAM_DEP:
            check_instance((void *)(uintptr_t)v, key, "a DEP slot");
            adopt((obj *)(uintptr_t)v, 1, "a DEP slot", f->id);
            obj_add_dep(o, (obj *)(uintptr_t)v);
            break;
        case TETHER_PARAM_WEAK:
            if (!v) FAIL("a WEAK slot received NULL");
            obj_add_weak(o, (tether_weak *)(uintptr_t)v);
            break;
        case TETHER_PARAM_LAZY: case TETHER_PARAM_WEAK_LAZY:
            if (!v) FAIL("a lazy slot received NULL");
            lz[nlz] = (tether_provider)(uintptr_t)v; lzkey[nlz++] = key;
            break;
        case TETHER_PARAM_CONTEXT: if (spec_at(v) != s) FAIL("the CONTEXT slot of %s is not its context", keys[s->key]); break;
        case TETHER_PARAM_RESOLVER: if (!res) res = (tether_resolver *)(uintptr_t)v; break;
        case TETHER_PARAM_I64: args[nargs++] = TETHER_VAL_I64((int64_t)v); break;
        case TETHER_PARAM_STR: args[nargs++] = TETHER_VAL_STR((const char *)(uintptr_t)v); break;
        case TETHER_PARAM_PTR: args[nargs++] = TETHER_VAL_PTR((void *)(uintptr_t)v); break;
        case TETHER_PARAM_ALL: check_list((const tether_list *)(uintptr_t)v, key, o, f->id, "an ALL slot"); break;
        case TETHER_PARAM_FACTORY:
            if (!v) FAIL("a FACTORY slot received NULL");
            fy[nfy] = (tether_factory *)(uintptr_t)v; fykey[nfy++] = key;
            break;
        case TETHER_PARAM_F64: FAIL("an F64 slot read as an integer"); break;
        }
    }
    if (nargs) {                      /* runtime arguments: only at the top of a resolve_args, as passed */
        if (f->key != s->key || f->nargs != (size_t)nargs) FAIL("%s's factory got runtime arguments it was not given", keys[s->key]);
        for (int k = 0; k < nargs; k++) {
            const tether_value *a = &f->args[k];
            int same = a->kind == TETHER_PARAM_STR ? !strcmp(a->as.str, args[k].as.str)
                     : a->kind == TETHER_PARAM_F64 ? !memcmp(&a->as.f64, &args[k].as.f64, sizeof(double))
                     : a->as.i64 == args[k].as.i64;
            if (a->kind != args[k].kind || !same) FAIL("runtime argument %d of %s arrived changed", k, keys[s->key]);
        }
        o->args = digest(f->args, f->nargs);
    }
    T("factory %s (spec %d, scope %d, frame %d, running %d)", keys[s->key], (int)(s - specs), s->scope, f->id, s->running);
    s->running++;
    factories_running++;
    uint8_t b = u8();
    for (int k = 0; k < (b >> 4) % 3 && depth < MAXDEPTH && calls < MAXCALLS; k++) {
        depth++;
        if (res && (u8() & 1)) use_resolver(res, o);
        else if (nfy && (u8() & 1)) {
            int j = u8() % nfy;
            call_factory(fy[j], fykey[j], s->cont);
        } else if (nlz && (u8() & 1)) {
            int j = u8() % nlz;
            call_lazy(lz[j], -1, lzkey[j]);
        } else reenter();
        depth--;
    }
    s->running--;
    factories_running--;
    /* The factory owns its factory handles, whatever it returns; a released one is stale. */
    for (int j = 0; j < nfy; j++) expect(tether_factory_release(fy[j]), ST(TETHER_OK), "tether_factory_release");
    if (nfy && (u8() & 1)) {
        tether_ref *stale = NULL;
        expect(tether_factory_call(fy[0], NULL, 0, &stale), ST(TETHER_E_INVALID_HANDLE), "tether_factory_call (released)");
        expect(tether_factory_release(fy[0]), ST(TETHER_E_INVALID_HANDLE), "tether_factory_release (twice)");
    }
    if ((b & 7) == 0 || nobjs == NOBJ) {   /* fail, with or without a reason */
        T("factory %s fails", keys[s->key]);
        if (b & 8) tether_set_error("the input says this factory fails");
        for (int i = 0; i < o->nweaks; i++) expect(tether_weak_release(o->weaks[i]), ST(TETHER_OK), "tether_weak_release in a failing factory");
        free(o);
        return NULL;
    }
    /* No factory runs twice in one graph: a graph-scoped registration makes one instance per
     * resolve (checked while no registration or scope changed since the resolve began). */
    if (s->scope == TETHER_SCOPE_GRAPH && f->changes == changes) {
        if (s->run_frame == f->id) FAIL("the graph-scoped factory of %s ran twice in one resolve", keys[s->key]);
        s->run_frame = f->id;
    }
    o->index = nobjs;
    objs[nobjs++] = o;
    T("factory %s made #%d", keys[s->key], o->index);
    if (o->counted) {
        live_counted++;
        for (int j = 0; j < nlz; j++) if (nlazies < NLAZY) lazies[nlazies++] = (lazy_t){lz[j], o->index, lzkey[j]};
    }
    return o;
}

static void *fac_variadic(uint64_t context, ...);
#include "factories.h"

/* Variadic factory (tether_set_variadic with 1 fixed slot, the CONTEXT). */
static void *fac_variadic(uint64_t context, ...) {
    spec *s = spec_at(context);
    if (!s || !s->ready) { tether_set_error("called before its registration was configured"); return NULL; }
    uint64_t iv[MAXSLOT] = {context};
    double dv[MAXSLOT];
    int ni = 1, nd = 0;
    va_list ap;
    va_start(ap, context);
    for (int k = 1; k < s->nslots; k++)
        if (s->slots[k].kind == TETHER_PARAM_F64) dv[nd++] = va_arg(ap, double);
        else iv[ni++] = va_arg(ap, uint64_t);
    va_end(ap);
    return fuzz_factory(s->proto, iv, ni, dv, nd);
}

static comp *comp_of(void *context, void *instance) {
    obj *o = instance;
    if (!o || o->magic != ALIVE) FAIL("a completion callback got an instance that is not alive");
    if (context == (void *)o->s) return NULL;
    comp *c = context;
    if ((uintptr_t)c < (uintptr_t)o->s->comps || (uintptr_t)c >= (uintptr_t)(o->s->comps + MAXCOMP))
        FAIL("a completion callback of %s got a foreign context", keys[o->s->key]);
    return c;
}

static tether_status complete_plain(tether_resolver *r, void *instance, void *context) {
    comp_of(context, instance);
    uint8_t b = u8();
    T("completion of %s#%d%s", keys[((obj *)instance)->s->key], ((obj *)instance)->index, (b & 7) ? "" : " (fails)");
    for (int k = 0; k < (b >> 3) % 3; k++) use_resolver(r, instance);
    for (int i = 0; i < 4; i++)
        if (!old_resolvers[i] || (b & 64)) { old_resolvers[i] = r; old_resolver_frames[i] = nframes ? frames[nframes - 1].id : 0; break; }
    reenter();
    if ((b & 7) == 0) { tether_set_error("the input says this callback fails"); return TETHER_E_FACTORY_FAILED; }
    return TETHER_OK;
}

static tether_status complete_declared(void *instance, void *const *args, size_t n, void *context) {
    comp *c = comp_of(context, instance);
    obj *o = instance;
    const spec *s = o->s;
    const comp *decl = c;
    /* Without its own context, which callback this is shows in its targets: a DEP target is
     * an instance the harness knows, a WEAK one a handle. */
    for (int i = 0; i < s->ncomp && !decl; i++) {
        const comp *d = &s->comps[i];
        int fits = d->declared && (size_t)d->ntargets == n;
        for (size_t t = 0; fits && t < n; t++) {
            int known = 0;
            for (int j = 0; j < nobjs && !known; j++) known = objs[j] && objs[j] == args[t];
            fits = known == (d->targets[t].kind == TETHER_PARAM_DEP);
        }
        if (fits) decl = d;
    }
    if (!decl || (size_t)decl->ntargets != n) FAIL("a declared completion callback of %s got %zu targets it did not declare", keys[s->key], n);
    for (size_t i = 0; i < n; i++) {
        if (decl->targets[i].kind == TETHER_PARAM_DEP) {
            int key = 0;   /* by name: "K0#5" is not K0 */
            while (key < NKEYS && strcmp(keys[key], decl->targets[i].key) != 0) key++;
            check_instance(args[i], c ? key : -1, "a declared DEP target");
            adopt(args[i], 1, "a declared DEP target", nframes ? frames[nframes - 1].id : 0);
            obj_add_dep(o, args[i]);
        } else {
            if (!args[i]) FAIL("a declared WEAK target is NULL");
            obj_add_weak(o, args[i]);
        }
    }
    uint8_t b = u8();
    T("declared completion of %s#%d%s", keys[s->key], o->index, (b & 7) ? "" : " (fails)");
    reenter();
    if ((b & 7) == 0) { tether_set_error("the input says this callback fails"); return TETHER_E_FACTORY_FAILED; }
    return TETHER_OK;
}

/* ---- operations ------------------------------------------------------------------- */

static int is_runtime(tether_param_kind k) { return k >= TETHER_PARAM_I64 && k <= TETHER_PARAM_PTR; }

/* A registration's slots, scope, destructor and callbacks, from the input. */
static spec *gen_spec(int key, int cont) {
    if (nspecs == NSPEC) return NULL;
    spec *s = &specs[nspecs];
    memset(s, 0, sizeof *s);
    s->key = key; s->cont = cont;
    uint8_t b = u8();
    s->variadic = (b & 0x30) == 0x30;
    int n = 1 + b % (s->variadic ? 5 : (b & 0x40) ? 10 : 4);
    int ctx = s->variadic ? 0 : u8() % n, doubles_ok = n <= 4 || s->variadic;
    int resolvers = 0;
    for (int k = 0; k < n; k++) {
        if (k == ctx) { s->slots[k] = TETHER_CONTEXT; continue; }
        uint8_t c = u8();
        tether_param_kind kind = (tether_param_kind)(c % 12);
        if (kind == TETHER_PARAM_CONTEXT) kind = TETHER_PARAM_DEP;
        if (kind == TETHER_PARAM_F64 && !doubles_ok) kind = TETHER_PARAM_I64;
        if (kind == TETHER_PARAM_RESOLVER && AVOIDS(5) && resolvers++) kind = TETHER_PARAM_DEP;
        const char *k2 = kind <= TETHER_PARAM_WEAK_LAZY || kind >= TETHER_PARAM_ALL ? keys[(c / 12) % (NKEYS + 1)] : NULL;
        s->slots[k] = (tether_param){kind, k2};
    }
    s->nslots = n;
    int mask = 0;
    for (int k = 0; k < n && n <= 4; k++) if (s->slots[k].kind == TETHER_PARAM_F64) mask |= 1 << k;
    s->proto = n <= 4 ? (1 << n) - 1 + mask : 31 + n - 5;
    s->scope = u8() % 5;
    int runtime = 0;
    for (int k = 0; k < n; k++) runtime |= is_runtime(s->slots[k].kind);
    if (runtime && AVOIDS(8) && s->scope >= TETHER_SCOPE_SINGLETON) s->scope = TETHER_SCOPE_GRAPH;
    s->has_drop = (u8() & 3) != 0;
    s->ncomp = u8() % (MAXCOMP + 1);
    for (int i = 0; i < s->ncomp; i++) {
        comp *c = &s->comps[i];
        uint8_t d = u8();
        c->owner = s; c->declared = d & 1; c->ntargets = c->declared ? (d >> 1) % (MAXTARGET + 1) : 0;
        for (int t = 0; t < c->ntargets; t++) {
            uint8_t e = u8();
            c->targets[t] = (tether_param){(e & 1) ? TETHER_PARAM_WEAK : TETHER_PARAM_DEP, keys[(e >> 1) % (NKEYS + 1)]};
        }
    }
    nspecs++;
    return s;
}

/* Specs issue 16 says the library should refuse (items 5 and 8): either answer is accepted. */
static int questionable(const spec *s, int scope) {
    int resolvers = 0, runtime = 0;
    for (int k = 0; k < s->nslots; k++) {
        resolvers += s->slots[k].kind == TETHER_PARAM_RESOLVER;
        runtime |= is_runtime(s->slots[k].kind);
    }
    return resolvers > 1 || (runtime && scope >= TETHER_SCOPE_SINGLETON);
}

static tether_fn fn_of(const spec *s) { return s->variadic ? (tether_fn)fac_variadic : factories[s->proto]; }

/* Whether container slot `ci`, live with handle `c` before a call, was freed by a destructor
 * that call ran (re-registering a key drops what the replaced registration made). */
static int freed_meanwhile(int ci, const tether_container *c) {
    return !conts[ci].live || conts[ci].h != c;
}

/* Whether a registration of `s`'s key in its container succeeded while registering `s` ran
 * (a destructor of what the replaced registration made registering the key again): that one
 * replaced `s`'s before it had a handle to give. An override or a decorator replaces nothing. */
static int superseded(const spec *s) {
    for (int i = (int)(s - specs) + 1; i < nspecs; i++)
        if (regs[i].registered && regs[i].plain && specs[i].cont == s->cont && specs[i].key == s->key) return 1;
    return 0;
}

/* Makes `s` a decorator of its key in container `ci`: exactly one DEP slot on its own key (the
 * instance), its scope the decorated registration's (what the library gives it); 0 if it has no
 * DEP slot to be that one. */
static int make_decorator(spec *s, int ci) {
    int instance = -1;
    for (int k = 0; k < s->nslots; k++) {
        if (s->slots[k].kind != TETHER_PARAM_DEP) continue;
        if (instance < 0) instance = k, s->slots[k].key = keys[s->key];
        else if (s->slots[k].key == keys[s->key]) s->slots[k].key = keys[(s->key + 1) % NKEYS];
    }
    if (instance < 0) return 0;
    for (int i = nspecs - 2; i >= 0; i--)
        if (regs[i].live && !regs[i].ovr && specs[i].cont == ci && specs[i].key == s->key) { s->scope = specs[i].scope; break; }
    return 1;
}

static void op_register(void) {
    int ci = pick_live_cont();
    if (ci < 0) return;
    spec *s = gen_spec(u8() % NKEYS, ci);
    if (!s) return;
    tether_registration *r = NULL;
    tether_container *c = conts[ci].h;
    int want_handle = (u8() & 7) != 0, freeing = conts[ci].freeing;
    /* With tether_register_ex: an override (TETHER_OVERRIDE) or a decorator (TETHER_DECORATE) now and then. */
    uint8_t how = u8();
    int ex = how & 1, mode = ex ? (how >> 1) % 6 : 5;   /* 0: override, 1: decorate, else register */
    if (mode == 1 && !make_decorator(s, ci)) mode = 5;
    unsigned ok = ST(TETHER_OK) | (questionable(s, s->scope) ? ST(TETHER_E_INVALID_ARGUMENT) : 0);
    if (mode == 1) ok |= ST(TETHER_E_NOT_FOUND) | ST(TETHER_E_INVALID_ARGUMENT) | ST(TETHER_E_ARGUMENT_MISMATCH);
    if (freeing) ok = ST(TETHER_E_INVALID_HANDLE);
    tether_status st;
    calls++;
    /* The key's old registration in that container is stale from the moment the call replaces it
     * (destructors of its instances, which the call runs, may try its handle); an override or a
     * decorator replaces nothing, and a registration goes under the overrides */
    int replaced[NSPEC], nreplaced = 0;   /* the key's registration and its decorators */
    for (int i = 0; i < nspecs - 1 && mode >= 2; i++)
        if (regs[i].live && !regs[i].ovr && regs[i].s->cont == ci && regs[i].s->key == s->key) regs[i].live = 0, replaced[nreplaced++] = i;
    if (ex) {                         /* register_ex: everything at once */
        tether_completion cbs[MAXCOMP];
        for (int i = 0; i < s->ncomp; i++)
            cbs[i] = (tether_completion){s->comps[i].declared ? NULL : complete_plain,
                                         s->comps[i].declared ? complete_declared : NULL,
                                         s->comps[i].targets, (size_t)s->comps[i].ntargets,
                                         (u8() & 1) ? &s->comps[i] : NULL};
        tether_registration_options o = {.scope = s->scope, .context = s, .drop = s->has_drop ? drop : NULL,
                                         .variadic_fixed = s->variadic ? 1 : 0,
                                         .flags = TETHER_OPTIONS_CALLBACKS | (mode == 0 ? TETHER_OVERRIDE : mode == 1 ? TETHER_DECORATE : 0),
                                         .callbacks = cbs, .callback_count = (size_t)s->ncomp};
        s->ready = 1;
        st = TB.register_ex(c, keys[s->key], fn_of(s), s->slots, (size_t)s->nslots, &o, want_handle ? &r : NULL);
        /* an override being made is not superseded by a registration of its key meanwhile: it stays on top */
        expect(st, freed_meanwhile(ci, c) || (want_handle && mode != 0 && superseded(s)) ? ST(TETHER_E_INVALID_HANDLE) : ok, "tether_register_ex");
    } else {
        st = tether_register(c, keys[s->key], fn_of(s), s->slots, (size_t)s->nslots, &r);
        expect(st, freed_meanwhile(ci, c) || superseded(s) ? ST(TETHER_E_INVALID_HANDLE) : ok, "tether_register");
        if (st == TETHER_OK) {
            expect(tether_set_context(r, s, s->has_drop ? drop : NULL), ST(TETHER_OK), "tether_set_context");
            if (s->variadic) expect(tether_set_variadic(r, 1), ST(TETHER_OK), "tether_set_variadic");
            tether_status sc = tether_set_scope(r, (tether_scope)s->scope);
            expect(sc, ok, "tether_set_scope");
            if (sc != TETHER_OK) s->scope = TETHER_SCOPE_GRAPH;
            for (int i = 0; i < s->ncomp; i++) {
                void *cx = (u8() & 1) ? &s->comps[i] : NULL;
                if (s->comps[i].declared)
                    expect(tether_on_complete_params(r, complete_declared, s->comps[i].targets, (size_t)s->comps[i].ntargets, cx),
                           ST(TETHER_OK), "tether_on_complete_params");
                else expect(tether_on_complete(r, complete_plain, cx), ST(TETHER_OK), "tether_on_complete");
            }
            s->ready = 1;
        }
    }
    T("%s %s in c%d: spec %d, %d slots, scope %d, drop %d, %d callbacks -> %s",
      mode == 0 ? "override" : mode == 1 ? "decorate" : "register", keys[s->key], ci, (int)(s - specs),
      s->nslots, s->scope, s->has_drop, s->ncomp, tether_status_name(st));
    for (int k = 0; k < s->nslots; k++) T("  slot %d: kind %d %s", k, (int)s->slots[k].kind, s->slots[k].key ? s->slots[k].key : "");
    for (int k = 0; k < s->ncomp; k++) T("  callback %d: declared %d, %d targets", k, s->comps[k].declared, s->comps[k].ntargets);
    if (st == TETHER_OK) {
        changes++;
        regs[s - specs] = (reg_t){r, s, r != NULL, 1, mode == 0, mode >= 2};
        if (mode == 0 && novr[ci][s->key] < MAXOVR) ovr[ci][s->key][novr[ci][s->key]++] = (int)(s - specs);
        else if (mode == 0) regs[s - specs].live = 0, regs[s - specs].h = NULL;   /* past what the model tracks: its
                                                   * handle (live in the library) forgotten, never tried as a stale one */
    } else {
        s->ready = 0;
        /* refused before replacing anything (INVALID_HANDLE: the container went, or another
         * registration of the key replaced both meanwhile) */
        if (st != TETHER_E_INVALID_HANDLE && conts[ci].live) for (int k = 0; k < nreplaced; k++) regs[replaced[k]].live = 1;
    }
}

/* Registrations the header says are refused, with the status it names. */
static void op_register_bad(void) {
    int ci = pick_live_cont();
    tether_container *c = ci >= 0 && (u8() & 1) ? conts[ci].h : forged();
    int live = ci >= 0 && c == conts[ci].h && !conts[ci].freeing;
    tether_param p[2] = {TETHER_CONTEXT, TETHER_DEP("K0")};
    const char *key = "K0";
    tether_fn fn = factories[3];
    const tether_param *params = p;
    size_t n = 2;
    switch (u8() % 6) {
    case 0: key = NULL; break;
    case 1: key = ""; break;
    case 2: fn = NULL; break;
    case 3: params = NULL; break;
    case 4: p[1].kind = (tether_param_kind)(TETHER_PARAM_FACTORY + 1 + u8()); break;
    default: p[1].key = NULL; break;
    }
    calls++;
    tether_status st = tether_register(c, key, fn, params, n, NULL);
    expect(st, live ? ST(TETHER_E_INVALID_ARGUMENT) : ST(TETHER_E_INVALID_HANDLE) | ST(TETHER_E_INVALID_ARGUMENT), "tether_register (bad)");
}

static void op_reg_setter(void) {
    int i = nspecs ? u8() % nspecs : 0;
    int live = nspecs && regs[i].live && conts[regs[i].s->cont].live && !conts[regs[i].s->cont].freeing;
    tether_registration *r = regs[i].h;
    if (!nspecs || !r || (u8() & 15) == 0) { live = 0; r = forged(); }
    if (!live && is_live_handle(r)) return;
    spec *s = live ? regs[i].s : NULL;
    T("registration %d (%s) setter", i, live ? "live" : "dead");
    unsigned bad = ST(TETHER_E_INVALID_HANDLE);
    calls++;
    switch (u8() % 4) {
    case 0: {
        int scope = u8() % 6;
        if (live && scope <= 4 && AVOIDS(8) && questionable(s, scope)) return;
        tether_status st = tether_set_scope(r, (tether_scope)scope);
        if (!live) expect(st, bad | ST(TETHER_E_INVALID_ARGUMENT), "tether_set_scope (stale)");
        else if (scope > 4) expect(st, ST(TETHER_E_INVALID_ARGUMENT), "tether_set_scope (bad scope)");
        else {
            expect(st, ST(TETHER_OK) | (questionable(s, scope) ? ST(TETHER_E_INVALID_ARGUMENT) : 0), "tether_set_scope");
            if (st == TETHER_OK) { s->scope = scope; changes++; }
        }
        break;
    }
    case 1:
        if (live) expect(tether_set_context(r, s, s->has_drop ? drop : NULL), ST(TETHER_OK), "tether_set_context");
        else expect(tether_set_context(r, NULL, NULL), bad, "tether_set_context (stale)");
        break;
    case 2:
        if (live && s->ncomp < MAXCOMP) {
            comp *c = &s->comps[s->ncomp];
            *c = (comp){.owner = s, .declared = u8() & 1};
            if (c->declared) {
                c->ntargets = u8() % (MAXTARGET + 1);
                for (int t = 0; t < c->ntargets; t++)
                    c->targets[t] = (tether_param){(u8() & 1) ? TETHER_PARAM_WEAK : TETHER_PARAM_DEP, keys[u8() % (NKEYS + 1)]};
            }
            void *cx = (u8() & 1) ? c : NULL;
            s->ncomp++;       /* before the call: a callback may run as soon as it is added */
            if (c->declared) expect(tether_on_complete_params(r, complete_declared, c->targets, (size_t)c->ntargets, cx), ST(TETHER_OK), "tether_on_complete_params");
            else expect(tether_on_complete(r, complete_plain, cx), ST(TETHER_OK), "tether_on_complete");
        } else if (!live) {
            expect(tether_on_complete(r, complete_plain, NULL), bad, "tether_on_complete (stale)");
        } else {
            expect(tether_on_complete(r, NULL, NULL), ST(TETHER_E_INVALID_ARGUMENT), "tether_on_complete (NULL fn)");
        }
        break;
    default: {
        size_t fixed = u8() & 1 ? 0 : (size_t)(s ? s->nslots + 1 + u8() % 3 : 1);
        expect(tether_set_variadic(r, fixed), live ? ST(TETHER_E_INVALID_ARGUMENT) : bad | ST(TETHER_E_INVALID_ARGUMENT), "tether_set_variadic (bad count)");
    }
    }
}

static void new_container(void) {
    int slot = u8() % NCONT;
    if (conts[slot].live) return;
    int parent = (u8() & 1) ? pick_live_cont() : -1;
    tether_container *c = NULL;
    calls++;
    tether_status st = tether_container_new(parent >= 0 ? conts[parent].h : NULL, &c);
    if (parent >= 0 && conts[parent].freeing) { expect(st, ST(TETHER_E_INVALID_HANDLE), "tether_container_new (parent being freed)"); return; }
    expect(st, ST(TETHER_OK), "tether_container_new");
    T("new c%d (parent c%d)", slot, parent);
    conts[slot] = (cont_t){c, 1, parent, 0};
}

static void free_container(int ci) {
    calls++;
    if (conts[ci].freeing) {
        expect(tether_container_free(conts[ci].h), ST(TETHER_E_INVALID_HANDLE), "tether_container_free (being freed)");
        return;
    }
    if (has_live_child(ci)) {
        expect(tether_container_free(conts[ci].h), ST(TETHER_E_INVALID_ARGUMENT), "tether_container_free (children)");
        return;
    }
    T("free c%d", ci);
    conts[ci].freeing = 1;
    expect(tether_container_free(conts[ci].h), ST(TETHER_OK), "tether_container_free");
    conts[ci].freeing = 0;
    conts[ci].live = 0;
    for (int i = 0; i < nspecs; i++) if (regs[i].live && specs[i].cont == ci) regs[i].live = 0;
    memset(novr[ci], 0, sizeof novr[ci]);
}

/* The container a call goes to: live, stale (freed), being freed, or forged (*live = 0:
 * every call on it answers TETHER_E_INVALID_HANDLE). */
static tether_container *pick_cont(int *live) {
    uint8_t b = u8();
    int i = b % NCONT;
    if ((b & 0xe0) == 0xe0) { *live = 0; return (b & 0x10) ? NULL : forged(); }
    if (!conts[i].h) { int j = pick_live_cont(); if (j < 0) { *live = 0; return NULL; } i = j; }
    *live = conts[i].live && !conts[i].freeing;
    return conts[i].h;
}

/* The statuses a call on pick_cont's container may return: `ok` on a live one, INVALID_HANDLE otherwise. */
static unsigned on_cont(int live, unsigned ok) { return live ? ok : ST(TETHER_E_INVALID_HANDLE); }

static void values(tether_value *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint8_t b = u8();
        switch (b % 4) {
        case 0: v[i] = TETHER_VAL_I64(i64s[(b >> 2) % 8]); break;
        case 1: v[i] = TETHER_VAL_F64(f64s[(b >> 2) % 6]); break;
        case 2: v[i] = TETHER_VAL_STR(strs[(b >> 2) % 5]); break;
        default: v[i] = TETHER_VAL_PTR((void *)(uintptr_t)(0x1000 + 8 * (b >> 2))); break;
        }
    }
}

/* The runtime values a registration of `key` visible from `c` declares, when the harness knows it. */
static int matching_values(int ci, int key, tether_value *v, size_t *n) {
    for (int c = ci; c >= 0; c = conts[c].parent)
        for (int i = nspecs - 1; i >= 0; i--)
            if (regs[i].s && specs[i].cont == c && specs[i].key == key && specs[i].ready && (regs[i].live || !regs[i].h)) {
                const spec *s = &specs[i];
                *n = 0;
                for (int k = 0; k < s->nslots; k++) {
                    if (!is_runtime(s->slots[k].kind)) continue;
                    int tries = 0;
                    do values(&v[*n], 1); while (v[*n].kind != s->slots[k].kind && ++tries < 4);
                    if (v[*n].kind != s->slots[k].kind)
                        v[*n] = s->slots[k].kind == TETHER_PARAM_STR ? TETHER_VAL_STR("s") : s->slots[k].kind == TETHER_PARAM_F64
                              ? TETHER_VAL_F64(2.5) : s->slots[k].kind == TETHER_PARAM_PTR ? TETHER_VAL_PTR((void *)8) : TETHER_VAL_I64(3);
                    (*n)++;
                }
                return 1;
            }
    return 0;
}

static void op_resolve(void) {
    int live;
    tether_container *c = pick_cont(&live);
    int ci = -1;
    for (int i = 0; i < NCONT; i++) if (conts[i].h == c && c) ci = i;
    int key = u8() % (NKEYS + 1), how = u8() % 4;
    tether_value args[MAXSLOT];
    size_t nargs = 0;
    if (how & 1) {
        if (!(ci >= 0 && (u8() & 3) && matching_values(ci, key, args, &nargs))) { nargs = u8() % 4; values(args, nargs); }
    }
    tether_ref *out = NULL;
    int id = frame_push(key, args, nargs);
    T("resolve %s from c%d (how %d, %zu args, frame %d)", keys[key], ci, how, nargs, id);
    tether_status st;
    calls++;
    if (how < 2) {
        st = how ? tether_resolve_args(c, keys[key], args, nargs, &out) : tether_resolve(c, keys[key], &out);
    } else {
        uint32_t k = 0xfffffff0u;
        if (live && (u8() & 7)) expect(tether_intern(c, keys[key], &k), ST(TETHER_OK), "tether_intern");
        st = how == 3 ? tether_resolve_key_args(c, k, args, nargs, &out) : tether_resolve_key(c, k, &out);
        if (k == 0xfffffff0u && live) { expect(st, ST(TETHER_E_INVALID_ARGUMENT), "tether_resolve_key (unknown id)"); goto done; }
    }
    expect(st, on_cont(live, RESOLVE_STATUSES | (how >= 2 ? ST(TETHER_E_INVALID_ARGUMENT) : 0)), live ? "resolve" : "resolve (not a live container)");
done:
    T("resolve %s -> %s", keys[key], tether_status_name(st));
    frame_pop(id, st);
    if ((st == TETHER_OK) != (out != NULL)) FAIL("resolve returned %s with out %p", tether_status_name(st), (void *)out);
    if (st != TETHER_OK) return;
    obj *o = tether_ref_get(out);
    check_instance(o, key, "tether_ref_get after resolve");
    adopt(o, 1, "a resolve", 0);
    if (nargs && o->args && o->args != digest(args, nargs) && o->s->scope != TETHER_SCOPE_CONTAINER && !AVOIDS(8))
        FAIL("resolve_args of %s returned an instance made with other arguments", keys[key]);
    ref_keep(out, o);
}

static void op_ref(void) {
    int i = u8() % NREF;
    tether_ref *r = refs[i].h;
    int live = refs[i].live;
    if ((u8() & 7) == 0) { r = forged(); live = 0; }
    if (!live && is_live_handle(r)) return;
    calls++;
    uint8_t how = u8() % 4;
    T("ref %d (%s) op %d", i, live ? "live" : "dead", how);
    switch (how) {
    case 0: {
        void *p = tether_ref_get(r);
        if (live) check_instance(p, refs[i].o->s->key, "tether_ref_get");
        else if (p || tether_last_status() != TETHER_E_INVALID_HANDLE) FAIL("tether_ref_get of a dead handle gave %p", p);
        if (live && p != refs[i].o) FAIL("tether_ref_get gave another instance");
        break;
    }
    case 1: {
        tether_ref *c = NULL;
        tether_status st = tether_ref_clone(r, &c);
        expect(st, live ? ST(TETHER_OK) : ST(TETHER_E_INVALID_HANDLE), "tether_ref_clone");
        if (st == TETHER_OK) ref_keep(c, refs[i].o);
        break;
    }
    case 2: {
        if (live) refs[i].live = 0;   /* first: the destructors it runs may look at the pool */
        expect(tether_ref_release(r), live ? ST(TETHER_OK) : ST(TETHER_E_INVALID_HANDLE), "tether_ref_release");
        break;
    }
    default: {
        tether_weak *w = NULL;
        tether_status st = tether_ref_downgrade(r, &w);
        expect(st, live ? ST(TETHER_OK) : ST(TETHER_E_INVALID_HANDLE), "tether_ref_downgrade");
        if (st == TETHER_OK) weak_keep(w);
    }
    }
}

static void op_weak(void) {
    int i = u8() % NWEAK;
    tether_weak *w = weaks[i].h;
    int live = weaks[i].live;
    if ((u8() & 7) == 0) { w = forged(); live = 0; }
    if (!live && is_live_handle(w)) return;
    calls++;
    if (u8() & 1) {
        tether_ref *r = NULL;
        tether_status st = tether_weak_upgrade(w, &r);
        expect(st, live ? ST(TETHER_OK) | ST(TETHER_E_EXPIRED) : ST(TETHER_E_INVALID_HANDLE), "tether_weak_upgrade");
        if (st == TETHER_OK) { obj *o = tether_ref_get(r); check_instance(o, -1, "tether_weak_upgrade"); adopt(o, 0, "", 0); ref_keep(r, o); }
    } else {
        if (live) weaks[i].live = 0;
        expect(tether_weak_release(w), live ? ST(TETHER_OK) : ST(TETHER_E_INVALID_HANDLE), "tether_weak_release");
    }
}

static void op_provider(void) {
    uint8_t b = u8();
    int i = b % NPROV;
    calls++;
    T("provider %d (%s) op %d", i, provs[i].live ? "live" : "dead", (b >> 4) % 4);
    switch ((b >> 4) % 4) {
    case 0: {
        if (provs[i].live) return;
        int live;
        tether_container *c = pick_cont(&live);
        tether_provider p = NULL;
        tether_status st = tether_make_provider(c, keys[u8() % (NKEYS + 1)], &p);
        expect(st, on_cont(live, ST(TETHER_OK)), "tether_make_provider");
        if (st == TETHER_OK) provs[i] = (prov_t){p, 1};
        break;
    }
    case 1: {
        if (!provs[i].live) return;
        int id = frame_push(-1, NULL, 0);
        void *got = provs[i].p();
        tether_status st = got ? TETHER_OK : tether_last_status();
        frame_pop(id, st);
        if (got) { check_instance(got, -1, "a provider"); adopt(got, 1, "a provider", 0); }
        else expect(st, (RESOLVE_STATUSES & ~ST(TETHER_OK)), "a provider");
        break;
    }
    case 2: {
        int live = provs[i].live;
        /* A provider is a code address: a freed one may come back from the next make_provider. */
        for (int k = 0; k < NPROV && !live; k++) if (provs[k].live && provs[k].p == provs[i].p) return;
        if (live) provs[i].live = 0;
        expect(tether_provider_free(provs[i].p), live ? ST(TETHER_OK) : ST(TETHER_E_INVALID_HANDLE), "tether_provider_free");
        break;
    }
    default: {                        /* a lazy slot's provider, or a forged one: never freed here */
        tether_provider p = nlazies && (b & 8) ? lazies[u8() % nlazies].p : (tether_provider)forged();
        for (int k = 0; k < NPROV; k++) if (provs[k].live && provs[k].p == p) return;
        expect(tether_provider_free(p), ST(TETHER_E_INVALID_HANDLE), "tether_provider_free (not from make_provider)");
    }
    }
}

static void op_call_lazy(void) {
    if (!nlazies) return;
    lazy_t *l = &lazies[u8() % nlazies];
    if (!objs[l->owner]) {            /* its owner was destroyed: NULL, TETHER_E_INVALID_HANDLE */
        int id = frame_push(l->key, NULL, 0);
        void *got = l->p();
        frame_pop(id, TETHER_OK);
        if (got || tether_last_status() != TETHER_E_INVALID_HANDLE)
            FAIL("a lazy provider whose owner died gave %p (last status %s)", got, tether_status_name(tether_last_status()));
        return;
    }
    call_lazy(l->p, l->owner, l->key);
}

/* tether_override_clear: the newest override of a key ends (its handle goes stale), or
 * INVALID_ARGUMENT when the container has none of that key. */
static void op_clear_override(void) {
    int live;
    tether_container *c = pick_cont(&live);
    int key = u8() % (NKEYS + 1), ci = -1, ended = -1;
    for (int i = 0; i < NCONT; i++) if (live && conts[i].h == c) ci = i;
    /* The newest override is stale from the moment the call begins: the destructors it runs may
     * try its handle (and may push overrides of the key themselves). */
    if (ci >= 0 && novr[ci][key]) { ended = ovr[ci][key][--novr[ci][key]]; regs[ended].live = 0; }
    calls++;
    tether_status st = tether_override_clear(c, keys[key]);
    T("clear override %s -> %s", keys[key], tether_status_name(st));
    if (ci < 0) { expect(st, on_cont(live, ST(TETHER_E_INVALID_ARGUMENT)), "tether_override_clear"); return; }
    /* A destructor of what the ended override made freed the container: the clear took effect
     * first (OK), and the free forgot the container's overrides in the model. */
    if (freed_meanwhile(ci, c)) { expect(st, ST(TETHER_OK), "tether_override_clear (container freed by a destructor it ran)"); return; }
    expect(st, ended >= 0 ? ST(TETHER_OK) : ST(TETHER_E_INVALID_ARGUMENT), "tether_override_clear");
    if (st == TETHER_OK) changes++;
}

static void op_misc(void) {
    int live;
    tether_container *c = pick_cont(&live);
    calls++;
    switch (u8() % 8) {
    case 7: op_clear_override(); break;
    case 0: {
        int scope = u8() % 6;
        tether_status st = tether_reset(c, (tether_scope)scope);
        expect(st, on_cont(live, scope > 4 ? ST(TETHER_E_INVALID_ARGUMENT) : ST(TETHER_OK)), "tether_reset");
        break;
    }
    case 1: {
        tether_status st = tether_validate(c);
        expect(st, on_cont(live, ST(TETHER_OK) | ST(TETHER_E_NOT_FOUND) | ST(TETHER_E_CYCLE) | ST(TETHER_E_RETAIN_CYCLE) |
                                 ST(TETHER_E_ARGUMENT_MISMATCH) | ST(TETHER_E_CAPTIVE_DEPENDENCY)), "tether_validate");
        break;
    }
    case 2: {
        char *dot = NULL;
        tether_status st = tether_export_dot(c, &dot);
        expect(st, on_cont(live, ST(TETHER_OK) | ST(TETHER_E_NO_MEMORY)), "tether_export_dot");
        if ((st == TETHER_OK) != (dot != NULL)) FAIL("tether_export_dot: status and string disagree");
        if (dot && strncmp(dot, "digraph", 7)) FAIL("tether_export_dot: not a digraph");
        tether_string_free(dot);
        break;
    }
    case 3: {
        uint32_t id;
        expect(tether_intern(c, keys[u8() % (NKEYS + 1)], &id), on_cont(live, ST(TETHER_OK)), "tether_intern");
        break;
    }
    case 4: {                         /* an older callback's resolver: closed, or still open up the stack */
        int k = u8() % 4;
        tether_resolver *r = old_resolvers[k];
        if (!r) return;
        T("an older callback's resolver");
        /* What an open one builds belongs to the resolve its callback runs in. */
        int outer = -1;
        for (int i = 0; i < nframes; i++) if (frames[i].id == old_resolver_frames[k]) outer = i;
        if (outer >= 0 && nframes < (int)(sizeof frames / sizeof *frames)) frames[nframes++] = frames[outer];
        else outer = -1;
        void *p = NULL;
        tether_status st = tether_resolver_get(r, "K0", &p);
        if (outer >= 0) nframes--;
        if (st == TETHER_OK) return;  /* still open (or its handle value open again for a running callback) */
        expect(st, ST(TETHER_E_WRONG_CONTEXT) | ST(TETHER_E_INVALID_HANDLE) | RESOLVE_STATUSES, "tether_resolver_get (old resolver)");
        break;
    }
    case 5: {                         /* every registration of a key and its named variants, in one graph */
        int key = u8() % (NKEYS + 1);
        tether_ref *out = NULL;
        const tether_list *l = NULL;
        int id = frame_push(key, NULL, 0);
        tether_status st = tether_resolve_all(c, keys[key], &out, &l);
        frame_pop(id, st);
        expect(st, on_cont(live, RESOLVE_STATUSES), "tether_resolve_all");
        if ((st == TETHER_OK) != (out != NULL) || (st == TETHER_OK) != (l != NULL)) FAIL("tether_resolve_all: status and outputs disagree");
        if (st != TETHER_OK) return;
        if (tether_ref_get(out) != l) FAIL("tether_resolve_all: the handle's instance is not the list");
        check_list(l, key, NULL, 0, "tether_resolve_all");
        if (l->count && (u8() & 1)) {
            size_t j = u8() % l->count;
            tether_ref *item = NULL;
            expect(TB.list_ref(out, j, &item), ST(TETHER_OK), "tether_list_ref");
            if (tether_ref_get(item) != l->items[j]) FAIL("tether_list_ref: not the list's item");
            ref_keep(item, l->items[j]);
        }
        expect(TB.list_ref(out, l->count, &(tether_ref *){NULL}), ST(TETHER_E_INVALID_ARGUMENT), "tether_list_ref (past the end)");
        expect(tether_ref_release(out), ST(TETHER_OK), "tether_ref_release (a list)");
        break;
    }
    default: {
        tether_status s = (tether_status)(u8() % 16);
        if (!tether_status_name(s)[0]) FAIL("tether_status_name");
        if (u8() & 1) {
            tether_set_error(u8() & 1 ? NULL : "a message from outside any callback");
            if (tether_last_status() != TETHER_E_FACTORY_FAILED) FAIL("tether_set_error outside a callback: status %d", tether_last_status());
        }
    }
    }
}

/* One operation from the input (top level or inside a callback). */
static void op(void) {
    if (calls >= MAXCALLS) return;
    uint8_t b = u8();
    switch (b % 16) {
    case 0: new_container(); break;
    case 1: { int ci = pick_live_cont(); if (ci >= 0 && (u8() & 3) == 0) free_container(ci); break; }
    case 2: case 3: op_register(); break;
    case 4: op_register_bad(); break;
    case 5: op_reg_setter(); break;
    case 6: case 7: case 8: op_resolve(); break;
    case 9: case 10: op_ref(); break;
    case 11: op_weak(); break;
    case 12: op_provider(); break;
    case 13: op_call_lazy(); break;
    default: op_misc(); break;
    }
}

/* Releases everything the harness holds, frees every container, checks that nothing with
 * a destructor is alive, then frees what the library never drops (no destructor). */
static void teardown(void) {
    in_n = 0;                         /* callbacks from here on do nothing */
    for (int i = 0; i < NREF; i++) if (refs[i].live) { refs[i].live = 0; expect(tether_ref_release(refs[i].h), ST(TETHER_OK), "teardown: tether_ref_release"); }
    for (int i = 0; i < NWEAK; i++) if (weaks[i].live) { weaks[i].live = 0; expect(tether_weak_release(weaks[i].h), ST(TETHER_OK), "teardown: tether_weak_release"); }
    for (int i = 0; i < NPROV; i++) if (provs[i].live) { provs[i].live = 0; expect(tether_provider_free(provs[i].p), ST(TETHER_OK), "teardown: tether_provider_free"); }
    for (int round = 0; round < NCONT; round++)
        for (int i = 0; i < NCONT; i++) if (conts[i].live && !has_live_child(i)) free_container(i);
    if (live_counted != 0) {
        for (int i = 0; i < nobjs; i++)
            if (objs[i] && objs[i]->counted) fprintf(stderr, "  alive: instance of %s (scope %d)\n", keys[objs[i]->s->key], objs[i]->s->scope);
        FAIL("%d instances with a destructor are alive after everything was freed", live_counted);
    }
    for (int i = 0; i < nobjs; i++)
        if (objs[i]) {
            for (int j = 0; j < objs[i]->nweaks; j++) expect(tether_weak_release(objs[i]->weaks[j]), ST(TETHER_OK), "teardown: an object's weak handle");
            free(objs[i]);
        }
}

/* ---- differential mode (FUZZ_DIFF=1, fuzz/README.md) ------------------------------------------
 * The input becomes a scenario in the conformance corpus's vocabulary (conformance/README.md,
 * the line form of conformance/tolines.py): registrations of every slot kind, scope and mode,
 * completion callbacks of both forms, resolves, handles, peeks (which call lazy slots), flags
 * that make factories and callbacks fail, resets, child containers, overrides, validation. The
 * conformance runner (Tests/conformance/runner.c, linked in) runs it through the C ABI; with
 * FUZZ_DIFF_LOG=dir each input's scenario and the trace the library gave are written there,
 * and `conformance/model.py --replay` checks every trace against the reference model: the
 * statuses, which instance each step got (ordinals), what was cached and reused, and the
 * order of destruction. A threads step races threads for a plain singleton (made once, or the
 * same error each time: what the model can say). Kept out, so that every scenario ends: resolves
 * from callbacks (they could open graphs without end), lazy calls from callbacks, callback
 * edges to transient keys (a transient whose callback takes a transient builds one more each
 * time); K3 is the only key that may be transient. */

typedef void (*diff_hook)(const char *name, char *const *trace, int n, void *ctx);
void conformance_run_text(const char *text, size_t len, diff_hook hook, void *ctx);

static struct { char *p; size_t n, cap; } dtext;
static void dput(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void dput(const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof line) abort();
    if (dtext.n + (size_t)k + 2 > dtext.cap) {
        dtext.cap = (dtext.cap + (size_t)k + 2) * 2;
        dtext.p = realloc(dtext.p, dtext.cap);
        if (!dtext.p) abort();
    }
    memcpy(dtext.p + dtext.n, line, (size_t)k);
    dtext.n += (size_t)k;
    dtext.p[dtext.n++] = '\n';
    dtext.p[dtext.n] = 0;
}

static const char *const dkeys[] = {"K0", "K1", "K2", "K3", "K0#a", "Kx"};   /* Kx: never registered */
static const char *const dscopes[] = {"graph", "singleton", "weak", "container", "transient"};
static struct { char name[8]; int parent, freed; } dconts[4];
static int ndconts, ndvars;
static int dsimple[5];   /* key i: every registration so far a plain singleton (threads may race for it) */

static const char *dkey(int callback) {   /* a key for a slot, op or target; callbacks avoid K3 */
    int k = u8() % 6;
    return callback && k == 3 ? "K2" : dkeys[k];
}
static const char *dcont(void) { return dconts[u8() % ndconts].name; }
static void diff_ops(const char *tag, int with_resolver, int factory) {
    int n = u8() % 3;
    for (int i = 0; i < n; i++) {
        uint8_t b = u8();
        const char *key = dkey(!factory);
        const char *extra = (b & 0x10) ? "\telse_weak=1" : (b & 0x20) ? "\tpropagate=1" : "";
        switch (b % 4) {
        case 0: if (with_resolver || !factory) dput("%s\tget=%s%s", tag, key, extra); break;
        case 1: if (with_resolver || !factory) dput("%s\tweak=%s%s", tag, key, extra); break;
        case 2: if (factory) dput("%s\tresolve=%s\tin=%s", tag, key, dcont()); break;
        default: if (factory) dput("%s\tcall=%d", tag, u8() % 3); break;
        }
    }
}

static void diff_register(void) {
    int k = u8() % 5;
    const char *key = dkeys[k];
    uint8_t m = u8() % 12;
    const char *mode = m == 10 ? "\tmode=override" : m == 11 ? "\tmode=decorate" : "";
    const char *scope = dscopes[u8() % (k == 3 ? 5 : 4)];
    uint8_t f = u8() % 6;
    if (m >= 10 || strcmp(scope, "singleton") != 0 || f) dsimple[k] = 0;
    dput("reg\tkey=%s\tin=%s\tscope=%s%s%s", key, dcont(), scope,
         f == 1 ? "\tfail=no\tfail_when=f0" : f == 2 ? "\tfail=no\tfail_when=f1" : f == 3 ? "\tfail=never" : "", mode);
    int resolver = 0, nslots = u8() % 4;
    if (m == 11) dput("slot\tkind=dep\tkey=%s", key);
    for (int i = 0; i < nslots; i++) {
        uint8_t b = u8();
        switch (b % 10) {
        case 0: case 1: dput("slot\tkind=dep\tkey=%s", dkey(0)); break;
        case 2: dput("slot\tkind=weak\tkey=%s", dkey(0)); break;
        case 3: dput("slot\tkind=lazy\tkey=%s", dkey(0)); break;
        case 4: dput("slot\tkind=weak_lazy\tkey=%s", dkey(0)); break;
        case 5: dput("slot\tkind=all\tkey=K0"); break;
        case 6: dput("slot\tkind=factory\tkey=%s", dkey(0)); break;
        case 7: if (!resolver) { resolver = 1; dput("slot\tkind=resolver"); } break;
        case 8: dput("slot\tkind=i64"); break;
        default: dput("slot\tkind=context"); break;
        }
    }
    diff_ops("fop", resolver, 1);
    int ncb = u8() % 3;
    if (ncb) dsimple[k] = 0;
    for (int i = 0; i < ncb; i++) {
        uint8_t b = u8();
        const char *fail = (b & 0x10) ? "\tfail=no\tfail_when=f1" : "";
        if (b & 1) {
            dput("cb\tform=declared%s", fail);
            int nt = 1 + u8() % 2;
            for (int t = 0; t < nt; t++) dput("tgt\tkind=%s\tkey=%s", u8() % 2 ? "weak" : "dep", dkey(1));
        } else {
            dput("cb\tform=resolver%s", fail);
            diff_ops("cop", 1, 0);
        }
    }
    dput("endreg");
}

static void diff_action(void) {
    uint8_t a = u8() % 16;
    int v = ndvars ? u8() % ndvars : 0;
    switch (a) {
    case 0: case 1: case 2: case 3: {   /* resolve, kept or let go of at once, maybe with arguments */
        uint8_t b = u8();
        char as[16] = "";
        if (b & 1) snprintf(as, sizeof as, "\tas=v%d", ndvars++);
        dput("do\top=resolve\targ0=%s\tin=%s%s%s", dkey(0), dcont(), as, (b & 2) ? "\tby=id" : "");
        if (b & 4) dput("arg\ti64=%d", b >> 4);
        dput("end");
        break;
    }
    case 4: {
        char as[16] = "";
        if (u8() & 1) snprintf(as, sizeof as, "\tas=v%d", ndvars++);
        dput("do\top=resolve_all\targ0=K0\tin=%s%s", dcont(), as);
        dput("end");
        break;
    }
    case 5: case 6: dput("do\top=release\targ0=v%d", v); dput("end"); break;
    case 7: {
        static const char *const ops[] = {"clone", "downgrade", "upgrade"};
        dput("do\top=%s\targ0=v%d\tas=v%d", ops[u8() % 3], v, ndvars++);
        dput("end");
        break;
    }
    case 8: case 9: {
        uint8_t b = u8();
        if (b % 3 == 0) dput("do\top=peek\targ0=v%d.%d", v, (b >> 2) % 3);
        else if (b % 3 == 1) dput("do\top=peek\targ0=v%d.%d.%d", v, (b >> 2) % 3, (b >> 4) % 3);
        else dput("do\top=peek\targ0=v%d.%d.%d.%d", v, (b >> 2) % 3, (b >> 4) % 3, (b >> 6) % 3);
        dput("end");
        break;
    }
    case 10: { uint8_t b = u8(); dput("do\top=flag\targ0=f%d\ton=%d", b & 1, (b >> 1) & 1); dput("end"); break; }
    case 11: dput("do\top=reset\targ0=%s\tin=%s", dscopes[u8() % 5], dcont()); dput("end"); break;
    case 12: {   /* a child container, or freeing one (never the root: the runner frees it last) */
        uint8_t b = u8();
        if ((b & 1) && ndconts < 4) {
            int parent = b / 2 % ndconts;
            if (dconts[parent].freed) break;
            snprintf(dconts[ndconts].name, sizeof dconts[0].name, "c%d", ndconts);
            dconts[ndconts].parent = parent;
            dput("do\top=container\targ0=%s\tparent=%s", dconts[ndconts].name, dconts[parent].name);
            ndconts++;
        } else if (ndconts > 1) {
            int c = 1 + b / 2 % (ndconts - 1);
            dput("do\top=free\targ0=%s", dconts[c].name);
            int children = 0;
            for (int i = 0; i < ndconts; i++) children += dconts[i].parent == c && !dconts[i].freed;
            if (!children) dconts[c].freed = 1;
        } else {
            break;
        }
        dput("end");
        break;
    }
    case 13: dput("do\top=clear_override\targ0=%s\tin=%s", dkey(0), dcont()); dput("end"); break;
    case 14: dput("do\top=validate\targ0=%s", dcont()); dput("end"); break;
    default: {
        /* Threads racing for a key every registration of which is a plain singleton: the model
         * can say what that gives whatever the timing (made once, or the same error each time). */
        uint8_t b = u8();
        int k = b % 5;
        if ((b & 0x20) && dsimple[k]) {
            if (!(b & 0x10)) {   /* (re)registered here first, so that the race makes something */
                dput("reg\tkey=%s\tin=root\tscope=singleton", dkeys[k]);
                for (int i = u8() % 3; i > 0; i--) dput("slot\tkind=dep\tkey=%s", dkey(0));
                dput("endreg");
            }
            dput("threads\tcount=%d\trepeat=%d\treport=%s", 2 + (b >> 6), 1 + u8() % 8, dkeys[k]);
            dput("tstep\top=resolve\targ0=%s\tin=root", dkeys[k]);
            dput("endthreads");
        } else {
            dput("do\top=live\targ0=1");
            dput("end");
        }
        break;
    }
    }
}

static char dlog[4096];   /* FUZZ_DIFF_LOG: the directory the logs go to */

static void diff_got(const char *name, char *const *trace, int n, void *ctx) {
    (void)name;
    FILE *f = ctx;
    for (int i = 0; f && i < n; i++) fprintf(f, "T\tline=%s\n", trace[i]);
}

static void diff_input(const uint8_t *data, size_t size) {
    dtext.n = 0;
    ndconts = 1;
    ndvars = 0;
    memset(dconts, 0, sizeof dconts);
    for (int i = 0; i < 5; i++) dsimple[i] = 1;
    snprintf(dconts[0].name, sizeof dconts[0].name, "root");
    dconts[0].parent = -1;
    uint64_t h = 1469598103934665603ull;   /* the log's name: FNV-1a of the input */
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
    dput("S\tname=fuzz-%016llx", (unsigned long long)h);
    for (int steps = 0; in_n && steps < 30; steps++) {
        if (u8() % 3 == 0) diff_register();
        else diff_action();
    }
    char *lines = strdup(dtext.p);
    if (!lines) abort();
    FILE *log = NULL;
    if (dlog[0]) {
        char path[4200];
        snprintf(path, sizeof path, "%s/fuzz-%016llx.lines", dlog, (unsigned long long)h);
        log = fopen(path, "w");
        if (!log) { perror(path); abort(); }
        fputs(lines, log);
        fflush(log);  /* on disk before the run: a crashing input leaves its scenario */
    }
    dput("E");
    conformance_run_text(dtext.p, dtext.n, diff_got, log);
    if (log) { fputs("E\n", log); fclose(log); }
    free(lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int once, diff;
    if (!once) {
        once = 1;
        read_avoid();
        diff = getenv("FUZZ_DIFF") && strcmp(getenv("FUZZ_DIFF"), "0") != 0;
        if (getenv("FUZZ_DIFF_LOG")) snprintf(dlog, sizeof dlog, "%s", getenv("FUZZ_DIFF_LOG"));
    }
    in_p = data; in_n = size;
    if (diff) {
        diff_input(data, size);
        return 0;
    }
    memset(conts, 0, sizeof conts); memset(regs, 0, sizeof regs); memset(refs, 0, sizeof refs);
    memset(weaks, 0, sizeof weaks); memset(provs, 0, sizeof provs); memset(old_resolvers, 0, sizeof old_resolvers);
    nspecs = nlazies = nobjs = live_counted = calls = depth = nframes = changes = in_drop = ndeferred = factories_running = 0;
    for (int i = 0; i < NCONT; i++) conts[i].parent = -1;
    expect(tether_container_new(NULL, &conts[0].h), ST(TETHER_OK), "tether_container_new");
    conts[0].live = 1;
    while (in_n && calls < MAXCALLS) {
        op();
        while (ndeferred) check_failed(deferred[--ndeferred]);
    }
    teardown();
    return 0;
}
