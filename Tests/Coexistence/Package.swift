// swift-tools-version:6.0
import PackageDescription

// An app that uses swift-crypto and every SealKit library product in one file: nothing SealKit
// exports may shadow swift-crypto's names, so `SymmetricKey`, `SHA256`, `HKDF<SHA256>`, `AES.GCM` and
// `ChaChaPoly` must resolve unqualified. Scripts/check-coexistence builds and runs it; Scripts/test calls that.
let package = Package(
    name: "coexistence",
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which a clone may change.
        .package(name: "SealKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
    ],
    targets: [
        .executableTarget(
            name: "coexistence",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                // Every library product in ../../Package.swift (Scripts/check-coexistence checks the list, so a
                // new product must join here and in main.swift in the change that adds it to Package.swift).
                .product(name: "SealKit", package: "SealKit"),
                .product(name: "SealKitBackup", package: "SealKit"),
                .product(name: "SealKitTransfer", package: "SealKit"),
                .product(name: "SealKitKeyring", package: "SealKit"),
                .product(name: "SealKitQR", package: "SealKit"),
                .product(name: "SealKitAudit", package: "SealKit"),
                .product(name: "SealKitTPM", package: "SealKit"),
            ]),
    ]
)
