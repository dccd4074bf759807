/*
 * tether_binding.h — the protocol for language bindings that run their own factories (Python's
 * ctypes package is one): plans to replay, cached instances, collected destructor calls, the
 * words that say when what a binding learned is stale, and errors in the binding's terms.
 * Programs that use Tether need tether.h only. docs/ARCHITECTURE.md says why it is shaped so.
 *
 * One versioned interface, as libgit2's sys/ headers version their structs: a binding sets
 * `version` (TETHER_BINDING_INIT does) and calls tether_binding_open, which fills the table of
 * functions below or refuses a version it does not speak. The protocol may change between minor
 * versions; any change moves TETHER_BINDING_API_VERSION. tether.h's conventions hold (statuses,
 * the last error, handles, borrowed strings); every function is thread-safe unless it says so.
 *
 * Cached singleton hits may borrow the cache's reference instead of taking one; dropping a cached
 * singleton waits until no thread is between reading the cache and taking its borrow (membarrier(2)
 * where it exists, unless TETHER_NO_MEMBARRIER is "1" when first needed: then fences). While a trace
 * hook is set (tether_set_trace, which moves the version and hit words) every resolve of that
 * container must reach the library: it describes no plan and never answers a held resolve with
 * the published singleton.
 */
#ifndef TETHER_BINDING_H
#define TETHER_BINDING_H

#include "tether.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this protocol (tether_binding.version). Any change to it moves it. */
#define TETHER_BINDING_API_VERSION 18

/* ------------------------------------------------------------------------- */
/* Registering, resolving, collected drops                                    */
/* ------------------------------------------------------------------------- */

/**
 * tether_options.flags (tether_registration_options.flags): `drop` may be handed back instead of
 * called. While a resolve_key_collect call runs on a thread, the drops of this registration's
 * instances that come due on that thread (also in calls nested in it) go to that call's buffer and
 * its caller runs them after it returns; elsewhere they are called as usual. Mark a registration
 * only if its destructor does not use its dependencies (or mark them too): a deferred drop runs
 * after the non-deferred destructors of its dependencies. tether_set_context replaces the
 * destructor with one not deferred.
 */
#define TETHER_DEFER_DROP 1u
/** tether_registration_options.flags: `callbacks`/`callback_count` are read. */
#define TETHER_OPTIONS_CALLBACKS 2u

/** A holder of creation cells for a binding's awaiting call (see "Tokens" in tether_binding). */
typedef struct tether_token tether_token;

/** The options of register_ex (tether_options plus resolver-form callbacks given as arrays). Zero it. */
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

/** A destructor call handed back by resolve_key_collect: run `fn(instance, context)`. */
typedef struct tether_drop {
    tether_drop_fn fn;
    void *instance;
    void *context;
} tether_drop;

/** resolve_key_collect flags: fail with TETHER_E_WOULD_BLOCK instead of waiting for another thread's creation. */
#define TETHER_RESOLVE_NO_WAIT 1u
/** resolve_key_collect flags: `io->instance` is an instance you keep alive; no handle when it is the published singleton. */
#define TETHER_RESOLVE_HELD 2u
/** resolve_key_collect flags: drops past `capacity` are kept for `io->more`, in order, instead of run in place. */
#define TETHER_RESOLVE_MORE_DROPS 4u

/** The buffers of resolve_key_collect. */
typedef struct tether_collect {
    tether_drop *drops;  /* in: `capacity` entries; may be NULL when `capacity` is 0 */
    size_t capacity;     /* in */
    size_t count;        /* out: drops handed back (also on failure): in `drops`, past `capacity` in `more` */
    void *instance;      /* out: the instance (NULL on failure); in too with TETHER_RESOLVE_HELD */
    tether_ref *out;     /* out: a strong handle you own, or NULL (the call released it, or a held hit) */
    size_t token;        /* out: with a held hit, the hit word's value it holds under (never 0); else 0 */
    tether_drop *more;   /* out with TETHER_RESOLVE_MORE_DROPS (else untouched): the `count - capacity` drops past
                            `drops`, or NULL; the library's (never free it), valid until this thread's next
                            resolve_key_collect or its exit */
} tether_collect;

/** Told once what a lazy slot's provider answers from the graph it was filled in (provider_watch). */
typedef void (*tether_provider_watch_fn)(void *context, tether_status status, void *instance);
/** registration_revive: `instance` again, owned, if the binding still holds that object; or NULL. */
typedef void *(*tether_revive_fn)(void *context, void *instance);

