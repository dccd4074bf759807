/*
 * tether.h — the one public header of Tether, a dependency-injection container
 * with cycle resolution and weak/strong handle semantics.
 *
 * Conventions that hold for every function below (read them once):
 *
 *  - Status + last error. Every function returns a tether_status (or, for the
 *    few that return a pointer, NULL with a status available from
 *    tether_last_status()). On failure a message in words is stored for the
 *    calling thread and read with tether_last_error(). A successful call leaves
 *    the last error as it was (libgit2 style), so read it only after a failure.
 *
 *  - Handles. tether_container, tether_registration, tether_ref, tether_weak and
 *    tether_resolver are opaque, generation-counted handles. They are never
 *    dereferenced by the library: a NULL, released, stale or foreign handle, or a
 *    handle of the wrong kind, is detected and answered with
 *    TETHER_E_INVALID_HANDLE. Using a handle after releasing it is therefore safe
 *    but always an error.
 *
 *  - Strings passed in (keys, messages) are borrowed for the duration of the
 *    call only; the library copies what it keeps. Keys are UTF-8, non-empty.
 *
 *  - Thread safety. Every function may be called from any thread at any time.
 *    Cached singleton and weak-scope hits take no container-wide lock. A
 *    cached singleton hit (tether_resolve, tether_resolve_key and
 *    tether_resolve_key_instance without runtime arguments), and the release
 *    of the handle it returned on the same thread, write no memory that another
 *    thread uses (after a singleton's first hit): no reference count, no lock,
 *    no atomic read-modify-write; the handle borrows the cache's reference
 *    (tether_resolve_key_collect with TETHER_RESOLVE_HELD needs no handle at
 *    all for a published singleton the caller keeps alive). Letting go of cached singletons (tether_reset, a
 *    scope change, re-registering a key, tether_container_free) therefore
 *    costs more: on Linux a membarrier(2) system call
 *    (MEMBARRIER_CMD_PRIVATE_EXPEDITED, registered on first use) and, for a
 *    singleton that hits handed out, a second one and a scan of the live
 *    strong handles; handles that still borrow it stay valid until released,
 *    and its destructor runs when the last of them is.
 *    Where membarrier is unavailable, or when the environment variable
 *    TETHER_NO_MEMBARRIER is "1" when the library first needs it, hits and
 *    releases use memory fences instead (slower, same semantics). A
 *    resolve that has to create singleton- or weak-scoped instances holds the
 *    process-wide creation lock (re-entrant on its own thread) until it has
 *    published them, so such instances are created exactly once even when
 *    threads race. Consequence: a factory must not block waiting for *another
 *    thread* that is itself creating singleton- or weak-scoped instances.
 *
 *  - Freeing while in use. tether_container_free may run while other threads
 *    (or callbacks further up the same thread) are inside calls that use the
 *    container: resolves, registrations, providers, any call taking the
 *    container or one of its registrations. Each call announces itself in a
 *    word of its own thread (plain stores, no atomic read-modify-write, nothing
 *    shared written, so the hit path above keeps its property), and the
 *    container's memory (registrations, their factories, key tables) is
 *    released only once every call that was under way when it was freed has
 *    returned: by the last of them, on its way out, or at its thread's exit.
 *    Nobody waits for anybody. A call under way either completes as if it had
 *    run before the free or fails with TETHER_E_INVALID_HANDLE; a call made
 *    after the free fails with TETHER_E_INVALID_HANDLE. Freeing a container
 *    costs one more membarrier(2) when other threads have called into the
 *    library (none when only the calling thread ever did).
 *
 *  - Callbacks (factories, destructors, completion callbacks) may call back into
 *    the library, including resolving from the same container.
 */
#ifndef TETHER_H
#define TETHER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Compile-time version of this header. Compare with tether_version(). */
#define TETHER_VERSION_MAJOR 0
#define TETHER_VERSION_MINOR 1
#define TETHER_VERSION_PATCH 0
#define TETHER_VERSION "0.1.0"
#define TETHER_VERSION_NUMBER (TETHER_VERSION_MAJOR * 10000 + TETHER_VERSION_MINOR * 100 + TETHER_VERSION_PATCH)

/* ------------------------------------------------------------------------- */
/* Statuses and errors                                                        */
/* ------------------------------------------------------------------------- */

typedef enum tether_status {
    TETHER_OK = 0,
    TETHER_E_INVALID_ARGUMENT,  /* NULL where not allowed, bad enum, bad param list */
    TETHER_E_INVALID_HANDLE,    /* NULL, released, stale or foreign handle */
    TETHER_E_NOT_FOUND,         /* no registration for the key (message names key and path) */
    TETHER_E_CYCLE,             /* constructor cycle (message names the path) */
    TETHER_E_RETAIN_CYCLE,      /* a strong edge would close a cycle of strong edges */
    TETHER_E_FACTORY_FAILED,    /* a factory returned NULL or a callback failed */
    TETHER_E_ARGUMENT_MISMATCH, /* runtime arguments: wrong count or type */
    TETHER_E_EXPIRED,           /* weak handle whose target is gone */
    TETHER_E_WRONG_CONTEXT,     /* resolver used outside its callback */
    TETHER_E_NO_MEMORY,
    TETHER_E_WOULD_BLOCK,       /* a TETHER_RESOLVE_NO_WAIT resolve needed the creation lock another thread held */
    TETHER_E_BUFFER_TOO_SMALL   /* a caller's buffer was too small; the call reports the size it needs */
} tether_status;

/**
 * The library's version as "MAJOR.MINOR.PATCH", e.g. "0.1.0".
 * The string is static; never free it. Thread-safe.
 */
const char *tether_version(void);

/**
 * The name of a status as a static string ("TETHER_OK", "TETHER_E_CYCLE", ...),
 * or "TETHER_E_UNKNOWN" for a value outside the enum. Never NULL, never free it.
 * Thread-safe.
 */
const char *tether_status_name(tether_status s);

/**
 * The message of the last failed call on this thread, in words: what happened
 * and what to do (e.g. `no registration for "Logger" (needed by "Service" ->
 * "Repository")`). Never NULL: "" before any failure. The string belongs to the
 * library and stays valid until the next failing call on this thread; copy it
 * to keep it. Thread-local, so thread-safe.
 */
const char *tether_last_error(void);

/**
 * The status of the last failed call on this thread (TETHER_OK before any
 * failure). Use it after a function that returns NULL (tether_ref_get, a
 * provider) to learn why. Thread-local.
 */
tether_status tether_last_status(void);

