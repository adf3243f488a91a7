// swift-tools-version:6.0
import PackageDescription

// Receives a user's keys from another device with the async transfer API: the core product for
// the keystore, and `SealKitTransfer` (swift-nio) for the transfer.
let package = Package(
    name: "key-receiver",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which a clone may change.
        .package(name: "SealKit", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "key-receiver",
            dependencies: [
                .product(name: "SealKit", package: "SealKit"),
                .product(name: "SealKitTransfer", package: "SealKit"),
            ]),
    ]
)
