import TetherCore

@_cdecl("tether_container_versions")
public func tether_container_versions(_ c: OpaquePointer?, _ words: UnsafeMutablePointer<UnsafeRawPointer?>?, _ cap: Int,
                                      _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    versionWords("tether_container_versions", "version", c, words, cap, count) { $0.versionAddresses }
}

@_cdecl("tether_container_hit_word")
public func tether_container_hit_word(_ c: OpaquePointer?, _ word: UnsafeMutablePointer<UnsafeRawPointer?>?) -> Int32 {
    let function: StaticString = "tether_container_hit_word"
    return abiCall { () throws(TetherError) in
        guard let word else { throw invalid(function, "word must not be NULL") }
        word.pointee = nil
        word.pointee = try containerArgument(c, function).hitWordAddress
    }
}

/// Both calls: the addresses `of` gives for `c`'s container, written to `words`.
private func versionWords(_ function: StaticString, _ what: String, _ c: OpaquePointer?,
                          _ words: UnsafeMutablePointer<UnsafeRawPointer?>?, _ cap: Int, _ count: UnsafeMutablePointer<Int>?,
                          _ of: (Container) -> [UnsafeRawPointer]) -> Int32 {
    abiCall { () throws(TetherError) in
        guard let count else { throw invalid(function, "count must not be NULL") }
        count.pointee = 0
        guard cap == 0 || words != nil else { throw invalid(function, "words is NULL but cap is \(cap)") }
        let addresses = of(try containerArgument(c, function))
        count.pointee = addresses.count
        guard addresses.count <= cap else {
            throw TetherError(.bufferTooSmall, "\(function): the container and its parents have \(addresses.count) \(what) words, "
                + "the buffer holds \(cap); call again with a buffer of at least *count")
        }
        for (i, address) in addresses.enumerated() { words![i] = address }
    }
}
