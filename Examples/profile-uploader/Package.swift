// swift-tools-version:6.0
import PackageDescription

// An app that only encrypts profile fields: it depends on the core `SealKit` product, which needs
// libsodium and swift-system and nothing else (no swift-nio, libsecret, libqrencode or libpng).
let package = Package(
    name: "profile-uploader",
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which a clone may change.
        .package(name: "SealKit", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "profile-uploader", dependencies: [.product(name: "SealKit", package: "SealKit")]),
    ]
)
