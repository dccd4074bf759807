/*
 * tether_binding.h — the protocol for language bindings (Python's ctypes
 * package is one): how a binding that runs its own factories asks the library
 * for plans, cached instances, the destructor calls it owes, and the words
 * that tell it when what it learned is out of date.
 *
 * This is not the API for programs that use Tether: they need tether.h only.
 * Like SQLite's sqlite3ext.h or libgit2's git2/sys headers, what is here may
 * change between minor versions. A binding checks TETHER_BINDING_API_VERSION
 * at compile time (or the same number it was written against, at load time,
 * with tether_binding_api_version()) and refuses a library that differs.
 *
 * The conventions of tether.h (statuses, last error, handles, borrowed strings,
 * thread safety) hold here too. What this protocol adds:
 *
 *  - Cached singleton hits without a handle. A resolve that answers from a
 *    singleton cache may borrow the cache's reference instead of taking one;
 *    the borrowed handle is released like any other. Dropping a cached
 *    singleton (tether_reset, a scope change, re-registering, freeing the
 *    container) waits until no thread is between reading the cache and taking
 *    its borrow (on Linux with membarrier(2), registered on first use; where it
 *    is missing, or TETHER_NO_MEMBARRIER is "1" when the library first needs
 *    it, the hit path uses fences instead: slower, same semantics).
 *
 *  - Version words. A binding that keeps what it learned from the library
 *    (plans, singleton pointers) checks words the library moves whenever that
 *    knowledge may be stale (tether_container_versions,
 *    tether_container_cache_versions, tether_registration_weak_epoch). Reading
 *    a word is a plain load; no call. For a singleton it serves itself, one
 *    word and one token say it all: tether_container_hit_word.
 *
 *  - Tracing. Setting or removing a trace hook (tether_set_trace) moves the
 *    container's version and cache words. While one is set, the container's
 *    resolves must all reach the library, which reports every step: it
 *    describes no plan for it and never answers TETHER_RESOLVE_HELD with "the
 *    published singleton", so what a binding would serve itself stops.
 *
 *  - TETHER_NO_PLANS. When this environment variable is "1" at the time a
 *    container is created, that container (and every child made from it later)
 *    builds every graph step by step and never records a plan (for comparisons and diagnosis); bindings that
 *    replay plans must not replay for such containers (tether_plan_describe
 *    says so by describing nothing). A child with nothing registered in it
 *    builds exactly what its parent builds, so a binding may run the parent's
 *    plan for it.
 */
#ifndef TETHER_BINDING_H
#define TETHER_BINDING_H

#include "tether.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this protocol. Any change to it, compatible or not, moves it. */
#define TETHER_BINDING_API_VERSION 7

/**
 * The TETHER_BINDING_API_VERSION the library was built with. A binding that
 * loads the library at run time (ctypes, cffi's ABI mode) compares it with the
 * number it was written against and refuses to run on a mismatch.
 * Thread-safe; never fails.
 */
int tether_binding_api_version(void);

/**
 * tether_options.flags (and tether_registration_options.flags): `drop` may be handed back instead of called. While a
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

/* Superseded for programs by tether_options + tether_register_with (tether.h); kept for
   bindings, which set TETHER_DEFER_DROP with it.
   Zero it; `callbacks`/`callback_count` are read only with TETHER_OPTIONS_CALLBACKS. */
typedef struct tether_registration_options {
    tether_scope scope;
    uint32_t flags;                         /* 0, TETHER_DEFER_DROP, TETHER_OPTIONS_CALLBACKS, TETHER_OVERRIDE, TETHER_DECORATE */
    void *context;
    tether_drop_fn drop;
    const tether_complete_fn *completions;  /* `completion_count` resolver-form callbacks, run first */
    void *const *completion_contexts;       /* nullable, else one context per callback */
    size_t completion_count, variadic_fixed;
    const tether_completion *callbacks;
    size_t callback_count;
} tether_registration_options;
#define TETHER_OPTIONS_CALLBACKS 2u
/** Superseded by tether_register_with: the same with the struct above. Thread-safe. */
tether_status tether_register_ex(tether_container *c, const char *key, tether_fn factory,
                                 const tether_param *params, size_t param_count,
                                 const tether_registration_options *options, tether_registration **out);


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

