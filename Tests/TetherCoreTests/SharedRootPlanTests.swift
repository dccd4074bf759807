// Shared roots and wait modes in plans (issue 28 item 1, `sharedRoot` and `notCached`): a singleton
// root another thread published while this resolve waited for its cell is taken by the warm plan
// (the root a shared step), a root whose graph has a constructor cycle runs the failing plan, and a
// resolve asked not to wait runs the creation plan after the build's claims ahead. Each as the build:
// the same factory calls, instances and errors.
import Foundation
import Testing
import TetherCore

@Suite struct SharedRootPlanTests {
    /// Threads racing the first resolve of a singleton root: one creates it (the creation plan), the
    /// others wait for its cell and take the published one through the warm plan, not the build.
    @Test func threadsWaitingForASingletonRootTakeItThroughTheWarmPlan() throws {
        for round in 0..<5 {
            let fx = try Fixture()
            try fx.register("S", [dep("B")], scope: .singleton) { _ in usleep(2000) }
            try fx.register("B")
            let roots = Box<Set<UInt>>([])
            let builds = Box(0)
            let declines = Box<[String: Int]>([:])
            onThreads(4) { _ in
                let before = Container.buildsOnThisThread
                let counts = counted { if let s = try? fx.resolve("S") { roots.value.insert(UInt(bitPattern: s.pointer)) } }
                builds.value += Container.buildsOnThisThread - before
                for (name, n) in counts where name != "resolves" { declines.value[name, default: 0] += n }
            }
            #expect(roots.value.count == 1, "round \(round)")
            #expect(fx.tracker.calls("S") == 1 && fx.tracker.calls("B") == 1)
            #expect(builds.value == 0 && declines.value.isEmpty, "round \(round): \(declines.value)")
            #expect(fx.tracker.badDrops == 0)
        }
    }

