// Plan descriptions: what a binding that calls its own factories gets (Container.describePlan),
// and the version words it checks them against (Container.versionAddresses).
import Testing
import TetherCore

@Suite struct PlanDescriptionTests {
    /// Inputs per step, as step indices, "ctx" and "res".
    private func shape(_ plan: PlanDescription) -> [String] {
        plan.steps.map { step in
            let inputs = step.inputs.map { $0 == PlanDescription.context ? "ctx" : $0 == PlanDescription.resolver ? "res" : String($0) }
            return "\(step.registration.key.name)(\(inputs.joined(separator: ",")))^\(step.parent)"
        }
    }

    @Test func describesTheOrderTheGraphBuildsIn() throws {
        let fx = try Fixture()
        try fx.register("A", [.resolver, dep("B"), dep("G"), .context])
        try fx.register("B", [dep("T"), dep("T"), dep("G")])
        try fx.register("G")
        try fx.register("T", scope: .transient)
        let plan = try #require(try fx.container.describePlan(Key("A")))
        #expect(shape(plan) == ["T()^3", "T()^3", "G()^3", "B(0,1,2)^4", "A(res,3,2,ctx)^-1"])
        // The core's own plan makes the resolver per resolve (a slot, `Plan.SlotInput`), closed after the factory.
        let a = try fx.resolve("A")
        #expect(withExtendedLifetime(a) { Obj.of(a).label == "A" })
        #expect(fx.container.registration(for: Key("A"))!.hasCurrentPlan)
        #expect(fx.bridge.openResolvers == 0 && fx.bridge.closedResolvers == 1)
    }

    @Test func describesContainerStepsOverValuesAndAdoptsTheirInstances() throws {
        let fx = try Fixture()
        _ = try fx.container.declareValue(Key("Request"))
        try fx.register("Engine", scope: .container)
        try fx.register("Session", [.resolver, dep("Request"), dep("Engine"), .context], scope: .container)
        try fx.register("Repo", [dep("Session")])
        try fx.register("Service", [dep("Repo"), dep("Session")])
        try fx.register("G")
        try fx.register("OverGraph", [dep("G")], scope: .container)
        try fx.register("NeedsOverGraph", [dep("OverGraph")])
        let plan = try #require(try fx.container.describePlan(Key("Service")))
        #expect(shape(plan) == ["Request()^2", "Engine()^2", "Session(res,0,1,ctx)^3", "Repo(2)^4", "Service(3,2)^-1"])
        #expect(plan.steps.map(\.container) == [false, true, true, false, false])
        #expect(plan.steps.map(\.value) == [true, false, false, false, false])
        let root = try #require(try fx.container.describePlan(Key("Session")))  // a container-scoped root: a container step
        #expect(shape(root) == ["Request()^2", "Engine()^2", "Session(res,0,1,ctx)^-1"] && root.steps.last!.container)
        // A container step over a graph step: whether the container holds it would change the graph's steps
        #expect(try fx.container.describePlan(Key("NeedsOverGraph")) == nil)
        #expect(try fx.container.describePlan(Key("OverGraph")) == nil)

        // What a binding made for a child before the library had it: adopted in creation order, resolved
        // from the child without a factory call, destroyed at the child's close after what was made later
        let child = try fx.child()
        _ = try child.provideValue(Key("Request"), Ref(retaining: Obj(label: "Request", words: [])).opaque, context: nil,
                                   destructor: { p, _ in Ref<Obj>(opaque: p).release() })
        for label in ["Engine", "Session"] {
            let p = Ref(retaining: Obj(label: label, words: [])).opaque
            fx.tracker.made(label, p)
            try child.adoptScoped(Key(label), p)
        }
        let p = Ref(retaining: Obj(label: "Engine", words: [])).opaque
        expectError(.invalidArgument, "holds an instance of \"Engine\" already") { try child.adoptScoped(Key("Engine"), p) }
        expectError(.invalidArgument, "\"Repo\" has the graph scope") { try child.adoptScoped(Key("Repo"), p) }
        Ref<Obj>(opaque: p).release()
        let service = try fx.resolve("Service", in: child)
        #expect(fx.tracker.calls("Session") == 0 && fx.tracker.calls("Engine") == 0 && fx.tracker.calls("Repo") == 1)
        let session = try fx.resolve("Session", in: child)
        #expect(Obj.of(service).words.count == 2 && UInt64(UInt(bitPattern: session.pointer)) == Obj.of(service).words[1])
        _ = consume session
        _ = consume service
        try fx.register("Late", [dep("Session")], scope: .container)
        _ = try fx.resolve("Late", in: child)
        try child.close()
        #expect(fx.tracker.events("drop") == ["drop Service", "drop Repo", "drop Late", "drop Session", "drop Engine"])
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        try fx.container.close()
    }