/** tether_resolve_key_collect flags: fail instead of waiting for another thread creating a shared instance. */
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
    size_t token;        /* out: with TETHER_RESOLVE_HELD answered by the published singleton, the hit
                            token it holds under (see tether_container_hit_word); else 0 */
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
 * Waiting: with TETHER_RESOLVE_NO_WAIT, a resolve that needs a singleton-,
 * weak- or container-scoped instance another thread is creating fails with
 * TETHER_E_WOULD_BLOCK instead of waiting for it. Such instances reached
 * through constructor dependencies are checked before any factory runs; one
 * reached later (from a lazy provider, a resolver, a completion callback)
 * fails the resolve then (it destroys what it made and caches nothing;
 * factories that ran will run again when you retry). Resolves
 * nested in the call on this thread (from factories, providers, callbacks)
 * fail the same way, unless they are tether_resolve_key_collect calls without
 * the flag; a call that fails because a nested one did reports
 * TETHER_E_WOULD_BLOCK too. For a caller that holds a lock the creating
 * thread may need (Python's GIL): call with the flag keeping that lock,
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
 * cached singleton was replaced, without a tether_ref_release. Such an answer
 * also sets `io->token` (never 0; 0 for every other answer): the value of
 * `c`'s hit word (tether_container_hit_word) under which it holds, read by the
 * library before its comparison.
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
/* Lazy slots outliving their instance                                       */
/* ------------------------------------------------------------------------- */

/** Told once what a lazy slot's provider answers from the graph it was filled in. */
typedef void (*tether_provider_watch_fn)(void *context, tether_status status, void *instance);

/**
 * For a binding whose own lazy object outlives the slot's instance (Python's
 * tether.lazy): calls `fn(context, status, instance)` once, when the graph the
 * slot `p` was filled in has its instance of the slot's key (now, during this
 * call, if it has it already): TETHER_OK and that instance's pointer, which the
 * binding maps to its own object then (it is alive during the call); or, for a
 * LAZY slot whose graph instance holds the slot's owner strongly,
 * TETHER_E_RETAIN_CYCLE and NULL, with the refusal as this thread's last error
 * (tether_last_error_parts: TETHER_FIX_WEAK_LAZY) for the binding to raise on
 * its object's calls. Never called when the graph has no instance of the key
 * (a call resolves it anew) or the slot goes first. `fn` runs on the resolving
 * thread, inside the resolve: it must not resolve, and must not block.
 * A later watch of the same slot replaces the earlier one.
 * @param p  a lazy slot's provider, during the factory call that received it.
 * @return TETHER_OK; TETHER_E_INVALID_ARGUMENT (`fn` NULL);
 *         TETHER_E_INVALID_HANDLE (`p` is not a live provider). Thread-safe.
 */
tether_status tether_provider_watch(tether_provider p, tether_provider_watch_fn fn, void *context);

/* ------------------------------------------------------------------------- */
/* Errors in the binding's language                                           */
/* ------------------------------------------------------------------------- */

/** Which fix a failure's message proposes (tether_error_parts.fix). */
typedef enum tether_fix {
    TETHER_FIX_NONE = 0,     /* nothing specific: show tether_last_error() as it is */
    TETHER_FIX_REGISTER,     /* `key` has no registration (`path` needed it): register it */
    TETHER_FIX_BREAK_CYCLE,  /* constructor cycle `path` (first key repeated last): make one edge
                                lazy or set it in a completion callback */
    TETHER_FIX_WEAK_EDGE,    /* a resolver's strong edge `key` -> `target` would close the retain
                                cycle `path`: take that edge weakly */
    TETHER_FIX_WEAK_TARGET,  /* the same for a declared completion target: declare it weak */
    TETHER_FIX_FACTORY,      /* the factory of `key` failed (`reason`) while resolving `path` */
    TETHER_FIX_CALLBACK,     /* completion callback #`callback` of `callback_of` failed (`reason`) */
    TETHER_FIX_RECURSION,    /* resolves of `key` nested too deep on one thread: break the loop
                                with a completion callback */
    TETHER_FIX_PROVIDE_VALUE, /* `key` is a declared value (tether_declare_value) that no container
                                on the way provides (`path` needed it): provide it in a child */
    TETHER_FIX_UNFINISHED,   /* a nested resolve (`path`) asked for `key`, made by a resolve further
                                out on this thread that has not finished: take it from the
                                completion callback's resolver or as a dependency */
    TETHER_FIX_WEAK_LAZY,    /* a strong lazy slot of `key` on `target` whose graph instance holds
                                `key` strongly closes the retain cycle `path` (first key repeated
                                last): declare the slot weak-lazy */
    TETHER_FIX_RUNTIME_ARGUMENTS /* `key` takes runtime arguments and cannot be a dependency (of
                                `path`'s last key): declare the slot a factory slot
                                (TETHER_FACTORY) and build it with arguments from there */
} tether_fix;

/** The parts of the last error's message (tether_last_error_parts). */
typedef struct tether_error_parts {
    tether_status status;    /* as tether_last_status() */
    tether_fix fix;
    const char *key;         /* the key the fix is about, or NULL */
    const char *target;      /* TETHER_FIX_WEAK_EDGE/_TARGET/_LAZY: the edge's target key, else NULL */
    const char *const *path; /* `path_count` keys, root first (who needed `key`, or the cycle) */
    size_t path_count;
    size_t path_omitted;     /* keys of a long path left out between its first 3 and the rest */
    const char *reason;      /* what the failing factory/callback said (tether_set_error), or NULL */
    const char *callback_of; /* key whose completion callback failed, or whose declared target
                                (`callback` > 0) or callback (`callback` 0, fix REGISTER) needed
                                `key`; else NULL */
    size_t callback;         /* that callback's number, from 1; 0 if none */
} tether_error_parts;

/**
 * The parts tether_last_error() is composed of, for a binding that renders the
 * fix in its own terms (Python says `tether.lazy(...)` where C says
 * TETHER_LAZY) instead of showing C function names. The library composes
 * every message; a binding must not copy its wording, only render these
 * parts, and show tether_last_error() itself for TETHER_FIX_NONE. A key
 * longer than 80 bytes keeps its first and last 40 around "...", a reason
 * longer than 400 its first and last 200; a path longer than 7 keys keeps its
 * first 3 and last 3 (`path_omitted` says how many are left out). A nested failure keeps the parts
 * of its cause: a declared target's failure has that target's fix, with
 * `callback` and `callback_of` naming the callback.
 *
 * @param out  receives the parts; its strings belong to the library and stay
 *             valid until the next tether_last_error_parts call or failure on
 *             this thread. Before any failure: status TETHER_OK, TETHER_FIX_NONE.
 * @return TETHER_OK; TETHER_E_INVALID_ARGUMENT (NULL `out`).
 * Thread-local, so thread-safe.
 */
tether_status tether_last_error_parts(tether_error_parts *out);

/**
 * The parts of problem `index` (from 0, in the report's order: line `index` + 2
 * of tether_last_error()) of this thread's last tether_validate, so a binding
 * renders each problem's fix in its own terms: constructor cycles
 * (TETHER_FIX_BREAK_CYCLE), strong lazy slots closing a retain cycle
 * (TETHER_FIX_WEAK_LAZY), strong declared targets (TETHER_FIX_WEAK_TARGET), dependencies
 * on keys taking runtime arguments (TETHER_FIX_RUNTIME_ARGUMENTS);
 * other problems have TETHER_FIX_NONE (show their line as it is). `status` is
 * that problem's own. After a tether_validate that passed there are none.
 *
 * @param out    receives the parts; its strings stay valid as tether_last_error_parts's do
 *               (until the next call of either, or the next failure on this thread).
 * @param count  if not NULL, receives how many problems the last tether_validate found.
 * @return TETHER_OK; TETHER_E_INVALID_ARGUMENT (NULL `out`, or `index` not below the count).
 * Thread-local, so thread-safe.
 */
tether_status tether_validate_problem_parts(size_t index, tether_error_parts *out, size_t *count);

/* ------------------------------------------------------------------------- */
/* Plans, for bindings that run their own factories                           */
/* ------------------------------------------------------------------------- */

/** tether_plan_step.flags: the step is a cached singleton- or weak-scoped instance, not a factory call. */
#define TETHER_PLAN_STEP_CACHED 1u
/** tether_plan_step.flags: the step is the resolving container's value of `key` (a declared value key). */
#define TETHER_PLAN_STEP_VALUE 2u
/** tether_plan_step.flags: the step is a container-scoped registration's instance, made at most
 *  once per resolving container (see tether_plan_describe, tether_plan_adopt). */
#define TETHER_PLAN_STEP_CONTAINER 4u

/** One step of a described plan: a factory call, or a cached instance (see tether_plan_describe). */
typedef struct tether_plan_step {
    tether_registration *registration; /* the handle tether_register/_ex returned; NULL if none was
                                          asked for (out == NULL) or the key was re-registered meanwhile */
    size_t first_input;                /* its slots' inputs: inputs[first_input .. first_input + slot_count) */
    size_t slot_count;                 /* its declared param count; 0 for a cached step */
    ptrdiff_t parent;                  /* the step whose factory asked for it first; -1 for the root */
    uint32_t key;                      /* its registration's key (a tether_intern id) */
    uint32_t flags;                    /* 0, TETHER_PLAN_STEP_CACHED, TETHER_PLAN_STEP_VALUE or
                                          TETHER_PLAN_STEP_CONTAINER */
} tether_plan_step;

/** An input of tether_plan_describe: the slot is a TETHER_PARAM_CONTEXT (the registration's context). */
#define TETHER_PLAN_INPUT_CONTEXT (-1)
/** An input of tether_plan_describe: the slot is a TETHER_PARAM_RESOLVER. */
#define TETHER_PLAN_INPUT_RESOLVER (-2)
/** An input of tether_plan_describe: the slot is the root's runtime argument `n` (from 0). */
#define TETHER_PLAN_INPUT_ARGUMENT(n) (-3 - (n))

/** tether_plan_completion.flags: a resolver-form callback (tether_on_complete): see tether_plan_keys. */
#define TETHER_PLAN_COMPLETION_RESOLVER 1u

/** A completion callback of a described plan (see tether_plan_describe). */
typedef struct tether_plan_completion {
    size_t step;          /* the step whose instance it completes */
    size_t number;        /* which callback of that step's registration: 0 for the first added */
    size_t first_target;  /* its targets' steps: inputs[first_target .. first_target + target_count) */
    size_t target_count;  /* its declared param count, in declared order; 0 for a resolver-form one */
    size_t flags;         /* 0 (declared targets) or TETHER_PLAN_COMPLETION_RESOLVER */
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
 * Resolver-form callbacks (flags TETHER_PLAN_COMPLETION_RESOLVER, no
 * targets): the binding calls it with a resolver of its own that answers
 * `get` and `weak` as the library's would, from tether_plan_keys (a key of the
 * graph: that step's instance) and, for what the table does not settle,
 * tether_plan_resolver. Such a plan is described only where that is exact: no
 * declared strong target in the plan, no value step, and every other key
 * visible from `c` builds alone (transient registrations with DEP, WEAK and
 * CONTEXT slots and no completion callback, all the way down: a singleton a
 * callback created would outlive a failing replay; or
 * a registration with runtime arguments, which a resolver refuses), so an
 * ordinary resolve of it from `c` gives what the resolver would.
 *
 * Cached steps (flags TETHER_PLAN_STEP_CACHED): a singleton- or weak-scoped
 * dependency is a leaf the resolve takes from its cache, not a factory call
 * of this plan. Take the instance the library published for `key` (a binding
 * that keeps it checks tether_container_cache_versions); when there is none
 * (never made, reset, dead), resolve the plan's root with tether_resolve_key
 * instead of replaying: that resolve creates it in its place, once, under the
 * library's creation rules.
 *
 * Value steps (flags TETHER_PLAN_STEP_VALUE): `key` is a value key declared
 * in `c` or a parent (tether_declare_value), a leaf the resolve takes from the
 * container resolved from. So one description from the declaring container
 * serves each child that provides values and registers nothing else: take the
 * instance that child provides for `key`, unless it provides a key that is a
 * non-value step's key (that child builds another graph: describe from it);
 * where the child has no value for `key`, resolve from it with
 * tether_resolve_key, which reports the missing value (TETHER_E_NOT_FOUND).
 * Such a plan is valid while the words of `c` are unchanged.
 *
 * Container steps (flags TETHER_PLAN_STEP_CONTAINER): a container-scoped
 * registration (no completion callback, no runtime arguments) whose slots
 * take only value steps and other container steps, so whether the container
 * resolved from holds its instance changes no other step. It is made at most
 * once per container resolved from: where that container holds the instance
 * already (made by an earlier run of a plan for it), take that one; else call
 * its factory with its inputs, like a made step, and keep the instance for
 * that container once the whole run succeeded (a failing run destroys it with
 * the rest). The runner keeps such instances only for a container whose own
 * tether_container it has not made yet (a binding's child that runs its
 * parent's plans): they are torn down when that container closes, last made
 * first, after everything made after them. Once the binding makes the
 * container (something needs the library), it hands them over in creation
 * order with tether_plan_adopt before anything resolves from it; from then
 * on the library caches that container's instances and the runner does not
 * run plans with container steps for it.
 *
 * Only plain plans are described: every step is made by the resolve (graph,
 * transient or, as above, container scope), cached or a value, every slot is DEP,
 * CONTEXT or RESOLVER (no WEAK, LAZY or WEAK_LAZY), runtime arguments only
 * the root's (TETHER_PLAN_INPUT_ARGUMENT: pass the resolve's arguments; with a
 * wrong count or type resolve with tether_resolve_key_args, which reports it), every
 * dependency exists and there is no constructor cycle, at most 64 steps; and
 * completion callbacks only if `completion_count` is not NULL, every callback
 * in the graph is declared (tether_on_complete_params, or an args_fn entry of
 * tether_register_ex) or resolver-form under the conditions above, every
 * target is a graph-scoped step of the build (not one the resolve would build
 * for it or take from a cache), and the strong edges of factories and DEP
 * targets close no cycle. For any other graph, and
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
 * Reports the failure of a replayed plan as the library's resolve would: the
 * factory of step `step` of the plan tether_plan_describe gave for `key` from
 * `c` failed (`completion` -1), or its completion call `completion` (an index
 * into the described completions) did, for `reason` (the runner's own text,
 * e.g. an exception rendered; nullable). The binding raises what this returns
 * and tether_last_error() then holds: the status, message and path a resolve
 * of the same graph reports (so a binding keeps no copy of the library's messages).
 * Call it while the configuration is the one the plan was described under.
 *
 * @return TETHER_E_FACTORY_FAILED (the failure, described); TETHER_E_INVALID_HANDLE
 *   (bad or freed `c`); TETHER_E_INVALID_ARGUMENT (`key` not from tether_intern, no
 *   described plan, `step` or `completion` out of range); TETHER_E_NOT_FOUND.
 * Thread-safe.
 */
tether_status tether_plan_failure(tether_container *c, uint32_t key, size_t step, ptrdiff_t completion,
                                  const char *reason);

/**
 * Hands `c` the instance a binding made for it by running a container step
 * (TETHER_PLAN_STEP_CONTAINER) of a described plan before `c` existed in the
 * library: `instance` becomes the container-scoped instance `c` caches for
 * `key`, as if a resolve from `c` had made it now (its registration's
 * destructor runs on it once `c` lets go of it: tether_reset of the container
 * scope or tether_container_free, in creation order with the rest, so hand
 * several over in the order they were made). Resolves from `c` then take it.
 *
 * @param c         the container; borrowed.
 * @param key       an id from tether_intern: the container step's key.
 * @param instance  what the registration's factory made; owned by `c` on success, still the
 *                  caller's on failure (nothing is kept).
 * @return TETHER_OK;
 *   TETHER_E_INVALID_HANDLE (bad or freed `c`);
 *   TETHER_E_INVALID_ARGUMENT (NULL `instance`, an id tether_intern never returned, the
 *     registration `key` resolves to from `c` is not container-scoped, `c` holds an instance of
 *     `key` already, or it was re-registered meanwhile);
 *   TETHER_E_NOT_FOUND (`key` has no registration visible from `c`).
 * Thread-safe.
 */
tether_status tether_plan_adopt(tether_container *c, uint32_t key, void *instance);

/** One key a described plan's resolver-form callbacks find in the graph (see tether_plan_keys). */
typedef struct tether_plan_key {
    uint32_t key;     /* a tether_intern id */
    uint32_t step;    /* the step whose instance a resolver's get or weak of `key` is */
    uint64_t closes;  /* bit s: a strong edge (get) from step s's instance to this one would close a
                         retain cycle through the factories' edges (its own step's bit included) */
} tether_plan_key;

/**
 * The key table of the plan tether_plan_describe gives for `key` from `c`,
 * for running its resolver-form completion callbacks (TETHER_PLAN_COMPLETION_RESOLVER):
 * every key whose instance the library's resolver would find in the graph (the
 * graph-scoped and cached steps), with the step that made or took it. A plan
 * without resolver-form callbacks has none (`*count` 0).
 *
 * Answer a callback's `get(K)` or `weak(K)` as follows (completion call `k`,
 * completing step `s`), so the binding decides nothing the library decides:
 *  - K in the table, weak: the instance of its step, as a weak reference.
 *  - K in the table, get: the instance of its step, if bit `s` of `closes` is
 *    clear and no earlier `get` of this resolve added a strong edge to a step of
 *    the table; otherwise ask tether_plan_resolver with those edges, which
 *    refuses a retain cycle as the library's resolver would.
 *  - K not in the table: resolve it from `c` as a top-level resolve (the plan
 *    is described only where that gives what the resolver would); if that fails
 *    with TETHER_E_NOT_FOUND or TETHER_E_ARGUMENT_MISMATCH, ask
 *    tether_plan_resolver, which fails with the resolver's message.
 * Keep what a weak target needs alive until the replay returns (a resolve's
 * graph holds every instance it made until then).
 *
 * @param keys   array of `cap` entries the call fills; may be NULL when `cap` is 0.
 * @param count  receives the number of entries; not NULL.
 * @return TETHER_OK (0 entries when there is no plan, or it has no resolver-form
 *   callback); TETHER_E_INVALID_HANDLE (bad or freed `c`); TETHER_E_INVALID_ARGUMENT
 *   (NULL `count`, NULL `keys` with a `cap`, an id tether_intern never returned);
 *   TETHER_E_NOT_FOUND (`key` has no registration); TETHER_E_BUFFER_TOO_SMALL
 *   (only `*count` is written: call again with that many).
 * Valid, as the plan, while the configuration words are unchanged. Thread-safe.
 */
tether_status tether_plan_keys(tether_container *c, uint32_t key, tether_plan_key *keys, size_t cap, size_t *count);

/** tether_plan_resolver flags: the callback asked for a weak edge (`weak`), not a strong one (`get`). */
#define TETHER_PLAN_RESOLVER_WEAK 1u
/** tether_plan_resolver flags: the binding's resolver is used after its callback returned. */
#define TETHER_PLAN_RESOLVER_CLOSED 2u
/** tether_plan_resolver flags: the binding's resolver is used during its callback, on another thread. */
#define TETHER_PLAN_RESOLVER_OTHER_THREAD 4u

/**
 * What the library's resolver answers, in a replay of the plan of `key` from
 * `c`, to completion call `completion` (a resolver-form one, an index into the
 * described completions) asking for `target`, where tether_plan_keys does not
 * settle it. `late` holds `late_count` pairs (from step, to step): the strong
 * edges earlier `get`s of this replay added to steps of the key table.
 *
 * @return TETHER_OK: go on (a strong edge to `target`'s step closes no cycle;
 *   a key outside the table: resolve it from `c`); TETHER_E_RETAIN_CYCLE (the
 *   strong edge would close one; the message names the cycle and says to take
 *   the edge weakly); TETHER_E_WRONG_CONTEXT (with TETHER_PLAN_RESOLVER_CLOSED or
 *   _OTHER_THREAD: the message the library's resolver gives there);
 *   TETHER_E_NOT_FOUND (no registration for `target`);
 *   TETHER_E_ARGUMENT_MISMATCH (`target` takes runtime arguments). With any of
 *   those, tether_last_error() holds the resolver's message: the callback gets
 *   it as the error of its `get`/`weak`. TETHER_E_INVALID_HANDLE (bad or freed
 *   `c`); TETHER_E_INVALID_ARGUMENT (ids not from tether_intern, unknown flags,
 *   no described plan, `completion` not a resolver-form call, a step out of
 *   range, NULL `late` with a count).
 * Thread-safe.
 */
tether_status tether_plan_resolver(tether_container *c, uint32_t key, size_t completion, uint32_t target,
                                   unsigned flags, const size_t *late, size_t late_count);

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
 * (tether_container_hit_word says the same with one word and a token the
 * library gives, so a binding need not sum these words nor read them first.)
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

/**
 * The address of the hit word of `c`, for a binding that hands out again, with
 * no call, a singleton the library answered as published
 * (tether_resolve_key_collect with TETHER_RESOLVE_HELD: `io->out` NULL,
 * `io->instance` the held pointer, no drop, and `io->token`).
 *
 * The rule is the library's, the binding only compares: a resolve of that key
 * from `c` (with no runtime arguments) answers that same instance for as long
 * as the word equals `io->token`. The library moves the word (it only grows,
 * with release ordering, and is never 0) after every change that could make
 * the answer differ, in `c` or in any container up its chain, whether a
 * binding or C code asked: a singleton or weak-scope instance let go of
 * (tether_reset, a scope change, re-registering a key, tether_container_free),
 * any configuration change (a registration, a value, a context or callback
 * change, a trace hook set or removed: see tether_container_versions). Changes
 * in other containers, child containers of `c` included, move nothing. When
 * the word differs, resolve through the library again (one held call gives
 * the answer and a new token). A reset that returned before the binding reads
 * the word is always seen; one racing with the read is ordered before or after
 * it, as with a hit in the library: the instance is then alive as long as the
 * binding holds it, even if the library drops it the moment after.
 *
 * The word is an aligned `size_t`: read it with a plain (volatile or
 * relaxed-atomic) load, after the object you are about to hand out. Never
 * write it. It stays allocated for the life of the process: reading it after
 * `c` was freed is safe (it may then belong to a newer container; since it
 * only grows, a token read before the free never comes back).
 *
 * @param c     the container; borrowed.
 * @param word  receives the address; not NULL. NULL on failure.
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad or freed `c`);
 *   TETHER_E_INVALID_ARGUMENT (NULL `word`).
 * Thread-safe; lock-free.
 */
tether_status tether_container_hit_word(tether_container *c, const volatile size_t **word);

/**
 * A strong handle of your own to item `index` of the list a tether_resolve_all handle
 * holds (a binding wraps each item it did not make itself, and may release `list`).
 * @return TETHER_OK; TETHER_E_INVALID_HANDLE (bad `list`); TETHER_E_INVALID_ARGUMENT
 *         (NULL out; `list` not from tether_resolve_all; `index` not below its count).
 * Thread-safe.
 */
tether_status tether_list_ref(tether_ref *list, size_t index, tether_ref **out);

/* The library reads these structs by offset: a compiler that laid them out
   differently would fail here instead of misbehaving at run time. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
#ifdef __cplusplus
#define TETHER_ASSERT_(cond, msg) static_assert(cond, msg)
#else
#define TETHER_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
TETHER_ASSERT_(sizeof(tether_error_parts) == 72 && offsetof(tether_error_parts, path) == 24 &&
               offsetof(tether_error_parts, reason) == 48, "tether_error_parts layout");
TETHER_ASSERT_(sizeof(tether_drop) == 24 && offsetof(tether_drop, context) == 16, "tether_drop layout");
TETHER_ASSERT_(offsetof(tether_collect, count) == 16 && offsetof(tether_collect, out) == 32 &&
               offsetof(tether_collect, token) == 40, "tether_collect layout");
TETHER_ASSERT_(sizeof(tether_plan_step) == 40 && offsetof(tether_plan_step, first_input) == 8 &&
               offsetof(tether_plan_step, parent) == 24 && offsetof(tether_plan_step, flags) == 36,
               "tether_plan_step layout");
TETHER_ASSERT_(sizeof(tether_plan_completion) == 40 && offsetof(tether_plan_completion, first_target) == 16 &&
               offsetof(tether_plan_completion, flags) == 32, "tether_plan_completion layout");
TETHER_ASSERT_(sizeof(tether_plan_key) == 16 && offsetof(tether_plan_key, closes) == 8, "tether_plan_key layout");
TETHER_ASSERT_(offsetof(tether_registration_options, completion_count) == 40 &&
               offsetof(tether_registration_options, callback_count) == 64, "tether_registration_options layout");
#undef TETHER_ASSERT_
#endif

#ifdef __cplusplus
}
#endif

#endif /* TETHER_BINDING_H */