/**
 * Lets a factory or completion callback say why it is about to fail: stores
 * `msg` (copied; NULL means "no reason given") so that the resolve that called it
 * reports `factory for "K" returned NULL: <msg>`. It also becomes this thread's
 * last error, with status TETHER_E_FACTORY_FAILED (outside a callback that is all
 * it does). A reason given by a callback that then succeeds is ignored.
 * Thread-local.
 */
void tether_set_error(const char *msg);

/* ------------------------------------------------------------------------- */
/* Types                                                                      */
/* ------------------------------------------------------------------------- */

typedef struct tether_container    tether_container;    /* opaque; free with tether_container_free */
typedef struct tether_registration tether_registration; /* owned by its container; never freed by you */
typedef struct tether_ref          tether_ref;          /* strong handle; you own it: tether_ref_release */
typedef struct tether_weak         tether_weak;         /* weak handle; you own it: tether_weak_release */
typedef struct tether_resolver     tether_resolver;     /* valid only during the callback that received it */

/** Lifetimes of the instances a registration makes. */
typedef enum tether_scope {
    TETHER_SCOPE_GRAPH = 0,   /* default: one instance per top-level resolve (lets cycles close) */
    TETHER_SCOPE_TRANSIENT,   /* a new instance every time it is needed, even within one resolve */
    TETHER_SCOPE_SINGLETON,   /* one instance, cached in the registering container until reset/free */
    TETHER_SCOPE_WEAK         /* shared while anyone (handle, edge) still holds it strongly */
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
    TETHER_PARAM_PTR            /* void *            next runtime argument */
} tether_param_kind;

/** One declared factory parameter. `key` is used by DEP/WEAK/LAZY/WEAK_LAZY only. */
typedef struct tether_param {
    tether_param_kind kind;
    const char *key;
} tether_param;

#ifdef __cplusplus
#define TETHER_PARAM_(kind, key) (tether_param{(kind), (key)})
#else
#define TETHER_PARAM_(kind, key) ((tether_param){(kind), (key)})
#endif
#define TETHER_DEP(k)       TETHER_PARAM_(TETHER_PARAM_DEP, (k))
#define TETHER_WEAK(k)      TETHER_PARAM_(TETHER_PARAM_WEAK, (k))
#define TETHER_LAZY(k)      TETHER_PARAM_(TETHER_PARAM_LAZY, (k))
#define TETHER_WEAK_LAZY(k) TETHER_PARAM_(TETHER_PARAM_WEAK_LAZY, (k))
#define TETHER_CONTEXT      TETHER_PARAM_(TETHER_PARAM_CONTEXT, NULL)
#define TETHER_RESOLVER     TETHER_PARAM_(TETHER_PARAM_RESOLVER, NULL)
#define TETHER_I64          TETHER_PARAM_(TETHER_PARAM_I64, NULL)
#define TETHER_F64          TETHER_PARAM_(TETHER_PARAM_F64, NULL)
#define TETHER_STR          TETHER_PARAM_(TETHER_PARAM_STR, NULL)
#define TETHER_PTR          TETHER_PARAM_(TETHER_PARAM_PTR, NULL)

/** Any factory, cast to this type for tether_register: `(tether_fn)make_parent`. */
typedef void (*tether_fn)(void);
/** What a LAZY/WEAK_LAZY slot and tether_make_provider hand out. */
typedef void *(*tether_provider)(void);
/** Destructor: `drop(instance, context)` with the registration's context. */
typedef void (*tether_drop_fn)(void *instance, void *context);
/** Completion callback; return TETHER_OK, or anything else to fail the resolve. */
typedef tether_status (*tether_complete_fn)(tether_resolver *r, void *instance, void *context);
/** A completion callback with declared targets (tether_on_complete_params): `args[i]` is target i. */
typedef tether_status (*tether_complete_args_fn)(void *instance, void *const *args, size_t arg_count, void *context);

/** One runtime argument. `kind` is one of TETHER_PARAM_I64/F64/STR/PTR. */
typedef struct tether_value {
    tether_param_kind kind;
    union { int64_t i64; double f64; const char *str; void *ptr; } as;
} tether_value;

#ifdef __cplusplus
#define TETHER_VALUE_(k, field, v) ([&]{ tether_value tv_; tv_.kind = (k); tv_.as.field = (v); return tv_; }())
#else
#define TETHER_VALUE_(k, field, v) ((tether_value){(k), {.field = (v)}})
#endif
#define TETHER_VAL_I64(v) TETHER_VALUE_(TETHER_PARAM_I64, i64, (v))
#define TETHER_VAL_F64(v) TETHER_VALUE_(TETHER_PARAM_F64, f64, (v))
#define TETHER_VAL_STR(v) TETHER_VALUE_(TETHER_PARAM_STR, str, (v))
#define TETHER_VAL_PTR(v) TETHER_VALUE_(TETHER_PARAM_PTR, ptr, (v))

/* ------------------------------------------------------------------------- */
/* Containers                                                                 */
/* ------------------------------------------------------------------------- */

/**
 * Creates an empty container. With a non-NULL `parent`, keys not registered in
 * the new container are looked up in the parent (and its parents); a key
 * registered here overrides the parent's for resolves through this container.
 *
 * Resolves from a container replay recorded plans for graphs whose shape
 * depends only on the registrations (see README, Performance); a replay is
 * indistinguishable from building the graph step by step. When the environment
 * variable TETHER_NO_PLANS is "1" at the time a container is created, that
 * container never records or replays plans (for comparisons and diagnosis).
 *
 * @param parent  nullable; borrowed. The parent cannot be freed while this
 *                container exists (tether_container_free says so).
 * @param out     receives the new container; you own it (tether_container_free).
 *                Set to NULL on failure.
 * @return TETHER_OK; TETHER_E_INVALID_ARGUMENT if `out` is NULL;
 *         TETHER_E_INVALID_HANDLE if `parent` is not a live container.
 * Thread-safe.
 */
tether_status tether_container_new(tether_container *parent, tether_container **out);

/**
 * Frees a container: its registrations (their handles become stale), its
 * cached singletons (their destructors run now unless a handle or edge still
 * holds them) and its registrations' contexts (their drop callbacks run).
 * Instances still held by tether_ref handles or by edges stay alive and are
 * destroyed when the last of those goes. Providers and lazy slots of this
 * container return NULL with TETHER_E_INVALID_HANDLE from now on.
 *
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE if `c` is not a live container
 *         (NULL, already freed); TETHER_E_INVALID_ARGUMENT if child containers
 *         of `c` still exist (free them first; nothing is freed).
 * Thread-safe, also while other threads use `c` (see "Freeing while in use" at
 * the top): calls made after this one fail with TETHER_E_INVALID_HANDLE ("the
 * container was already freed"); a call under way at the time either fails
 * with TETHER_E_INVALID_HANDLE ("the container was freed") or completes, and
 * then it may return a singleton that was cached (its handle stays valid) or
 * create instances, which are not cached. Never waits for those calls: what
 * they may still read is released when the last of them returns.
 */
