import Synchronization

/// The factory of a key a container declares (`Container.declareValue`) and
/// whose instance child containers provide (`Container.provideValue`): reached
/// where no container provides it, it fails with `.notFound`.
final class DeclaredValueFactory: Factory {
    let key: Key
    init(key: Key) { self.key = key }

    override func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        throw CallbackFailure(target: TetherError(.notFound,
            "no value for \(key.quoted): it is a declared value key, which no container on the way provides; provide it in a child container and resolve from that child",
            ErrorParts(.provideValue, key: key)))
    }
}

/// The factory of a provided value: never called while the value is cached
/// (from registration until its container closes or the key is re-registered).
/// A resolve that picked the registration before the key was registered again (an
/// override cleared) and finds it without its value starts over on the configuration
/// now (`Graph.claimOne`), before any factory; one that still reaches this (past its
/// start-overs) fails instead of wrapping the pointer a second time (which would run
/// its destructor twice).
final class ValueFactory: Factory {
    let key: Key
    init(key: Key) { self.key = key }

    override func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        throw CallbackFailure(target: TetherError.valueLetGo(key))
    }
}

extension Container {
    /// Declares `key` as a value each child container provides: resolving it
    /// where none does fails with `.notFound`; `validate` counts it as present.
    @discardableResult
    public func declareValue(_ key: Key) throws(TetherError) -> (registration: Registration, replaced: Registration?) {
        try register(key, params: [], factory: DeclaredValueFactory(key: key))
    }

    /// Provides `pointer` as the instance of `key` in this container, with no
    /// factory call: cached like a singleton (a reset leaves it) until the
    /// container closes or `key` is registered again here, then `destructor`
    /// runs once, when the last holder lets go of it.
    ///
    /// A key a parent declared (`declareValue`, a request's value) takes a slot: an entry of
    /// this container's cache under the declaring registration (`providedValue(of:)`), no
    /// registration of its own; the declaring registration is returned. Any other key
    /// becomes a registration of this container's, as `register`.
    @discardableResult
    public func provideValue(_ key: Key, _ pointer: UnsafeMutableRawPointer, context: UnsafeMutableRawPointer?,
                             destructor: Destructor?, defersDrop: Bool = false) throws(TetherError) -> (registration: Registration, replaced: Registration?) {
        // Checked first, so a refused value is not destroyed (only a free racing with this call gets past it).
        guard !isClosed else { throw TetherError.containerFreed }
        if let declared = declaredElsewhere(key) {
            try holdProvidedValue(pointer, of: declared) { _ in
                InstanceSpec(key: key, scope: .container, context: context, destructor: destructor, completions: [], defersDrop: defersDrop)
            }
            return (declared.object, nil)
        }
        return try register(key, params: [], factory: ValueFactory(key: key)) { (registration: Registration) throws(TetherError) in
            try registration.holdValue(pointer, context: context, destructor: destructor, defersDrop: defersDrop)
        }
    }

    /// `provideValue` with a C destructor (`CDestructor`: no closure is made around it); a
    /// request's child kept for the next request fills its old declared value's spec in place.
    /// Returns only the registration replaced here, if any: the declaring registration of a
    /// declared key is a parent's, which every request's child would otherwise retain and release
    /// (its count a line each resolve reads, written by every thread's requests).
    @discardableResult @_disfavoredOverload
    public func provideValue(_ key: Key, _ pointer: UnsafeMutableRawPointer, context: UnsafeMutableRawPointer?,
                             cDestructor: CDestructor?) throws(TetherError) -> Registration? {
        guard !isClosed else { throw TetherError.containerFreed }  // as above
        if let declared = declaredElsewhere(key) {
            try holdProvidedValue(pointer, of: declared) { _ in Self.valueSpec(key, context: context, cDestructor: cDestructor) }
            return nil
        }
        return try register(key, params: [], factory: ValueFactory(key: key)) { (registration: Registration) throws(TetherError) in
            try registration.holdValue(pointer) { $0.setValueSpec(context: context, cDestructor: cDestructor) }
        }.replaced
    }
}

