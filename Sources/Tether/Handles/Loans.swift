import Synchronization
import TetherCore

/// Nonzero while some unpublished singleton may still be lent: loan releases
/// then tell `RetiredLoans`. Read by every loan release (a shared line that is
/// written only when singletons are unpublished while lent).
let retiredLoanCount = Atomic<Int>(0)

/// Singletons their cache let go of while strong handles still borrowed them
/// (loans, see `SingletonLoan`): the strong reference the cache held is kept
/// here until the last loan is released, so a handle stays valid until released
/// and the destructor runs once, at that release.
///
/// Unpublishing (`retire`) and releasing a loan (`HandleSlots.releaseRef`) meet
/// in an asymmetric Dekker handshake (`Barrier.swift`):
/// - retire: mark the instance (its address in `addresses`, `retiredLoanCount`
///   raised), `heavyBarrier()`, then count the handle slots lending it;
/// - release: free the slot (a plain store), `lightBarrier()`, then look for the mark.
/// So a release either was seen by the count (the slot counted as free) or sees
/// the mark and reports itself (`loanReleased`): every counted loan reports its
/// release. A release the count did not include may report too: that only makes
/// the count reach zero early, and the instance is let go only when a fresh count
/// (under the lock, after the marking barrier) finds no loan at all. New loans of
/// an unpublished singleton are never confirmed (the lender's recheck sees it
/// unpublished, `SingletonLoan.confirm`), so they are withdrawn by their lender.
/// A release compares addresses only (never dereferences a retired instance,
/// which another release may be letting go of at the same moment).
/// The borrower's last use happens before the destructor either way: a counted
/// loan reports its release under `state`'s lock, and a slot the count saw free
/// was read by `countLoans`'s acquiring load of the state that `releaseRef`
/// stored releasing (so ThreadSanitizer sees the edge without annotations).
final class RetiredLoans: @unchecked Sendable {
    static let shared = RetiredLoans()

    /// Addresses of retired instances, read without the lock by loan releases.
    private static let capacity = 64
    private let addresses: UnsafeMutablePointer<Atomic<UInt>>
    /// Retired instances that found no free entry in `addresses`: while nonzero
    /// every loan release takes the lock.
    private let overflow = Atomic<Int>(0)

    private struct Entry {
        let instance: Instance
        /// Loans still to report, or nil until the first count.
        var outstanding: Int?
        let index: Int?
    }
    private let state = Lock([UInt: Entry]())

    private init() {
        addresses = .allocate(capacity: Self.capacity)
        for i in 0..<Self.capacity { (addresses + i).initialize(to: Atomic(0)) }
    }

    /// Keeps these unpublished, lent singletons alive until their loans are
    /// released; called by the cache that let go of them, before it drops its references.
    func retire(_ instances: [Instance]) {
        let keys = instances.map { Borrowed($0).word }
        state.withLock { entries in
            for (instance, key) in zip(instances, keys) where entries[key] == nil {
                var index: Int? = nil
                for i in 0..<Self.capacity where addresses[i].load(ordering: .relaxed) == 0 {
                    addresses[i].store(key, ordering: .relaxed)
                    index = i
                    break
                }
                if index == nil { overflow.add(1, ordering: .relaxed) }
                entries[key] = Entry(instance: instance, outstanding: nil, index: index)
                retiredLoanCount.add(1, ordering: .relaxed)
            }
        }
        heavyBarrier()
        var released: [Instance] = []
        state.withLock { entries in
            for key in keys {
                guard let entry = entries[key], entry.outstanding == nil else { continue }
                settle(key, &entries, into: &released)
            }
        }
        _ = consume released  // destructors run here, outside the lock
    }

    /// A loan of the instance at `address` was released while some instance
    /// was retired (`retiredLoanCount` nonzero).
    @inline(never)
    func loanReleased(_ address: UInt) {
        if overflow.load(ordering: .relaxed) == 0 {
            var marked = false
            for i in 0..<Self.capacity where addresses[i].load(ordering: .relaxed) == address {
                marked = true
                break
            }
            guard marked else { return }
        }
        var released: [Instance] = []
        state.withLock { entries in
            // No entry: let go of already. No count yet: the count, under this
            // lock after us, sees this slot free.
            guard let outstanding = entries[address]?.outstanding else { return }
            entries[address]!.outstanding = outstanding - 1
            if outstanding - 1 <= 0 { settle(address, &entries, into: &released) }
        }
        _ = consume released
    }

    /// Counts the loans of a retired instance; none: lets go of it. Under the lock.
    private func settle(_ key: UInt, _ entries: inout [UInt: Entry], into released: inout [Instance]) {
        let loans = Handles.refs.slots.countLoans(of: key)
        if loans > 0 {
            entries[key]!.outstanding = loans
            return
        }
        let entry = entries.removeValue(forKey: key)!
        if let index = entry.index {
            addresses[index].store(0, ordering: .relaxed)
        } else {
            overflow.subtract(1, ordering: .relaxed)
        }
        retiredLoanCount.subtract(1, ordering: .relaxed)
        released.append(entry.instance)
    }

    /// Retired instances still lent (for tests).
    var count: Int { state.withLock { $0.count } }
}
