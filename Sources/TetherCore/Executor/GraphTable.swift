/// What one graph knows of each registration it touched: under construction (a
/// frame of it is on the stack, so asking for it again is a constructor cycle),
/// or the instance the graph holds for it (non-transient scopes: its index in
/// the graph's `alive`), or nothing.
///
/// Open addressing over the registration's address in plain memory: a lookup is
/// a hash and usually one probe, however deep the chain or wide the graph. A
/// slot once used keeps its key until `removeAll` (a state can go back to
/// nothing), so a probe never has to skip deleted slots.
struct GraphTable {
    /// A state word: one of these, or `state(index)` of an instance.
    static let absent: UInt = 0
    static let constructing: UInt = 1

    @inline(__always) static func state(_ index: Int) -> UInt { UInt(index) + 2 }
    @inline(__always) static func index(_ state: UInt) -> Int { Int(state - 2) }

    private var keys: UnsafeMutablePointer<UInt>
    private var states: UnsafeMutablePointer<UInt>
    private var mask: Int
    /// Slots with a key, for `removeAll` and growth.
    private var used = PlainStack<Int>()

    init() {
        mask = 31
        keys = .allocate(capacity: mask + 1)
        keys.initialize(repeating: 0, count: mask + 1)
        states = .allocate(capacity: mask + 1)
    }

    func free() {
        keys.deallocate()
        states.deallocate()
        used.free()
    }

    @inline(__always)
    private func slot(of key: UInt) -> Int {
        // Addresses of objects are 16-byte aligned; mix the higher bits in.
        var i = Int(truncatingIfNeeded: (key >> 4) ^ (key >> 13)) & mask
        while keys[i] != 0 && keys[i] != key { i = (i + 1) & mask }
        return i
    }

    /// The state of `registration` in this graph.
    @inline(__always)
    func state(_ registration: Borrowed<Registration>) -> UInt {
        let key = registration.word
        let i = slot(of: key)
        return keys[i] == key ? states[i] : Self.absent
    }

    @inline(__always)
    mutating func set(_ registration: Borrowed<Registration>, _ state: UInt) {
        let key = registration.word
        var i = slot(of: key)
        if keys[i] == 0 {
            if (used.count + 1) * 2 > mask + 1 {
                grow()
                i = slot(of: key)
            }
            keys[i] = key
            used.append(i)
        }
        states[i] = state
    }

    /// Puts `registration` back to nothing if it is still under construction
    /// (a transient just built, or an abandoned frame); an instance stays.
    @inline(__always)
    mutating func endConstruction(_ registration: Borrowed<Registration>) {
        let key = registration.word
        let i = slot(of: key)
        if keys[i] == key && states[i] == Self.constructing { states[i] = Self.absent }
    }

    mutating func removeAll() {
        for n in 0..<used.count { keys[used[n]] = 0 }
        used.truncate(to: 0)
    }

    private mutating func grow() {
        let (oldKeys, oldStates, oldUsed) = (keys, states, used)
        mask = mask * 2 + 1
        keys = .allocate(capacity: mask + 1)
        keys.initialize(repeating: 0, count: mask + 1)
        states = .allocate(capacity: mask + 1)
        used = PlainStack<Int>()
        for n in 0..<oldUsed.count {
            let old = oldUsed[n]
            let i = slot(of: oldKeys[old])
            keys[i] = oldKeys[old]
            states[i] = oldStates[old]
            used.append(i)
        }
        oldKeys.deallocate()
        oldStates.deallocate()
        oldUsed.free()
    }
}