tether_status tether_container_free(tether_container *c);

/* ------------------------------------------------------------------------- */
/* Registrations                                                              */
/* ------------------------------------------------------------------------- */

/**
 * Registers `factory` under `key` with its declared parameter list. The
 * factory is called with exactly `param_count` arguments of the C types the
 * kinds name (see tether_param_kind), in order, and returns the instance or
 * NULL to fail (after tether_set_error, ideally). Any arity works: a factory
 * whose slots are all pointer-sized with at most 8 of them is called through a
 * typed function pointer; any other (doubles, more than 8, variadic) through
 * libffi with a call interface prepared here, once.
 *
 * Re-registering a key in the same container replaces the old registration:
 * the old registration handle becomes stale and its cached singleton is
 * released (instances already handed out live on).
 * The new registration has scope TETHER_SCOPE_GRAPH, no context, no
 * destructor and no completion callback.
 *
 * @param c        the container.
 * @param key      non-empty UTF-8 key, copied. "Logger#file" is a named variant.
 * @param factory  non-NULL C function pointer, cast to tether_fn.
 * @param params   array of `param_count` slots, copied (keys too); may be NULL
 *                 when `param_count` is 0.
 * @param out      nullable; receives the registration handle, owned by the
 *                 container (valid until the key is re-registered or the
 *                 container is freed; never free it). With NULL no handle is
 *                 made (16 bytes less per registration).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad `c`);
 *         TETHER_E_INVALID_ARGUMENT (NULL/empty key, NULL factory, NULL params
 *         with a count, a param kind outside the enum, a dependency slot
 *         without a key); TETHER_E_NO_MEMORY.
 * Thread-safe. Registering while other threads resolve is allowed; a resolve
 * sees either the old or the new registration.
 */
tether_status tether_register(tether_container *c, const char *key, tether_fn factory,
                              const tether_param *params, size_t param_count,
                              tether_registration **out);

/**
 * Everything tether_register_ex sets before the registration becomes visible.
 * Zero-initialize it (`tether_registration_options o = {0};`) and set what you need.
 */
typedef struct tether_registration_options {
    tether_scope scope;                     /* TETHER_SCOPE_GRAPH when zeroed */
    uint32_t flags;                         /* 0 or TETHER_DEFER_DROP */
    void *context;                          /* as tether_set_context */
    tether_drop_fn drop;                    /* nullable; as tether_set_context */
    const tether_complete_fn *completions;  /* `completion_count` callbacks, run in this order */
    void *const *completion_contexts;       /* nullable, else one context per callback */
    size_t completion_count;
    size_t variadic_fixed;                  /* 0, or as tether_set_variadic */
    /* Read only with TETHER_OPTIONS_CALLBACKS in `flags` (older callers pass a shorter struct). */
    const struct tether_completion *callbacks; /* `callback_count` callbacks of either form, run in
                                                  this order, after those of `completions` */
    size_t callback_count;
} tether_registration_options;

/**
 * One completion callback of either form, for tether_registration_options.callbacks:
 * set exactly one of `fn` (as tether_on_complete; `params` unused, param_count 0)
 * and `args_fn` (as tether_on_complete_params, with its `params`).
 */
typedef struct tether_completion {
    tether_complete_fn fn;
    tether_complete_args_fn args_fn;
    const tether_param *params;             /* read during tether_register_ex only */
    size_t param_count;
    void *context;                          /* as the `context` of tether_on_complete(_params) */
} tether_completion;

/**
 * options.flags: `drop` may be handed back instead of called. While a
 * tether_resolve_key_collect call runs on a thread, the drops of this
 * registration's instances that come due on that thread (in that call or in
 * any call nested in it, e.g. a tether_ref_release inside a factory) are stored
 * in that call's buffer, and its caller runs them after it returns; everywhere
 * else they are called as usual. A deferred drop therefore runs after the
 * destructors of the instance's dependencies that are not deferred: mark a
 * registration only if its destructor does not use its dependencies, or mark
 * them too. tether_set_context replaces the destructor with one not deferred.
 */
#define TETHER_DEFER_DROP 1u

/** options.flags: the struct's `callbacks` and `callback_count` fields are set. */
#define TETHER_OPTIONS_CALLBACKS 2u

/**
 * tether_register with its whole configuration (scope, context, destructor,
 * completion callbacks, variadic) applied before the registration becomes
 * visible. Use it when other threads may resolve the key while you register:
 * with tether_register + tether_set_*, a resolve in between would see the
 * registration half configured (for example, make an instance with no
 * destructor). `options` is read during the call only; NULL is tether_register.
 *
 * @return what tether_register returns, plus TETHER_E_INVALID_ARGUMENT for a
 *         bad scope, unknown flags, a NULL callback, variadic_fixed above
 *         param_count, a tether_completion with neither or both of fn and
 *         args_fn, or declared params tether_on_complete_params refuses.
 */
tether_status tether_register_ex(tether_container *c, const char *key, tether_fn factory,
                                 const tether_param *params, size_t param_count,
                                 const tether_registration_options *options,
                                 tether_registration **out);

/**
 * Declares the factory as a C variadic function (`void *f(void *ctx, int n, ...)`)
 * whose first `fixed_count` declared params are the fixed ones; the rest are
 * passed as variadic arguments (libffi's ffi_prep_cif_var, so doubles go where
 * the ABI wants them).
 *
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT if `fixed_count` is 0 or greater than the
 *         number of declared params.
 * Thread-safe.
 */
tether_status tether_set_variadic(tether_registration *r, size_t fixed_count);

/**
 * Sets the scope of instances made by `r`. Changing it drops any instance the
 * registration has cached (handles already given out stay valid).
 *
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT (scope outside the enum).
 * Thread-safe.
 */
tether_status tether_set_scope(tether_registration *r, tether_scope scope);

/**
 * Sets the registration's user context: passed to TETHER_PARAM_CONTEXT slots,
 * to completion callbacks registered without their own context, and as the
 * second argument of `drop`. `drop` (nullable) is the destructor of every
 * instance this registration makes: `drop(instance, context)`, called exactly
 * once when the instance's last strong reference (handle, edge or scope cache)
 * goes. The context itself is yours to free after the container is freed.
 *
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`).
 * Thread-safe; affects instances created after the call.
 */
tether_status tether_set_context(tether_registration *r, void *context, tether_drop_fn drop);

