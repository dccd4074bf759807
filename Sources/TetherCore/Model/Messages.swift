// The message catalogue: texts that more than one place reports are built here, once,
// so every path (resolve, resolver, plan description, validate) says the same thing.
// A message with one reporter stays at its throw site.

extension TetherError {
    /// A call on a container that `tether_container_free` already took.
    static var containerFreed: TetherError { TetherError(.invalidHandle, "the container was freed") }

    /// A child made from, or asking through, a parent that was freed meanwhile.
    static var parentFreed: TetherError { TetherError(.invalidHandle, "the parent container was freed") }

    /// `key` has no registration where it was looked up. `neededBy`: what asked for it
    /// (a path of frames, a callback, validate's list of dependents); nil when the caller
    /// asked for `key` itself. `listed`: one line of validate's report, which can hold
    /// hundreds: the advice is left out, and so are the parts (a binding shows the line as is,
    /// with the dependents it names).
    static func notRegistered(_ key: Key, neededBy: String? = nil, _ parts: ErrorParts? = nil, listed: Bool = false) -> TetherError {
        let asker = neededBy.map { " (needed by \($0))" } ?? ""
        let advice = listed ? "" : "; register it first (tether_register) or check the spelling"
        return TetherError(.notFound, "no registration for \(key.quoted)\(asker)\(advice)",
                           listed ? nil : parts ?? ErrorParts(.register, key: key))
    }

    /// A binding names the described plan of `key` (its failure, a resolver's answer, a replay's
    /// progress) while the configuration no longer has one.
    static func noDescribedPlan(_ key: Key) -> TetherError {
        TetherError(.invalidArgument, "\(key.quoted) has no described plan (its configuration changed?): describe it again")
    }

    /// A binding names step `step` of the described plan of `key`, which has `count`.
    static func noSuchStep(_ key: Key, _ step: Int, of count: Int) -> TetherError {
        TetherError(.invalidArgument, "the plan of \(key.quoted) has \(count) steps, not \(step + 1)")
    }
}
