/* The calling thread's `ThreadState` (TetherCore/Runtime/ThreadState.swift), unretained: a word
 * of static thread-local storage, read in two instructions where pthread_getspecific is a call
 * (a request looks its thread's state up six times: the child's stripe, the value's spec, the
 * resolve, three instances' deinits). The pthread key still owns the state (its destructor
 * releases it at thread exit and clears this word first).
 *
 * Initial-exec: the library's word comes from the static TLS glibc keeps for libraries loaded
 * by dlopen (Python's ctypes), with no __tls_get_addr call. Hidden: not exported. */
#ifndef TETHER_THREAD_WORD_H
#define TETHER_THREAD_WORD_H

#if defined(__GNUC__) || defined(__clang__)
#define TETHER_THREAD_WORD_ATTRIBUTES __attribute__((tls_model("initial-exec"), visibility("hidden")))
#else
#define TETHER_THREAD_WORD_ATTRIBUTES
#endif

extern _Thread_local void *tether_thread_word TETHER_THREAD_WORD_ATTRIBUTES;

static inline void *tether_thread_word_get(void) { return tether_thread_word; }
static inline void tether_thread_word_set(void *state) { tether_thread_word = state; }

/* The same for the ABI's per-thread locals (Tether/Handles/HandleCache.swift: free handle slots,
 * the key cache, the reclamation record), owned by its own pthread key. */
extern _Thread_local void *tether_handles_word TETHER_THREAD_WORD_ATTRIBUTES;

static inline void *tether_handles_word_get(void) { return tether_handles_word; }
static inline void tether_handles_word_set(void *locals) { tether_handles_word = locals; }

#endif
