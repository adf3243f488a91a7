import Foundation
import SealTestSupport
import Testing

/// Start-up: a command that reads no image does not load zbar, zxing-cpp or libjpeg, nor zbar's X11,
/// V4L and D-Bus libraries; one that uses no TPM does not load tpm2-tss; one that does not touch the desktop keyring
/// does not load libsecret and its GLib stack. `scan`, the `--qr` options, `--tpm` and `--keystore secret-service`
/// open them with `dlopen` on first use, and a machine without one gets one line naming the library and the
/// Debian package that provides it, exit 69.
@Suite("Libraries opened on first use")
struct OnDemandLibrariesCLITests {
    /// The image readers, by SONAME.
    static let imageLibraries: Set<String> = ["libzbar.so.0", "libZXing.so.2", "libjpeg.so.62"]
    /// tpm2-tss, by SONAME.
    static let tpmLibraries: Set<String> = ["libtss2-esys.so.0", "libtss2-tctildr.so.0", "libtss2-mu.so.0"]
    /// libsecret and the GLib libraries SealKitKeyring calls, by SONAME.
    static let keyringLibraries: Set<String> = ["libsecret-1.so.0", "libglib-2.0.so.0", "libgobject-2.0.so.0", "libgio-2.0.so.0"]
    static var onDemand: Set<String> { imageLibraries.union(tpmLibraries).union(keyringLibraries) }

