// swift-tools-version:6.0
import PackageDescription

// One library module per product, in folders by concept; dependencies point down toward SealKit, the only
// module that talks to libsodium. The CLI is a thin layer over the products' public API.
let package = Package(
    name: "SealKit",
    products: [
        // What an app that encrypts profile fields imports: the Vault, the ciphers, the file and
        // in-memory keystores, profiles and JSON. It needs libsodium and swift-system, nothing else.
        .library(name: "SealKit", targets: ["SealKit"]),
        // Added by name for the rest: paper and share backups (libsodium alone), key transfer
        // (swift-nio), the desktop keyring (libsecret), QR codes out and in (libqrencode, libpng,
        // zbar, zxing-cpp, libjpeg), the audit.
        .library(name: "SealKitBackup", targets: ["SealKitBackup"]),
        .library(name: "SealKitTransfer", targets: ["SealKitTransfer"]),
        .library(name: "SealKitKeyring", targets: ["SealKitKeyring"]),
        .library(name: "SealKitQR", targets: ["SealKitQR"]),
        .library(name: "SealKitAudit", targets: ["SealKitAudit"]),
        // Keys sealed to the machine's TPM 2.0 (tpm2-tss).
        .library(name: "SealKitTPM", targets: ["SealKitTPM"]),
        .executable(name: "sealkit", targets: ["SealKitCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // `swift package generate-documentation --target PRODUCT`, with the Snippets/ DocC articles show: Scripts/docs
        // checks its archives. No code of ours depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // System libraries, found through pkg-config.
        .systemLibrary(
            name: "CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(
            name: "CQREncode", pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(
            name: "CPNG", pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]),
        .systemLibrary(
            name: "CEdit", pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]),
        // One C target per library opened at run time (dlopen) by its first use, not linked (no pkg-config, whose
        // flags would link it): a command that reads no image, uses no TPM and no keyring does not load zbar's X11,
        // v4l and D-Bus chain, tpm2-tss, or libsecret and GLib (start-up time). Each holds the library's
        // declarations and the few lines of C that open it and call it (CLibraryLoader), or says in one line which
        // library and which Debian package are missing. Their headers come from the -dev packages Scripts/lib/deps.sh
        // installs.
        // zbar: the scanner's first reader.
        .target(name: "CZbar", dependencies: ["CLibraryLoader"]),
        // libjpeg reports errors by longjmp, which Swift cannot do: a few lines of C around it.
        .target(name: "CJPEG", dependencies: ["CLibraryLoader"]),
        // zxing-cpp has only a C++ API: a few lines of C++ give Swift a C function to call.
        .target(name: "CZXing", dependencies: ["CLibraryLoader"]),
        // tpm2-tss's ESAPI: the TPM's templates are deeply nested C unions, which a few lines of C fill in.
        .target(name: "CTSS2", dependencies: ["CLibraryLoader"]),
        // libsecret and its GLib stack (libglib, libgobject, libgio): SealKit's declarations of the few functions and
        // types SealKitKeyring uses, which Tests/CSecretABICheck compiles against the real headers.
        .target(name: "CSecret", dependencies: ["CLibraryLoader"]),
        // Opens a library with dlopen on first use, once, and resolves its functions: the loader the five above share.
        .target(name: "CLibraryLoader"),

        // prctl for the CLI's start-up hardening (Swift cannot call a C variadic function).
        .target(name: "CProcessHardening"),
        // The commit `sealkit --version` names: the checkout's HEAD, or SEALKIT_COMMIT, written for each build that
        // changed it (Plugins/GitCommit).
        .plugin(name: "GitCommit", capability: .buildTool()),

        // SealKit: the Vault, the ciphers (Core/), the keystores (Keystore/), profiles and schemas (Profile/), JSON
        // (JSON/) and the code text every backup and transfer writes (Codes/). The only module that calls libsodium.
        .target(
            name: "SealKit",
            dependencies: ["CSodium", .product(name: "SystemPackage", package: "swift-system")]),
        // Paper backups under a passphrase, SLIP-39 share backups and their word lists.
        .target(name: "SealKitBackup", dependencies: ["SealKit"]),
        // Key transfer: the magic-wormhole mailbox client (Mailbox/: WebSocket through swift-nio, the server's
        // small state machines, PAKE and phases), sealed offers and replies (Offers/), and the sessions apps drive
        // (Sessions/).
        .target(
            name: "SealKitTransfer",
            dependencies: [
                "SealKit",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]),
        // Keys in the desktop keyring (freedesktop Secret Service) through libsecret. libsecret and the Secret
        // Service are Linux's: on other platforms the product is SealKit alone.
        .target(
            name: "SealKitKeyring",
            dependencies: [
                "SealKit", .product(name: "SystemPackage", package: "swift-system"),
                .target(name: "CSecret", condition: .when(platforms: [.linux])),
            ]),
        // QR codes out (Render/: libqrencode for the symbol, libpng for PNG) and in (Scan/: PNG, JPEG and netpbm
        // images to zbar and zxing-cpp).
        .target(name: "SealKitQR", dependencies: ["SealKit", "CQREncode", "CPNG", "CZbar", "CZXing", "CJPEG"]),
        // The fixture audit: findings over ciphertext fixtures and exported profiles.
        .target(name: "SealKitAudit", dependencies: ["SealKit"]),
        // Key files' wrapping keys sealed to a TPM 2.0 through tpm2-tss's ESAPI (no marshalling of ours).
        .target(name: "SealKitTPM", dependencies: ["SealKit", "CTSS2"]),
        // The `sealkit` command: argument handling and printing only.
        .executableTarget(
            name: "SealKitCLI",
            dependencies: [
                "SealKit", "SealKitBackup", "SealKitTransfer", "SealKitKeyring", "SealKitQR", "SealKitAudit", "SealKitTPM", "CProcessHardening", "CEdit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            plugins: ["GitCommit"]),
        // libFuzzer targets for every parser of untrusted input (Scripts/fuzz builds them with
        // -sanitize=fuzzer); an ordinary build replays inputs through them instead.
        .executableTarget(
            name: "SealKitFuzz",
            dependencies: ["SealKit", "SealKitTransfer", "SealKitAudit", "SealKitBackup", "SealKitQR"]),

        // Scripts/bench's in-process timings of the library; in no product.
        .executableTarget(name: "SealKitBench", dependencies: ["SealKit"], path: "Benchmarks/SealKitBench"),

        // Runs other programs (sealkit, PyNaCl, zbarimg) for the tests.
        .target(name: "SealTestSupport", dependencies: ["SealKit"], path: "Tests/SealTestSupport"),
        // The async transfer API in a process of its own, for tests that time it (SealKitCLITests).
        .executableTarget(name: "SealTransferProbe", dependencies: ["SealKitTransfer"], path: "Tests/SealTransferProbe"),
        // The test support itself: the process runner's deadlines, the peers' requirements.
        .testTarget(name: "SealTestSupportTests", dependencies: ["SealTestSupport"]),
        // The Keystore contract as checks every backend runs unchanged.
        .target(name: "KeystoreConformance", dependencies: ["SealKit"], path: "Tests/KeystoreConformance"),
        // One test target per product, in the product's folders.
        .testTarget(
            name: "SealKitTests",
            dependencies: [
                "SealKit", "KeystoreConformance", "SealTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(name: "SealKitBackupTests", dependencies: ["SealKitBackup", "SealTestSupport"]),
        .testTarget(name: "SealKitTransferTests", dependencies: ["SealKitTransfer", "SealKitBackup", "SealTestSupport"]),
        .testTarget(name: "SealKitQRTests", dependencies: ["SealKitQR", "SealTestSupport"]),
        .testTarget(name: "SealKitAuditTests", dependencies: ["SealKitAudit"]),
        // Against a real Secret Service: a private bus and GNOME Keyring per run (SealTestSupport).
        .testTarget(
            name: "SealKitKeyringTests",
            dependencies: ["SealKitKeyring", "KeystoreConformance", "SealTestSupport", "CSecretABICheck"]),
        // CSecret's declarations of GLib and libsecret against their real headers: a difference fails the build. The
        // headers come through pkg-config, whose flags link libsecret and GLib: into the tests alone.
        .systemLibrary(
            name: "CSecretHeaders", path: "Tests/CSecretHeaders", pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]),
        .target(name: "CSecretABICheck", dependencies: ["CSecretHeaders", "CSecret"], path: "Tests/CSecretABICheck"),
        // Drives the built `sealkit` binary as a separate process, as scripts do.
        .testTarget(
            name: "SealKitCLITests",
            dependencies: [
                "SealKitCLI", "SealTransferProbe", "SealKit", "SealKitBackup", "SealKitTransfer", "SealKitKeyring", "SealKitQR",
                "SealKitTPM", "SealKitAudit", "SealTestSupport",
            ],
            // Read from the source tree by ScriptRunner, not bundled.
            exclude: ["scripts"]),
    ],
    // zxing-cpp 1.4's headers need C++17 (CZXing only).
    cxxLanguageStandard: .cxx17
)
