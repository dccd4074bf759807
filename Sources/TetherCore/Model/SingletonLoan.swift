import Synchronization

/// A published singleton handed out without a retain, so hits on one singleton
/// from many threads write no shared cache line. The borrower takes `lend()`,
/// records the loan where `SlotBridge.recall` can find it (a handle), issues the
/// barrier that pairs with `SlotBridge.unpublishBarrier` (a full fence, or the
/// light side of an asymmetric one), then calls `confirm()`. True: the
/// singleton was still published after the loan was recorded, so whoever
/// unpublishes it sees the loan (after its barrier) and hands the lent instance
/// to `SlotBridge.recall` before dropping its own reference. False: the
/// borrower withdraws the loan and resolves the ordinary way.
@usableFromInline
package struct SingletonLoan {
    /// Unretained: the registration outlives every loan of its singletons.
    @usableFromInline let registration: Borrowed<Registration>
    @usableFromInline let address: UInt

    @usableFromInline init(registration: Borrowed<Registration>, address: UInt) {
        self.registration = registration
        self.address = address
    }

    @inlinable @inline(__always)
    package func lend() -> Borrowed<Instance> {
        Borrowed<SingletonSlot>(word: address)!.borrow { slot in
            slot.markLent()
            return slot.unretained.borrowed
        }
    }

    @inlinable @inline(__always)
    package func confirm() -> Bool { registration.borrow { $0.stillPublished(address) } }

    /// The singleton's instance pointer, read from its slot without a loan: safe
    /// to compare, never to dereference (the instance may be gone already).
    @inlinable @inline(__always)
    package var pointer: UnsafeMutableRawPointer {
        Borrowed<SingletonSlot>(word: address)!.borrow { $0.pointer }
    }
}

/// Loans of a registration's published singleton (the ABI's hit path: `Tether/Handles/Loans.swift`).
extension Registration {
    /// `singletonLoan()`, unless resolves must pass runtime arguments.
    @inlinable @inline(__always)
    package func loanWithoutArguments() -> SingletonLoan? { hasArguments ? nil : singletonLoan() }

    /// `loanWithoutArguments()` for a caller that lends it: nil too unless `lendsSingleton`.
    @inlinable @inline(__always)
    package func lendableLoan() -> SingletonLoan? { hasArguments || !lendsSingleton ? nil : singletonLoan() }

    /// The published singleton, to hand out without a retain (see `SingletonLoan`).
    @inlinable @inline(__always)
    package func singletonLoan() -> SingletonLoan? {
        let address = singleton.current.loadWord()
        guard address != 0 else { return nil }
        return SingletonLoan(registration: .init(self), address: address)
    }

    /// Relaxed: the lender's barrier before it orders it after the loan's record.
    @inlinable @inline(__always)
    func stillPublished(_ address: UInt) -> Bool {
        singleton.current.loadWordRelaxed() == address
    }
}
