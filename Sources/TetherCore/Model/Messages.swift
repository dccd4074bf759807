// The message catalogue: texts that more than one place reports are built here, once,
// so every path (resolve, resolver, plan description, validate) says the same thing;
// so are the cycle refusals (constructor, re-entry, retain), which name their rule's fix.
// A message with one reporter of its own stays at its throw site.

extension TetherError {
    /// A call on a container that `tether_container_free` already took.
    static var containerFreed: TetherError { TetherError(.invalidHandle, "the container was freed") }

    /// A provided value's registration (`ValueFactory`) reached without its value: its container
    /// was freed, or the key registered again (an override cleared) after the resolve picked it.
    static func valueLetGo(_ key: Key) -> TetherError {
        TetherError(.invalidHandle, "the value of \(key.quoted) was let go of (its container was freed or the key re-registered)")
    }

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

    /// The cycle error of a key asked for by a nested resolve while it was still being constructed further
    /// out on this thread: `keys` is the cycle (that key first and last), `links[i]` how `keys[i]` asked for
    /// `keys[i + 1]` (`Reentry.reentered`). The advice is for the innermost nested resolve (`factory` ->
    /// `target`) and where the request came from after it: a completion callback inside it (take `target`
    /// as a slot, or resolve it after the factory returned), `target`'s own construction, or the nested
    /// resolve itself (both: after it returned). A nested resolve builds a graph of its own, whose instances
    /// are not the ones further out: any further out on the cycle must first become slots (or a callback's
    /// resolver's gets) so that one resolve builds the whole cycle, else no fix of the last one works.
    static func reentered(_ keys: [Key], links: [Reentry.Link]) -> TetherError {
        let key = keys[keys.count - 1]
        let nested = links.indices.filter { links[$0].isNested }
        let last = nested.last ?? links.count - 1
        let (factory, target) = (keys[last], keys[last + 1])
        let completing = links.indices.last(where: { $0 > last && links[$0] == .callback }).map { keys[$0] }
        // Each fix leaves one edge between the two strong, so the other is taken weakly (else a retain cycle).
        var cause: String
        if links[last] == .nestedInCallback {
            cause = "a completion callback of \(factory.quoted) resolves \(target.quoted) in a resolve of its own, and "
                + (target == key ? "that is" : "its construction needs \(key.quoted),") + " still being constructed; "
                + "take \(target.quoted) from that callback's resolver instead, weakly (tether_resolver_get_weak)"
                + (target == key ? "" : " or with the slot of \(target.quoted) on \(key.quoted) declared TETHER_WEAK")
        } else if let completing {
            cause = "the factory of \(factory.quoted) resolves \(target.quoted), and a completion callback of \(completing.quoted) that this runs "
                + "asks for \(key.quoted) before that factory returned; take \(target.quoted) as a slot of \(factory.quoted) "
                + "(a dependency, or TETHER_LAZY / TETHER_WEAK_LAZY called after its factory returns) instead of resolving it in the factory, "
                + "or take it from the resolver of a completion callback of \(factory.quoted) (tether_on_complete, tether_resolver_get); "
                + "the callback of \(completing.quoted) then takes \(key.quoted) weakly (tether_resolver_get_weak)"
        } else if target != key {
            cause = "the factory of \(factory.quoted) resolves \(target.quoted), whose construction needs \(key.quoted) before that factory returned; "
                + "take \(target.quoted) from the resolver of a completion callback of \(factory.quoted) instead (tether_on_complete), once \(key.quoted) is made, "
                + "weakly (tether_resolver_get_weak) or with the slot on \(key.quoted) declared TETHER_WEAK"
        } else {
            // A completion callback of `factory` helps only when `factory` is made in `key`'s resolve
            // (a dependency), not in a resolve nested in it: the weak-lazy slot works for both.
            cause = "the factory of \(factory.quoted) (or a lazy provider it called) resolves \(key.quoted), which is still being constructed; "
                + "declare the slot of \(factory.quoted) on it TETHER_WEAK_LAZY(\(key.quoted)) and call it once the factory of \(key.quoted) returned, "
                + "or, \(factory.quoted) being a dependency of \(key.quoted), take it from the resolver of a completion callback of \(factory.quoted) "
                + "instead (tether_on_complete), weakly (tether_resolver_get_weak)"
        }
        if nested.count > 1 {
            let slots = cappedList(Array(nested.dropLast()), separator: ", ") { i in
                links[i] == .nestedInCallback
                    ? "\(keys[i + 1].quoted) from the resolver of the completion callback of \(keys[i].quoted) (tether_resolver_get)"
                    : "\(keys[i + 1].quoted) as a slot of \(keys[i].quoted)"
            }
            cause += "; but first take \(slots) (\(nested.count > 2 ? "each " : "")instead of its nested resolve): a nested resolve builds a graph of its own, "
                + "so this fix works only once one resolve builds the whole cycle"
        }
        var parts = ErrorParts(.nestedResolve, key: factory, target: target, path: keys)
        parts.callbackOf = completing
        var resolves = nested.map { ErrorParts.NestedResolve(from: keys[$0], to: keys[$0 + 1], inCallback: links[$0] == .nestedInCallback) }
        if resolves.count > ErrorParts.nestedCap { resolves.removeSubrange((ErrorParts.nestedCap - 1)..<(resolves.count - 1)) }
        parts.nested = resolves
        return TetherError(.cycle, "dependency cycle through constructors: \(pathText(keys)); \(cause)", parts)
    }

    /// The error of completion callbacks that would build a cycle anew forever (`Graph.buildAsked`):
    /// `segments[0]` is the key whose callback asks first, each next one the keys made for a callback's
    /// request (the one asked first, the one made last, whose callback asks next). The fixes: a key
    /// before the last made graph-scoped (the graph's instance then closes the cycle), or the first
    /// constructor edge on the way declared weak-lazy (the lap then makes no instance of the last key).
    static func callbackLap(_ segments: [[Key]]) -> TetherError {
        let keys = segments.flatMap { $0 }
        let text = segments.enumerated().map { i, segment in
            segment.enumerated().map { j, key in
                key.quoted + (j == segment.count - 1 && i < segments.count - 1 ? " (completion)" : "")
            }.joined(separator: " -> ")
        }.joined(separator: " -> ")
        let owner = keys[0], kept = keys[keys.count - 2]
        var parts = ErrorParts(.callbackLap, path: keys)
        parts.callbackOf = owner
        var fixes = "make \(kept.quoted) graph-scoped (TETHER_SCOPE_GRAPH) so that the graph's instance closes the cycle"
        if let edge = segments.dropFirst().first(where: { $0.count > 1 }) {
            (parts.key, parts.target) = (edge[0], edge[1])
            fixes += ", or declare the slot of \(edge[0].quoted) on \(edge[1].quoted) TETHER_WEAK_LAZY(\(edge[1].quoted))"
        }
        return TetherError(.cycle, "dependency cycle through completion callbacks: \(text); each lap makes a new \(owner.quoted) "
                           + "(nothing on the way is kept in the graph) whose callback asks again, without end; \(fixes)", parts)
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
