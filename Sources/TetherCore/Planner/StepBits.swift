/// A set of a plan's steps (or of its container steps, by number), a bit each: what a run keeps per step. The
/// type a run's masks have is its `StepBinding`'s `Mask`, specialized: `WordMask` for a plan whose container steps
/// are among its first 64 steps (every plan's mask fits one word then: what a container step asked for comes
/// before it), `StepBits` for the rest (`Plan.wideMasks`), so the common plans pay nothing for the large ones.
/// A run's `ContainerClaims` keep their words in place (`width` words per kind: 1 for `WordMask`).
protocol StepMask {
    init()
    /// The set of the first 64 steps `word` names.
    init(word: UInt)
    /// `bits` (a one-word mask: its first 64 steps).
    init(_ bits: StepBits)
    /// Whether it is `StepBits` (constant per type, so a one-word run tests nothing).
    static var isWide: Bool { get }
    /// Its first 64 steps.
    var word: UInt { get }
    /// The set as `StepBits` (the graph's masks: `Graph.lateContainerClaims`).
    var stepBits: StepBits { get }
    var isEmpty: Bool { get }
    var count: Int { get }
    func contains(_ step: Int) -> Bool
    mutating func insert(_ step: Int)
    mutating func remove(_ step: Int)
    mutating func formUnion(_ other: Self)
    func subtracting(_ other: Self) -> Self
    func intersection(_ other: Self) -> Self
    /// Its lowest step, nil when empty.
    var first: Int? { get }
    /// The words per kind a plan of `steps` steps keeps in a run's `ContainerClaims`.
    static func width(steps: Int) -> Int
    /// The set in `width` words at `words`.
    static func load(_ words: UnsafeMutablePointer<UInt>, width: Int) -> Self
    /// The word and bit of `step` in the set kept at `words`.
    static func place(_ step: Int, in words: UnsafeMutablePointer<UInt>) -> (word: UnsafeMutablePointer<UInt>, bit: UInt)
    /// Keeps the set in `width` words at `words`.
    func store(in words: UnsafeMutablePointer<UInt>, width: Int)
}

extension StepMask {
    static func test(_ step: Int, in words: UnsafeMutablePointer<UInt>) -> Bool {
        let (word, bit) = place(step, in: words)
        return word.pointee & bit != 0
    }
    static func set(_ step: Int, in words: UnsafeMutablePointer<UInt>) {
        let (word, bit) = place(step, in: words)
        word.pointee |= bit
    }
    static func clear(_ step: Int, in words: UnsafeMutablePointer<UInt>) {
        let (word, bit) = place(step, in: words)
        word.pointee &= ~bit
    }
}

/// The one-word mask: steps 0 to 63 (a step past those is in no set: `1 << 64` is 0). A word, specialized:
/// what a run of a plan of 64 steps or its container steps among its first 64 paid before (`UInt` masks).
struct WordMask: StepMask {
    var bits: UInt = 0
    @inline(__always) init() {}
    @inline(__always) init(word: UInt) { bits = word }
    @inline(__always) init(_ bits: StepBits) { self.bits = bits.low }
    @inline(__always) static var isWide: Bool { false }
    @inline(__always) var word: UInt { bits }
    @inline(__always) var stepBits: StepBits { StepBits(word: bits) }
    @inline(__always) var isEmpty: Bool { bits == 0 }
    @inline(__always) var count: Int { bits.nonzeroBitCount }
    @inline(__always) func contains(_ step: Int) -> Bool { bits & 1 << UInt(step) != 0 }
    @inline(__always) mutating func insert(_ step: Int) { bits |= 1 << UInt(step) }
    @inline(__always) mutating func remove(_ step: Int) { bits &= ~(1 << UInt(step)) }
    @inline(__always) mutating func formUnion(_ other: WordMask) { bits |= other.bits }
    @inline(__always) func subtracting(_ other: WordMask) -> WordMask { .init(word: bits & ~other.bits) }
    @inline(__always) func intersection(_ other: WordMask) -> WordMask { .init(word: bits & other.bits) }
    @inline(__always) var first: Int? { bits == 0 ? nil : bits.trailingZeroBitCount }
    @inline(__always) static func width(steps: Int) -> Int { 1 }
    @inline(__always) static func load(_ words: UnsafeMutablePointer<UInt>, width: Int) -> WordMask { .init(word: words[0]) }
    @inline(__always) static func place(_ step: Int, in words: UnsafeMutablePointer<UInt>) -> (word: UnsafeMutablePointer<UInt>, bit: UInt) {
        (words, 1 << UInt(step))
    }
    @inline(__always) func store(in words: UnsafeMutablePointer<UInt>, width: Int) { words[0] = bits }
}

