import CBuildInfo

/// SealKit's version. `sealkit --version` prints `sealkit VERSION (COMMIT)` on one line, and
/// Scripts/package names the Debian package and the archive after the same VERSION.
let sealkitVersion = "1.0.0"

/// The commit this `sealkit` was built from: the one Scripts/install and Scripts/package write into
/// the binary they install (CBuildInfo), else the checkout's that the build read from git (the GitCommit
/// plugin's `generatedCommit`), else "unknown" (a source archive without git, or no git installed).
///
/// Two sources because each names what the other cannot: the stamp is exact for what was installed, from a
/// source archive too (`SEALKIT_COMMIT`), with no rebuild when only the commit changed; the plugin is what a
/// plain `swift build` of a checkout has, with no install step to stamp it.
let buildCommit: String = {
    let stamped = String(cString: sealkit_build_commit())
    return stamped != "unknown" ? stamped : generatedCommit
}()
