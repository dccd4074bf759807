/*
 * tether.h — the public header of Tether, a dependency-injection container
 * with cycle resolution and weak/strong handle semantics.
 *
 * Conventions that hold for every function below (read them once):
 *
 *  - Status + last error. Every function returns a tether_status (or, for the
 *    few that return a pointer, NULL with tether_last_status()). On failure a
 *    message in words (what happened, what to do) is kept for the calling
 *    thread: tether_last_error(). Success leaves it as it was (libgit2 style).
 *  - Handles (tether_container, _registration, _ref, _weak, _resolver) are
 *    opaque, generation-counted, never dereferenced: a NULL, released, stale,
 *    foreign or wrong-kind handle gets TETHER_E_INVALID_HANDLE, never a crash
 *    (a released one never equals a later one: a slot retires after 2^32 uses).
 *  - Strings passed in (keys, messages) are borrowed for the call; the library
 *    copies what it keeps. Keys are UTF-8, non-empty.
 *  - Thread safety. Every function may be called from any thread at any time.
 *    Cached singleton and weak-scope hits take no container-wide lock. Letting
 *    go of cached singletons (tether_reset, a scope change, re-registering,
 *    tether_container_free) waits until no thread is half-way through reading
 *    the cache; handles handed out stay valid until released. A resolve that
 *    creates a singleton-, weak- or container-scoped instance holds that key's
 *    creation cell (per key and, for the container scope, per container) until
 *    it has published it, so each is created once even when threads race;
 *    other keys are created meanwhile. Two threads that would wait for each
 *    other's cells from inside factories or callbacks get TETHER_E_CYCLE
 *    naming both paths (a resolve that can start over instead lets go of what
 *    it made and runs again, its factories twice); a factory must still
 *    not block on another thread by other means (a lock, a queue) while that
 *    thread waits for a cell the factory's resolve holds.
 *    fork(): the child may use the library; resolves other threads had under way never finish there.
 *  - Freeing while in use. tether_container_free may run while other threads
 *    (or callbacks up the same thread) are inside calls using the container: a
 *    call under way completes as if it ran before the free or fails with
 *    TETHER_E_INVALID_HANDLE; later calls fail with it. Nobody waits.
 *  - Callbacks (factories, destructors, completion callbacks) may call back
 *    into the library, including resolving from the same container; resolving
 *    a key being constructed on the same thread (a factory asking for itself,
 *    by any call or provider) is TETHER_E_CYCLE naming the path, and so is a
 *    nested resolve of a shared instance whose own resolve has not finished
 *    (from its completion callback: use the callback's resolver instead).
 *  - How a resolve works, layer by layer: docs/ARCHITECTURE.md. Language
 *    bindings use a further protocol (tether_binding.h); programs never need it.
 */
