import Synchronization

// Completion callbacks: their order (`inCompletionOrder`, the rule's home), their runs and
// failures, and the laps a callback's requests make.

extension Graph {
    /// The order of completion callbacks, their rule's one home: once no factory of the graph
    /// runs, each instance that has callbacks in the order it entered the graph (its creation
    /// order; instances the callbacks' own resolves make come behind, the queue growing), its
    /// callbacks in the order added. `next()` gives the next such instance (nil: none left) and
    /// its callback count; `call(n)` runs callback `n` of that one. `runCompletions` runs a
    /// graph's queue through it; the plan recorder records a plan's calls through it
    /// (`Plan.Recorder.declaredCompletions`), which an object plan (`Plan.runObjects`) and a
    /// binding's runner then run as recorded.
    @inline(__always)
    static func inCompletionOrder<E: Error>(next: () -> Int?, call: (Int) throws(E) -> Void) throws(E) {
        while let count = next() {
            for n in 0..<count { try call(n) }
        }
    }

    /// Runs queued completion callbacks (`inCompletionOrder`); callbacks that create instances append theirs.
    /// What a callback's requests read (`userCode`, `runningCallback`, `completing`) is let go of once
    /// after the loop, not after each callback: only callbacks run in the loop. Both closures stay
    /// small enough to be inlined (a callback's rare outcomes out of line, `callbackEnded`): each one
    /// not inlined cost s3 some 20-80 instructions a resolve (benchmarks/README, branch `smalls`).
    func runCompletions() throws(TetherError) {
        guard queueHead < queue.count else { return }
        userCode += 1
        defer {
            userCode -= 1
            runningCallback = -1
            completing = nil
        }
        var pending = Pending?.none
        var spec = Borrowed<InstanceSpec>?.none
        try Graph.inCompletionOrder(next: {
            guard queueHead < queue.count else { return nil }
            pending = queue[queueHead]
            queueHead += 1
            // Borrowed, not retained: the instance holds its spec, the graph the resolver.
            spec = pending.unsafelyUnwrapped.instance.borrow { Borrowed($0.spec) }
            return spec.unsafelyUnwrapped.borrow { $0.completionCount }
        }) { (n: Int) throws(TetherError) in
            let pending = pending.unsafelyUnwrapped
            runningCallback = queueHead - 1
            if !outer.isEmpty { completing = pending.registration }
            let resolver = completionResolver(pending)
            defer { resolver.borrow { $0.close() } }
            let outcome = pending.instance.borrow { instance in
                spec.unsafelyUnwrapped.borrow { spec in
                    resolver.borrow { resolver -> CallbackFailure? in
                        do throws(CallbackFailure) { try spec.complete(n, resolver, instance: instance) } catch { return error }
                        return nil
                    }
                }
            }
            if outcome != nil || lapWasRefused || tracer != nil { try callbackEnded(pending, n, outcome) }
        }
    }

    /// After callback `n` of `pending`: its failure, or the lap `buildAsked` refused in it (which fails
    /// the resolve as that cycle, whatever the callback made of it), and the trace's event.
    @inline(never)
    private func callbackEnded(_ pending: Pending, _ n: Int, _ outcome: CallbackFailure?) throws(TetherError) {
        let error = lapWasRefused ? lapRefused.take() : outcome.map { Graph.completionFailure(pending.instance.object.key, n, $0) }
        lapWasRefused = false
        if let tracer {
            let instance = pending.instance.object
            tracer.emit(.complete, instance.key, instance.pointer, status: error?.code)
        }
        if let error { throw error }
    }