/// A set of a plan's steps for a plan of any size: the first 64 steps in `low`, the rest in words of their own
/// (`high`, empty until a step past the 64th is in: no allocation). A wide plan's run masks (`Plan.wideMasks`), and
/// the graph's: `Graph.replaySkips` and `Graph.requestSkips` (the steps a resolver's gets or a request built,
/// `Plan.takeBuilt`, `Plan.takeBuiltAsked`, `Plan.takeFromGraph`), `Graph.claimedSkip`, `claimedHeld`,
/// `unclaimedUnder`, `lateContainerClaims` (a run's `StepMask` takes its own of them: `init(_:)`).
struct StepBits: StepMask {
    var low: UInt = 0
    var high: [UInt] = []

    init() {}
    init(word: UInt) { low = word }
    init(_ bits: StepBits) { self = bits }
    static var isWide: Bool { true }
    var word: UInt { low }
    var stepBits: StepBits { self }

    var isEmpty: Bool { low == 0 && !high.contains { $0 != 0 } }
    var count: Int { high.reduce(low.nonzeroBitCount) { $0 + $1.nonzeroBitCount } }

    @inline(__always)
    func contains(_ step: Int) -> Bool {
        step < UInt.bitWidth ? low & 1 << UInt(step) != 0 : highContains(step)
    }

    private func highContains(_ step: Int) -> Bool {
        let (word, bit) = (step / UInt.bitWidth - 1, step % UInt.bitWidth)
        return word < high.count && high[word] & 1 << UInt(bit) != 0
    }

    mutating func insert(_ step: Int) {
        if step < UInt.bitWidth { low |= 1 << UInt(step); return }
        let (word, bit) = (step / UInt.bitWidth - 1, step % UInt.bitWidth)
        if word >= high.count { high.append(contentsOf: repeatElement(0, count: word + 1 - high.count)) }
        high[word] |= 1 << UInt(bit)
    }

    mutating func remove(_ step: Int) {
        if step < UInt.bitWidth { low &= ~(1 << UInt(step)); return }
        let (word, bit) = (step / UInt.bitWidth - 1, step % UInt.bitWidth)
        if word < high.count { high[word] &= ~(1 << UInt(bit)) }
    }

    mutating func formUnion(_ other: StepBits) {
        low |= other.low
        if other.high.count > high.count { high.append(contentsOf: repeatElement(0, count: other.high.count - high.count)) }
        for n in other.high.indices { high[n] |= other.high[n] }
    }

    func subtracting(_ other: StepBits) -> StepBits {
        var rest = StepBits(word: low & ~other.low)
        rest.high = high.indices.map { high[$0] & ~($0 < other.high.count ? other.high[$0] : 0) }
        return rest
    }

    func intersection(_ other: StepBits) -> StepBits {
        var both = StepBits(word: low & other.low)
        both.high = (0..<min(high.count, other.high.count)).map { high[$0] & other.high[$0] }
        return both
    }

    var first: Int? {
        if low != 0 { return low.trailingZeroBitCount }
        guard let n = high.firstIndex(where: { $0 != 0 }) else { return nil }
        return (n + 1) * UInt.bitWidth + high[n].trailingZeroBitCount
    }

    static func width(steps: Int) -> Int { max(1, (steps + UInt.bitWidth - 1) / UInt.bitWidth) }

    static func load(_ words: UnsafeMutablePointer<UInt>, width: Int) -> StepBits {
        var bits = StepBits(word: words[0])
        if width > 1 && (1..<width).contains(where: { words[$0] != 0 }) { bits.high = (1..<width).map { words[$0] } }
        return bits
    }

    static func place(_ step: Int, in words: UnsafeMutablePointer<UInt>) -> (word: UnsafeMutablePointer<UInt>, bit: UInt) {
        (words + step / UInt.bitWidth, 1 << UInt(step % UInt.bitWidth))
    }

    func store(in words: UnsafeMutablePointer<UInt>, width: Int) {
        words[0] = low
        for n in 1..<max(width, 1) { words[n] = n - 1 < high.count ? high[n - 1] : 0 }
    }

    /// Empties the set, keeping `high`'s storage only where it had some (the common set: a word, nothing released).
    @inline(__always)
    mutating func removeAll() {
        low = 0
        if !high.isEmpty { high.removeAll() }
    }
}
