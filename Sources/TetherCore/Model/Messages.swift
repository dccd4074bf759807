// The message catalogue: texts that more than one place reports are built here, once,
// so every path (resolve, resolver, plan description, validate) says the same thing;
// so are the cycle refusals (constructor, re-entry, retain), which name their rule's fix.
// A message with one reporter of its own stays at its throw site.

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

    /// A provider (a LAZY slot's, `tether_make_provider`'s) called after the instance it was
    /// handed to was destroyed (the core's `LazyCell`) or, for the ABI's, after `tether_provider_free`.
    package static func staleProvider(mayBeFreed: Bool) -> TetherError {
        TetherError(.invalidHandle, "stale provider: the instance it was handed to was destroyed"
                    + (mayBeFreed ? ", or it was freed (tether_provider_free)" : "") + "; do not call it after that")
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

    // MARK: cycles (a resolve, a nested resolve, validate and a described plan report them)

    /// The error of the constructor cycle `keys` (its first key repeated last), with
    /// the fixes that close it: its last edge set after construction, or weak-lazy
    /// (a strong lazy edge back would close a retain cycle, which is refused).
    static func constructorCycle(_ keys: [Key]) -> TetherError {
        let (from, to) = (keys[keys.count >= 2 ? keys.count - 2 : 0], keys[keys.count - 1])
        return TetherError(.cycle, "dependency cycle through constructors: \(pathText(keys)); break its last edge \(from.quoted) -> \(to.quoted): "
                           + "take \(to.quoted) in a completion callback of \(from.quoted) (tether_on_complete), "
                           + "or declare the slot TETHER_WEAK_LAZY(\(to.quoted))",
                           ErrorParts(.breakCycle, key: to, path: keys))
    }

    /// The cycle error for `key` asked for while `outer[from...]` and then the
    /// frames of `path` were being constructed.
    static func reentered(_ key: Key, outer: ArraySlice<Borrowed<Registration>>, path: [Key]) -> TetherError {
        let keys = outer.map { $0.borrow { $0.key } } + path + [key]
        return TetherError(.cycle, "dependency cycle through constructors: \(pathText(keys)); \(key.quoted) was resolved again while it was being constructed on this thread (from a factory, or a lazy provider it called); resolve it after the factory returns, e.g. in a completion callback (tether_on_complete)",
                           ErrorParts(.breakCycle, key: key, path: keys))
    }

    /// The error for a shared instance of `key` asked for by a nested resolve
    /// (`path` leading to it) while the resolve that made it, further out on this
    /// thread, is unfinished: its completion callbacks or later factories may
    /// still fail it, and then nothing it made may outlive it.
    static func unfinished(_ key: Key, path: [Key]) -> TetherError {
        let keys = path + [key]
        let via = path.isEmpty ? "" : " (\(pathText(keys)))"
        return TetherError(.cycle, "\(key.quoted) was resolved again\(via) before the resolve that is making it on this thread finished: a nested resolve (from a factory, a completion callback or a provider) cannot hand out an instance whose resolve may still fail; reach it through the completion callback's resolver (tether_resolver_get) or as a dependency of what is being built",
                           ErrorParts(.unfinished, key: key, path: keys))
    }

    /// The error of a strong edge `from` -> `to` refused because it would close the cycle `path`
    /// (a resolve's, and a described plan's: `Container.resolverAnswer`).
    static func retainCycle(from: Key, to: Key, path: [Key], backEdge: String = "use tether_resolver_get_weak for the back edge",
                            fix: ErrorParts.Fix = .weakEdge) -> TetherError {
        TetherError(.retainCycle, "strong edge \(from.quoted) -> \(to.quoted) would close a retain cycle \(pathText(path)); \(backEdge)",
                    ErrorParts(fix, key: from, target: to, path: path))
    }

    /// The refusal of a strong lazy slot of `owner` on `key` whose instance reaches
    /// `owner` through strong edges (`path`: `key` ... `owner`, `key`, as `StrongPath.find` gives it).
    static func lazyRetainCycle(owner: Key, key: Key, path: [Key]) -> TetherError {
        let cycle = [owner] + path.dropLast()
        return TetherError(.retainCycle,
            "lazy dependency \(owner.quoted) -> \(key.quoted) would close a retain cycle \(pathText(cycle)): "
            + "\(key.quoted) holds \(owner.quoted) strongly; declare the slot TETHER_WEAK_LAZY(\(key.quoted))",
            ErrorParts(.weakLazy, key: owner, target: key, path: cycle))
    }
}