    /// A singleton root over a constructor cycle: the plan's outcome (`Plan.failure`), with the build's
    /// error, the factories it reaches first run and let go of, nothing cached.
    @Test func aSingletonRootOverACycleFailsAsTheBuild() throws {
        var outcomes: [(log: [String], error: String, counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            try fx.register("S", [dep("G"), dep("A")], scope: .singleton)
            try fx.register("G")
            try fx.register("A", [dep("S")])
            var error = ""
            let counts = counted {
                for _ in 0..<2 {
                    do { _ = try fx.resolve("S") } catch let e as TetherError { error = "\(e.code): \(e.message)" } catch {}
                }
            }
            #expect(fx.tracker.badDrops == 0 && fx.tracker.calls("S") == 0)
            outcomes.append((fx.tracker.log, error, counts))
        }
        #expect(outcomes[0].error.contains("cycle"))
        #expect(outcomes[0].counts == ["resolves": 2], "the failing plan serves both (sharedRoot before)")
    }

    /// A resolve asked not to wait (`WaitMode`) over an uncached singleton root and singleton dependency:
    /// its claims ahead are the build's (`checkBeforeNotWaiting`), then the creation plan runs.
    @Test func aNoWaitResolveRunsTheCreationPlan() throws {
        do {
            let fx = try Fixture()
            try fx.register("S", [dep("D"), dep("G")], scope: .singleton)
            try fx.register("D", [dep("G")], scope: .singleton)
            try fx.register("G")
            let before = Container.buildsOnThisThread
            let counts = counted {
                let (s, blocked) = WaitMode.run(noWait: true) { try? fx.resolve("S") }
                #expect(s != nil && !blocked)
                #expect(try! fx.resolve("S").pointer == s!.pointer)
            }
            #expect(Container.buildsOnThisThread == before && counts == ["resolves": 1], "\(counts)")
            #expect(fx.tracker.calls("S") == 1 && fx.tracker.calls("D") == 1 && fx.tracker.calls("G") == 1, "one G in the graph")
            #expect(fx.tracker.log == ["make G", "make D", "make S"], "\(fx.tracker.log)")
        }
    }

    /// A declared value no container on the way provides: as a root (`sharedRoot` before) and as a leaf
    /// after a made step (`notCached` before), the plan fails where the build's walk reaches it, with the
    /// build's error, the steps made before it let go of. Provided, the same plans serve it.
    @Test func aValueNoContainerProvidesFailsThePlanAsTheBuild() throws {
        var outcomes: [(log: [String], seen: [String], counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            _ = try fx.container.declareValue(Key("Request"))
            try fx.register("A")
            try fx.register("H", [dep("A"), dep("Request"), dep("A")])
            var seen: [String] = []
            let counts = try counted {
                for key in ["Request", "H"] {
                    do { _ = try fx.resolve(key) } catch let e as TetherError { seen.append("\(e.code): \(e.message)") }
                }
                let child = try fx.child()
                _ = try child.provideValue(Key("Request"), Ref(retaining: Obj(label: "Request", words: [])).opaque, context: nil,
                                           destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                let h = try fx.resolve("H", in: child)
                seen.append(withExtendedLifetime(h) { "\(Obj.of(h).words.count) slots" })
            }
            #expect(fx.tracker.badDrops == 0)
            seen.append("A \(fx.tracker.calls("A")), H \(fx.tracker.calls("H"))")
            outcomes.append((fx.tracker.log, seen, counts))
        }
        #expect(outcomes[0].seen.count == 4 && outcomes[0].seen[1].contains("(needed by \"H\")"), "\(outcomes[0].seen)")
        #expect(outcomes[0].seen[0].hasPrefix("notFound: no value for \"Request\"") && !outcomes[0].seen[0].contains("needed by"))
        #expect(outcomes[0].seen[3] == "A 2, H 1", "A made before the missing value and let go of, then A and H from the child")
        #expect(outcomes[0].counts == ["resolves": 3], "every resolve a plan's: \(outcomes[0].counts)")
    }

    /// A singleton root in a strict container (`sharedRoot` before): its creation plan checks its strong
    /// slots for captives where the build does, so a captive fails as the plan's outcome where the build meets it,
    /// after the steps before it, with the build's error; turning strict off changes the configuration, and the plan made then serves.
    @Test func aStrictContainersCreationPlanRefusesCaptivesAsTheBuild() throws {
        var outcomes: [(seen: [String], counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            fx.container.refusesCaptives = true
            try fx.register("Holder", [dep("Long"), dep("Short")], scope: .singleton)
            try fx.register("Long", scope: .singleton)
            try fx.register("Short")
            var seen: [String] = []
            let counts = counted {
                do { _ = try fx.resolve("Holder") } catch let e as TetherError { seen.append("\(e.code): \(e.message)") } catch {}
                seen.append("made \(fx.tracker.calls("Long")) \(fx.tracker.calls("Short")) \(fx.tracker.calls("Holder"))")
                fx.container.refusesCaptives = false
                if let h = try? fx.resolve("Holder") { seen.append(withExtendedLifetime(h) { "\(Obj.of(h).words.count) slots" }) }
            }
            #expect(fx.tracker.badDrops == 0)
            outcomes.append((seen, counts))
        }
        #expect(outcomes[0].seen.first?.hasPrefix("captiveDependency: captive dependency \"Holder\" -> \"Short\"") == true, "\(outcomes[0].seen)")
        #expect(outcomes[0].seen.dropFirst() == ["made 1 0 0", "2 slots"], "Long, before the captive slot, made and let go of, as the build")
        #expect(outcomes[0].counts == ["resolves": 2], "both plans': \(outcomes[0].counts)")
    }

    /// A container-scoped root resolved from a child with a registration of its own (`sharedRoot` before:
    /// the child's component plan declined every shared root): a container step of that plan, made once
    /// per child and kept there, as the build.
    @Test func aContainerRootFromAChildWithRegistrationsIsAContainerStep() throws {
        var outcomes: [(log: [String], seen: [String], counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            try fx.register("Db", scope: .singleton)
            try fx.register("Session", [dep("Db"), dep("G")], scope: .container)
            try fx.register("G")
            _ = try fx.resolve("Db")
            var seen: [String] = []
            let counts = try counted {
                for _ in 0..<2 {
                    let child = try fx.child()
                    try fx.register("Req", in: child)
                    let first = try fx.resolve("Session", in: child)
                    let again = try fx.resolve("Session", in: child)
                    seen.append(first.pointer == again.pointer ? "one per child" : "two")
                }
            }
            seen.append("Session \(fx.tracker.calls("Session")), G \(fx.tracker.calls("G")), Db \(fx.tracker.calls("Db"))")
            #expect(fx.tracker.badDrops == 0)
            outcomes.append((fx.tracker.log, seen, counts))
        }
        #expect(outcomes[0].seen == ["one per child", "one per child", "Session 2, G 2, Db 1"])
        #expect(outcomes[0].counts == ["resolves": 2], "each child's first resolve runs the plan: \(outcomes[0].counts)")
    }
}