/* ------------------------------------------------------------------------- */
/* Errors in the binding's language                                           */
/* ------------------------------------------------------------------------- */

/** Which fix a failure's message proposes (tether_error_parts.fix). */
typedef enum tether_fix {
    TETHER_FIX_NONE = 0,     /* nothing specific: show tether_last_error() as it is */
    TETHER_FIX_REGISTER,     /* `key` has no registration (`path` needed it): register it */
    TETHER_FIX_BREAK_CYCLE,  /* constructor cycle `path`: make one edge lazy or set it in a completion callback */
    TETHER_FIX_WEAK_EDGE,    /* a resolver's strong edge `key` -> `target` closes the retain cycle `path`: take it weakly */
    TETHER_FIX_WEAK_TARGET,  /* the same for a declared completion target: declare it weak */
    TETHER_FIX_FACTORY,      /* the factory of `key` failed (`reason`) while resolving `path` */
    TETHER_FIX_CALLBACK,     /* completion callback #`callback` of `callback_of` failed (`reason`) */
    TETHER_FIX_RECURSION,    /* resolves of `key` nested too deep on one thread: break the loop with a callback */
    TETHER_FIX_PROVIDE_VALUE, /* declared value `key` that no container on the way provides: provide it in a child */
    TETHER_FIX_UNFINISHED,   /* a nested resolve (`path`) asked for `key`, which an unfinished resolve further out on
                                this thread makes: take it from a completion callback's resolver or as a dependency */
    TETHER_FIX_WEAK_LAZY,    /* a strong lazy slot of `key` on `target` closes the retain cycle `path`: make it weak-lazy */
    TETHER_FIX_RUNTIME_ARGUMENTS, /* `key` takes runtime arguments and cannot be a dependency (of `path`'s last key):
                                use a factory slot (TETHER_FACTORY) */
    TETHER_FIX_WAIT_CYCLE,   /* threads or tasks would wait for each other's shared instances forever: `path` is the
                                cycle (first key repeated last), this caller's edge `path[n-2]` -> `key` last; take
                                `key` weak-lazy in `path[n-2]` and call it once that is made (a completion callback
                                does not break it: an instance is published after its callbacks ran) */
    TETHER_FIX_NESTED_RESOLVE, /* the factory of `key` (or a lazy provider it called; or a completion callback of `key`:
                                see `nested`) resolved `target`, which asked for the last key of `path` (the cycle)
                                while that was still being constructed: from a completion callback of `callback_of`
                                it ran (then take `target` as a slot of `key`, or resolve it from `key`'s completion
                                callback), from its own construction (resolve it from `key`'s completion callback),
                                or directly (`target` is `path`'s last key: a weak-lazy slot of `key` on it); any
                                other nested resolve on the cycle (`nested`) becomes a slot first */
    TETHER_FIX_CALLBACK_LAP  /* completion callbacks would build the cycle `path` (first key repeated last) anew
                                forever: a callback of `callback_of` asks for `path[1]`, whose making (transient all the
                                way) makes another `callback_of`; make `path[n-2]` graph-scoped, or (when `key` is set)
                                declare the slot of `key` on `target` weak-lazy */
} tether_fix;

/** The parts of the last error's message (last_error_parts). */
typedef struct tether_error_parts {
    tether_status status;    /* as tether_last_status() */
    tether_fix fix;
    const char *key;         /* the key the fix is about, or NULL */
    const char *target;      /* FIX_WEAK_EDGE/_TARGET/_LAZY/_CALLBACK_LAP: the edge's target key, else NULL */
    const char *const *path; /* `path_count` keys, root first (who needed `key`, or the cycle) */
    size_t path_count;
    size_t path_omitted;     /* keys of a long path left out between its first 3 and the rest */
    const char *reason;      /* what the failing factory/callback said (tether_set_error), or NULL */
    const char *callback_of; /* key whose callback failed, or whose declared target/callback needed `key`; else NULL */
    size_t callback;         /* that callback's number, from 1; 0 if none */
    const char *const *nested; /* FIX_NESTED_RESOLVE: `nested_count` pairs (nested[2i], nested[2i+1]): the resolves
                                  the cycle runs through that were nested, each building a graph of its own, outermost
                                  first: made in the factory of nested[2i] (or a lazy provider it called), or (bit i of
                                  `nested_in_callback`) in a completion callback of it, asking for nested[2i+1]. The
                                  last is `key` -> `target`, which the fix is about; each before it is to become a slot
                                  of nested[2i] (or that callback's resolver's get) first, so that one resolve builds
                                  the whole cycle. NULL and 0 for other fixes; at most 64 pairs */
    size_t nested_count;
    uint64_t nested_in_callback;
} tether_error_parts;

