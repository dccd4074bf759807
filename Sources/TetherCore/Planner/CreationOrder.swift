/// Creation order, the rule's one home: a registration's constructor dependencies are made
/// depth-first in slot order, and each instance is made (enters the graph) as soon as its
/// slots are filled. `walk` decides which slot is next, when a dependency is entered, when a
/// step is complete and who gets it; a `CreationWalk` decides what a slot is worth (an
/// instance found, one to make, a word) and what making means. `Graph.build` makes instances
/// through it; the plan recorder (`Plan.Recorder`) records a plan's steps through it, so a
/// plan's step order is the order a build makes them. The walk keeps no stack of its own:
/// the frames are the walker's, so a deep chain costs no recursion.
protocol CreationWalk: AnyObject {
    /// What a finished frame hands its dependent (`Graph`: the instance's index in its `alive`;
    /// the recorder: the step).
    associatedtype Made
    /// What a slot asks to make: a frame to open.
    associatedtype Entry
    associatedtype Failure: Error

    /// Frames open (all walks on this walker, outermost first).
    var depth: Int { get }
    /// The top frame's slots, and how many of them are filled.
    var topParams: UnsafeBufferPointer<Param> { get }
    var topSlot: Int { get }
    /// The top frame's next slot is filled.
    func advance()
    /// Opens a frame for `entry`: its instance is under construction from now on.
    func open(_ entry: Entry)
    /// Closes the top frame: its instance made (after `make`), or abandoned by a failure.
    func close()
    /// Fills `param`, the top frame's slot `slot`: `.filled` (a word, or an ALL slot's list
    /// done), `.found` (an instance there already), or `.enter` (to make first).
    func fill(_ param: Param, at slot: Int) throws(Failure) -> CreationOrder.Fill<Made, Entry>
    /// Makes the top frame's instance, its slots all filled (its factory runs; it enters the graph).
    func make() throws(Failure) -> Made
    /// Hands `made` to `param`, the top frame's slot `slot` (`walk` then moves on, but past an
    /// ALL slot's item: the slot is filled again until its list is done).
    func take(_ made: Made, _ param: Param, at slot: Int) throws(Failure)
}

enum CreationOrder {
    /// What a slot is worth (`CreationWalk.fill`).
    enum Fill<Made, Entry> {
        case filled
        case found(Made)
        case enter(Entry)
    }

    /// Makes `root` and every constructor dependency it needs, in creation order; returns
    /// what the root's frame made. Frames already open (a nested build) stay below: the walk
    /// ends when its root's frame closes. A failure closes the frames this walk opened and
    /// is thrown as it is.
    @inline(__always)
    static func walk<W: CreationWalk>(_ walker: W, entering root: W.Entry) throws(W.Failure) -> W.Made {
        let floor = walker.depth
        walker.open(root)
        do throws(W.Failure) {
            while true {
                let params = walker.topParams
                let slot = walker.topSlot
                guard slot < params.count else {
                    let made = try walker.make()
                    walker.close()
                    if walker.depth == floor { return made }
                    let dependent = walker.topSlot
                    try hand(made, walker.topParams[dependent], at: dependent, to: walker)
                    continue
                }
                let param = params[slot]
                switch try walker.fill(param, at: slot) {
                case .filled: walker.advance()
                case .found(let made): try hand(made, param, at: slot, to: walker)
                case .enter(let entry): walker.open(entry)
                }
            }
        } catch {
            while walker.depth > floor { walker.close() }
            throw error
        }
    }

    /// The top frame's slot `slot`, a `param`, gets `made`; a slot of one edge is then filled,
    /// an ALL slot takes its items one per pass (each made, or found, before the next is looked at).
    @inline(__always)
    private static func hand<W: CreationWalk>(_ made: W.Made, _ param: Param, at slot: Int, to walker: W) throws(W.Failure) {
        try walker.take(made, param, at: slot)
        switch param.kind.edges {
        case .one, .none: walker.advance()
        case .perItem: break
        }
    }
}
