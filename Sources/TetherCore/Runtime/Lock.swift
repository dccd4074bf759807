#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The mutex the library (and its tests) uses: state that only
/// the holder may touch, as with `Synchronization.Mutex`, but on a
/// `pthread_mutex_t`. (What a request's child locks, its `Container.state` and its
/// parent's `Children` stripe, held a few instructions at a time, is a spin lock in
/// place instead, `withSpinLock`'s: no storage of its own to allocate and free, no mutex call.) ThreadSanitizer intercepts pthread mutexes, so it sees
/// each critical section ordered after the previous one; `Mutex` on Linux is a
/// futex word operated on inside the (uninstrumented) standard library, so
/// every access it guards was reported as a race. Uncontended it costs the
/// same as `Mutex`.
package struct Lock<State>: ~Copyable {
    /// Heap-allocated: a pthread mutex must not move while in use. The mutex first, the state
    /// after it (`stateOffset`): plain arithmetic on `State`'s layout, no generic `Storage` type,
    /// whose metadata an unspecialized caller (the ABI's provider trampolines, a lazy cell's lock)
    /// looked up in the runtime's cache on every call.
    private let storage: UnsafeMutableRawPointer

    package init(_ initial: consuming State) {
        storage = .allocate(byteCount: Self.stateOffset + MemoryLayout<State>.size,
                            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<State>.alignment))
        (storage + Self.stateOffset).initializeMemory(as: State.self, to: initial)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        state.deinitialize(count: 1)
        storage.deallocate()
    }

    @inline(__always)
    private static var stateOffset: Int {
        let align = MemoryLayout<State>.alignment
        return (MemoryLayout<pthread_mutex_t>.size + align - 1) & ~(align - 1)
    }

    @inline(__always)
    private var mutex: UnsafeMutablePointer<pthread_mutex_t> { storage.assumingMemoryBound(to: pthread_mutex_t.self) }

    @inline(__always)
    private var state: UnsafeMutablePointer<State> { (storage + Self.stateOffset).assumingMemoryBound(to: State.self) }

    /// Held across fork() by a `pthread_atfork` prepare handler, so the child's state is whole;
    /// `unlockAfterFork` in the parent and in the child (on the forking thread, which holds it there).
    package borrowing func lockForFork() { pthread_mutex_lock(mutex) }
    package borrowing func unlockAfterFork() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the state while holding the lock (not re-entrant).
    @inline(__always)
    package borrowing func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }

    /// Whether a thread holds the lock now, the caller's own included (a try-lock). Tests only: a probe that
    /// work another thread may need runs with it free (`VariantStoreLockTests`).
    package borrowing func isLocked() -> Bool {
        guard pthread_mutex_trylock(mutex) == 0 else { return true }
        pthread_mutex_unlock(mutex)
        return false
    }
}

extension Lock: @unchecked Sendable {}