/**
 * Adds a completion callback, run after the instance exists and after every
 * factory of the current resolve has returned. Several callbacks per
 * registration run in the order they were added. The callback receives a
 * resolver (valid only during the call) to reach other instances of the same
 * graph, the instance, and `context`.
 *
 * Order: instances are completed in the order they were created, which is
 * dependencies before dependents (post-order of the constructor graph).
 * Instances created while callbacks run (through tether_resolver_get) are
 * appended to the queue. When the top-level resolve returns, every callback of
 * every instance it created has run. A dependency handed to a factory is fully
 * constructed but its own callbacks may not have run yet.
 *
 * A callback that returns anything but TETHER_OK fails the whole resolve with
 * TETHER_E_FACTORY_FAILED (its tether_set_error message is included).
 *
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT (NULL `fn`).
 * Thread-safe.
 */
tether_status tether_on_complete(tether_registration *r, tether_complete_fn fn, void *context);

/**
 * Adds a completion callback that declares what it needs, as a factory
 * declares its params: `fn(instance, args, param_count, context)` receives
 * target i as `args[i]`, resolved within the graph of the current resolve
 * exactly as tether_resolver_get / tether_resolver_get_weak would (a
 * graph-scoped target already built is that instance; otherwise what the
 * resolver would give: a cached singleton, a new transient, ...):
 *   TETHER_PARAM_DEP  (key) args[i] is the target's instance pointer, with a
 *                     strong edge recorded from the completed instance, so
 *                     it stays valid as long as that instance (store it,
 *                     never free it);
 *   TETHER_PARAM_WEAK (key) args[i] is a new tether_weak * that the callback
 *                     owns whatever it returns (store it, release it with
 *                     tether_weak_release, e.g. in the instance's destructor);
 *                     a weak edge is recorded.
 * Because nothing else is reachable from it, a graph whose callbacks are all
 * declared can be described to a binding (tether_plan_describe).
 *
 * Order: as tether_on_complete, to which it is a sibling: the callbacks of an
 * instance, of either form, run in the order they were added. The targets of
 * one callback are resolved in declared order just before it is called.
 *
 * Failures fail the whole resolve, which then destroys what it made:
 *   a target that cannot be handed over (the callback is not called; the
 *     message starts `a declared target of completion callback #N of "K"`):
 *     TETHER_E_RETAIN_CYCLE when a DEP target's strong edge would close a
 *     cycle of strong edges (declare that target TETHER_PARAM_WEAK), and
 *     every status of tether_resolver_get (TETHER_E_NOT_FOUND, ...);
 *   the callback returning anything but TETHER_OK: TETHER_E_FACTORY_FAILED,
 *     with its tether_set_error message.
 *
 * @param r        the registration; borrowed.
 * @param fn       the callback; not NULL.
 * @param params   `param_count` targets, read during this call only (keys are
 *                 copied); may be NULL when `param_count` is 0.
 * @param context  passed to `fn`; NULL passes the registration's context.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`);
 *         TETHER_E_INVALID_ARGUMENT (NULL `fn`, NULL `params` with a count, a
 *         kind other than TETHER_PARAM_DEP or TETHER_PARAM_WEAK, a NULL or
 *         empty key).
 * Thread-safe.
 */
tether_status tether_on_complete_params(tether_registration *r, tether_complete_args_fn fn,
                                        const tether_param *params, size_t param_count, void *context);

/**
 * The weak-scope epoch of `r`, for a binding that hands its own object out
 * again while its own references hold it, after the library's instance of a
 * TETHER_SCOPE_WEAK registration died (Python's weak scope does): it must know
 * whether the library forgot that instance for another reason since.
 *
 * The epoch grows by one each time `r`'s weak cache lets go of the instance it
 * published for a reason other than the instance dying (tether_reset of
 * TETHER_SCOPE_WEAK, tether_set_scope, re-registering the key,
 * tether_container_free: each also moves the container's cache version word,
 * see tether_container_cache_versions), and by one each time an instance is
 * published into the cache so emptied. So it is odd while the cache is empty
 * that way (also before the first instance, and whenever the scope is not
 * TETHER_SCOPE_WEAK), even while it holds a published instance, alive or not;
 * the instance dying moves nothing. Reuse an object for a new instance of `r`
 * only while the epoch is even and the one read when the object was last
 * reused: read it while making the new instance (inside the factory), so a
 * forget that completes afterwards (even before the new instance is
 * published) moves it past the value read.
 *
 * @param r    the registration; borrowed.
 * @param out  receives the epoch; not NULL.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or stale `r`: after its key
 *         was registered again or its container freed, a binding makes a new
 *         object); TETHER_E_INVALID_ARGUMENT (NULL `out`).
 * Thread-safe; lock-free.
 */
tether_status tether_registration_weak_epoch(tether_registration *r, uint64_t *out);

/* ------------------------------------------------------------------------- */
/* Resolving                                                                  */
/* ------------------------------------------------------------------------- */

/**
 * Resolves `key`: returns a strong handle to its instance, building the whole
 * graph it needs (see DESIGN: constructor dependencies depth-first, then the
 * completion callbacks). No factory runs twice in one resolve. Any failure
 * destroys every instance this resolve created, exactly once, and caches
 * nothing.
 *
 * @param out  receives a strong handle you own (tether_ref_release); NULL on failure.
 * @return TETHER_OK;
 *   TETHER_E_INVALID_HANDLE (bad `c`), TETHER_E_INVALID_ARGUMENT (NULL key/out),
 *   TETHER_E_NOT_FOUND (`key` or a dependency has no registration; the message
 *     names the key and the path that needed it),
 *   TETHER_E_CYCLE (a constructor cycle; the message names the path),
 *   TETHER_E_RETAIN_CYCLE (a callback asked for a strong edge closing a cycle
 *     of strong edges),
 *   TETHER_E_FACTORY_FAILED (a factory returned NULL or a callback failed),
 *   TETHER_E_ARGUMENT_MISMATCH (the registration, or one it depends on,
 *     declares runtime arguments: use tether_resolve_args at the top level),
 *   TETHER_E_NO_MEMORY.
 * Thread-safe.
 */
tether_status tether_resolve(tether_container *c, const char *key, tether_ref **out);

/**
 * tether_resolve with runtime arguments for the top-level registration's
 * TETHER_PARAM_I64/F64/STR/PTR slots, in order. Strings are passed through
 * as-is (borrowed for the duration of the call).
 *
 * @param args       array of `arg_count` values; may be NULL when 0.
 * @return as tether_resolve, plus TETHER_E_ARGUMENT_MISMATCH when the count
 *         or a kind differs from the declared slots (the message says which).
 */
tether_status tether_resolve_args(tether_container *c, const char *key,
                                  const tether_value *args, size_t arg_count, tether_ref **out);

