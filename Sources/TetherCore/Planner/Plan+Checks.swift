import Synchronization

// What a plan checks at run time (creation checks, published variants), its walks, its block's template.

extension Plan {
    /// Whether creation step `step`'s check is where the build's walk reaches it (`CreationCheck.reachedThere`),
    /// or, in a run that goes on in a `PublishedVariant` (`switching`), its early check is (where the build's walk
    /// reaches it, before its own dependencies, which a later step takes too): revived there, the run goes on
    /// in that variant, which makes those dependencies where the later step asks, as the build reviving it does.
    /// `met`: in a run up to a cut at step `met` (`Plan.meeting`), not a check where the build's walk reaches it with `met`
    /// under `step`: at or before the cut, and revived there the build never asks for `met` under it (no cycle there),
    /// where the run would stop short and report one (`switchesUpToCut`'s rule for the check where the walk reaches it),
    /// unless that cut moves (`cutMoves`, `PlanProgress.cutMoves`): revived there, the run goes on past it (`takePublished`).
    func revivesWhereReached(_ step: Int, switching: Bool = false, met: Int? = nil, cutMoves: Bool = false) -> Bool {
        creationChecks.contains { c in
            c.step == step && (c.reachedThere && (cutMoves || !(met.map { $0 < steps.count && descends($0, from: step) } ?? false))
                || switching && c.variant >= 0)
        }
    }

    /// Whether creation step `step` is revived only at an early check whose `PublishedVariant` moves steps under a container
    /// step (`movesUnderContainer`): a run that claimed each container step, none cached nor refused, goes on in it.
    func revivesOnlyUnderMoved(_ step: Int) -> Bool {
        !creationChecks.contains { $0.step == step && $0.reachedThere }
            && creationChecks.contains { $0.step == step && $0.variant >= 0 && publishedVariants[$0.variant].movesUnderContainer }
    }

    /// Whether a run up to a cut at step `met` (`Plan.meeting`) goes on in every `PublishedVariant` that revives creation
    /// step `step` (`revivesWhereReached(_:switching:)`): `met` is a step each of those runs makes, so the build reviving
    /// it meets `met` where that walk asks for it (`cutPosition`). (Not a failing plan's open frame: no variant.)
    func switchesUpToCut(_ step: Int, met: Int) -> Bool {
        met < steps.count
            && publishedVariants.indices.allSatisfy { publishedVariants[$0].step != step || cutPosition($0, met: met) != nil }
    }

    /// Where a run up to a cut gone on in `PublishedVariant` `variant` stops: the position in its order of the first
    /// step it makes that is `met` or asked for under it (the build asks for `met` once those before are made, none
    /// from there on). Nil: `met` is not a step that run makes (the build reviving there never meets it).
    func cutPosition(_ variant: Int, met: Int) -> Int? {
        let v = publishedVariants[variant]
        let made = v.order[..<(v.order.count - v.skip.nonzeroBitCount)]
        guard made.contains(met) else { return nil }
        return Plan.firstUnder(met, made) { v.parent[$0] }
    }

    /// The first of `order` (a walk's post-order) that is `met` or asked for under it (`parent`: that walk's askers).
    static func firstUnder<C: Collection<Int>>(_ met: Int, _ order: C, parent: (Int) -> Int) -> C.Index? {
        order.firstIndex { s in
            var k = s
            while k >= 0 && k != met { k = parent(k) }
            return k == met
        }
    }