    @Test func declinesWhatIsNotPlain() throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        try fx.register("W", scope: .weak)
        try fx.register("NeedsS", [dep("S")])
        try fx.register("NeedsW", [weakDep("G")])
        try fx.register("Lazy", [lazyDep("G")])
        try fx.register("G")
        try fx.register("Args", [.argument(.i64)])
        try fx.register("Missing", [dep("Nowhere")])
        try fx.register("Cycle1", [dep("Cycle2")])
        try fx.register("Cycle2", [dep("Cycle1")])
        fx.onComplete(try fx.register("Completes"))
        try fx.register("NeedsCompletes", [dep("Completes")])
        let cached = try #require(try fx.container.describePlan(Key("NeedsS")))  // S: a cached leaf
        #expect(cached.steps.map(\.cached) == [true, false] && cached.steps[0].inputs.isEmpty && Array(cached.steps[1].inputs) == [0])
        let arguments = try #require(try fx.container.describePlan(Key("Args")))  // the root's: argument inputs
        #expect(Array(arguments.steps[0].inputs) == [PlanDescription.argument(0)])
        for key in ["S", "W", "NeedsW", "Lazy", "Missing", "Cycle1", "Completes", "NeedsCompletes"] {
            #expect(try fx.container.describePlan(Key(key)) == nil, "\(key)")
        }
        #expect(try fx.container.describePlan(Key("G")) != nil)
        expectError(.notFound, "\"Unregistered\"") { try fx.container.describePlan(Key("Unregistered")) }
        try fx.container.close()
        expectError(.invalidHandle) { try fx.container.describePlan(Key("G")) }
    }

    /// Declared completions are described with `completions: true`, in the order a resolve runs
    /// them; targets outside the build and strong cycles are not, nor resolver-form ones in a
    /// container with another graph-scoped key (`describesResolverFormCompletions`).
    @Test func describesDeclaredCompletions() throws {
        let fx = try Fixture()
        let parent = try fx.register("Parent", [dep("Child")])
        let child = try fx.register("Child")
        child.addCompletion(Declared(params: [weakDep("Parent")]))
        parent.addCompletion(Declared(params: [dep("Child")]))
        parent.addCompletion(Declared(params: []))
        #expect(try fx.container.describePlan(Key("Parent")) == nil)  // only when asked for
        let plan = try #require(try fx.container.describePlan(Key("Parent"), completions: true))
        #expect(shape(plan) == ["Child()^1", "Parent(0)^-1"])
        #expect(plan.completions.map { "\($0.step).\($0.number)\($0.targets)" } == ["0.0[1]", "1.0[0]", "1.1[]"])

        try fx.register("Other")
        child.addCompletion(Declared(params: [weakDep("Other")]))  // not a step of the build
        #expect(try fx.container.describePlan(Key("Parent"), completions: true) == nil)
        let strong = try fx.register("Child")
        strong.addCompletion(Declared(params: [dep("Parent")]))  // Parent -> Child -> Parent
        #expect(try fx.container.describePlan(Key("Parent"), completions: true) == nil)
        let resolverForm = try fx.register("Child")
        fx.onComplete(resolverForm)
        #expect(try fx.container.describePlan(Key("Parent"), completions: true) == nil)
    }

    /// Resolver-form completions: described with the key table their resolver answers from
    /// (retain-cycle bits per step) where every other key resolves alone; `resolverAnswer` is
    /// what the library's resolver says about the rest.
    @Test func describesResolverFormCompletions() throws {
        let fx = try Fixture()
        try fx.register("Parent", [dep("Child")])
        fx.onComplete(try fx.register("Child"))
        try fx.register("Helper", scope: .transient)
        let plan = try #require(try fx.container.describePlan(Key("Parent"), completions: true))
        #expect(plan.completions.map { "\($0.step).\($0.number)\($0.targets) \($0.resolverForm)" } == ["0.0[] true"])
        #expect(plan.keys.map { "\($0.key.name)@\($0.step):\($0.closes)" } == ["Child@0:1", "Parent@1:3"])
        try fx.container.resolverAnswer(Key("Parent"), completion: 0, target: Key("Parent"), weak: true, late: [])
        try fx.container.resolverAnswer(Key("Parent"), completion: 0, target: Key("Helper"), weak: false, late: [])
        expectError(.retainCycle, "\"Parent\" -> \"Child\" -> \"Parent\"") {
            try fx.container.resolverAnswer(Key("Parent"), completion: 0, target: Key("Parent"), weak: false, late: [])
        }
        expectError(.notFound, "needed by the completion callback of \"Child\"") {
            try fx.container.resolverAnswer(Key("Parent"), completion: 0, target: Key("Nope"), weak: true, late: [])
        }
        try fx.register("Other")  // graph scope: a resolver's get of it would share the graph
        #expect(try fx.container.describePlan(Key("Parent"), completions: true) == nil)
        expectError(.invalidArgument, "no described plan") {
            try fx.container.resolverAnswer(Key("Parent"), completion: 0, target: Key("Parent"), weak: true, late: [])
        }
    }

    /// From a child: the child's registrations shadow the parent's, as in a resolve.
    @Test func describesFromTheResolvingContainer() throws {
        let fx = try Fixture()
        let child = try fx.child()
        try fx.register("A", [dep("B")])
        try fx.register("B")
        let overriding = try fx.register("B", in: child)
        let plan = try #require(try child.describePlan(Key("A")))
        #expect(plan.steps.first?.registration === overriding)
    }

    @Test func versionWordsAreTheConfigurationInPlace() throws {
        let fx = try Fixture()
        let child = try fx.child()
        let words = child.versionAddresses
        #expect(words.count == 2 && fx.container.versionAddresses.first == words[1])
        func sum() -> UInt { words.reduce(0) { $0 &+ $1.load(as: UInt.self) } }
        #expect(sum() == child.configuration)
        let before = sum()
        try fx.register("K", in: child)
        #expect(sum() == child.configuration && sum() != before)
        let afterChild = sum()
        try fx.register("K")  // the parent's word
        #expect(sum() == child.configuration && sum() != afterChild)
    }

    /// A freed container's word is never freed: the next container takes it as it is, and it
    /// only grows, so a sum read from it before never comes back.
    @Test func versionWordsOutliveTheirContainers() throws {
        var address: UnsafeRawPointer?
        var last: UInt = 0
        for _ in 0..<3 {
            let fx = try Fixture()
            if let address { #expect(address.load(as: UInt.self) >= last) }
            try fx.register("K")
            try fx.container.close()
            address = fx.container.versionAddresses[0]
            last = address!.load(as: UInt.self)
        }
        #expect(address!.load(as: UInt.self) >= last)
    }

    /// A binding replaying the plan of A(B) runs B's factory (step 0) and resolves from it:
    /// `enterReplay` makes the library see A and B under construction, so the nested resolve
    /// is a cycle naming the path before any factory runs; `leaveReplay` undoes it.
    @Test func aReplayTellsTheLibraryWhatItConstructs() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B")
        try fx.register("Other")
        try fx.container.enterReplay(Key("A"), step: 0)
        expectError(.cycle, "\"A\" -> \"B\" -> \"A\"") { try fx.resolve("A") }
        _ = try fx.resolve("Other")  // not under construction
        try fx.container.enterReplay(Key("A"), step: 0)  // again, from further in: nothing twice
        expectError(.cycle, "\"A\" -> \"B\" -> \"A\";") { try fx.resolve("A") }
        #expect(Container.leaveReplay() && Container.leaveReplay() && !Container.leaveReplay())
        #expect(fx.tracker.made("A") == 0 && fx.tracker.made("B") == 0)
        _ = try fx.resolve("A")
        #expect(fx.tracker.made("A") == 1 && fx.tracker.made("B") == 1)
        expectError(.invalidArgument, "2 steps") { try fx.container.enterReplay(Key("A"), step: 2) }
        #expect(!Container.leaveReplay())
    }
}

/// A declared completion that does nothing: only its targets matter here.
private final class Declared: DeclaredCompletion, @unchecked Sendable {
    override func complete(_ instance: Instance, targets: UnsafeBufferPointer<Borrowed<Instance>>) throws(CallbackFailure) {}

}