/**
 * Interns `key` once and returns its id for tether_resolve_key, which skips
 * string hashing. Ids are process-wide: the same key has the same id in every
 * container, and an id stays valid for the life of the process. Interning a
 * key does not register it.
 *
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad `c`);
 *         TETHER_E_INVALID_ARGUMENT (NULL/empty key, NULL out).
 * Thread-safe.
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

/**
 * tether_resolve_key and tether_ref_get in one call, for bindings where every
 * call across the boundary costs (ctypes: about 0.15 us each).
 *
 * @param instance  receives the instance `*out` holds (NULL on failure); valid
 *                  as long as `*out` or any other strong reference lives.
 * @param out       receives a strong handle you own (tether_ref_release).
 * @return what tether_resolve_key returns; TETHER_E_INVALID_ARGUMENT also for
 *         a NULL `instance`.
 * Thread-safe.
 */
tether_status tether_resolve_key_instance(tether_container *c, uint32_t key, void **instance, tether_ref **out);

/** A destructor call handed back by tether_resolve_key_collect: run `fn(instance, context)`. */
typedef struct tether_drop {
    tether_drop_fn fn;
    void *instance;
    void *context;
} tether_drop;

/** tether_resolve_key_collect flags: fail instead of waiting for the creation lock. */
#define TETHER_RESOLVE_NO_WAIT 1u
/** tether_resolve_key_collect flags: `io->instance` is an instance you keep alive; no handle when it is the published singleton. */
#define TETHER_RESOLVE_HELD 2u

/** The buffers of tether_resolve_key_collect, in one struct (one argument to pass). */
typedef struct tether_collect {
    tether_drop *drops;  /* in: `capacity` entries; may be NULL when `capacity` is 0 */
    size_t capacity;     /* in */
    size_t count;        /* out: entries stored in `drops` (also on failure) */
    void *instance;      /* out: the instance (NULL on failure); in too with TETHER_RESOLVE_HELD */
    tether_ref *out;     /* out: a strong handle you own, or NULL (see Result) */
} tether_collect;

/**
 * tether_resolve_key_instance for bindings that pay per call across the
 * boundary: it collects the drops of TETHER_DEFER_DROP registrations instead of
 * calling them, releases the result itself when that destroys it or when you
 * hold it, and can fail instead of blocking.
 *
 * Drops: every drop of a TETHER_DEFER_DROP registration that comes due on this
 * thread while the call runs is stored in `io->drops[0 .. io->count)`, in the order
 * they came due, on success and on failure alike (a failed resolve destroys
 * what it made). Run each of them exactly once, in order, after the call
 * (`drops[i].fn(drops[i].instance, drops[i].context)`). Once `io->capacity` entries
 * are stored, further drops run in place during the call, as without
 * collecting: every destructor runs exactly once whatever the capacity, only
 * its place and order change. A collecting call nested in another one (from a
 * factory, on the same thread) collects into its own buffer, which must not be
 * the outer call's.
 *
 * Result: if the call's reference to the result was the only strong one, its
 * registration is TETHER_DEFER_DROP and the buffer has room, the call releases
 * it: `io->out` is NULL, the instance is destroyed, and its drop is the first one
 * stored by the release; `io->instance` stays valid until you run that drop. (If
 * another thread upgrades a weak handle to the new instance in the meantime,
 * the instance lives on with that thread instead, and no drop for it is
 * stored.) Otherwise, unless Held below applies, as tether_resolve_key_instance,
 * `io->out` is a strong handle you own (tether_ref_release) and `io->instance`
 * lives at least as long.
 *
 * Waiting: with TETHER_RESOLVE_NO_WAIT, a resolve that must create a singleton-
 * or weak-scoped instance while another thread holds the creation lock fails
 * with TETHER_E_WOULD_BLOCK instead of waiting (it destroys what it made and
 * caches nothing; factories that ran will run again when you retry). Resolves
 * nested in the call on this thread (from factories, providers, callbacks)
 * fail the same way, unless they are tether_resolve_key_collect calls without
 * the flag; a call that fails because a nested one did reports
 * TETHER_E_WOULD_BLOCK too. For a caller that holds a lock the creation
 * lock's holder may need (Python's GIL): call with the flag keeping that lock,
 * and on TETHER_E_WOULD_BLOCK release it and retry without the flag.
 *
 * Held: with TETHER_RESOLVE_HELD, `io->instance` is read first: an instance
 * pointer you keep valid yourself, during the call and for as long as you use
 * it afterwards (by a strong handle you own, or, in a binding, by holding the
 * object the pointer stands for). If that pointer is `key`'s published
 * singleton (as a resolve from `c` would find it: a cached hit, answered by
 * comparing pointers only: no handle, no loan, nothing written), the call keeps
 * no handle for you: `io->out` is NULL, `io->instance` is your pointer and
 * `io->count` is 0. Any other result, even one equal to your pointer (e.g. a
 * singleton that an outer resolve on this thread is still building, not
 * published yet), comes as without the flag. So `io->out` NULL with your
 * pointer and no drop means exactly: it was the published singleton at the
 * moment of the comparison (see tether_container_cache_versions for how long
 * that lasts). The call never returns a pointer that neither the library nor
 * you keep alive: another thread may unpublish the singleton (tether_reset, a
 * scope change, re-registering, tether_container_free) and its destructor may
 * run at any moment after the comparison (on that thread, or here if
 * collected), which is harmless exactly when you keep the pointer valid as
 * promised. (A pointer you do not keep valid comes back as invalid as it went
 * in: the flag is no way to borrow a singleton without a handle.) Use it to
 * re-resolve a key whose instance you already hold, e.g. to learn whether a
 * cached singleton was replaced, without a tether_ref_release.
 *
 * @param flags  0, or TETHER_RESOLVE_NO_WAIT and/or TETHER_RESOLVE_HELD.
 * @param io     the caller's buffers: `drops` and `capacity` read (and
 *               `instance` with TETHER_RESOLVE_HELD), the rest written.
 * @return what tether_resolve_key_instance returns; TETHER_E_WOULD_BLOCK (see
 *         Waiting); TETHER_E_INVALID_ARGUMENT also for a NULL `io`, unknown
 *         flags, TETHER_RESOLVE_HELD with a NULL `io->instance`, or NULL
 *         `io->drops` with a capacity (then no resolve happens, `io->count`
 *         is 0 and `io->instance` NULL).
 * Thread-safe.
 */
tether_status tether_resolve_key_collect(tether_container *c, uint32_t key, unsigned flags, tether_collect *io);

/* ------------------------------------------------------------------------- */
/* Strong and weak handles                                                    */
/* ------------------------------------------------------------------------- */

