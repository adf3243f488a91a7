import BuildCommit
import CBuildInfo

/// SealKit's version. `sealkit --version` prints `sealkit VERSION (COMMIT)` on one line, and
/// Scripts/package names the Debian package and the archive after the same VERSION.
let sealkitVersion = "1.0.0"

/// The commit this `sealkit` was built from: the one Scripts/install and Scripts/package write into
/// the binary they install (CBuildInfo), else the checkout's that the build read from git
/// (BuildCommit), else "unknown" (a source archive without git, or no git installed).
let buildCommit: String = {
    let stamped = String(cString: sealkit_build_commit())
    return stamped != "unknown" ? stamped : sourceCommit()
}()