extension Container {
    /// The spec of a value of the declared key `key` with `context` and `cDestructor`: the calling
    /// thread's last one if it matches (specs of provided values are never changed in place).
    private static func valueSpec(_ key: Key, context: UnsafeMutableRawPointer?, cDestructor: CDestructor?) -> InstanceSpec {
        ThreadState.currentReference.borrow { thread in
            InstanceSpec.plain(key, scope: .container, context: context, cDestructor: cDestructor, reusing: &thread.valueSpec)
        }
    }

    /// The declared value key `key` resolves to from here, when a parent declared it (a value
    /// provided here then takes a slot, `holdProvidedValue`); nil for any other key.
    private func declaredElsewhere(_ key: Key) -> Borrowed<Registration>? {
        guard let registration = unretainedRegistration(for: key),
              registration.borrow({ $0.isDeclaredValue && $0.container !== self }) else { return nil }
        return registration
    }

    /// Keeps the value `pointer` (its spec `makeSpec(state)`, under the lock) in this container's cache under
    /// `declared`, as a container-scoped instance of it, dropped with the others (last made
    /// first) when the container closes; a value provided before is let go of. Nothing is
    /// made when the container was closed meanwhile (the destructor does not run).
    private func holdProvidedValue(_ pointer: UnsafeMutableRawPointer, of declared: Borrowed<Registration>,
                                   _ makeSpec: (inout State) -> InstanceSpec) throws(TetherError) {
        let replaced = state.withLock { s -> ScopedEntry?? in
            guard !s.isClosed else { return nil }
            let instance = Instance.make(pointer: pointer, spec: .init(retaining: makeSpec(&s)), dependencies: 0,
                                         reference: { _ in fatalError("a value has no dependencies") })
            return .some(s.scoped.set(ScopedEntry(registration: declared, instance: instance.take(), sequence: nextSequence())))
        }
        guard let replaced else { throw TetherError.containerFreed }
        _ = consume replaced  // outside the lock: it may be the old value's last reference
        // What a resolve from here builds changed, as a registration would change it (layers that
        // cache answers by these words, and plans recorded for a child with values, see it).
        configurationChanged()
    }

    /// The value a container between here (included) and `declared`'s own (excluded) provides
    /// for the declared value key `declared`, the nearest; retained.
    func providedValue(of declared: Registration) -> Ref<Instance>? {
        let goal = Borrowed(declared.container).opaque
        var container = Borrowed(self)
        while container.opaque != goal {  // unretained, as `configuration` walks the chain
            if let hit = container.borrow({ c in c.state.withLock { $0.scoped.retainedInstance(of: declared) } }) { return hit }
            guard let parent = container.borrow({ $0.unretainedParent }) else { return nil }
            container = parent
        }
        return nil
    }
}

extension Registration {
    /// Makes this new registration (of a `ValueFactory`) hold `pointer` as its cached instance.
    func holdValue(_ pointer: UnsafeMutableRawPointer, context: UnsafeMutableRawPointer?, destructor: Destructor?,
                   defersDrop: Bool) throws(TetherError) {
        try holdValue(pointer) { $0.setSpec { $0.with(scope: .singleton, context: .some(context), destructor: .some(destructor), defersDrop: defersDrop) } }
    }

    /// `holdValue`, its spec installed by `installSpec` (a singleton's, with the context and destructor).
    func holdValue(_ pointer: UnsafeMutableRawPointer, installSpec: (Registration) -> Void) throws(TetherError) {
        try Registration.check(params, scope: .singleton, key: key)
        // A request's value (in a child) is resolved as a dependency, rarely by key from many
        // threads: not lent, its child's free takes no barrier (`Container.drop`).
        if container.unretainedParent != nil { lendsSingleton = false }  // (no count on the parent)
        // One spec with the scope and the context (not yet visible: nothing cached to clear).
        installSpec(self)
        let instance = Instance.make(pointer: pointer, spec: specReference.retained(), dependencies: 0,
                                     reference: { _ in fatalError("a value has no dependencies") })
        SharedCache.publish(self, instance.object, in: nil)
        instance.release()  // the cache keeps it
    }

    /// A provided value (`Container.provideValue`): not a cache, so resets keep it.
    var isValue: Bool { factoryReference.borrow { $0 is ValueFactory } }
}
