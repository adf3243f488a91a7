import CBuildInfo

/// SealKit's version. `sealkit --version` prints `sealkit VERSION (COMMIT)` on one line, and
/// Scripts/package names the Debian package and the archive after the same VERSION.
let sealkitVersion = "1.0.0"

/// The commit this `sealkit` was built from, or "unknown": a plain `swift build` leaves it unknown
/// (from a clean clone or a source archive without git alike); Scripts/install and Scripts/package
/// write it into the binary they install (CBuildInfo).
let buildCommit = String(cString: sealkit_build_commit())
