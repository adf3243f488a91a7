// swift-tools-version:6.0
import PackageDescription

// One target per capability; dependencies point down toward SealCore, the only
// target that talks to libsodium. The CLI is a thin layer over the SealKit library.
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
        // Its snippet-extract gives Scripts/docs the Snippets/ DocC articles show; `swift package generate-documentation`
        // works too, documenting each product's own module only. No code of ours depends on it.
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
        // libsecret's and GLib's real headers, for Tests/CSecretABICheck alone: they need pkg-config's flags, which
        // would link libsecret and GLib into whatever uses them (start-up time; see CSecretLoad).
        .systemLibrary(
            name: "CSecret", pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]),
        // The image readers' headers only: zbar, libjpeg and zxing-cpp are opened at run time (dlopen) by the
        // first image read, not linked (no pkg-config, whose flags would link them), so that a command that
        // reads no image does not load them and zbar's X11, v4l and D-Bus chain (start-up time).
        .systemLibrary(name: "CZbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CJPEG", providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(
            name: "CEdit", pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]),
        .systemLibrary(name: "CZXing", providers: [.apt(["libzxing-dev"])]),
        // tpm2-tss's headers only: its libraries are opened at run time (dlopen) by the first TPM call, not linked
        // (no pkg-config, whose flags would link them), so that a command that uses no TPM does not load them.
        .systemLibrary(name: "CTSS2", providers: [.apt(["libtss2-dev"])]),
        // The TPM's templates are deeply nested C unions: a few lines of C fill them in for ESAPI, and open
        // libtss2-esys, libtss2-tctildr and libtss2-mu on first use (CLibraryLoader).
        .target(name: "CTPMSeal", dependencies: ["CTSS2", "CLibraryLoader"]),
        // Opens a library with dlopen on first use, once, and resolves its functions (the image readers', the
        // TPM's), or says in one line which library and which Debian package are missing.
        .target(name: "CLibraryLoader"),
        // zbar's functions, opened on first use (CLibraryLoader), for SealScan's Swift to call.
        .target(name: "CZbarLoad", dependencies: ["CZbar", "CLibraryLoader"]),
        // zxing-cpp has only a C++ API: a few lines of C++ give Swift a C function to call.
        .target(name: "CZXingRead", dependencies: ["CZXing", "CLibraryLoader"]),
        // libjpeg reports errors by longjmp, which Swift cannot do: a few lines of C around it.
        .target(name: "CJPEGDecode", dependencies: ["CJPEG", "CLibraryLoader"]),
        // libsecret and its GLib stack (libglib, libgobject, libgio), opened on the first keyring call (CLibraryLoader),
        // not linked: SealKit's declarations of the few functions and types SealSecretService uses, which
        // Tests/CSecretABICheck compiles against the real headers.
        .target(name: "CSecretLoad", dependencies: ["CLibraryLoader"]),

        // prctl for the CLI's start-up hardening (Swift cannot call a C variadic function).
        .target(name: "CProcessHardening"),
        // The commit `sealkit --version` names, in a field of its own that Scripts/install fills in.
        .target(name: "CBuildInfo"),
        // The commit of the checkout a plain `swift build` builds, which the GitCommit plugin reads
        // from git before each build; `sealkit --version` names it when nothing was stamped.
        .target(name: "BuildCommit", plugins: ["GitCommit"]),
        .plugin(name: "GitCommit", capability: .buildTool()),

        // Crypto core: keys in guarded memory, secretbox, sealed boxes, Argon2id, base64.
        .target(name: "SealCore", dependencies: ["CSodium"]),
        // Per-user keys on disk (or in memory): atomic, locked, optionally passphrase-wrapped.
        .target(
            name: "SealKeystore",
            dependencies: ["SealCore", .product(name: "SystemPackage", package: "swift-system")]),
        // Keys in the desktop keyring (freedesktop Secret Service) through libsecret.
        .target(
            name: "SealSecretService",
            dependencies: ["CSecretLoad", "SealCore", "SealKeystore", .product(name: "SystemPackage", package: "swift-system")]),
        // Key files' wrapping keys sealed to a TPM 2.0 through tpm2-tss's ESAPI (no marshalling of ours).
        .target(name: "SealTPM", dependencies: ["CTPMSeal", "SealCore", "SealKeystore"]),
        // JSON that keeps key order and exact number text, with a nesting limit.
        .target(name: "SealJSON"),
        // Schema-aware profile encryption.
        .target(name: "SealProfile", dependencies: ["SealCore", "SealJSON"]),
        // QR codes: libqrencode for the symbol, libpng for PNG output.
        .target(name: "SealQR", dependencies: ["CQREncode", "CPNG", "SealCore"]),
        // Backups: paper backups under a passphrase, SLIP-39 share backups, their word lists, and
        // the code text (prefixes, parts, key bundles) that transfers share.
        .target(name: "SealBackup", dependencies: ["SealCore", "SealKeystore"]),
        // Key transfer: sealed offers and replies, Rownd links.
        .target(name: "SealTransfer", dependencies: ["SealCore", "SealKeystore", "SealJSON", "SealMailbox", "SealBackup"]),
        // The magic-wormhole mailbox client: WebSocket through swift-nio, the server protocol's
        // small state machines, and the wormhole client protocol (PAKE, version, phases) on SealCore.
        .target(
            name: "SealMailbox",
            dependencies: [
                "SealCore", "SealJSON",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]),
        // QR reading: images (libpng, libjpeg-turbo, netpbm's raw formats) to zbar.
        .target(name: "SealScan", dependencies: ["CZbar", "CZbarLoad", "CZXingRead", "CPNG", "CJPEGDecode", "SealCore"]),
        // Fixture audit: findings over ciphertext fixtures and exported profiles.
        .target(name: "SealAudit", dependencies: ["SealCore", "SealKeystore", "SealJSON", "SealProfile"]),
        // The public library: the Vault, and every capability re-exported.
        .target(name: "SealKit", dependencies: ["SealCore", "SealKeystore", "SealJSON", "SealProfile"]),
        .target(name: "SealKitBackup", dependencies: ["SealKit", "SealCore", "SealKeystore", "SealBackup"]),
        .target(name: "SealKitTransfer", dependencies: ["SealKit", "SealCore", "SealKeystore", "SealProfile", "SealBackup", "SealTransfer", "SealMailbox"]),
        // libsecret and the Secret Service are Linux's: on other platforms the product is SealKit alone.
        .target(
            name: "SealKitKeyring",
            dependencies: ["SealKit", .target(name: "SealSecretService", condition: .when(platforms: [.linux]))]),
        .target(name: "SealKitQR", dependencies: ["SealKit", "SealQR", "SealScan"]),
        .target(name: "SealKitAudit", dependencies: ["SealKit", "SealAudit", "SealCore"]),
        .target(name: "SealKitTPM", dependencies: ["SealKit", "SealKeystore", "SealTPM"]),
        // The `sealkit` command: argument handling and printing only.
        .executableTarget(
            name: "SealKitCLI",
            dependencies: [
                "SealKit", "SealKitBackup", "SealKitTransfer", "SealKitKeyring", "SealKitQR", "SealKitAudit", "SealKitTPM", "CProcessHardening",
                "CBuildInfo", "BuildCommit", "CEdit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),
        // libFuzzer targets for every parser of untrusted input (Scripts/fuzz builds them with
        // -sanitize=fuzzer); an ordinary build replays inputs through them instead.
        .executableTarget(
            name: "SealKitFuzz",
            dependencies: ["SealCore", "SealJSON", "SealKeystore", "SealProfile", "SealTransfer", "SealAudit", "SealMailbox", "SealBackup", "SealScan"]),

        // Scripts/bench's in-process timings of the library; in no product.
        .executableTarget(name: "SealKitBench", dependencies: ["SealKit", "SealCore", "SealJSON", "SealKeystore"], path: "Benchmarks/SealKitBench"),

        // Runs other programs (sealkit, PyNaCl, zbarimg) for the tests.
        .target(name: "SealTestSupport", dependencies: ["SealCore", "SealKeystore"], path: "Tests/SealTestSupport"),
        // The async transfer API in a process of its own, for tests that time it (SealKitCLITests).
        .executableTarget(name: "SealTransferProbe", dependencies: ["SealCore", "SealKeystore", "SealKitTransfer"], path: "Tests/SealTransferProbe"),
        // The test support itself: the process runner's deadlines, the peers' requirements.
        .testTarget(name: "SealTestSupportTests", dependencies: ["SealTestSupport"]),
        .testTarget(name: "SealCoreTests", dependencies: ["SealCore", "SealTestSupport"]),
        .testTarget(name: "SealJSONTests", dependencies: ["SealJSON", "SealTestSupport"]),
        // The Keystore contract as checks every backend runs unchanged.
        .target(name: "KeystoreConformance", dependencies: ["SealKeystore"], path: "Tests/KeystoreConformance"),
        .testTarget(name: "SealKeystoreTests", dependencies: ["SealKeystore", "KeystoreConformance", "SealTestSupport"]),
        // Against a real Secret Service: a private bus and GNOME Keyring per run (SealTestSupport).
        .testTarget(
            name: "SealSecretServiceTests",
            dependencies: ["SealSecretService", "SealKeystore", "KeystoreConformance", "SealTestSupport", "CSecretABICheck"]),
        // CSecretLoad's declarations of GLib and libsecret against their real headers: a difference fails the build.
        .target(name: "CSecretABICheck", dependencies: ["CSecret", "CSecretLoad"], path: "Tests/CSecretABICheck"),
        .testTarget(
            name: "SealProfileTests",
            dependencies: ["SealProfile", "SealTestSupport", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "SealQRTests", dependencies: ["SealQR", "SealTestSupport"]),
        .testTarget(name: "SealTransferTests", dependencies: ["SealTransfer", "SealMailbox", "SealBackup", "SealTestSupport"]),
        .testTarget(name: "SealBackupTests", dependencies: ["SealBackup", "SealTestSupport"]),
        .testTarget(name: "SealScanTests", dependencies: ["SealScan", "SealQR", "SealTestSupport"]),
        // The scanner as an app hosts it: SealKitQR's public API only, from many threads and tasks.
        .testTarget(name: "SealKitQRHostTests", dependencies: ["SealKitQR", "SealTestSupport"]),
        .testTarget(name: "SealMailboxTests", dependencies: ["SealMailbox", "SealTransfer", "SealKitTransfer", "SealTestSupport"]),
        .testTarget(name: "SealAuditTests", dependencies: ["SealAudit"]),
        .testTarget(name: "SealKitTests", dependencies: ["SealKit", "SealCore", "SealJSON", "SealKeystore", "SealProfile", "SealTestSupport"]),
        // Drives the built `sealkit` binary as a separate process, as scripts do.
        .testTarget(
            name: "SealKitCLITests",
            dependencies: [
                "SealKitCLI", "SealTransferProbe", "SealKit", "SealKitBackup", "SealKitTransfer", "SealKitKeyring", "SealKitQR", "SealKitTPM", "SealTPM",
                "SealKitAudit", "SealTestSupport", "SealBackup", "SealCore", "SealJSON", "SealKeystore", "SealMailbox", "SealProfile",
                "SealTransfer",
            ],
            // Read from the source tree by ScriptRunner, not bundled.
            exclude: ["scripts"]),
    ],
    // zxing-cpp 1.4's headers need C++17 (CZXingRead only).
    cxxLanguageStandard: .cxx17
)