/**
 * The instance a strong handle holds. The pointer stays valid as long as the
 * handle (or any other strong reference to the instance) exists.
 * @return the instance; NULL if `ref` is not a live strong handle
 *         (tether_last_status() is then TETHER_E_INVALID_HANDLE).
 * Thread-safe.
 */
void *tether_ref_get(const tether_ref *ref);

/**
 * A second strong handle to the same instance; you own it.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out).
 * Thread-safe.
 */
tether_status tether_ref_clone(tether_ref *ref, tether_ref **out);

/**
 * Releases a strong handle. If it was the instance's last strong reference,
 * the destructor runs now (exactly once), then the instance's own strong edges
 * are released (dependents die before their dependencies).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (NULL, already released, not a strong handle).
 * Thread-safe.
 */
tether_status tether_ref_release(tether_ref *ref);

/**
 * A weak handle to the instance `ref` holds. It does not keep the instance alive.
 * @param out receives the weak handle; you own it (tether_weak_release).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out).
 * Thread-safe.
 */
tether_status tether_ref_downgrade(tether_ref *ref, tether_weak **out);

/**
 * Upgrades a weak handle to a new strong handle (you own it).
 * @return TETHER_OK; TETHER_E_EXPIRED if the instance is gone (`*out` = NULL);
 *         TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out).
 * Thread-safe.
 */
tether_status tether_weak_upgrade(tether_weak *w, tether_ref **out);

/**
 * Releases a weak handle (from tether_ref_downgrade, a TETHER_PARAM_WEAK slot
 * or tether_resolver_get_weak). Never runs a destructor.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (NULL, already released, not a weak handle).
 * Thread-safe.
 */
tether_status tether_weak_release(tether_weak *w);

/* ------------------------------------------------------------------------- */
/* Inside callbacks                                                           */
/* ------------------------------------------------------------------------- */

/**
 * Resolves `key` within the graph of the current resolve (graph-scoped
 * instances are shared with it) and records a strong edge from the instance
 * being completed (or, for a factory with a TETHER_PARAM_RESOLVER slot, the
 * instance being built) to the result, so `*out` stays valid as long as that
 * instance. Store the pointer; do not free it.
 *
 * @return TETHER_OK;
 *   TETHER_E_WRONG_CONTEXT (the resolver's callback has returned, or another
 *     thread is using it),
 *   TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL key/out),
 *   TETHER_E_RETAIN_CYCLE (the edge would close a cycle of strong edges: the
 *     message names it; take tether_resolver_get_weak for the back edge),
 *   TETHER_E_CYCLE (from inside a factory: `key` is being constructed),
 *   and every status of tether_resolve for what it had to build.
 * A failure here does not fail the resolve by itself; returning it from the
 * callback does.
 */
tether_status tether_resolver_get(tether_resolver *r, const char *key, void **out);

/**
 * Like tether_resolver_get but records a weak edge and hands out a new weak
 * handle that you own: store it in any object of the graph and release it in
 * that object's destructor. While the resolve is running every instance it
 * created stays alive, so the handle never reads as expired before the
 * top-level resolve returns.
 *
 * @return as tether_resolver_get, except TETHER_E_RETAIN_CYCLE never happens.
 */
tether_status tether_resolver_get_weak(tether_resolver *r, const char *key, tether_weak **out);

/**
 * tether_resolver_get_weak that also gives the instance's pointer, and makes
 * the weak handle only if `out` is non-NULL: a binding that keeps its own weak
 * reference to the object behind the pointer saves the upgrade, get and
 * release calls it would otherwise need to find it. The same weak edge is
 * recorded either way.
 *
 * @param instance  receives the instance: valid until the top-level resolve
 *                  returns, afterwards only while something holds it.
 * @param out       nullable; receives a weak handle you own (tether_weak_release).
 * @return as tether_resolver_get_weak; TETHER_E_INVALID_ARGUMENT also for a
 *         NULL `instance`.
 */
tether_status tether_resolver_get_weak_instance(tether_resolver *r, const char *key, void **instance,
                                                tether_weak **out);

/**
 * A new strong handle to `instance`, an instance of the current resolve (one
 * the factory or callback received as a dependency, or got from
 * tether_resolver_get). For bindings whose objects outlive the box that
 * created them (a garbage-collected language keeping a native dependency):
 * unlike resolving the key again, it never builds a second instance of a
 * transient key.
 *
 * @param out  receives a strong handle you own (tether_ref_release).
 * @return TETHER_OK; TETHER_E_WRONG_CONTEXT (callback returned, other thread);
 *         TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL instance/out);
 *         TETHER_E_NOT_FOUND (`instance` is not an instance of this resolve).
 */
tether_status tether_resolver_ref(tether_resolver *r, void *instance, tether_ref **out);

/* ------------------------------------------------------------------------- */
/* Providers                                                                  */
/* ------------------------------------------------------------------------- */

/**
 * Makes a context-free C function pointer (a libffi closure) that resolves `key`
 * from `c` on its first call and holds the instance strongly afterwards,
 * returning the same pointer on every call: for legacy C APIs that take a
 * callback without a user-data argument. A failing call returns NULL and sets
 * the last error/status (the next call tries again). Once `c` is freed every
 * call returns NULL with TETHER_E_INVALID_HANDLE.
 *
 * @param out  receives the provider; you own it (tether_provider_free).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL
 *         key/out); TETHER_E_NO_MEMORY (closure pages refused by the system).
 * Thread-safe, and so is calling the provider.
 */
tether_status tether_make_provider(tether_container *c, const char *key, tether_provider *out);

/**
 * Frees a provider made by tether_make_provider and releases what it holds.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE if `p` is not a live provider
 *         from tether_make_provider (lazy slots' providers are freed with
 *         their instance and are refused here).
 */
tether_status tether_provider_free(tether_provider p);

/* ------------------------------------------------------------------------- */
/* Plans, for bindings that run their own factories                           */
/* ------------------------------------------------------------------------- */

/** One step of a described plan: a factory call (see tether_plan_describe). */
typedef struct tether_plan_step {
    tether_registration *registration; /* the handle tether_register/_ex returned; NULL if none was
                                          asked for (out == NULL) or the key was re-registered meanwhile */
    size_t first_input;                /* its slots' inputs: inputs[first_input .. first_input + slot_count) */
    size_t slot_count;                 /* its declared param count */
    ptrdiff_t parent;                  /* the step whose factory asked for it first; -1 for the root */
} tether_plan_step;

/** An input of tether_plan_describe: the slot is a TETHER_PARAM_CONTEXT (the registration's context). */
#define TETHER_PLAN_INPUT_CONTEXT (-1)
/** An input of tether_plan_describe: the slot is a TETHER_PARAM_RESOLVER. */
#define TETHER_PLAN_INPUT_RESOLVER (-2)

