// swift-tools-version:6.0
import PackageDescription
import Foundation

// TETHER_STATIC=1 (set by `make build`) links the Swift runtime and libffi into
// libtether.so so it loads with no toolchain around. Plain `swift build`/`swift test`
// stay ordinary: static stdlib in a test bundle fails to link (BUILD-NOTES.md).
let staticBuild = ProcessInfo.processInfo.environment["TETHER_STATIC"] == "1"

let package = Package(
    name: "Tether",
    products: [
        .library(name: "tether", type: .dynamic, targets: ["Tether"]),
    ],
    targets: [
        // No pkgConfig: its `-lffi` would make libtether.so need libffi.so at run time;
        // the static build links libffi_pic.a instead (ffi.h is on the default include path).
        .systemLibrary(name: "CFFI", providers: [.apt(["libffi-dev"])]),
        // Swift 5 mode: the core guards shared state with explicit Mutexes; Swift 6's
        // region checks reject non-Sendable objects moving through Mutex.withLock.
        .target(name: "TetherCore", swiftSettings: [.swiftLanguageMode(.v5)]),
        .target(
            name: "Tether",
            dependencies: ["TetherCore", "CFFI"],
            exclude: ["exports.map"],
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: staticBuild
                ? [.unsafeFlags(["-static-stdlib", "-Xlinker", "-l:libffi_pic.a",
                                 "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/Tether/exports.map"])]
                : [.linkedLibrary("ffi")]
        ),
        .testTarget(name: "TetherCoreTests", dependencies: ["TetherCore"]),
    ]
)
