import Synchronization

/// The edges seen made from one registration's instances (`Registration.noteEdge`):
/// a list that only grows, of plain nodes freed with it. Every resolve whose
/// callback hands out an edge asks whether it is known, from every thread, so
/// the question takes no lock: a lock is a write to one cache line that all of
/// them would make on every resolve. Adding (once per edge) is for the caller to serialize.
struct ObservedEdgeList: ~Copyable {
    private struct Node {
        let edge: Registration.ObservedEdge
        let next: UnsafeMutablePointer<Node>?
    }

    /// The newest node, or 0.
    private let head = Atomic<UInt>(0)

    deinit {
        var node = first
        while let n = node {
            node = n.pointee.next
            n.deinitialize(count: 1)
            n.deallocate()
        }
    }

    /// Acquiring: a reader that sees a node sees what it holds.
    private var first: UnsafeMutablePointer<Node>? { UnsafeMutablePointer(bitPattern: head.load(ordering: .acquiring)) }

    func contains(_ edge: Registration.ObservedEdge) -> Bool {
        var node = first
        while let n = node {
            if n.pointee.edge == edge { return true }
            node = n.pointee.next
        }
        return false
    }

    /// Callers serialize (they hold the registration's lock).
    func add(_ edge: Registration.ObservedEdge) {
        let node = UnsafeMutablePointer<Node>.allocate(capacity: 1)
        node.initialize(to: Node(edge: edge, next: first))
        head.store(UInt(bitPattern: node), ordering: .releasing)
    }

    var all: [Registration.ObservedEdge] {
        var edges: [Registration.ObservedEdge] = []
        var node = first
        while let n = node {
            edges.append(n.pointee.edge)
            node = n.pointee.next
        }
        return edges
    }
}
