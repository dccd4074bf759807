// swift-tools-version:6.0
import PackageDescription
import Foundation

// TETHER_STATIC=1 (set by `make build`) links the Swift runtime and libffi into
// libtether.so so it loads with no toolchain around. Plain `swift build`/`swift test`
// stay ordinary: static stdlib in a test bundle fails to link (BUILD-NOTES.md).
let staticBuild = ProcessInfo.processInfo.environment["TETHER_STATIC"] == "1"

// Swift 5 mode: the core guards shared state with explicit locks and atomics;
// Swift 6's region checks reject non-Sendable objects moving through Mutex.withLock.
// The shipped library also drops dynamic exclusivity checks (measured: ~10% of a resolve), and puts each
// function in its own section (swiftc's default gives only public ones theirs) so the linker can pack the hot ones
// together (hot.order below).
let librarySettings: [SwiftSetting] = [.swiftLanguageMode(.v5)]
    + (staticBuild ? [.unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization",
                                    "-Xfrontend", "-function-sections"])] : [])

// DWARF 4 for the C target: clang's default 5 is more than valgrind 3.19 (benchmarks/c/profile.sh)
// reads. Only for the builds profiled (`make build`; TETHER_DWARF4=1 for benchmarks/swift): unsafe
// flags would keep a package that depends on this one by URL from building it.
let cDebugSettings: [CSetting] = staticBuild || ProcessInfo.processInfo.environment["TETHER_DWARF4"] == "1"
    ? [.unsafeFlags(["-gdwarf-4"])] : []

let package = Package(
    name: "Tether",
    products: [
        .library(name: "tether", type: .dynamic, targets: ["Tether"]),
        // The pure-Swift core, for Swift users and the Swift benchmarks (benchmarks/swift).
        .library(name: "TetherCore", targets: ["TetherCore"]),
    ],
    targets: [
        // No pkgConfig: its `-lffi` would make libtether.so need libffi.so at run time;
        // the static build links libffi_pic.a instead (ffi.h is on the default include path).
        .systemLibrary(name: "CFFI", providers: [.apt(["libffi-dev"])]),
        // Declares swift_tryRetain (weak references) and the current CPU (split counts) for TetherCore; nothing to link.
        .systemLibrary(name: "SwiftRuntime"),
        // The calling thread's `ThreadState` and the ABI's locals in words of static TLS.
        .target(name: "ThreadWord", cSettings: cDebugSettings),
        .target(name: "TetherCore", dependencies: ["SwiftRuntime", "ThreadWord"], swiftSettings: librarySettings),
        .target(
            name: "Tether",
            dependencies: ["TetherCore", "CFFI", "ThreadWord"],
            exclude: ["exports.map", "hot.order"],
            swiftSettings: librarySettings,
            linkerSettings: staticBuild
                ? [.unsafeFlags(["-static-stdlib", "-Xlinker", "-l:libffi_pic.a",
                                 "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/Tether/exports.map",
                                 // The request path's functions first and together: fewer L1 instruction-cache
                                 // misses (benchmarks/README.md, rqfoot). gold (swiftc's linker on Linux) reads it.
                                 "-Xlinker", "--section-ordering-file=\(Context.packageDirectory)/Sources/Tether/hot.order"])]
                : [.linkedLibrary("ffi")]
        ),
        .testTarget(name: "TetherCoreTests", dependencies: ["TetherCore"]),
    ]
)