    /// The shared libraries the executable names (its ELF NEEDED entries), as `readelf -d` lists them.
    static func needed(_ path: String) throws -> Set<String> {
        let result = try ChildProcess.run("readelf", ["-d", "-W", path])
        #expect(result.status == 0, "\(result.stderrText)")
        // " 0x0000000000000001 (NEEDED)             Shared library: [libsodium.so.23]"
        return Set(result.stdoutText.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        })
    }

    /// Runs `sealkit ARGS` under the dynamic loader's `LD_DEBUG=files`, which reports every shared object it
    /// opens, linked (`needed by`) or with dlopen (`dynamically loaded by`): the run's result and those objects.
    static func run(_ cli: CLI, _ arguments: [String], stdin: String = "") throws -> (CLI.Result, Set<String>) {
        let result = try cli.run(arguments, stdin: stdin, environment: ["LD_DEBUG": "files"])
        // "     12345:\tfile=libzbar.so.0 [0];  dynamically loaded by /usr/bin/sealkit [0]"
        let opened = Set(result.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "file=") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " && $0 != "[" })
        })
        return (result, opened)
    }

    @Test func theExecutableNamesNoImageTPMOrKeyringLibrary() throws {
        let needed = try Self.needed(CLI.executable.path)
        #expect(needed.contains("libsodium.so.23"), "readelf listed \(needed.sorted())")
        #expect(needed.isDisjoint(with: Self.onDemand), "the binary links \(needed.intersection(Self.onDemand).sorted())")
    }

    @Test func versionAndEncryptLoadNoImageTPMOrKeyringLibraryAndScanLoadsTheImageReaders() throws {
        let cli = try CLI()
        let (version, atVersion) = try Self.run(cli, ["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("sealkit "))
        // The check sees what the loader opens: libsodium is linked.
        #expect(atVersion.contains("libsodium.so.23"), "LD_DEBUG=files showed \(atVersion.sorted())")
        #expect(atVersion.isDisjoint(with: Self.onDemand), "--version loaded \(atVersion.intersection(Self.onDemand).sorted())")
        #expect(!atVersion.contains("libX11.so.6") && !atVersion.contains("libv4l2.so.0"), "--version loaded zbar's chain: \(atVersion.sorted())")
        #expect(!atVersion.contains("libgcrypt.so.20") && !atVersion.contains("libmount.so.1"), "--version loaded libsecret's chain: \(atVersion.sorted())")

        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let (encrypted, atEncrypt) = try Self.run(cli, ["encrypt", "--key", "u"], stdin: "a value\n")
        #expect(encrypted.status == 0)
        #expect(atEncrypt.isDisjoint(with: Self.onDemand), "encrypt loaded \(atEncrypt.intersection(Self.onDemand).sorted())")
        #expect(!atEncrypt.contains("libgcrypt.so.20") && !atEncrypt.contains("libmount.so.1"), "encrypt loaded libsecret's chain: \(atEncrypt.sorted())")

        // And a scan opens zbar and zxing-cpp (libjpeg comes with zbar) and reads the code.
        let image = cli.home.appendingPathComponent("code.png").path
        let shown = try cli.run(["qr", "--format", "png", "--", "sealkit-transfer:7-guitarist-revenge"])
        #expect(shown.status == 0)
        try Data(shown.stdoutBytes).write(to: URL(fileURLWithPath: image))
        let (scanned, atScan) = try Self.run(cli, ["scan", image])
        #expect(scanned.status == 0 && scanned.stdout == "sealkit-transfer:7-guitarist-revenge\n", "\(scanned.stderr.suffix(500))")
        #expect(atScan.isSuperset(of: Self.imageLibraries), "scan loaded \(atScan.intersection(Self.imageLibraries).sorted())")
        #expect(atScan.isDisjoint(with: Self.tpmLibraries), "scan loaded \(atScan.intersection(Self.tpmLibraries).sorted())")
    }

    /// The file the dynamic loader's cache gives for `soname` (`ldconfig -p`).
    static func path(of soname: String) throws -> String {
        let listed = try ChildProcess.run("/sbin/ldconfig", ["-p"]).stdoutText
        // "\tlibzbar.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libzbar.so.0"
        for line in listed.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix(soname + " ") {
            if let arrow = line.range(of: " => ") { return String(line[arrow.upperBound...]) }
        }
        Issue.record("ldconfig -p lists no \(soname)")
        return "/nonexistent/\(soname)"
    }

    /// `sealkit ARGS` in a private mount namespace where `soname`'s file is /dev/null (empty): the library is
    /// there but cannot be loaded, as on a machine without it; nothing outside the namespace changes.
    static func runWithout(_ soname: String, _ cli: CLI, _ arguments: [String], stdin: String = "") throws -> CLI.Result {
        let script = "mount --bind /dev/null \"$1\" && shift && exec \"$@\""
        let result = try ChildProcess.run(
            "unshare", ["--map-root-user", "--mount", "sh", "-c", script, "sh", try path(of: soname), CLI.executable.path] + arguments,
            stdin: Array(stdin.utf8), environment: cli.environment)
        return CLI.Result(result)
    }

    @Test(.requires(.mountNamespace)) func aMissingImageLibraryIsOneLineNamingItsPackage() throws {
        let cli = try CLI()
        let image = cli.home.appendingPathComponent("code.png").path
        let shown = try cli.run(["qr", "--format", "png", "--", "sealkit-transfer:7-guitarist-revenge"])
        try Data(shown.stdoutBytes).write(to: URL(fileURLWithPath: image))
        for (soname, package) in [("libzbar.so.0", "libzbar0"), ("libZXing.so.2", "libzxing2")] {
            // A command that reads no image does not need it.
            let version = try Self.runWithout(soname, cli, ["--version"])
            #expect(version.status == 0 && version.stdout.hasPrefix("sealkit "), "\(soname): \(version.stderr)")
            let scanned = try Self.runWithout(soname, cli, ["scan", image])
            #expect(scanned.status == 69, "\(soname): exit \(scanned.status)")
            expectCleanFailure(scanned, containing: "sealkit: cannot read images: \(soname) cannot be loaded (Debian package \(package)): ")
            let imported = try Self.runWithout(soname, cli, ["keys", "import", "someone", "--qr", image])
            #expect(imported.status == 69, "\(soname): exit \(imported.status)")
            expectCleanFailure(imported, containing: "\(soname) cannot be loaded (Debian package \(package))")
        }
    }

    @Test(.requires(.mountNamespace)) func aMissingTPMLibraryIsOneLineNamingItsPackage() throws {
        let cli = try CLI()
        for (soname, package) in [("libtss2-esys.so.0", "libtss2-esys-3.0.2-0"), ("libtss2-tctildr.so.0", "libtss2-tctildr0")] {
            // The library is opened before any TPM is reached, so none is needed here.
            let made = try Self.runWithout(soname, cli, ["keys", "generate", "alice", "--tpm"])
            #expect(made.status == 69, "\(soname): exit \(made.status)")
            expectCleanFailure(made, containing: "sealkit: cannot use the TPM: \(soname) cannot be loaded (Debian package \(package)): ")
            // Nothing was made, and keys that use no TPM work without it.
            let listed = try cli.run(["keys", "list"])
            #expect(listed.status == 0 && !listed.stdout.contains("alice"), "\(listed.stdout)")
            let plain = try Self.runWithout(soname, cli, ["keys", "generate", "plain-\(soname.count)"])
            #expect(plain.status == 0, "\(soname): \(plain.stderr)")
        }
    }

    @Test func theDesktopKeyringOpensLibsecretAndGLib() throws {
        let cli = try CLI()
        // Whether a keyring answers or not (no session bus here), the command opens libsecret to ask it.
        let (_, atKeyring) = try Self.run(cli, ["keys", "list", "--keystore", "secret-service"])
        #expect(atKeyring.isSuperset(of: Self.keyringLibraries), "the keyring loaded \(atKeyring.intersection(Self.keyringLibraries).sorted())")
        #expect(atKeyring.isDisjoint(with: Self.imageLibraries.union(Self.tpmLibraries)), "the keyring loaded \(atKeyring.sorted())")
    }

    @Test(.requires(.mountNamespace)) func aMissingKeyringLibraryIsOneLineNamingItsPackage() throws {
        let cli = try CLI()
        for (index, (soname, package)) in [("libsecret-1.so.0", "libsecret-1-0"), ("libglib-2.0.so.0", "libglib2.0-0")].enumerated() {
            // The library is opened before any keyring is asked, so none is needed here.
            for arguments in [["keys", "list", "--keystore", "secret-service"], ["keys", "generate", "alice", "--keystore", "secret-service"]] {
                let result = try Self.runWithout(soname, cli, arguments)
                #expect(result.status == 69, "\(soname), \(arguments): exit \(result.status)")
                expectCleanFailure(result, containing: "sealkit: cannot use the desktop keyring: \(soname) cannot be loaded (Debian package \(package)): ")
            }
            // Every other command works without it.
            let version = try Self.runWithout(soname, cli, ["--version"])
            #expect(version.status == 0 && version.stdout.hasPrefix("sealkit "), "\(soname): \(version.stderr)")
            let made = try Self.runWithout(soname, cli, ["keys", "generate", "plain-\(index)"])
            #expect(made.status == 0, "\(soname): \(made.stderr)")
            let sealed = try Self.runWithout(soname, cli, ["encrypt", "--key", "plain-\(index)"], stdin: "a value\n")
            #expect(sealed.status == 0 && sealed.stdout.count > 20 && !sealed.stdout.contains("a value"), "\(soname): \(sealed.stderr)")
        }
    }
}
