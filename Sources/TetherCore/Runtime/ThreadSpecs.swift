/// One thread's copies of shared specs, for the instances it makes.
///
/// An instance holds its spec strongly (its destructor needs it, also after
/// the container is gone). Were that the registration's one spec, two threads
/// resolving from one container would both write its reference count, one
/// cache line, for every instance made and destroyed, and the line would move
/// between their cores each time. So a thread makes instances with a copy of
/// its own (`InstanceSpec.init(copying:owner:)`), whose count only it writes
/// unless an instance is destroyed on another thread.
///
/// A two-way set-associative cache keyed by the address of what a copy stands
/// for (direct-mapped, two specs a resolve uses could share an entry and evict each
/// other on every resolve, by where malloc had put them): a
/// spec, or for a block's root (`InstanceBlock`) the plan, whose records use
/// the plan's specs. Each copy keeps that object alive (`owner`), so its
/// address cannot be reused while the entry exists. The price: up to `size`
/// specs or plans per thread outlive their registration until evicted or the
/// thread exits. Plain memory, read and written by its thread only.
struct ThreadSpecs {
    private struct Entry {
        var owner: UInt = 0
        var copy: Ref<InstanceSpec>? = nil
    }

    private static var size: Int { 64 }
    private let entries: UnsafeMutablePointer<Entry>

    init() {
        entries = ThreadPrivate.allocate(Entry.self, capacity: Self.size)
        entries.initialize(repeating: Entry(), count: Self.size)
    }

    /// At thread exit.
    func free() {
        for i in 0..<Self.size { entries[i].copy?.release() }
        entries.deinitialize(count: Self.size)
        entries.deallocate()
    }

    /// The thread's copy of `spec`, retained for a new instance.
    @inline(__always)
    func retainedCopy(of spec: Borrowed<InstanceSpec>) -> Ref<InstanceSpec> {
        retainedCopy(of: spec, owner: spec.opaque)
    }

    /// The thread's copy of `spec` (the root's) keeping `plan` alive, retained for a new block.
    @inline(__always)
    func retainedCopy(of spec: Borrowed<InstanceSpec>, in plan: Borrowed<Plan>) -> Ref<InstanceSpec> {
        retainedCopy(of: spec, owner: plan.opaque)
    }

    @inline(__always)
    private func retainedCopy(of spec: Borrowed<InstanceSpec>, owner: UnsafeMutableRawPointer) -> Ref<InstanceSpec> {
        let address = UInt(bitPattern: owner)
        // A set: two adjacent entries, chosen by a multiplicative hash of the address.
        let set = entries + Int(truncatingIfNeeded: (address &* 0x9E37_79B9_7F4A_7C15) >> 59) * 2
        if set.pointee.owner == address, let copy = set.pointee.copy { return copy.retain() }
        if (set + 1).pointee.owner == address, let copy = (set + 1).pointee.copy { return copy.retain() }
        return miss(set, spec, owner)
    }

    /// Makes the copy and puts it first in `set`, the first entry moving to the
    /// second and what was there evicted.
    @inline(never)
    private func miss(_ set: UnsafeMutablePointer<Entry>, _ spec: Borrowed<InstanceSpec>,
                      _ owner: UnsafeMutableRawPointer) -> Ref<InstanceSpec> {
        let copy = Ref<InstanceSpec>(retaining: 
            InstanceSpecCopy(copying: spec.object, owner: Ref<AnyObject>(opaque: owner).object))
        let evicted = (set + 1).pointee.copy
        (set + 1).pointee = set.pointee
        set.pointee = Entry(owner: UInt(bitPattern: owner), copy: copy)
        evicted?.release()  // last: it may free what it stood for
        return copy.retain()
    }
}

/// A thread's copy of a spec (`ThreadSpecs`), with a reference count of its own,
/// keeping what it stands for alive as long as the copy.
final class InstanceSpecCopy: InstanceSpec, @unchecked Sendable {
    nonisolated(unsafe) private let owner: AnyObject

    convenience init(copying spec: InstanceSpec, owner: AnyObject) {
        self.init(copying: spec, owner: owner, destructor: spec.destructor, cDestructor: spec.cDestructor)
    }

    /// `destructor` in place of the spec's (`Tracer.spec(for:)`). A `Destructor?` passed as it
    /// is: a generic operation on it (`??`) would wrap it in a reabstraction thunk per call.
    init(copying spec: InstanceSpec, owner: AnyObject, destructor: Destructor?, cDestructor: CDestructor? = nil) {
        self.owner = owner
        super.init(key: spec.key, scope: spec.scope, context: spec.context, destructor: destructor, cDestructor: cDestructor,
                   completions: spec.completions, defersDrop: spec.defersDrop, holdsObject: spec.holdsObject,
                   hasClientDestructor: spec.hasClientDestructor)
    }
}