    /// The `CreationCheck`s of creation steps `creating` (in step order). `walk`: of a run in which another
    /// order holds (`PublishedVariant`): the steps in the build's walk's post-order, the step that asked for
    /// each first, and the creation steps taken as leaves; positions are then in that order. `scope`: each one's, a run's
    /// (`goingOn`: a local step's recorded registration is its recording child's); nil: read while recording.
    static func creationChecks(_ steps: [Step], _ inputs: [Int], creating: [Int], walk: Walk? = nil,
                               scope: ((Int) -> Scope)? = nil) -> [CreationCheck] {
        guard !creating.isEmpty else { return [] }
        let order = walk?.order ?? Array(steps.indices)
        var position = [Int](repeating: -1, count: steps.count)
        for p in order.indices { position[order[p]] = p }
        func parent(_ p: Int) -> Int {
            let k = walk?.parent[order[p]] ?? steps[order[p]].parent
            return k < 0 ? -1 : position[k]
        }
        func isLeaf(_ p: Int) -> Bool { steps[order[p]].isShared || walk?.leaves.contains(order[p]) == true }
        var madeIndex = [Int](repeating: -1, count: order.count)
        var made = 0
        for p in order.indices where !isLeaf(p) { madeIndex[p] = made; made += 1 }
        // (An asker comes after what it asked for: past `c`, the chain cannot reach it.)
        func descends(_ j: Int, from c: Int) -> Bool {
            var k = parent(j)
            while k >= 0 && k < c { k = parent(k) }
            return k == c
        }
        // The last made step taking each step as an input.
        var lastTaker = [Int](repeating: -1, count: order.count)
        for k in order.indices where !isLeaf(k) {
            let step = steps[order[k]]
            let slots = step.slotCount
            for input in inputs[step.firstInput ..< step.firstInput + slots] where input >= 0 { lastTaker[position[input]] = k }
        }
        // Per step, its own dependencies' steps: those right before it that it (or one of them) asked
        // for first, from `runStart`; `latestTaker`: the last step taking one of them. In one pass,
        // jumping over each such step's own run (linear in a chain, where step by step was cubic).
        var runStart = [Int](repeating: 0, count: order.count)
        var latestTaker = [Int](repeating: -1, count: order.count)
        for c in order.indices {
            var first = c, latest = -1
            while first > 0 && descends(first - 1, from: c) {
                let k = first - 1
                latest = max(latest, lastTaker[k], latestTaker[k])
                first = runStart[k]
            }
            (runStart[c], latestTaker[c]) = (first, latest)
        }
        var checks: [CreationCheck] = []
        for c in creating.map({ position[$0] }).sorted() where c >= 0 && !isLeaf(c) {
            let first = runStart[c]
            // Taken by a step after it (a shared step after it is a leaf: it has no inputs).
            let taken = latestTaker[c] > c
            let start = (first...c).first { !isLeaf($0) }!
            let at = taken ? c : start
            checks.append(CreationCheck(at: madeIndex[at], made: madeIndex[c], step: order[c],
                                        scope: scope?(order[c]) ?? steps[order[c]].recorded.borrow { $0.specReference.borrow { $0.scope } },
                                        reachedThere: !taken || first == c))
        }
        // Outer first where two start at one step (the outer's range holds the inner's).
        return checks.sorted { ($0.at, -$0.made) < ($1.at, -$1.made) }
    }

    /// The container steps' `CreationCheck`s, placed as a creation step's: where the build asks for each (the first of
    /// its own dependencies' steps, or the step itself when a later step takes one of those). None before any factory
    /// ran (at the first made step: nothing nested published it). (Past the 64th step too since branch largemasks:
    /// the run's masks are `StepBits` then, `wideMasks`.)
    static func containerChecks(_ steps: [Step], _ inputs: [Int]) -> [CreationCheck] {
        let containers = steps.indices.filter { steps[$0].isContainer }
        var checks = creationChecks(steps, inputs, creating: containers)
        for k in checks.indices { checks[k].container = containers.firstIndex(of: checks[k].step)! }
        return checks.filter { $0.at > 0 }
    }

    /// A walk of a plan's steps as the build's (`walk`).
    struct Walk {
        let order: [Int]
        let parent: [Int]
        let leaves: [Int]

        /// The step where this walk asks for step `met` (a cut, `Plan.meeting`): the first that is it or under it.
        func cut(_ met: Int) -> Int? { Plan.firstUnder(met, order) { parent[$0] }.map { order[$0] } }
    }

    /// The build's walk over the steps from the root: each step's DEP inputs in slot order, each step
    /// once (where first asked for), a shared step and `leaves` taken, not descended into. Nil past
    /// `maxSteps` steps deep.
    /// `slots`: a WEAK slot's step and an ALL slot's items walked where the slot is filled, as the build's (its
    /// slots' `SlotInput`s; empty: DEP inputs only).
    static func walk(_ steps: [Step], _ inputs: [Int], leaves: [Int], slots: [SlotInput] = []) -> Walk? {
        var order: [Int] = [], parent = [Int](repeating: -1, count: steps.count), seen = [Bool](repeating: false, count: steps.count)
        func visit(_ s: Int, depth: Int) -> Bool {
            seen[s] = true
            if !steps[s].isShared && !leaves.contains(s) {
                guard depth < maxSteps else { return false }
                let count = steps[s].slotCount
                for input in inputs[steps[s].firstInput ..< steps[s].firstInput + count] {
                    let named = Plan.isStep(input) ? [input] : !slots.isEmpty && Plan.isSlot(input)
                        ? slots[Plan.slotNumber(input)].kind == .weak ? [slots[Plan.slotNumber(input)].step] : slots[Plan.slotNumber(input)].items : []
                    for step in named where step >= 0 && !seen[step] {
                        parent[step] = s
                        guard visit(step, depth: depth + 1) else { return false }
                    }
                }
            }
            order.append(s)
            return true
        }
        guard !steps.isEmpty, visit(steps.count - 1, depth: 0) else { return nil }
        return Walk(order: order, parent: parent, leaves: leaves)
    }

