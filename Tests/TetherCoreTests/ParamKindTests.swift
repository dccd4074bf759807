// A slot kind is described once (`Param.Kind`): the description must agree with the C header
// that numbers the kinds, and a slot made from a kind must be of that kind.
import Foundation
import Testing
@testable import TetherCore

@Suite struct ParamKindTests {
    @Test func theDescriptionNumbersAndNamesEveryKindAsTheHeaderDoes() throws {
        let names = try headerEnumerators("tether_param_kind", prefix: "TETHER_PARAM_").map { "TETHER_PARAM_" + $0 }
        #expect(names.count == Param.Kind.allCases.count)
        for (number, name) in names.enumerated() {
            let kind = try #require(Param.Kind(rawValue: Int32(number)))
            #expect(kind.cName == name)
            #expect(Param.Kind(spelling: kind.spelling) == kind)
        }
        #expect(Param.Kind(rawValue: Int32(names.count)) == nil)
    }

    @Test func aSlotMadeFromAKindIsOfThatKindAndNamesItsKey() {
        for kind in Param.Kind.allCases {
            let param = Param(kind: kind, key: Key("K"))
            #expect(param?.kind == kind)
            #expect(param?.key == (kind.takesKey ? Key("K") : nil))
            #expect(Param(kind: kind, key: nil) == nil || !kind.takesKey)
            #expect((kind.argumentType != nil) == (param.map { if case .argument = $0 { true } else { false } } ?? false))
            // A kind with edges names a key; only a kind that names one can need its registration.
            #expect(kind.edges == .none || kind.takesKey)
            #expect(!kind.needsRegistration || kind.takesKey)
            // What a plan records as an instance is a strong constructor edge to one key.
            if kind.planned == .instance { #expect(kind.isConstructorEdge && kind.isStrongEdge && kind.edges == .one) }
        }
    }

    @Test func anAllSlotsEdgesAreItsListedItems() throws {
        let fx = try Fixture()
        try fx.register("Plugin")
        try fx.register("Plugin#gzip")
        try fx.register("Host", [.all(Key("Plugin")), dep("Plugin"), .context])
        let host = try #require(fx.container.registration(for: Key("Host")))
        let edges = GraphCheck.edges(of: host, lookup: fx.container)
        #expect(edges.map(\.target.name) == ["Plugin", "Plugin#gzip", "Plugin"])
        #expect(edges.map { $0.param.kind } == [.all, .all, .dependency])
    }
}
