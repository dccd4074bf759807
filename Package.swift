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
        .systemLibrary(name: "CFFI", pkgConfig: "libffi", providers: [.apt(["libffi-dev"])]),
        .target(name: "TetherCore"),
        .target(
            name: "Tether",
            dependencies: ["TetherCore", "CFFI"],
            linkerSettings: staticBuild
                ? [.unsafeFlags(["-static-stdlib", "-Xlinker", "-l:libffi_pic.a"])]
                : [.linkedLibrary("ffi")]
        ),
        .testTarget(name: "TetherCoreTests", dependencies: ["TetherCore"]),
    ]
)