/* ------------------------------------------------------------------------- */
/* Plans, for bindings that run their own factories                           */
/* ------------------------------------------------------------------------- */

/** tether_plan_step.flags: a cached singleton- or weak-scoped instance, not a factory call. */
#define TETHER_PLAN_STEP_CACHED 1u
/** tether_plan_step.flags: the resolving container's value of `key` (a declared value key). */
#define TETHER_PLAN_STEP_VALUE 2u
/** tether_plan_step.flags: a container-scoped registration's instance, made at most once per
    resolving container (plan_describe, plan_adopt). */
#define TETHER_PLAN_STEP_CONTAINER 4u

/** One step of a described plan (plan_describe). */
typedef struct tether_plan_step {
    tether_registration *registration; /* the handle registering returned; NULL if none was asked for or the key
                                          was registered again since */
    size_t first_input;                /* its slots' inputs: inputs[first_input .. first_input + slot_count) */
    size_t slot_count;                 /* its declared param count; 0 for a cached or value step */
    ptrdiff_t parent;                  /* the step whose factory asked for it first; -1 for the root */
    uint32_t key;                      /* its key (a tether_intern id) */
    uint32_t flags;                    /* 0, TETHER_PLAN_STEP_CACHED, _VALUE or _CONTAINER */
} tether_plan_step;

/** An input of plan_describe: the slot is a TETHER_PARAM_CONTEXT (the registration's context). */
#define TETHER_PLAN_INPUT_CONTEXT (-1)
/** An input of plan_describe: the slot is a TETHER_PARAM_RESOLVER. */
#define TETHER_PLAN_INPUT_RESOLVER (-2)
/** An input of plan_describe: the slot is the root's runtime argument `n` (from 0). */
#define TETHER_PLAN_INPUT_ARGUMENT(n) (-3 - (n))

/** tether_plan_completion.flags: a resolver-form callback: see plan_keys. */
#define TETHER_PLAN_COMPLETION_RESOLVER 1u

/** A completion callback of a described plan. */
typedef struct tether_plan_completion {
    size_t step;          /* the step whose instance it completes */
    size_t number;        /* which callback of that step's registration: 0 for the first added */
    size_t first_target;  /* its targets' steps: inputs[first_target .. first_target + target_count) */
    size_t target_count;  /* its declared param count, in declared order; 0 for a resolver-form one */
    size_t flags;         /* 0 (declared targets) or TETHER_PLAN_COMPLETION_RESOLVER */
} tether_plan_completion;

/** One key a described plan's resolver-form callbacks find in the graph (plan_keys). */
typedef struct tether_plan_key {
    uint32_t key;     /* a tether_intern id */
    uint32_t step;    /* the step whose instance a resolver's get or weak of `key` is */
    uint64_t closes;  /* bit s: a strong edge from step s's instance to this one closes a retain cycle through
                         the factories' edges (its own step's bit included) */
} tether_plan_key;

/** plan_resolver flags: the callback asked for a weak edge (`weak`), not a strong one (`get`). */
#define TETHER_PLAN_RESOLVER_WEAK 1u
/** plan_resolver flags: the binding's resolver is used after its callback returned. */
#define TETHER_PLAN_RESOLVER_CLOSED 2u
/** plan_resolver flags: the binding's resolver is used during its callback, on another thread. */
#define TETHER_PLAN_RESOLVER_OTHER_THREAD 4u

/* ------------------------------------------------------------------------- */
/* The interface                                                              */
/* ------------------------------------------------------------------------- */