    /// The most `PublishedVariant`s of a plan (each found published early in another's run has its own).
    static var maxVariants: Int { 16 }

    /// The `PublishedVariant`s of the creation checks `checks` that are at their steps though those have
    /// dependencies' steps of their own (`reachedThere` false), each with an early check (appended to
    /// `checks`, kept in run order): a run finding the step published there makes no dependency the build
    /// would not (the rest of the build's walk, the step a leaf), and so on in that run (`current`: the walk
    /// and the made steps' order the checks are of; nil: the plan's). None where the walk does not give the
    /// plan's steps (a shape this does not model), or where that run's creation steps are not in step order
    /// (the graph publishes those in step order; it queues callbacks in the run's order, `enterCreated`, and
    /// a failed run's abort lets go of the made steps in it, `letGoMade`). Over container steps (a run that reads the
    /// request, `Plan.enterRequest` entering in the variant's order) only where the step is under none, none is under
    /// it and none of what it no longer asks for first goes under one: each container step's steps, its claims
    /// (`claimLate`, a failed claim's step) and skips under it are the plan's, its check placed in the variant's order.
    static func publishedVariants(_ steps: [Step], _ inputs: [Int], creating: [Int], _ checks: inout [CreationCheck],
                                          _ variants: inout [PublishedVariant], _ arena: inout LineArena,
                                          current: (walk: Walk, order: [Int])? = nil) {
        guard checks.contains(where: { !$0.reachedThere && $0.container < 0 }) else { return }
        let madeSteps = steps.indices.filter { !steps[$0].isShared }
        let containers = steps.indices.filter { steps[$0].isContainer }
        // Whether a container step asked for step `s` first (`parent`: a walk's askers).
        func underContainer(_ s: Int, _ parent: [Int]) -> Bool {
            var k = parent[s]
            while k >= 0 && !steps[k].isContainer { k = parent[k] }
            return k >= 0
        }
        let ownRun = current == nil
        guard let current = current ?? walk(steps, inputs, leaves: []).flatMap({ plain in
            plain.order == Array(steps.indices) && plain.parent == steps.map(\.parent) ? (plain, madeSteps) : nil
        }) else { return }
        var early: [CreationCheck] = []
        for check in checks where !check.reachedThere && check.container < 0 && variants.count < maxVariants {
            let c = check.step
            // Where the build's walk reaches it: the first made step of its own dependencies'.
            func under(_ s: Int) -> Bool {
                var k = current.walk.parent[s]
                while k >= 0 && k != c { k = current.walk.parent[k] }
                return k == c
            }
            guard let start = current.order.firstIndex(where: under), start < check.made,
                  let walked = walk(steps, inputs, leaves: current.walk.leaves + [c]) else { continue }
            let made = walked.order.filter { !steps[$0].isShared && !walked.leaves.contains($0) }
            // The same before it; the creation steps it makes in step order (the graph publishes those in step
            // order: `Graph.pendCreated`; it queues the others' callbacks in the run's, `enterCreated`).
            let entered = made.filter { steps[$0].creates }
            guard made.count >= start, Array(made[..<start]) == Array(current.order[..<start]),
                  zip(entered, entered.dropFirst()).allSatisfy({ $0 < $1 }) else { continue }
            // Over container steps: each one's steps the plan's (see above); its check where the variant's walk asks for it.
            var containerChecks: [CreationCheck] = []
            var moves = false
            if !containers.isEmpty {
                guard !underContainer(c, current.walk.parent), !containers.contains(where: under) else { continue }
                // What it no longer asks for first going under a container step (since branch revivev: `movesUnderContainer`): only
                // the plan's own run's variant, switched to before any factory (`start` 0: nothing nested published a container
                // step yet), whose claims found each container step to claim, none cached nor refused (`Graph.claimWithContainerSteps`
                // declines the revive else): each one's claim is where the build asks for it, nothing skipped under it.
                moves = walked.order.contains(where: { under($0) && underContainer($0, walked.parent) })
                guard !moves || ownRun && start == 0 else { continue }
                var found = creationChecks(steps, inputs, creating: containers, walk: walked)
                for k in found.indices { found[k].container = containers.firstIndex(of: found[k].step)! }
                // (One made before the early check was checked there, in the same order; none straddles it, as none is over the step.)
                guard !found.contains(where: { $0.made >= start && $0.at < start }) else { continue }
                containerChecks = found.filter { $0.made >= start && $0.at > 0 }
            }
            // (RESOLVER slots, a binding's factories: a step with one enters the steps made before it in this order and
            // opens the frames of this walk's askers, `openFrames`, from `order` and `parent`.)
            let rest = madeSteps.filter { !made.contains($0) }
            var after = creationChecks(steps, inputs, creating: creating, walk: walked).compactMap { found -> CreationCheck? in
                // One the run checked before it stays checked; one it checks later, at its step past it at least.
                guard let original = checks.first(where: { $0.step == found.step }), original.at >= start else { return nil }
                guard found.at < start else { return found }
                return CreationCheck(at: found.made, made: found.made, step: found.step, scope: found.scope, reachedThere: false)
            }
            after += containerChecks
            after.sort { ($0.at, -$0.made) < ($1.at, -$1.made) }
            let index = variants.count
            variants.append(PublishedVariant(step: c, skip: 0, order: .init(start: nil, count: 0), checks: .init(start: nil, count: 0)))
            // Found published early in this run too: its own variants.
            publishedVariants(steps, inputs, creating: creating, &after, &variants, &arena, current: (walked, made + rest))
            early.append(CreationCheck(at: start, made: check.made, step: c, scope: check.scope, reachedThere: false, variant: index))
            variants[index] = PublishedVariant(step: c, skip: rest.reduce(0) { $0 | 1 << UInt($1) },
                                               order: arena.copy(made + rest), checks: arena.copy(after), parent: arena.copy(walked.parent),
                                               movesUnderContainer: moves)
        }
        checks = (checks + early).sorted { ($0.at, -$0.made) < ($1.at, -$1.made) }
    }