/** A completion callback of a described plan (see tether_plan_describe). */
typedef struct tether_plan_completion {
    size_t step;          /* the step whose instance it completes */
    size_t number;        /* which callback of that step's registration: 0 for the first added */
    size_t first_target;  /* its targets' steps: inputs[first_target .. first_target + target_count) */
    size_t target_count;  /* its declared param count, in declared order */
} tether_plan_completion;

/**
 * Describes the recorded plan of `key` resolved from `c`: the factory calls
 * (and declared completion callbacks) a resolve would make, for a binding that
 * calls its own factories (in its own language) without a call into the
 * library per resolve. The library stays the source of truth for the graph's
 * shape; the binding only replays it.
 *
 * Steps come in post-order, root last: exactly the order in which a resolve
 * calls the factories. Step i's slots receive, in declared order,
 * `inputs[steps[i].first_input + s]`: the index of the (earlier) step whose
 * instance that slot gets, TETHER_PLAN_INPUT_CONTEXT, or
 * TETHER_PLAN_INPUT_RESOLVER. A graph-scoped registration has one step, named
 * by every slot that gets its instance; a transient one has a step per slot.
 * `parent` gives the path a failure message names (`factory for "K" returned
 * NULL: reason (while resolving "Root" -> ... -> "K")`, the path only when the
 * failing step is not the root).
 *
 * Completion callbacks (only with a non-NULL `completion_count`): after the
 * last factory, call `completions[0 .. *completion_count)` in that order
 * (exactly the order a resolve runs them: by step, then in the order each
 * registration's callbacks were added), each with the instance of its `step`
 * and, for its targets in declared order, the instance of step
 * `inputs[first_target + t]` (as a strong reference for a TETHER_PARAM_DEP
 * target, a weak one for TETHER_PARAM_WEAK: the kinds are the registration's
 * own declaration). Targets' inputs follow all the steps' inputs in `inputs`,
 * and `*input_count` counts both. A callback that fails fails the resolve as
 * the library's would: `completion callback #<number + 1> of "K" failed:
 * <reason>`, TETHER_E_FACTORY_FAILED, everything the replay made destroyed.
 *
 * Only plain plans are described: every step is made by the resolve (graph or
 * transient scope: no singleton- or weak-scoped step), every slot is DEP,
 * CONTEXT or RESOLVER (no WEAK, LAZY, WEAK_LAZY or runtime argument), every
 * dependency exists and there is no constructor cycle, at most 64 steps; and
 * completion callbacks only if `completion_count` is not NULL, every callback
 * in the graph is declared (tether_on_complete_params, or an args_fn entry of
 * tether_register_ex), every target is a graph-scoped step of the build (not
 * one the resolve would build for it or take from a cache), and the strong
 * edges of factories and DEP targets close no cycle. For any other graph, and
 * in a container made with TETHER_NO_PLANS=1, there is no plan to hand out:
 * TETHER_OK with every count 0 (resolve it with tether_resolve_key, which
 * also reports what is wrong, e.g. TETHER_E_RETAIN_CYCLE). A RESOLVER slot is
 * described, not declined: the binding makes every instance of the graph
 * itself, so nothing needs a resolver (the library's own replays still build
 * such graphs step by step).
 *
 * A description stays valid while the container's configuration is unchanged:
 * read the sum of the words tether_container_versions gives *before* this
 * call, and replay only while that sum is the same. The binding must replay
 * with the semantics of a resolve: call the factories in step order, fail as
 * the resolve would (destroying what it made, caching nothing), run no factory
 * twice.
 *
 * @param c                 the container to resolve from; borrowed.
 * @param key               an id from tether_intern.
 * @param steps             array of `step_cap` steps the call fills; may be NULL when `step_cap` is 0.
 * @param inputs            array of `input_cap` inputs the call fills; may be NULL when `input_cap` is 0.
 * @param completions       array of `completion_cap` records the call fills; may be NULL when
 *                          `completion_cap` is 0.
 * @param step_count        receives the plan's step count (0: no plan); not NULL.
 * @param input_count       receives the plan's input count; not NULL.
 * @param completion_count  receives the plan's completion count; NULL when the caller cannot run
 *                          completion callbacks: then no plan that has any is described.
 * The registration handles stay valid until their key is re-registered or
 * the container freed (a later configuration change tells you).
 * @return TETHER_OK (with or without a plan);
 *   TETHER_E_INVALID_HANDLE (bad or freed `c`);
 *   TETHER_E_INVALID_ARGUMENT (NULL `step_count` or `input_count`, NULL buffer
 *     with a capacity, an id tether_intern never returned);
 *   TETHER_E_NOT_FOUND (`key` has no registration visible from `c`);
 *   TETHER_E_BUFFER_TOO_SMALL (the plan has more steps, inputs or completions
 *     than the buffers hold: nothing is written but the counts, which say what
 *     is needed; call again with buffers that large).
 * Thread-safe.
 */
tether_status tether_plan_describe(tether_container *c, uint32_t key, tether_plan_step *steps, size_t step_cap,
                                   int32_t *inputs, size_t input_cap, tether_plan_completion *completions,
                                   size_t completion_cap, size_t *step_count, size_t *input_count,
                                   size_t *completion_count);

/**
 * The addresses of the version words of `c` and of its parents (`c` first,
 * then its parent, and so on up the chain), for a binding that must check
 * per resolve, without a call, that a plan from tether_plan_describe is still
 * valid: the plan is valid while the sum of the words is the one read before
 * describing it.
 *
 * Each word is an aligned `size_t` that the library increases (with release
 * ordering; it never decreases) on every configuration change of its
 * container: a registration, scope, context or completion callback change,
 * tether_container_free (not tether_reset: see
 * tether_container_cache_versions). A plain aligned load reads it on the
 * platforms Tether supports (x86-64 and AArch64); read it as volatile or
 * relaxed-atomic.
 * The words stay allocated for the life of the process: reading one after its
 * container was freed is safe (the word may then belong to a newer container,
 * and since words only grow, a sum read before the free never comes back).
 * Never write to them.
 *
 * @param c      the container; borrowed.
 * @param words  array of `cap` pointers the call fills; may be NULL when `cap` is 0.
 * @param count  receives the number of words (1 + the number of parents); not NULL.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or freed `c`);
 *   TETHER_E_INVALID_ARGUMENT (NULL `count`, NULL `words` with a `cap`);
 *   TETHER_E_BUFFER_TOO_SMALL (more words than `cap`: only *count is written;
 *     call again with that many).
 * Thread-safe.
 */