/** The protocol's functions, filled by tether_binding_open. Statuses as tether.h's, plus those named. */
typedef struct tether_binding {
    /** In: the TETHER_BINDING_API_VERSION the binding was written against. */
    unsigned version;

    /** tether_register_with taking tether_registration_options (TETHER_DEFER_DROP, callbacks of both
        forms in one list with TETHER_OPTIONS_CALLBACKS): what tether_register_with returns. */
    tether_status (*register_ex)(tether_container *c, const char *key, tether_fn factory, const tether_param *params,
                                 size_t param_count, const tether_registration_options *options,
                                 tether_registration **out);

    /** For a binding whose objects outlive the library's instances of them (a Python object its caller
        holds after the instance's last reference went): while `r` is TETHER_SCOPE_WEAK and a resolve
        finds its weak cache without a live instance that no reset, scope change or re-registration
        emptied, the library calls `revive(context, instance)` with the last published instance's
        object (on the resolving thread, inside the resolve, before any factory of that key or its
        dependencies runs) instead of building one. It returns `instance` if the binding still holds
        that object, owned as a factory's result (the registration's drop runs for it once the new
        instance goes), or NULL (then one is built); another answer is a bug the library stops on.
        The new instance has no dependency edges (the object holds its own) and runs no completion
        callback (they ran when it was made). NULL `fn`: no reviver. INVALID_HANDLE (stale `r`). */
    tether_status (*registration_revive)(tether_registration *r, tether_revive_fn fn, void *context);

    /** tether_resolve_key, also giving the instance `*out` holds in `*instance` (valid while a strong
        reference lives). INVALID_ARGUMENT also for a NULL `instance`. */
    tether_status (*resolve_key_instance)(tether_container *c, uint32_t key, void **instance, tether_ref **out);

    /** resolve_key_instance for bindings paying per call. Drops: every drop of a TETHER_DEFER_DROP
        registration coming due on this thread during the call is stored in `io->drops` in order (on
        failure too) until `capacity` is reached, then run in place; with TETHER_RESOLVE_MORE_DROPS
        they go on, in order, in `io->more` (copy those before your first drop runs: it may call the
        library); run each once, in order, after the call. A nested collecting call uses a buffer of
        its own. Result: if the call's reference was the only one and the registration defers drops,
        the call releases it (`io->out` NULL, its drop the first the release stored; `io->instance`
        valid until that drop runs).
        TETHER_RESOLVE_NO_WAIT: a shared instance another thread is creating fails the resolve (and any
        resolve nested in it) with TETHER_E_WOULD_BLOCK instead of waiting (for a caller holding a lock
        the creator may need, e.g. Python's GIL: retry without the flag after releasing it); those its
        constructor edges reach are claimed before any factory runs, so such a failure made nothing.
        TETHER_RESOLVE_HELD: `io->instance` is read first, a pointer you keep valid; if it is the
        published singleton of `key` from `c` (compared only: no handle, nothing written), the answer is
        `io->out` NULL, that pointer, no drop, and `io->token` the hit word's value it holds under
        (container_hit_word). Anything else comes as without the flag. WOULD_BLOCK; INVALID_ARGUMENT
        also for a NULL `io`, unknown flags, HELD with a NULL instance, NULL drops with a capacity. */
    tether_status (*resolve_key_collect)(tether_container *c, uint32_t key, unsigned flags, tether_collect *io);

    /** tether_resolver_get_weak giving the instance's pointer (valid until the top-level resolve returns,
        then while something holds it), the weak handle only when `out` is not NULL (the same weak edge is
        recorded either way). INVALID_ARGUMENT also for a NULL `instance`. */
    tether_status (*resolver_get_weak_instance)(tether_resolver *r, const char *key, void **instance, tether_weak **out);

    /** A strong handle of your own to `instance`, an instance of the current resolve (a dependency, or from
        tether_resolver_get): never a second instance of a transient key. WRONG_CONTEXT (callback returned,
        other thread); INVALID_HANDLE; INVALID_ARGUMENT (NULL instance/out); NOT_FOUND (not of this resolve). */
    tether_status (*resolver_ref)(tether_resolver *r, void *instance, tether_ref **out);

    /** A strong handle of your own to item `index` of a tether_resolve_all list. INVALID_HANDLE (bad `list`);
        INVALID_ARGUMENT (NULL out, `list` not from tether_resolve_all, `index` not below its count). */
    tether_status (*list_ref)(tether_ref *list, size_t index, tether_ref **out);

    /** For a binding whose lazy object outlives the slot's instance: calls `fn(context, status, instance)`
        once, when the graph lazy slot `p` was filled in has its instance of the slot's key (now, if it has
        it): OK and that instance (alive during the call), or, for a LAZY slot whose graph instance holds
        the slot's owner strongly, RETAIN_CYCLE and NULL with the refusal as this thread's last error.
        Never called when the graph has no instance of the key or the slot goes first. `fn` runs inside
        the resolve: it must not resolve nor block. A later watch of the slot replaces this one.
        INVALID_ARGUMENT (`fn` NULL); INVALID_HANDLE (`p` not a live provider). */
    tether_status (*provider_watch)(tether_provider p, tether_provider_watch_fn fn, void *context);

    /** The parts this thread's last error is composed of, for a binding that renders the fix in its own
        terms and never copies the library's wording (for FIX_NONE it shows tether_last_error()). Long keys,
        reasons and paths are cut as in the message (`path_omitted`). The strings stay valid until the next
        call of this or validate_problem_parts, or the next failure, on this thread. Before any failure:
        OK, FIX_NONE. INVALID_ARGUMENT (NULL `out`). Thread-local. */
    tether_status (*last_error_parts)(tether_error_parts *out);

    /** The parts of problem `index` (line `index` + 2 of the report) of this thread's last tether_validate,
        as last_error_parts; `*count` (nullable) how many it found. INVALID_ARGUMENT (NULL `out`, `index`
        not below the count). Thread-local. */
    tether_status (*validate_problem_parts)(size_t index, tether_error_parts *out, size_t *count);

    /** Describes the plan of `key` resolved from `c`: the factory calls a resolve makes, in the order it
        makes them (post-order, root last), for a binding that replays it with its own factories. Step i's
        slots receive, in declared order, `inputs[first_input + s]`: an earlier step's index, or a
        TETHER_PLAN_INPUT_*. A graph-scoped registration is one step, a transient one a step per slot;
        `parent` gives a failure's path. Completions (only with a non-NULL `completion_count`): call them
        after the last factory, in order, with the instance of `step` and their targets' instances (a
        DEP target strong, a WEAK one weak), which follow the steps' inputs in `inputs`. Resolver-form
        ones: see plan_keys. Cached steps: take the instance the library published for `key`; with none,
        resolve the root through the library instead. Value steps: take the resolving child's value of
        `key`; with none, resolve through the library. Container steps: a container-scoped registration
        (no callback, no runtime argument) whose slots take only value and container steps; made at most
        once per resolving container: take the instance that container holds (from an earlier run for
        it), else call the factory and keep the instance for that container once the whole run
        succeeded. A runner keeps such instances only for a child whose tether_container it has not made
        yet, tears them down at its close last kept first (as the library lets go of its cache: each
        run's in creation order, kept when the run succeeded), and hands them over with plan_adopt, in
        the order it kept them, if it makes that container. Only plain plans are described (graph, transient
        and container steps with DEP, CONTEXT and RESOLVER slots, cached or value leaves, the root's runtime
        arguments, at most 64 steps, no cycle): otherwise OK with every count 0, and the binding resolves
        through the library, which also reports what is wrong. A description is valid while the sum of
        container_versions' words read before this call is unchanged. Replay with a resolve's semantics:
        factories in step order, no factory twice, a failure reported by plan_failure. Registration
        handles stay valid until their key is registered again or the container freed.
        INVALID_ARGUMENT (NULL step_count or input_count, NULL buffer with a capacity, an id tether_intern
        never returned); NOT_FOUND; BUFFER_TOO_SMALL (only the counts are written: call again). */
    tether_status (*plan_describe)(tether_container *c, uint32_t key, tether_plan_step *steps, size_t step_cap,
                                   int32_t *inputs, size_t input_cap, tether_plan_completion *completions,
                                   size_t completion_cap, size_t *step_count, size_t *input_count,
                                   size_t *completion_count);

    /** The failure of a replayed plan, as the library's resolve reports it: the factory of step `step`
        (`completion` -1) or completion call `completion` failed for `reason` (the binding's text;
        nullable). Returns FACTORY_FAILED with the message and parts in the last error (the binding
        raises that); INVALID_ARGUMENT (no described plan, an index out of range); INVALID_HANDLE;
        NOT_FOUND. Call it while the configuration is the plan's. */
    tether_status (*plan_failure)(tether_container *c, uint32_t key, size_t step, ptrdiff_t completion,
                                  const char *reason);

    /** The key table of the plan of `key` for its resolver-form callbacks: every key the library's resolver
        finds in the graph, with its step (none when the plan has no such callback). A callback's `weak(K)`
        of a key in the table is that step's instance; `get(K)` too while bit s (the callback's step) of
        `closes` is clear and no earlier get of the replay added a strong edge, else ask plan_resolver; a
        key outside the table resolves from `c` (on NOT_FOUND or ARGUMENT_MISMATCH ask plan_resolver).
        INVALID_ARGUMENT (NULL `count`, NULL `keys` with a cap, an unknown id); NOT_FOUND;
        BUFFER_TOO_SMALL (only `*count` written). Valid as the plan is. */
    tether_status (*plan_keys)(tether_container *c, uint32_t key, tether_plan_key *keys, size_t cap, size_t *count);

    /** What the library's resolver answers to resolver-form completion call `completion` asking for
        `target` (flags TETHER_PLAN_RESOLVER_*) after the strong edges `late` (`late_count` pairs of from,
        to steps) that earlier gets added: OK (go on), RETAIN_CYCLE, WRONG_CONTEXT, NOT_FOUND,
        ARGUMENT_MISMATCH, each with the resolver's message as the last error (the callback's get or weak
        fails with it); INVALID_HANDLE; INVALID_ARGUMENT (unknown ids or flags, no plan, not a
        resolver-form call, a step out of range, NULL `late` with a count). */
    tether_status (*plan_resolver)(tether_container *c, uint32_t key, size_t completion, uint32_t target,
                                   unsigned flags, const size_t *late, size_t late_count);

    /** This thread replays the plan of `key` from `c` and calls into the library from the factory of step
        `step`: call it before that call (a resolve, a provider) and replay_leave after. Until then this
        thread's resolves see the steps from the root down to `step` under construction, as the library's
        own: one of their keys fails with TETHER_E_CYCLE naming the path (no factory runs twice). Steps
        already entered are not entered again. INVALID_HANDLE; INVALID_ARGUMENT (unknown id, no described
        plan now, `step` out of range: nothing entered); NOT_FOUND. Thread-local. */
    tether_status (*replay_enter)(tether_container *c, uint32_t key, size_t step);

    /** Undoes this thread's last successful replay_enter or construct_enter. INVALID_ARGUMENT (none).
        Thread-local. */
    tether_status (*replay_leave)(void);

    /** For a binding whose factory suspends (Python's `await`): the factory of `keys[count - 1]` failed
        out of a resolve from `c` to go on outside the library, and `keys` is the path of that failure
        (last_error_parts' `path`, root first). Call it before each call into the library the suspended
        factory makes meanwhile and replay_leave after: until then this thread's resolves see the path's
        registrations under construction, as replay_enter's steps (one of them asked for is
        TETHER_E_CYCLE naming the path; no factory runs twice). Each key is looked up as a resolve walks
        the path (from `c`; below a singleton, from its own container); a key nothing registers there
        now is left out. INVALID_HANDLE; INVALID_ARGUMENT (NULL `keys` or `count` 0, an unknown id:
        nothing entered). Thread-local. */
    tether_status (*construct_enter)(tether_container *c, const uint32_t *keys, size_t count);

    /** The addresses of the version words of `c` and its parents (`c` first), `*count` of them: a
        described plan is valid while their sum is the one read before describing it. Each word only grows
        (release ordering) on every configuration change of its container (registering, scope, context,
        callbacks, values, trace hook, freeing; not resets). Read them as volatile or relaxed-atomic; never
        write them; they live as long as the process (safe to read after a free). INVALID_ARGUMENT (NULL
        `count`, NULL `words` with a cap); BUFFER_TOO_SMALL (only `*count` written). */
    tether_status (*container_versions)(tether_container *c, const volatile size_t **words, size_t cap,
                                        size_t *count);

    /** The address of the hit word of `c`, for a binding handing out again a singleton the library
        answered as published (resolve_key_collect with TETHER_RESOLVE_HELD): a resolve of that key from
        `c` answers that instance as long as the word equals the answer's `io->token`. The library moves
        the word (it only grows, never 0) after every change that could change the answer, in `c` or up
        its chain: a singleton or weak instance let go of, any configuration change. Read it (volatile)
        after the object you hand out; never write it; it lives as long as the process.
        INVALID_ARGUMENT (NULL `word`). Lock-free. */
    tether_status (*container_hit_word)(tether_container *c, const volatile size_t **word);

    /** Hands `c` the instance `instance` a binding made for it by running a container step of a
        described plan before `c` existed in the library: `c` caches it for `key` as if a resolve from
        `c` had made it now (its destructor runs when `c` lets go of it, in creation order with the
        rest: hand several over in the order they were made). `instance` is owned by `c` on success,
        still the caller's on failure. INVALID_HANDLE; INVALID_ARGUMENT (NULL `instance`, unknown id,
        `key` not container-scoped from `c`, `c` holds one already, re-registered meanwhile);
        NOT_FOUND. Thread-safe. */
    tether_status (*plan_adopt)(tether_container *c, uint32_t key, void *instance);

    /* Tokens. A shared instance (SINGLETON, CONTAINER) is created under a creation cell per
       (registration, caching container), held by the creating thread; a binding whose factory
       suspends (Python's `await`) fails the resolve to await it outside the library and resolves
       again. A token holds the cell meanwhile, so nobody else starts that factory, and stands for
       the awaiting call in the library's wait graph: a wait that would close a cycle through tokens
       and threads (task A's factory awaits what task B's makes, and B's awaits A's) fails with
       TETHER_E_CYCLE naming both paths (parts: TETHER_FIX_WAIT_CYCLE, the cycle as one path), and a
       resolve acting for a token never blocks its thread. */

    /** Makes a token in `*out`, owned by the caller until token_free. `parent`: the token of the
        call further out on the same task whose suspended factory awaits this call (it waits for
        this one: a cycle through it is found), or NULL. INVALID_ARGUMENT (NULL `out`). Thread-safe. */
    tether_status (*token_new)(tether_token *parent, tether_token **out);
    /** Frees `t` (free nested tokens first): the cells it still holds are released, and their waiters
        go on (one of them creates the instance; a thread blocked in a resolve wakes; token_wait callbacks
        are called, on this thread). INVALID_ARGUMENT (NULL, or entered on a thread). Call it on one
        thread at a time with its other calls. */
    tether_status (*token_free)(tether_token *t);
    /** Until token_leave, this thread's resolves act for `t`: a cell `t` holds is taken back by the
        resolve that needs it (the instance is created under it as if claimed now); a cell another
        thread or token holds is not waited for: the resolve fails with TETHER_E_WOULD_BLOCK and `t`
        waits for that cell (token_wait), or with TETHER_E_CYCLE when that wait would never end.
        A resolve nested in a factory of such a resolve takes `t`'s cells back too, but waits for another
        thread as any resolve does (refused only when it would wait for a token last acting on this
        thread). Enters nest (the last entered acts): `t` entered inside a factory of an outer resolve (a
        binding's nested call made before that factory suspends) acts for the resolve right inside the
        enter as at the top, and its refusal does not fail the outer resolve as one that would have
        waited (TETHER_RESOLVE_NO_WAIT's WOULD_BLOCK): the outer factory suspends for it (token_hold).
        INVALID_ARGUMENT (NULL). Thread-local. */
    tether_status (*token_enter)(tether_token *t);
    /** Undoes this thread's last token_enter. INVALID_ARGUMENT (none). Thread-local. */
    tether_status (*token_leave)(void);
    /** Called from the factory of `key` (as a resolve from `c` finds it; for a SINGLETON, `c` may be
        its registering container) when it suspends: the creation cell this thread holds for that
        instance goes to `t` when the resolve fails, instead of being released. It stays held until a
        resolve acting for `t` takes it back (and publishes the instance or fails again) or token_free.
        NOT_FOUND (this thread holds no such cell: a GRAPH or TRANSIENT key, or not called from that
        factory; nothing changes); INVALID_HANDLE; INVALID_ARGUMENT (NULL `t`, unknown id). Thread-local. */
    tether_status (*token_hold)(tether_token *t, tether_container *c, uint32_t key);
    /** Calls `fn(context)` once, when the cell a resolve acting for `t` was last refused
        (TETHER_E_WOULD_BLOCK) is released: on the thread that releases it, with no lock of the
        library held, or at once on this thread when it was released already or `t` waits for none.
        `fn` must not block (wake a waiter: Python's `call_soon_threadsafe`). A cell a token freed
        releases calls it too; after fork() the child never calls a callback registered before it.
        INVALID_ARGUMENT (NULL `t` or `fn`). Thread-safe. */
    tether_status (*token_wait)(tether_token *t, void (*fn)(void *context), void *context);

    /** What the library decides for `scope`, as TETHER_SCOPE_TRAIT_* bits in `*out`, for a binding that
        must act on it without naming scopes (a new scope then needs no decision in the binding).
        INVALID_ARGUMENT (not a tether_scope, NULL `out`). Lock-free. */
    tether_status (*scope_traits)(tether_scope scope, unsigned *out);

    /** For a binding whose own lazy or factory object stands for a slot: which of `chain` (`count`
        container handles) the LAZY/WEAK_LAZY slot's provider `p`, or the FACTORY slot's handle `f`,
        resolves from (a singleton from further up resolves its slots in its own container), as
        `*index`; `count` if none. INVALID_ARGUMENT (NULL `index`, not exactly one of `p` and `f`);
        INVALID_HANDLE (`p` not a live provider, `f` released or stale). Thread-safe. */
    tether_status (*slot_container)(tether_provider p, tether_factory *f, tether_container *const *chain,
                                    size_t count, size_t *index);

    /** For a binding whose own lazy object stands for a LAZY slot and resolves anew through it (its
        graph had no instance of the key): a reference of your own to the slot `p` (its provider's
        cell) in `*held`, valid whatever happens to `p` or its instance until lazy_release (a call of
        `p` itself after its instance went could land on another slot). INVALID_ARGUMENT (NULL
        `held`, a WEAK_LAZY slot's `p`: a weak hold closes no cycle); INVALID_HANDLE (`p` not a live
        provider). Thread-safe. */
    tether_status (*lazy_hold)(tether_provider p, void **held);
    /** What a call of the held slot's provider answers, the library's rules for it: its first call
        answers the graph's instance, else resolves the key from the slot's container and holds it as a
        late strong edge of the slot's owner; RETAIN_CYCLE (TETHER_FIX_WEAK_LAZY) when that edge would
        close a cycle of strong edges (the instance resolved goes, the slot stays empty: the next call
        resolves anew), the graph's refusal likewise; INVALID_HANDLE once the owner is gone (a stale
        provider; also when it went during the call) or its container freed; any failure of the
        resolve. On OK `*instance` and a strong handle you own in `*out`. INVALID_ARGUMENT (NULL
        `held`, `instance` or `out`). Thread-safe. */
    tether_status (*lazy_get)(void *held, void **instance, tether_ref **out);
    /** Gives up the reference lazy_hold made. INVALID_ARGUMENT (NULL). Thread-safe. */
    tether_status (*lazy_release)(void *held);
} tether_binding;

