// swift-tools-version:6.0
// Swift peers benchmark (issue 5): S1-S4 with Swinject 2.10.0 and with Tether's core
// (TetherCore, through its Swift API), in one executable. Not built by CI.
//   cd benchmarks/swift && swift build -c release && swift run -c release SwiftBench
import PackageDescription
import Foundation

// A path dependency's identity is the last component of its path (the checkout's folder
// name, "main" here), which `.product(..., package:)` must name.
let tetherRoot = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().deletingLastPathComponent()
let tetherIdentity = tetherRoot.lastPathComponent.lowercased()

let package = Package(
    name: "TetherSwiftBench",
    dependencies: [
        .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "SwiftBench",
            dependencies: [
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "TetherCore", package: tetherIdentity),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
