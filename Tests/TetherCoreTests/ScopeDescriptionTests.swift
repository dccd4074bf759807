// A scope is described once (`Scope`): the description must agree with the C header that
// numbers the scopes, and its properties with one another (where an instance is kept decides
// whether it is shared, by whom, and how).
import Testing
@testable import TetherCore

@Suite struct ScopeDescriptionTests {
    @Test func theDescriptionNumbersAndNamesEveryScopeAsTheHeaderDoes() throws {
        let names = try headerEnumerators("tether_scope", prefix: "TETHER_SCOPE_")
        #expect(names.count == Scope.allCases.count)
        for (number, name) in names.enumerated() {
            let scope = try #require(Scope(rawValue: Int32(number)))
            #expect(scope.name == name.lowercased())
        }
        #expect(Scope(rawValue: Int32(names.count)) == nil)
    }

    @Test func whereAScopeKeepsItsInstanceDecidesWhoSharesIt() {
        for scope in Scope.allCases {
            let cache = scope.cache
            // Kept somewhere between resolves exactly when shared, by one keeper.
            #expect(scope.isShared == (cache != .none))
            #expect([scope.isKeptByRegistration, scope.isPerResolvingContainer, !scope.isShared].count { $0 } == 1)
            #expect(scope.isKeptByRegistration == (scope.isKeptStronglyByRegistration || scope.isKeptWeakly))
            #expect(!(scope.isKeptStronglyByRegistration && scope.isKeptWeakly))
            // A shared instance is one per graph too (the graph table hands it to every slot).
            if scope.isShared { #expect(scope.isKeyedInGraph) }
            // Only a cache that keeps its instance past the resolve, strongly, can capture one (`captures`).
            if scope.lifetime.cached { #expect(scope.isKeptStronglyByRegistration) }
        }
    }

    @Test func theFiveScopesAreDescribedAsTheHeaderDocumentsThem() {
        let expected: [(Scope, Scope.Cache, keyed: Bool, ownContainer: Bool)] = [
            (.graph, .none, true, false), (.transient, .none, false, false), (.singleton, .registration, true, true),
            (.weak, .registrationWeakly, true, false), (.container, .resolvingContainer, true, false),
        ]
        for (scope, cache, keyed, own) in expected {
            #expect(scope.cache == cache && scope.isKeyedInGraph == keyed && scope.resolvesFromOwnContainer == own, "\(scope.name)")
        }
        // What a binding reads (`scope_traits`): the same description as bits.
        #expect(Scope.singleton.bindingTraits == 0x1 | 0x2 | 0x10 | 0x20)
        #expect(Scope.weak.bindingTraits == 0x1 | 0x4 | 0x10)
        #expect(Scope.container.bindingTraits == 0x1 | 0x8 | 0x10)
        #expect(Scope.graph.bindingTraits == 0x10 && Scope.transient.bindingTraits == 0)
    }
}