/** scope_traits: a resolve may share an instance of the scope it did not make. */
#define TETHER_SCOPE_TRAIT_SHARED 0x1u
/** scope_traits: the registration keeps the instance strongly until reset (SINGLETON): a hit may hand it
    out, a reset lets go of it, its creation cell is the registering container's. */
#define TETHER_SCOPE_TRAIT_KEPT_STRONGLY 0x2u
/** scope_traits: the registration keeps the instance weakly, shared while anything holds it (WEAK): a
    binding's object may be revived (registration_revive). */
#define TETHER_SCOPE_TRAIT_KEPT_WEAKLY 0x4u
/** scope_traits: one instance per resolving container, which keeps it until it closes (CONTAINER). */
#define TETHER_SCOPE_TRAIT_PER_CONTAINER 0x8u
/** scope_traits: a graph has at most one instance of it (every scope but TRANSIENT). */
#define TETHER_SCOPE_TRAIT_KEYED_IN_GRAPH 0x10u
/** scope_traits: its dependencies come from its registering container, not the resolving one (SINGLETON). */
#define TETHER_SCOPE_TRAIT_OWN_CONTAINER 0x20u

/** A tether_binding asking for this header's protocol. */
#define TETHER_BINDING_INIT { TETHER_BINDING_API_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/**
 * Fills `b`'s functions for the protocol version `b->version` names, the one entry point of
 * this header. A binding loading the library at run time (ctypes, cffi's ABI mode) sets the
 * version it was written against and refuses to run on a failure.
 *
 * @param b  the caller's table; `version` read, the rest written. Owned by the caller.
 * @return TETHER_OK; TETHER_E_INVALID_ARGUMENT (NULL `b`, or a version this library does not
 *         speak: the message names both, and nothing is written).
 * Thread-safe; never blocks.
 */
tether_status tether_binding_open(tether_binding *b);

/* The library reads these structs by offset: a compiler laying them out otherwise fails here. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
#ifdef __cplusplus
#define TETHER_ASSERT_(cond, msg) static_assert(cond, msg)
#else
#define TETHER_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
TETHER_ASSERT_(sizeof(tether_error_parts) == 96 && offsetof(tether_error_parts, path) == 24 &&
               offsetof(tether_error_parts, reason) == 48 && offsetof(tether_error_parts, nested) == 72,
               "tether_error_parts layout");
TETHER_ASSERT_(sizeof(tether_drop) == 24 && offsetof(tether_collect, more) == 48, "tether_collect layout");
TETHER_ASSERT_(sizeof(tether_plan_step) == 40 && offsetof(tether_plan_step, parent) == 24 &&
               offsetof(tether_plan_step, flags) == 36, "tether_plan_step layout");
TETHER_ASSERT_(sizeof(tether_plan_completion) == 40 && sizeof(tether_plan_key) == 16, "plan layouts");
TETHER_ASSERT_(offsetof(tether_registration_options, completion_count) == 40 &&
               offsetof(tether_registration_options, callback_count) == 64, "tether_registration_options layout");
TETHER_ASSERT_(offsetof(tether_binding, register_ex) == 8 && sizeof(tether_binding) == 8 + 31 * sizeof(void *),
               "tether_binding layout");
#undef TETHER_ASSERT_
#endif

#ifdef __cplusplus
}
#endif

#endif /* TETHER_BINDING_H */
