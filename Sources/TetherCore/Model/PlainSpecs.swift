/// Specs with nothing but a key, a scope, a context and a C destructor (no completion callbacks,
/// Swift destructor, object or deferred drop), shared per thread: what a request's registration
/// is given (`tether_set_context` on a registration made per request) and a request's value are
/// such specs, and the calling thread's last one of the same four serves the next request, so
/// neither makes a spec per request. Its count is written by that thread's requests only (and
/// by a thread that frees one of them). Specs are never changed in place, so a shared one is
/// indistinguishable from one made for the registration.
extension InstanceSpec {
    /// Whether this spec has nothing but its key and scope (a new registration's, its key's
    /// default): the spec a context and C destructor make of it is a plain one (`plain`).
    var isBare: Bool {
        context == nil && destructor == nil && cDestructor == nil && completionCount == 0 && !holdsObject && !defersDrop
    }

    /// The plain spec of `key` with `scope`, `context` and `cDestructor`: `last` if it is that
    /// one, else one made now, left in `last` (a thread's slot: `ThreadState`, which holds only
    /// specs made here, all plain, so the four are all there is to compare).
    @inline(__always)
    static func plain(_ key: Key, scope: Scope, context: UnsafeMutableRawPointer?, cDestructor: CDestructor?,
                      reusing last: inout InstanceSpec?) -> InstanceSpec {
        if let spec = last, spec.key == key, spec.scope == scope, spec.context == context,
           spec.cDestructor.map({ unsafeBitCast($0, to: UnsafeRawPointer.self) })
               == cDestructor.map({ unsafeBitCast($0, to: UnsafeRawPointer.self) }) {
            return spec
        }
        let made = InstanceSpec(key: key, scope: scope, context: context, destructor: nil, cDestructor: cDestructor, completions: [])
        last = made
        return made
    }
}
