/*
 * tether.h — the public header of Tether, a dependency-injection container
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
 *  - Handles (tether_container, _registration, _ref, _weak, _resolver) are
 *    opaque generation-counted ids, never dereferenced: a NULL, released, stale,
 *    foreign or wrong-kind handle gets TETHER_E_INVALID_HANDLE (a released one
 *    never equals a later one: a slot is retired after 2^32 uses).
 *
 *  - Strings passed in (keys, messages) are borrowed for the duration of the
 *    call only; the library copies what it keeps. Keys are UTF-8, non-empty.
 *
 *  - Thread safety. Every function may be called from any thread at any time.
 *    Cached singleton and weak-scope hits take no container-wide lock, and two
 *    threads hitting the same cached singleton do not slow each other down.
 *    Letting go of cached singletons (tether_reset, a scope change,
 *    re-registering a key, tether_container_free) costs more than a hit: it
 *    waits until no thread is half-way through reading the cache. Handles
 *    handed out before stay valid until released.
 *    A resolve that has to create singleton- or weak-scoped instances holds
 *    the process-wide creation lock (re-entrant on its own thread) until it has
 *    published them, so such instances are created exactly once even when
 *    threads race. Consequence: a factory must not block waiting for *another
 *    thread* that is itself creating singleton- or weak-scoped instances.
 *
 *  - Freeing while in use. tether_container_free may run while other threads
 *    (or callbacks further up the same thread) are inside calls that use the
 *    container. A call under way either completes as if it had run before the
 *    free or fails with TETHER_E_INVALID_HANDLE; a call made after the free
 *    fails with TETHER_E_INVALID_HANDLE. Nobody waits for anybody: what calls
 *    under way may still read is released when the last of them returns.
 *
 *  - Language bindings (Python's package, or yours) use a further protocol,
 *    declared in tether_binding.h. Programs never need it.
 *
 *  - Callbacks (factories, destructors, completion callbacks) may call back into
 *    the library, including resolving from the same container; resolving a key
 *    being constructed on the same thread (a factory asking for itself, by any
 *    call or provider) is TETHER_E_CYCLE naming the path.
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
/** What a LAZY/WEAK_LAZY slot and tether_make_provider hand out. A call keeps its
 *  owner (the instance it was handed to) alive; once the owner is gone (also during
 *  the call) or the provider freed, a call returns NULL + TETHER_E_INVALID_HANDLE
 *  (until its address serves a new provider, after 1,024 others were freed). */
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
 * the top): calls made after this one, and by destructors it runs, fail with
 * TETHER_E_INVALID_HANDLE ("the container was already freed"); a call under way at the time either fails
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
 * Because the targets are declared, tether_validate and tether_export_dot see
 * them before anything runs.
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

/* ------------------------------------------------------------------------- */
/* Providers                                                                  */
/* ------------------------------------------------------------------------- */

/**
 * Makes a context-free C function pointer (a libffi closure) that resolves `key`
 * from `c` on its first call and holds the instance strongly afterwards,
 * returning the same pointer on every call: for legacy C APIs that take a
 * callback without a user-data argument. A failing call returns NULL and sets
 * the last error/status (the next call tries again). Once `c` or the provider
 * is freed every call returns NULL with TETHER_E_INVALID_HANDLE.
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
/* Caches, validation, pictures                                               */
/* ------------------------------------------------------------------------- */

/**
 * Empties the cache of `scope` in `c` (not in its parents): cached singletons
 * are released (destroyed unless still held), weak-scope instances are
 * forgotten (the next resolve makes a new one). GRAPH and TRANSIENT have no
 * cache between resolves: TETHER_OK, nothing happens.
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
TETHER_ASSERT_(offsetof(tether_registration_options, flags) == 4 &&
               offsetof(tether_registration_options, context) == 8 &&
               offsetof(tether_registration_options, completion_count) == 40 &&
               offsetof(tether_registration_options, variadic_fixed) == 48 &&
               offsetof(tether_registration_options, callbacks) == 56 &&
               offsetof(tether_registration_options, callback_count) == 64, "tether_registration_options layout");
TETHER_ASSERT_(sizeof(tether_completion) == 40 && offsetof(tether_completion, params) == 16 &&
               offsetof(tether_completion, context) == 32, "tether_completion layout");
#undef TETHER_ASSERT_
#endif

#ifdef __cplusplus
}
#endif

#endif /* TETHER_H */