    /// The error of completion callback `n` (from 0) of an instance of `key`:
    /// a declared target that could not be handed over keeps its own status.
    static func completionFailure(_ key: Key, _ n: Int, _ failure: CallbackFailure) -> TetherError {
        if let target = failure.target {
            var parts = target.parts
            (parts.callback, parts.callbackOf) = (n + 1, key)
            return TetherError(target.code, "a declared target of completion callback #\(n + 1) of \(key.quoted): \(target.message)", parts)
        }
        var parts = ErrorParts(.callback, reason: failure.reason.flatMap { $0.isEmpty ? nil : $0 })
        (parts.callback, parts.callbackOf) = (n + 1, key)
        var message = "completion callback #\(n + 1) of \(key.quoted) failed"
        if let reason = parts.reason { message += ": \(reason)" }
        // One status per kind of failure: a callback stopped by a refused strong edge
        // (it returned TETHER_E_RETAIN_CYCLE) fails the resolve as a retain cycle.
        return TetherError(failure.code == .retainCycle ? .retainCycle : .factoryFailed, message, parts)
    }

    /// A resolver for a completion callback of `pending`: the last one again when
    /// nobody else kept it (callbacks run one at a time), else a new one. The
    /// graph holds it (`spareResolver`) until the next.
    private func completionResolver(_ pending: Pending) -> Borrowed<Resolver> {
        if spareResolver != nil, isKnownUniquelyReferenced(&spareResolver!) {
            spareResolver!.reopen(lookup: pending.lookup, owner: pending.registration, instance: pending.instance)
        } else {
            spareResolver = Resolver(graph: self, lookup: pending.lookup, owner: pending.registration, instance: pending.instance)
        }
        return .init(spareResolver!)
    }

    /// An instance waiting for its completion callbacks (all kept alive by the graph or containers).
    struct Pending {
        let instance: Borrowed<Instance>
        let registration: Borrowed<Registration>
        let lookup: Borrowed<Container>
        /// The completion callback's request it was made for (in `requests`; -1: none) and
        /// the frames' keys then (in `viaPaths`; -1: none).
        var cause = -1
        var via = -1
    }

    /// A completion callback of an instance of `owner` asked for `asked`; that instance was
    /// made for request `parent` (-1: none) with the keys `viaPaths[via]` on the way.
    struct CallbackRequest {
        let owner: Borrowed<Registration>
        let asked: Borrowed<Registration>
        let parent: Int
        let via: Int
        /// `keptMade` when it was asked.
        let keptBefore: Int
    }

    /// `buildAsked`'s refusal: the running callback's request for `asked` repeats one of the chain of
    /// requests that caused its instance with nothing kept made since.
    @inline(never)
    func checkLap(_ asked: Borrowed<Registration>, by owner: Borrowed<Registration>) throws(TetherError) {
        let running = queue[runningCallback]
        var c = running.cause
        while c >= 0 {
            let request = requests[c]
            if request.owner === owner && request.asked === asked {
                if request.keptBefore == keptMade {
                    let error = callbackLap(from: c, running.cause, running.via)
                    (lapRefused, lapWasRefused) = (error, true)
                    throw error
                }
                return
            }
            c = request.parent
        }
    }

    /// For an instance with callbacks made for the request whose build runs: that request (recorded now,
    /// if it was not) and the frames' keys, as its `Pending.cause` and `via`.
    /// `asked` and `via`: a request's plan's root and path to the instance (`enterAsked`), else the frames'.
    @inline(never)
    func recordCause(asked: Borrowed<Registration>? = nil, via: [Key]? = nil) -> (cause: Int, via: Int) {
        if currentCause == Graph.unrecordedCause {
            let running = queue[runningCallback]
            requests.append(CallbackRequest(owner: running.registration, asked: asked ?? frames[0].registration, parent: running.cause,
                                            via: running.via, keptBefore: requestKeptBefore))
            currentCause = requests.count - 1
        }
        viaPaths.append(via ?? path)
        return (currentCause, viaPaths.count - 1)
    }

    /// The error of the lap from request `first` to the running callback's (`buildAsked`):
    /// its path, each instance whose callback asks marked, its first key repeated last.
    func callbackLap(from first: Int, _ cause: Int, _ via: Int) -> TetherError {
        var chain: [Int] = []
        var c = cause
        while c != first { chain.append(c); c = requests[c].parent }
        var segments = [[requests[first].owner.borrow { $0.key }]]
        for c in chain.reversed() { segments.append(viaPaths[requests[c].via]) }
        segments.append(viaPaths[via])
        return TetherError.callbackLap(segments)
    }
}
