/// A class reference handed through C as an address: a C callback's user data, a
/// thread-specific value, an object factory's result and its destructor's pointer.
/// `give` makes a +1 that the C side holds until exactly one `take` or `release`;
/// reading it without a count is `Borrowed(opaque:)`. The ABI's handles do the
/// same in their tables (`Tether/Handles`).
public enum Handoff<T: AnyObject> {
    /// `object`'s address, owning one new strong reference (+1) for whoever holds the address.
    @inlinable @inline(__always)
    public static func give(_ object: T) -> UnsafeMutableRawPointer { Ref(retaining: object).opaque }

    /// The object at `address` (from `give`), its +1 now the caller's.
    @inlinable @inline(__always)
    public static func take(_ address: UnsafeRawPointer) -> T { Ref<T>(opaque: address).take() }

    /// Gives up the +1 that `address` (from `give`) owned.
    @inlinable @inline(__always)
    public static func release(_ address: UnsafeRawPointer) { Ref<T>(opaque: address).release() }
}