    /// The words of every block of a plan and where a run fills them in.
    static func blockTemplate(_ steps: UnsafeBufferPointer<Step>, _ inputs: UnsafeBufferPointer<Int>, words: Int,
                                      _ arena: inout LineArena) -> BlockTemplate {
        typealias Patch = BlockTemplate.Patch
        let template = UnsafeMutableBufferPointer(start: arena.allocate(UInt.self, capacity: words), count: words)
        template.initialize(repeating: 0)
        var pointers: [Patch] = []
        var shared: [Patch] = []
        var localSpecs: [Patch] = []
        if words > 0 {
            let block = InstanceBlock(words: template.baseAddress!)
            let root = steps.count - 1
            for i in 0...root where !steps[i].isShared && !steps[i].isContainer {
                let offset = steps[i].blockOffset
                if i < root {
                    pointers.append(Patch(word: InstanceBlock.pointerWord(at: offset), step: i))
                    if steps[i].local >= 0 { localSpecs.append(Patch(word: InstanceBlock.specWord(at: offset), step: i)) }
                }
                var entry = InstanceBlock.firstEntry(at: offset, isRoot: i == root)
                let first = steps[i].firstInput
                // A local step's registration has the recorded params (`fits`).
                let slots = steps[i].slotCount
                // A local step's record gets its spec per run (0 here; `write` takes the recording registration's).
                let spec = i == root ? nil : steps[i].spec ?? steps[i].recorded.borrow { $0.specReference }
                block.write(at: offset, pointer: 0, spec: spec, count: steps[i].blockCount) { add in
                    for input in inputs[first ..< first + slots] where Plan.isStep(input) {
                        if steps[input].isShared || steps[input].isContainer {
                            shared.append(Patch(word: entry, step: input))
                            add(0)
                        } else {
                            add(InstanceBlock.inner(at: steps[input].blockOffset))
                        }
                        entry += 1
                    }
                }
                if i < root && steps[i].local >= 0 { template[InstanceBlock.specWord(at: offset)] = 0 }
            }
        }
        return BlockTemplate(words: UnsafeBufferPointer(template), pointers: arena.copy(pointers), shared: arena.copy(shared),
                             localSpecs: arena.copy(localSpecs))
    }

    /// The creation steps in the order a run claims their cells (`Graph.claimCreations`): `creations`' (by
    /// key, as `Graph.claimInOrder` claims), unless some are local: then by the resolving child's registrations.
    func creationsInClaimOrder(_ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Creation] {
        guard hasLocalCreations else { return Array(creations) }
        return creations.sorted { ObjectIdentifier(registration(of: $0.step, locals).object) < ObjectIdentifier(registration(of: $1.step, locals).object) }
    }
}