tether_status tether_container_versions(tether_container *c, const volatile size_t **words, size_t cap, size_t *count);

/**
 * The addresses of the cache version words of `c` and of its parents (`c`
 * first, as tether_container_versions), for a binding that keeps a singleton
 * it saw the library hand out and must know, per resolve and without a call,
 * that it is still the one a resolve would return.
 *
 * Each word grows (release ordering; never decreases) on every configuration
 * change of its container (whenever its version word does) and every time
 * its container lets go of a published singleton: tether_reset of
 * TETHER_SCOPE_SINGLETON (once per singleton it drops; nothing cached,
 * nothing moves), a scope change, re-registering the key,
 * tether_container_free. The word moves after the singleton was unpublished.
 * It also moves each time the weak cache of a registration lets go of the
 * instance it published, alive or not (tether_reset of TETHER_SCOPE_WEAK, once
 * per registration that had one; a scope change; re-registering the key;
 * tether_container_free: see tether_registration_weak_epoch), after the
 * forgetting, and when a resolve made a weak-scope instance that the
 * registration does not cache (replaced or its scope changed meanwhile): a
 * binding serving its own weak-scope objects checks the word the same way.
 * So: read the sum of the words of `c`, then resolve from `c`; if that
 * resolve answered a published singleton (tether_resolve_key_collect with
 * TETHER_RESOLVE_HELD: `io->out` NULL, `io->instance` the held pointer, no
 * drop), a resolve of the same key from `c` returns that same instance while
 * the sum is still the one read before: every change that completed before
 * the sum is read again moves it. Resets move no version word (a described
 * plan never has a singleton step), so they cost described plans nothing.
 * Start from a held answer, not from the resolve that made the singleton: a
 * resolve nested in one that is still building it returns it unpublished
 * (that outer resolve may yet fail, and no other thread may see it before).
 *
 * Same memory rules as tether_container_versions: read as volatile or
 * relaxed-atomic, never write, safe to read after the container was freed. A
 * held resolve orders your loads of the words made before it ahead of its
 * comparison (an acquire fence), so plain loads before the call are enough.
 *
 * @param c      the container; borrowed.
 * @param words  array of `cap` pointers the call fills; may be NULL when `cap` is 0.
 * @param count  receives the number of words (1 + the number of parents); not NULL.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or freed `c`);
 *   TETHER_E_INVALID_ARGUMENT (NULL `count`, NULL `words` with a `cap`);
 *   TETHER_E_BUFFER_TOO_SMALL (more words than `cap`: only *count is written;
 *     call again with that many).
 * Thread-safe.
 */
tether_status tether_container_cache_versions(tether_container *c, const volatile size_t **words, size_t cap,
                                              size_t *count);

/* ------------------------------------------------------------------------- */
/* Caches, validation, pictures                                               */
/* ------------------------------------------------------------------------- */

/**
 * Empties the cache of `scope` in `c` (not in its parents): cached singletons
 * are released (destroyed unless still held), weak-scope instances are
 * forgotten (the next resolve makes a new one). GRAPH and TRANSIENT have no
 * cache between resolves: TETHER_OK, nothing happens. Each singleton dropped,
 * and each registration whose weak cache held a published instance (alive or
 * not), moves `c`'s cache version word (tether_container_cache_versions), not
 * its version word; the latter also moves the registration's weak epoch
 * (tether_registration_weak_epoch).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (bad scope).
 * Thread-safe.
 */
tether_status tether_reset(tether_container *c, tether_scope scope);

/**
 * Checks the declared graph of everything resolvable from `c` without running
 * a factory: every missing key (with who needs it) and every constructor cycle
 * (with its path). Lazy slots do not count as constructor edges.
 * The report, one problem per line, is in tether_last_error().
 * @return TETHER_OK (nothing found); TETHER_E_NOT_FOUND (at least one missing
 *         key); TETHER_E_CYCLE (cycles but no missing key);
 *         TETHER_E_INVALID_HANDLE.
 * Thread-safe.
 */
tether_status tether_validate(tether_container *c);

/**
 * Writes the declared graph as Graphviz DOT: one node per registration
 * visible from `c` (label: key and scope), edges styled by kind (strong
 * solid, weak dashed, lazy dotted, weak-lazy dotted with a hollow head),
 * missing keys as red dashed nodes, constructor-cycle edges in red.
 * @param out  receives a NUL-terminated string you own: tether_string_free.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE; TETHER_E_INVALID_ARGUMENT (NULL out);
 *         TETHER_E_NO_MEMORY.
 * Thread-safe.
 */
tether_status tether_export_dot(tether_container *c, char **out);

/**
 * Frees a string returned by the library (tether_export_dot). NULL is ignored.
 */
void tether_string_free(char *s);

/* The library reads these structs by offset: a compiler that laid them out
   differently would fail here instead of misbehaving at run time. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
#ifdef __cplusplus
#define TETHER_ASSERT_(cond, msg) static_assert(cond, msg)
#else
#define TETHER_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
TETHER_ASSERT_(sizeof(void *) == 8, "Tether supports 64-bit platforms");
TETHER_ASSERT_(sizeof(tether_param) == 16 && offsetof(tether_param, key) == 8, "tether_param layout");
TETHER_ASSERT_(sizeof(tether_value) == 16 && offsetof(tether_value, as) == 8, "tether_value layout");
TETHER_ASSERT_(sizeof(tether_drop) == 24 && offsetof(tether_drop, context) == 16, "tether_drop layout");
TETHER_ASSERT_(offsetof(tether_collect, count) == 16 && offsetof(tether_collect, out) == 32, "tether_collect layout");
TETHER_ASSERT_(sizeof(tether_plan_step) == 32 && offsetof(tether_plan_step, first_input) == 8 &&
               offsetof(tether_plan_step, parent) == 24, "tether_plan_step layout");
TETHER_ASSERT_(offsetof(tether_registration_options, flags) == 4 &&
               offsetof(tether_registration_options, context) == 8 &&
               offsetof(tether_registration_options, completion_count) == 40 &&
               offsetof(tether_registration_options, variadic_fixed) == 48 &&
               offsetof(tether_registration_options, callbacks) == 56 &&
               offsetof(tether_registration_options, callback_count) == 64, "tether_registration_options layout");
TETHER_ASSERT_(sizeof(tether_plan_completion) == 32 && offsetof(tether_plan_completion, first_target) == 16,
               "tether_plan_completion layout");
TETHER_ASSERT_(sizeof(tether_completion) == 40 && offsetof(tether_completion, params) == 16 &&
               offsetof(tether_completion, context) == 32, "tether_completion layout");
#undef TETHER_ASSERT_
#endif

#ifdef __cplusplus
}
#endif

#endif /* TETHER_H */
