// A registration keeps up to two declared params in its own object and more in
// an allocation of their own: on both sides of that boundary the params read
// back as declared, runtime arguments are detected wherever they sit, and the
// factory receives every slot in order.
import Testing
import TetherCore

@Suite struct ParamStorageTests {
    /// `count` params: dependencies on leaves, the last one a runtime argument when `argumentLast`.
    private func params(_ prefix: String, _ count: Int, argumentLast: Bool) -> [Param] {
        (0..<count).map { i in argumentLast && i == count - 1 ? .argument(.i64) : dep("\(prefix).leaf\(i)") }
    }

    @Test(arguments: [0, 1, 2, 3, 4])
    func paramsReadBackAndReachTheFactory(count: Int) throws {
        for argumentLast in count > 0 ? [false, true] : [false] {
            let fx = try Fixture()
            let prefix = "params.\(count).\(argumentLast)"
            let declared = params(prefix, count, argumentLast: argumentLast)
            for case .dependency(let key) in declared { try fx.register(key.name, scope: .singleton) }
            let registration = try fx.register("\(prefix).root", declared, scope: .transient)
            #expect(Array(registration.params) == declared)
            #expect(registration.hasArguments == argumentLast)
            #expect(registration.argumentTypes == (argumentLast ? [.i64] : []))

            let arguments = argumentLast ? [Argument(type: .i64, bits: 0xABC)] : []
            let root = Obj.of(try fx.resolve("\(prefix).root", arguments))
            #expect(root.words.count == count)
            for (slot, param) in declared.enumerated() {
                if case .dependency(let key) = param {
                    #expect(root.dep(slot).label == key.name)
                } else {
                    #expect(root.words[slot] == 0xABC)
                }
            }
            if argumentLast {
                expectError(.argumentMismatch, "takes 1 runtime argument, got 0") { try fx.resolve("\(prefix).root") }
            }
        }
    }

    @Test func replacedRegistrationsKeepTheirOwnParams() throws {
        let fx = try Fixture()
        for name in ["a", "b", "c", "d"] { try fx.register("params.replace.\(name)", scope: .singleton) }
        let inline = try fx.register("params.replace.root", [dep("params.replace.a")])
        let outOfLine = try fx.register("params.replace.root", ["b", "c", "d"].map { dep("params.replace.\($0)") })
        #expect(Array(inline.params) == [dep("params.replace.a")])
        #expect(Array(outOfLine.params) == ["b", "c", "d"].map { dep("params.replace.\($0)") })
        #expect(Obj.of(try fx.resolve("params.replace.root")).dep(2).label == "params.replace.d")
    }
}