#ifndef TETHER_H
#define TETHER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include <initializer_list> /* TETHER_REGISTERn's slot arrays */
extern "C" {
#endif

/** Compile-time version of this header. Compare with tether_version(). */
#define TETHER_VERSION_MAJOR 0
#define TETHER_VERSION_MINOR 1
#define TETHER_VERSION_PATCH 0
#define TETHER_VERSION "0.1.0"
#define TETHER_VERSION_NUMBER (TETHER_VERSION_MAJOR * 10000 + TETHER_VERSION_MINOR * 100 + TETHER_VERSION_PATCH)

/* ---- Statuses and errors --------------------------------------------------- */

typedef enum tether_status {
    TETHER_OK = 0,
    TETHER_E_INVALID_ARGUMENT,  /* NULL where not allowed, bad enum, bad param list */
    TETHER_E_INVALID_HANDLE,    /* NULL, released, stale or foreign handle */
    TETHER_E_NOT_FOUND,         /* no registration for the key (message names key and path) */
    TETHER_E_CYCLE,             /* constructor cycle (message names the path) */
    TETHER_E_RETAIN_CYCLE,      /* a strong edge would close a cycle of strong edges, from every form
                                   (resolver, declared target, LAZY slot, a callback returning it) */
    TETHER_E_FACTORY_FAILED,    /* a factory returned NULL or a callback failed */
    TETHER_E_ARGUMENT_MISMATCH, /* runtime arguments: wrong count or type */
    TETHER_E_EXPIRED,           /* weak handle whose target is gone */
    TETHER_E_WRONG_CONTEXT,     /* resolver used outside its callback */
    TETHER_E_NO_MEMORY,
    TETHER_E_WOULD_BLOCK,       /* a no-wait resolve (or one acting for a binding's token) would wait for another's creation */
    TETHER_E_BUFFER_TOO_SMALL,  /* a caller's buffer was too small; the call reports the size it needs */
    TETHER_E_CAPTIVE_DEPENDENCY /* a singleton would hold a shorter-lived instance (tether_container_set_strict) */
} tether_status;

/** The library's version, "MAJOR.MINOR.PATCH" (static; never free it). Thread-safe. */
const char *tether_version(void);

/** A status's name ("TETHER_E_CYCLE"; "TETHER_E_UNKNOWN" outside the enum), static. Thread-safe. */
const char *tether_status_name(tether_status s);

/** This thread's last failure message: what happened, what to do (`no registration for "Logger" (needed by
 *  "Service" -> "Repository")`; long keys, reasons, paths cut short). Never NULL ("" before any failure); valid
 *  until the next failure on this thread: copy it to keep it. Thread-local. */
const char *tether_last_error(void);

/** This thread's last failure status (TETHER_OK before any): why a call returned NULL. Thread-local. */
tether_status tether_last_status(void);

/** For a factory or completion callback about to fail: `msg` (copied; NULL: no reason) joins the resolve's
 *  message (`factory for "K" returned NULL: <msg>`) and becomes this thread's last error
 *  (TETHER_E_FACTORY_FAILED). Ignored if the callback then succeeds. Thread-local. */
void tether_set_error(const char *msg);

/* ---- Types ----------------------------------------------------------------- */

typedef struct tether_container    tether_container;    /* opaque; free with tether_container_free */
typedef struct tether_registration tether_registration; /* owned by its container; never freed by you */
typedef struct tether_ref          tether_ref;          /* strong handle; you own it: tether_ref_release */
typedef struct tether_weak         tether_weak;         /* weak handle; you own it: tether_weak_release */
typedef struct tether_resolver     tether_resolver;     /* valid only during the callback that received it */
typedef struct tether_factory      tether_factory;      /* FACTORY slot's handle; you own it: tether_factory_release */
/** What an ALL slot receives: `count` instances in `items`, valid as long as the receiver. */
typedef struct tether_list { size_t count; void *const *items; } tether_list;

/** Lifetimes of the instances a registration makes. */
typedef enum tether_scope {
    TETHER_SCOPE_GRAPH = 0,   /* default: one instance per top-level resolve (lets cycles close) */
    TETHER_SCOPE_TRANSIENT,   /* a new instance every time it is needed, even within one resolve */
    TETHER_SCOPE_SINGLETON,   /* one instance, cached in the registering container until reset/free */
    TETHER_SCOPE_WEAK,        /* shared while anyone (handle, edge) still holds it strongly */
    TETHER_SCOPE_CONTAINER    /* one per container resolved from (a request's child), until it is freed */
} tether_scope;

/** The kinds of factory parameter (slot) and of runtime argument. */
typedef enum tether_param_kind {
    TETHER_PARAM_DEP,           /* void *            strong dependency on `key` */
    TETHER_PARAM_WEAK,          /* tether_weak *     weak dependency; the receiver owns it (release in its destructor) */
    TETHER_PARAM_LAZY,          /* tether_provider   libffi closure: resolves `key` on first call, then holds it */
    TETHER_PARAM_WEAK_LAZY,     /* tether_provider   same, holds it weakly; NULL once it is gone */
    TETHER_PARAM_CONTEXT,       /* void *            the registration's context */
    TETHER_PARAM_RESOLVER,      /* tether_resolver * resolve more of this graph from inside the factory */
    TETHER_PARAM_I64,           /* int64_t           next runtime argument */
    TETHER_PARAM_F64,           /* double            next runtime argument */
    TETHER_PARAM_STR,           /* const char *      next runtime argument (borrowed for the factory call) */
    TETHER_PARAM_PTR,           /* void *            next runtime argument */
    TETHER_PARAM_ALL,           /* const tether_list * every registration `key` or `key#name` visible from the
                                   resolving container, registration order (a child's `key#name` replaces its
                                   parent's, adds otherwise), each a strong dependency */
    TETHER_PARAM_FACTORY        /* tether_factory *  builds `key` with runtime arguments (tether_factory_call);
                                   the receiver owns it from the call on, even if it returns NULL */
} tether_param_kind;

/** One declared factory parameter. `key` is used by DEP/WEAK/LAZY/WEAK_LAZY/ALL/FACTORY only. */
typedef struct tether_param { tether_param_kind kind; const char *key; } tether_param;

#ifdef __cplusplus
#define TETHER_PARAM_(kind, key) (tether_param{(kind), (key)})
#else
#define TETHER_PARAM_(kind, key) ((tether_param){(kind), (key)})
#endif
#define TETHER_DEP(k)       TETHER_PARAM_(TETHER_PARAM_DEP, (k))
#define TETHER_WEAK(k)      TETHER_PARAM_(TETHER_PARAM_WEAK, (k))
#define TETHER_LAZY(k)      TETHER_PARAM_(TETHER_PARAM_LAZY, (k))
#define TETHER_WEAK_LAZY(k) TETHER_PARAM_(TETHER_PARAM_WEAK_LAZY, (k))
#define TETHER_ALL(k)       TETHER_PARAM_(TETHER_PARAM_ALL, (k))
#define TETHER_FACTORY(k)   TETHER_PARAM_(TETHER_PARAM_FACTORY, (k))
#define TETHER_CONTEXT      TETHER_PARAM_(TETHER_PARAM_CONTEXT, NULL)
#define TETHER_RESOLVER     TETHER_PARAM_(TETHER_PARAM_RESOLVER, NULL)
#define TETHER_I64          TETHER_PARAM_(TETHER_PARAM_I64, NULL)
#define TETHER_F64          TETHER_PARAM_(TETHER_PARAM_F64, NULL)
#define TETHER_STR          TETHER_PARAM_(TETHER_PARAM_STR, NULL)
#define TETHER_PTR          TETHER_PARAM_(TETHER_PARAM_PTR, NULL)

/** Any factory, cast to this for tether_register (TETHER_REGISTERn checks and casts for you). */
typedef void (*tether_fn)(void);
/** What a LAZY/WEAK_LAZY slot and tether_make_provider hand out. A call keeps its
 *  owner (the instance it was handed to) alive; once the owner is gone (also during
 *  the call) or the provider freed, a call returns NULL + TETHER_E_INVALID_HANDLE (until its
 *  address serves a new provider: after 1,024 others freed on its thread, or once that
 *  thread exited, 1,024 more that exiting threads left free).
 *  A slot remembers the graph it was filled in: its first call answers that graph's
 *  instance of the key while it lives (the X that holds this Y, whatever X's scope; a
 *  transient key's is only that one), from a completion callback too; else it resolves anew.
 *  A LAZY slot whose graph instance holds its owner strongly would close a retain cycle: its
 *  calls return NULL + TETHER_E_RETAIN_CYCLE (declare it WEAK_LAZY); tether_validate reports it.
 *  So does an instance resolved anew that holds the owner strongly: it is destroyed at once and
 *  the slot stays empty (the next call resolves anew and is refused again). */
typedef void *(*tether_provider)(void);
/** Destructor: `drop(instance, context)` with the registration's context. */
typedef void (*tether_drop_fn)(void *instance, void *context);
/** Completion callback; return TETHER_OK, or anything else to fail the resolve. */
typedef tether_status (*tether_complete_fn)(tether_resolver *r, void *instance, void *context);
/** A completion callback with declared targets (tether_on_complete_params): `args[i]` is target i. */
typedef tether_status (*tether_complete_args_fn)(void *instance, void *const *args, size_t arg_count, void *context);

/** The payload of a tether_value: the member `kind` names. */
typedef union tether_scalar { int64_t i64; double f64; const char *str; void *ptr; } tether_scalar;
/** One runtime argument. `kind` is one of TETHER_PARAM_I64/F64/STR/PTR. */
typedef struct tether_value {
    tether_param_kind kind;
    union {                  /* `u`: the payload. The same bytes under older names: */
        tether_scalar u;
        tether_scalar as;        /* deprecated (a keyword in Python and others) */
        int64_t i64; double f64; const char *str; void *ptr;  /* for `{kind, {.i64 = 1}}` */
    };
} tether_value;

#ifdef __cplusplus
#define TETHER_VALUE_(k, field, v) ([&]{ tether_value tv_; tv_.kind = (k); tv_.u.field = (v); return tv_; }())
#else
#define TETHER_VALUE_(k, field, v) ((tether_value){.kind = (k), .u.field = (v)})
#endif
#define TETHER_VAL_I64(v) TETHER_VALUE_(TETHER_PARAM_I64, i64, (v))
#define TETHER_VAL_F64(v) TETHER_VALUE_(TETHER_PARAM_F64, f64, (v))
#define TETHER_VAL_STR(v) TETHER_VALUE_(TETHER_PARAM_STR, str, (v))
#define TETHER_VAL_PTR(v) TETHER_VALUE_(TETHER_PARAM_PTR, ptr, (v))

/* ---- Containers ------------------------------------------------------------ */

/**
 * Creates an empty container. Keys it lacks are looked up in `parent` (nullable,
 * borrowed; it cannot be freed while this child exists), and its own override them.
 * @param out  receives the container, yours (tether_container_free); NULL on failure.
 * @return TETHER_OK; TETHER_E_INVALID_ARGUMENT (NULL out); TETHER_E_INVALID_HANDLE (bad parent).
 * Thread-safe.
 */
tether_status tether_container_new(tether_container *parent, tether_container **out);

/**
 * Frees a container: its registrations (their handles become stale) and what
 * it caches (singletons, values, CONTAINER-scoped instances: let go of last
 * made first, so dependents die before their dependencies; each destroyed now
 * unless a handle or edge holds it, then with its last holder; every
 * destructor runs once). Its providers and lazy slots return NULL with
 * TETHER_E_INVALID_HANDLE from now on. Registration contexts are yours to free.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (NULL, already freed);
 *         TETHER_E_INVALID_ARGUMENT if child containers of `c` still exist
 *         (free them first; nothing is freed).
 * Thread-safe, also while other threads use `c` ("Freeing while in use"):
 * calls made after it, and by destructors it runs, fail with
 * TETHER_E_INVALID_HANDLE; a call under way that completes may return a
 * singleton that was cached or create instances, which are then not cached.
 */
tether_status tether_container_free(tether_container *c);

/**
 * Declares `key` a value child containers provide (a request's, say): validate
 * counts it as registered; a resolve needing it where no container on the way
 * provides it fails with TETHER_E_NOT_FOUND naming it (a SINGLETON's dependencies
 * come from its own container: it cannot take a child's value). Replaces as tether_register.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL/empty key). Thread-safe.
 */
tether_status tether_declare_value(tether_container *c, const char *key);

/**
 * Registers `instance` as `key`'s in `c`, no factory: resolves from `c` (and its children)
 * get it, parents' registrations included. Kept (tether_reset leaves it) until `c` is freed
 * or `key` registered again in `c`; then `drop(instance, context)` (nullable) runs once
 * nothing holds it. On failure `drop` is not run. Thread-safe.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL/empty key or instance).
 */
tether_status tether_provide_value(tether_container *c, const char *key, void *instance,
                                   tether_drop_fn drop, void *context);

/** `flags` TETHER_STRICT_CAPTIVE (0: off): a singleton registered in `c` that would hold a graph-,
 *  transient-, weak- or container-scoped instance strongly (DEP slot or target, tether_resolver_get) fails to
 *  resolve, before its factory runs: TETHER_E_CAPTIVE_DEPENDENCY. Children made later inherit it.
 *  @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (unknown flag). Thread-safe. */
tether_status tether_container_set_strict(tether_container *c, uint32_t flags);
#define TETHER_STRICT_CAPTIVE 1u

/* ---- Registrations --------------------------------------------------------- */

/**
 * Registers `factory` under `key`, replacing the container's registration of
 * `key` if any (its handle becomes stale, its cached singleton is released;
 * instances handed out live on). The factory is called with `param_count`
 * arguments of the C types the slots name (tether_param_kind), in order, and
 * returns the instance or NULL to fail (after tether_set_error, ideally). Any
 * arity works (up to 8 pointer-sized slots: a typed call; else libffi). The
 * registration has scope GRAPH, no context, destructor or callbacks: use
 * tether_register_with to set them race-free, and TETHER_REGISTERn to have the
 * compiler check the factory's prototype.
 *
 * @param key      non-empty UTF-8, copied. "Logger#file" is a named variant.
 * @param factory  non-NULL C function pointer, cast to tether_fn.
 * @param params   `param_count` (at most 1024) slots, copied (keys too); NULL when 0.
 * @param out      nullable; receives the registration handle, the container's
 *                 (valid until the key is re-registered or the container
 *                 freed; never free it). NULL makes no handle (16 bytes less).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad `c`); TETHER_E_INVALID_ARGUMENT
 *         (NULL/empty key or factory, NULL params with a count, a kind outside the
 *         enum, a keyless dependency slot, two RESOLVER slots); TETHER_E_NO_MEMORY.
 * Thread-safe: a resolve meanwhile sees the old or the new registration.
 */
tether_status tether_register(tether_container *c, const char *key, tether_fn factory,
                              const tether_param *params, size_t param_count,
                              tether_registration **out);

/**
 * One completion callback for tether_options.callbacks: exactly one of `fn`
 * (as tether_on_complete; no params) and `args_fn` (as tether_on_complete_params).
 */
typedef struct tether_completion {
    tether_complete_fn fn;
    tether_complete_args_fn args_fn;
    const tether_param *params;             /* read during the registering call only */
    size_t param_count;
    void *context;                          /* as the `context` of tether_on_complete(_params) */
} tether_completion;

/**
 * A registration's whole configuration, applied before it becomes visible.
 * Start from TETHER_OPTIONS_INIT (libgit2 style: `version` lets later headers
 * add fields that older libraries refuse instead of misreading).
 */
typedef struct tether_options {
    unsigned version;                       /* TETHER_OPTIONS_VERSION */
    tether_scope scope;                     /* TETHER_SCOPE_GRAPH by default */
    uint32_t flags;                         /* 0, TETHER_OVERRIDE, TETHER_DECORATE (bindings: TETHER_DEFER_DROP) */
    void *context;                          /* as tether_set_context */
    tether_drop_fn drop;                    /* nullable destructor, as tether_set_context */
    const tether_completion *callbacks;     /* `callback_count` callbacks, run in this order */
    size_t callback_count;
    size_t variadic_fixed;                  /* 0, or as tether_set_variadic */
} tether_options;
#define TETHER_OPTIONS_VERSION 1
#define TETHER_OPTIONS_INIT { TETHER_OPTIONS_VERSION, TETHER_SCOPE_GRAPH, 0, NULL, NULL, NULL, 0, 0 }

/**
 * tether_register with its whole configuration applied before the
 * registration becomes visible: the way to register while other threads may
 * resolve the key (with tether_register + tether_set_*, a resolve in between
 * sees it half configured, e.g. makes an instance with no destructor).
 * `options` is read during the call only; NULL is tether_register.
 * @return what tether_register returns, plus TETHER_E_INVALID_ARGUMENT for a
 *         unknown `version`, a bad scope (or one tether_set_scope refuses), unknown
 *         flags, variadic_fixed above param_count, a tether_completion with neither
 *         or both of fn and args_fn, or params tether_on_complete_params refuses.
 * Thread-safe.
 */
tether_status tether_register_with(tether_container *c, const char *key, tether_fn factory,
                                   const tether_param *params, size_t param_count,
                                   const tether_options *options, tether_registration **out);

/*
 * Checked registration. TETHER_REGISTERn(c, key, options, out, factory, slot1..slotn),
 * n = 0..8, is tether_register_with (a tether_status) with slots spelled as in
 * a param array, and the compiler (C11 or C++) rejects a factory whose type is
 * not `void *(*)(T1..Tn)`, Ti the C type of slot i (tether_param_kind).
 * TETHER_AS(slot, T) passes a pointer slot (DEP, CONTEXT, PTR) as T (unchecked).
 *   void *make_parent(Child *child);
 *   st = TETHER_REGISTER1(c, "Parent", &opts, &reg, make_parent, TETHER_AS(TETHER_DEP("Child"), Child *));
 */
#define TETHER_AS(slot, T) slot
#define TETHER_T_TETHER_AS(slot, T) T
#define TETHER_T_TETHER_DEP(k) void *
#define TETHER_T_TETHER_WEAK(k) tether_weak *
#define TETHER_T_TETHER_LAZY(k) tether_provider
#define TETHER_T_TETHER_WEAK_LAZY(k) tether_provider
#define TETHER_T_TETHER_ALL(k) const tether_list *
#define TETHER_T_TETHER_FACTORY(k) tether_factory *
#define TETHER_T_TETHER_CONTEXT void *
#define TETHER_T_TETHER_RESOLVER tether_resolver *
#define TETHER_T_TETHER_I64 int64_t
#define TETHER_T_TETHER_F64 double
#define TETHER_T_TETHER_STR const char *
#define TETHER_T_TETHER_PTR void *
#ifdef __cplusplus
#define TETHER_CHECKED_(f, type) ((tether_fn)static_cast<type>(f))
#define TETHER_SLOTS_(...) (std::initializer_list<tether_param>{__VA_ARGS__}.begin())
#else
#define TETHER_CHECKED_(f, type) ((tether_fn)_Generic((f), type: (f)))
#define TETHER_SLOTS_(...) ((const tether_param[]){__VA_ARGS__})
#endif
#define TETHER_F_(...) void *(*)(__VA_ARGS__)
#define TETHER_REG_(c, k, o, r, f, n, type, ...) \
    tether_register_with((c), (k), TETHER_CHECKED_(f, type), TETHER_SLOTS_(__VA_ARGS__), (n), (o), (r))
#define TETHER_REGISTER0(c, k, o, r, f) tether_register_with((c), (k), TETHER_CHECKED_(f, TETHER_F_(void)), NULL, 0, (o), (r))
#define TETHER_REGISTER1(c, k, o, r, f, a) TETHER_REG_(c, k, o, r, f, 1, TETHER_F_(TETHER_T_##a), a)
#define TETHER_REGISTER2(c, k, o, r, f, a, b) TETHER_REG_(c, k, o, r, f, 2, TETHER_F_(TETHER_T_##a, TETHER_T_##b), a, b)
#define TETHER_REGISTER3(c, k, o, r, f, a, b, d) \
    TETHER_REG_(c, k, o, r, f, 3, TETHER_F_(TETHER_T_##a, TETHER_T_##b, TETHER_T_##d), a, b, d)
#define TETHER_REGISTER4(c, k, o, r, f, a, b, d, e) \
    TETHER_REG_(c, k, o, r, f, 4, TETHER_F_(TETHER_T_##a, TETHER_T_##b, TETHER_T_##d, TETHER_T_##e), a, b, d, e)
#define TETHER_REGISTER5(c, k, o, r, f, a, b, d, e, g) TETHER_REG_(c, k, o, r, f, 5, \
    TETHER_F_(TETHER_T_##a, TETHER_T_##b, TETHER_T_##d, TETHER_T_##e, TETHER_T_##g), a, b, d, e, g)
#define TETHER_REGISTER6(c, k, o, r, f, a, b, d, e, g, h) TETHER_REG_(c, k, o, r, f, 6, \
    TETHER_F_(TETHER_T_##a, TETHER_T_##b, TETHER_T_##d, TETHER_T_##e, TETHER_T_##g, TETHER_T_##h), a, b, d, e, g, h)
#define TETHER_REGISTER7(c, k, o, r, f, a, b, d, e, g, h, i) TETHER_REG_(c, k, o, r, f, 7, TETHER_F_(TETHER_T_##a, \
    TETHER_T_##b, TETHER_T_##d, TETHER_T_##e, TETHER_T_##g, TETHER_T_##h, TETHER_T_##i), a, b, d, e, g, h, i)
#define TETHER_REGISTER8(c, k, o, r, f, a, b, d, e, g, h, i, j) TETHER_REG_(c, k, o, r, f, 8, TETHER_F_(TETHER_T_##a, \
    TETHER_T_##b, TETHER_T_##d, TETHER_T_##e, TETHER_T_##g, TETHER_T_##h, TETHER_T_##i, TETHER_T_##j), a, b, d, e, g, h, i, j)

/*
 * tether_set_*: configure a registration after tether_register, for setup no
 * other thread resolves from yet (otherwise use tether_register_with).
 */

/**
 * Declares the factory C variadic (slots {CONTEXT, I64, ...}: `void *f(void *ctx,
 * int64_t n, ...)`): the first `fixed_count` slots are fixed, the rest variadic.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT (`fixed_count` 0 or above the slot count).
 * Thread-safe.
 */
tether_status tether_set_variadic(tether_registration *r, size_t fixed_count);

/**
 * Sets the scope of instances made by `r`; drops what it cached (handles stay valid).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT (bad scope; SINGLETON/WEAK with runtime-argument slots).
 * Thread-safe.
 */
tether_status tether_set_scope(tether_registration *r, tether_scope scope);

/**
 * Sets the registration's context (for CONTEXT slots, callbacks added without
 * their own, and `drop`; yours to free after the container) and `drop`
 * (nullable), the destructor `drop(instance, context)` called exactly once when
 * an instance's last strong reference (handle, edge or scope cache) goes.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`). Thread-safe; affects later instances.
 */
tether_status tether_set_context(tether_registration *r, void *context, tether_drop_fn drop);

/**
 * Adds a completion callback: `fn(resolver, instance, context)` runs once every
 * factory of the resolve has returned, the resolver (valid during the call)
 * reaching the same graph. Instances complete in creation order (dependencies
 * first); those created by callbacks join the queue; a registration's callbacks
 * run in the order added. All have run when the top-level resolve returns, so a
 * factory may get a dependency whose callbacks have not run yet. A callback not
 * returning TETHER_OK fails the resolve (TETHER_E_FACTORY_FAILED, with its
 * tether_set_error message).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT (NULL `fn`).
 * Thread-safe.
 */
tether_status tether_on_complete(tether_registration *r, tether_complete_fn fn, void *context);

/**
 * Adds a completion callback that declares its targets as a factory declares
 * slots: `fn(instance, args, param_count, context)` gets target i in `args[i]`,
 * resolved in declared order within the current graph, as the resolver would:
 *   TETHER_PARAM_DEP (key): the target's instance, with a strong edge from the
 *     completed instance (valid as long as it; never free it);
 *   TETHER_PARAM_WEAK (key): a new tether_weak * the callback owns whatever it
 *     returns (release it, e.g. in the instance's destructor); a weak edge.
 * tether_validate and tether_export_dot see declared targets. Order: as
 * tether_on_complete (callbacks of both forms run in the order added).
 * A target that cannot be handed over fails the resolve without calling `fn`
 * (message `a declared target of completion callback #N of "K"`):
 * TETHER_E_RETAIN_CYCLE for a DEP closing a cycle of strong edges (declare it
 * WEAK), or any tether_resolver_get status; `fn` not returning TETHER_OK:
 * TETHER_E_FACTORY_FAILED.
 * @param params   read during the call only (keys copied); NULL when 0.
 * @param context  passed to `fn`; NULL passes the registration's context.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT (NULL `fn`, NULL `params` with a count, a
 *         kind other than DEP or WEAK, a NULL or empty key).
 * Thread-safe.
 */
tether_status tether_on_complete_params(tether_registration *r, tether_complete_args_fn fn,
                                        const tether_param *params, size_t param_count, void *context);

/* ---- Resolving ------------------------------------------------------------- */

/**
 * Resolves `key`, building the graph it needs (constructor dependencies depth
 * first, then completion callbacks: docs/ARCHITECTURE.md). No factory runs
 * twice in one resolve; a failure destroys what it created, exactly once, and
 * caches nothing.
 * @param out  receives a strong handle you own (tether_ref_release); NULL on failure.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad `c`); TETHER_E_INVALID_ARGUMENT
 *   (NULL key/out); TETHER_E_NOT_FOUND (`key` or a dependency unregistered: the
 *   message names the key and the path); TETHER_E_CYCLE (constructor cycle, path
 *   named); TETHER_E_RETAIN_CYCLE (a callback's strong edge would close a cycle
 *   of strong edges); TETHER_E_FACTORY_FAILED (a factory returned NULL or a
 *   callback failed); TETHER_E_ARGUMENT_MISMATCH (runtime arguments declared:
 *   use tether_resolve_args); TETHER_E_NO_MEMORY.
 * Thread-safe.
 */
tether_status tether_resolve(tether_container *c, const char *key, tether_ref **out);

/**
 * tether_resolve + tether_ref_get: the instance of `key`, kept alive by the
 * strong handle put in `*keep` (yours; the instance is valid until you
 * tether_ref_release it). `Service *s = tether_get(c, "Service", &keep);`
 * @return the instance; NULL on failure (`*keep` NULL), tether_last_status()
 *         then one of tether_resolve's (TETHER_E_INVALID_ARGUMENT: NULL keep).
 * Thread-safe.
 */
void *tether_get(tether_container *c, const char *key, tether_ref **keep);

/**
 * tether_resolve with the values of the top-level registration's I64/F64/STR/PTR
 * slots, in order (`args`: `arg_count` values, borrowed for the call; NULL when 0).
 * @return as tether_resolve, plus TETHER_E_ARGUMENT_MISMATCH when the count
 *         (any above 1024 too) or a kind differs from the slots (message says which).
 */
tether_status tether_resolve_args(tether_container *c, const char *key,
                                  const tether_value *args, size_t arg_count, tether_ref **out);

/**
 * What a TETHER_FACTORY(key) slot's factory calls: a new instance of `key` built with
 * `args` (as tether_resolve_args), its other dependencies injected as usual, resolved
 * from the container the receiver was resolved from. `*out`: a strong handle, yours.
 * @return as tether_resolve_args (TETHER_E_ARGUMENT_MISMATCH: wrong count or kinds);
 *         TETHER_E_INVALID_HANDLE (NULL, released or stale `f`, or its container was freed).
 * Thread-safe; may be called from the receiving factory itself.
 */
tether_status tether_factory_call(tether_factory *f, const tether_value *args, size_t arg_count, tether_ref **out);

/** Releases a FACTORY slot's handle (once; instances it made live on).
 *  @return TETHER_OK; TETHER_E_INVALID_HANDLE (NULL, already released). Thread-safe. */
tether_status tether_factory_release(tether_factory *f);

/**
 * Resolves every registration a TETHER_ALL(key) slot would receive, in one graph.
 * `*out`: a strong handle (yours) whose instance is the list, which it keeps alive
 * with its items; `*list` (if not NULL) receives the list. An empty list is no error.
 * @return as tether_resolve (an item's failure fails the whole). Thread-safe.
 */
tether_status tether_resolve_all(tether_container *c, const char *key, tether_ref **out, const tether_list **list);

/**
 * Interns `key` (not registering it) into an id for tether_resolve_key, which
 * skips string hashing. Ids are process-wide and valid for its life. Thread-safe.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad `c`); TETHER_E_INVALID_ARGUMENT (NULL/empty key, NULL out).
 */
tether_status tether_intern(tether_container *c, const char *key, uint32_t *out);

/**
 * tether_resolve by interned id. Returns what tether_resolve returns, plus
 * TETHER_E_INVALID_ARGUMENT for an id that tether_intern never returned.
 */
tether_status tether_resolve_key(tether_container *c, uint32_t key, tether_ref **out);

/** tether_resolve_args by interned id (see tether_resolve_key). */
tether_status tether_resolve_key_args(tether_container *c, uint32_t key,
                                      const tether_value *args, size_t arg_count, tether_ref **out);

/* ---- Strong and weak handles ----------------------------------------------- */

/** The instance a strong handle holds, valid while any strong reference to it exists. Thread-safe.
 * @return the instance; NULL + TETHER_E_INVALID_HANDLE if `ref` is not a live strong handle. */
void *tether_ref_get(const tether_ref *ref);

/** A second strong handle to the same instance; you own it. Thread-safe.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out). */
tether_status tether_ref_clone(tether_ref *ref, tether_ref **out);

/**
 * Releases a strong handle. The last strong reference runs the destructor now,
 * once, then releases the instance's edges last edge first (slots in reverse
 * order, after edges taken later): dependents die first.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (NULL, already released, not a strong handle).
 * Thread-safe.
 */
tether_status tether_ref_release(tether_ref *ref);

/** A weak handle (yours: tether_weak_release) to `ref`'s instance, not keeping it alive. Thread-safe.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out). */
tether_status tether_ref_downgrade(tether_ref *ref, tether_weak **out);

/** Upgrades a weak handle to a new strong handle (you own it). Thread-safe.
 * @return TETHER_OK; TETHER_E_EXPIRED if the instance is gone (`*out` = NULL);
 *         TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out). */
tether_status tether_weak_upgrade(tether_weak *w, tether_ref **out);

/**
 * tether_weak_upgrade + tether_ref_get: `w`'s instance, kept alive by the strong
 * handle put in `*keep` (yours: tether_ref_release).
 * @return the instance; NULL on failure (`*keep` NULL), tether_last_status() then
 *   TETHER_E_EXPIRED (gone), TETHER_E_INVALID_HANDLE or TETHER_E_INVALID_ARGUMENT.
 * Thread-safe.
 */
void *tether_weak_get(tether_weak *w, tether_ref **keep);

/** Releases a weak handle (from tether_ref_downgrade, a WEAK slot or
 * tether_resolver_get_weak). Never runs a destructor. Thread-safe.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (NULL, already released, not a weak handle). */
tether_status tether_weak_release(tether_weak *w);

/* ---- Inside callbacks ------------------------------------------------------ */

/**
 * Resolves `key` within the current resolve's graph and records a strong edge
 * from the instance being completed (or built, for a RESOLVER slot) to it:
 * `*out` is valid as long as that instance (store it; never free it).
 * @return TETHER_OK; TETHER_E_WRONG_CONTEXT (the callback has returned, or
 *   another thread uses the resolver); TETHER_E_INVALID_HANDLE;
 *   TETHER_E_INVALID_ARGUMENT (NULL key/out); TETHER_E_RETAIN_CYCLE (the edge
 *   would close a cycle of strong edges: take tether_resolver_get_weak);
 *   TETHER_E_CYCLE (in a factory: `key` is being constructed; in a completion callback: a transient
 *   cycle it would build anew forever, failing the resolve); any status of tether_resolve. Others fail it only if returned.
 */
tether_status tether_resolver_get(tether_resolver *r, const char *key, void **out);

/**
 * tether_resolver_get with a weak edge: a new weak handle you own (store it in
 * any object of the graph, release it in its destructor). It never reads as
 * expired before the top-level resolve returns (its instances live till then).
 * @return as tether_resolver_get, except TETHER_E_RETAIN_CYCLE never happens.
 */
tether_status tether_resolver_get_weak(tether_resolver *r, const char *key, tether_weak **out);

/* ---- Providers ------------------------------------------------------------- */

/**
 * A context-free C function pointer (libffi closure) for C APIs whose callbacks
 * take no user data: its first call resolves `key` from `c` and holds it; every
 * call returns that pointer. A failing call returns NULL with the last error
 * set (the next one retries); once `c` or the provider is freed, NULL +
 * TETHER_E_INVALID_HANDLE.
 * @param out  receives the provider; you own it (tether_provider_free).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL
 *         key/out); TETHER_E_NO_MEMORY (closure pages refused by the system). Thread-safe, and so
 *         is calling the provider.
 */
tether_status tether_make_provider(tether_container *c, const char *key, tether_provider *out);

/** Frees a provider made by tether_make_provider and releases what it holds. @return TETHER_OK;
 *  TETHER_E_INVALID_HANDLE if `p` is not a live one from tether_make_provider (lazy slots' go with their instance). */
tether_status tether_provider_free(tether_provider p);

/* ---- Caches, validation, pictures ------------------------------------------ */

/**
 * Empties `c`'s cache of `scope` (not its parents'), last cached first: singletons
 * and CONTAINER-scoped instances are released (destroyed unless held), weak-scope
 * instances forgotten; values stay. GRAPH, TRANSIENT: no-op.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (bad scope). Thread-safe.
 */
tether_status tether_reset(tether_container *c, tether_scope scope);

/**
 * Checks the declared graph of everything resolvable from `c` (slots and declared
 * completion targets), running nothing: missing keys (and who needs them), constructor
 * cycles (lazy slots are not constructor edges), retain cycles closed by declared DEP
 * targets or by LAZY slots whose key holds the dependent strongly (declare those
 * WEAK_LAZY), dependencies on keys taking runtime arguments, captive dependencies
 * (tether_container_set_strict). The report, a line per problem (the first 100), is
 * tether_last_error(). @return TETHER_OK; else the first found of TETHER_E_NOT_FOUND,
 * _CYCLE, _RETAIN_CYCLE, _ARGUMENT_MISMATCH, _CAPTIVE_DEPENDENCY; TETHER_E_INVALID_HANDLE. Thread-safe.
 */
tether_status tether_validate(tether_container *c);

/**
 * Writes the declared graph as Graphviz DOT: one node per registration
 * visible from `c` (label: key and scope), edges styled by kind (strong
 * solid, ALL one per item labelled "all", weak dashed, lazy dotted, weak-lazy dotted with
 * a hollow head, FACTORY dotted with a diamond head labelled "factory", declared
 * completion targets labelled), missing keys as red dashed nodes, cycle edges red
 * (LAZY edges closing a retain cycle too), captive ones orange; long keys shortened
 * as messages quote them (and their id).
 * @param out  receives a NUL-terminated string you own: tether_string_free.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out);
 *         TETHER_E_NO_MEMORY. Thread-safe.
 */
tether_status tether_export_dot(tether_container *c, char **out);

/** Frees a string the library returned (tether_export_dot); NULL is ignored. Thread-safe. */
void tether_string_free(char *s);

/** Overrides for tests (README "Overrides"): `instance` over `key` in `c` and its children until tether_override_clear (they
 *  stack); caches of `c` and below built over `key` are let go of (rebuilt over it, then over the original); handles taken
 *  before keep what they had; `drop` (nullable) runs once nothing holds `instance` after the clear. @return TETHER_OK;
 *  _E_INVALID_HANDLE; _E_INVALID_ARGUMENT (NULL/empty key or instance). Thread-safe. */
tether_status tether_override(tether_container *c, const char *key, void *instance, tether_drop_fn drop, void *context);
/** Ends the newest override of `key` in `c` (see tether_override): caches built over it are let go of again.
 *  @return TETHER_OK; _E_INVALID_HANDLE; _E_INVALID_ARGUMENT (NULL key, or `key` not overridden in `c`). Thread-safe. */
tether_status tether_override_clear(tether_container *c, const char *key);
/** options.flags TETHER_OVERRIDE: tether_register_with overrides alike. TETHER_DECORATE (README "Decorators"): it decorates
 *  `key`'s registration in `c`: its one TETHER_DEP(key) slot gets the instance, its result resolves instead (the key's scope;
 *  options.drop runs first); the original moves to "K (before decorator n)". Also _E_NOT_FOUND, _E_ARGUMENT_MISMATCH. */
enum { TETHER_OVERRIDE = 4, TETHER_DECORATE = 8 };

/* ---- Tracing --------------------------------------------------------------- */
typedef enum tether_trace_kind { TETHER_TRACE_RESOLVE_START, TETHER_TRACE_RESOLVE_END, TETHER_TRACE_FACTORY_CALL,
    TETHER_TRACE_FACTORY_RETURN, TETHER_TRACE_CACHE_HIT, TETHER_TRACE_COMPLETE, TETHER_TRACE_DESTROY,
    TETHER_TRACE_EDGE, TETHER_TRACE_WEAK_EDGE /* `instance` now holds `target` */ } tether_trace_kind;
/** Valid during the hook's call (keys: for good); `instance` NULL: none yet, or failed; `status`: of *_END/RETURN/COMPLETE. */
typedef struct tether_trace_event { tether_trace_kind kind; tether_status status; const char *key; void *instance;
    void *target; const char *target_key; } tether_trace_event;
typedef void (*tether_trace_fn)(const tether_trace_event *event, void *context);
/** Sets (NULL: removes) the hook told, in order and on their thread, what resolves from `c` do: start, end, factory
 *  call and return (then the instance's edges), cache hits, completion callbacks, edges taken in callbacks, the
 *  destruction of instances made meanwhile. Off it costs nothing; on, resolves run traced plans (slower). Never called after
 *  tether_container_free(c) returns. @return TETHER_OK; TETHER_E_INVALID_HANDLE. Thread-safe. */
tether_status tether_set_trace(tether_container *c, tether_trace_fn fn, void *context);

/* The library reads these structs by offset: another layout fails here, not at run time. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
#ifdef __cplusplus
#define TETHER_ASSERT_(cond, msg) static_assert(cond, msg)
#else
#define TETHER_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
TETHER_ASSERT_(sizeof(void *) == 8 && sizeof(tether_param) == 16 && offsetof(tether_param, key) == 8 &&
               sizeof(tether_trace_event) == 40, "Tether supports 64-bit platforms with these layouts");
TETHER_ASSERT_(sizeof(tether_value) == 16 && offsetof(tether_value, u) == 8, "tether_value layout");
TETHER_ASSERT_(offsetof(tether_options, flags) == 8 && offsetof(tether_options, context) == 16 &&
               offsetof(tether_options, callbacks) == 32 && sizeof(tether_options) == 56, "tether_options layout");
TETHER_ASSERT_(sizeof(tether_completion) == 40 && offsetof(tether_completion, params) == 16 &&
               offsetof(tether_completion, context) == 32, "tether_completion layout");
#undef TETHER_ASSERT_
#endif

#ifdef __cplusplus
}
#endif

#endif /* TETHER_H */
