/// SealKit's version. `sealkit --version` prints `sealkit VERSION (COMMIT)` on one line, and
/// Scripts/package names the Debian package and the archive after the same VERSION.
let sealkitVersion = "1.0.0"

/// The commit this `sealkit` was built from: the checkout's short HEAD, `-dirty` when tracked files
/// differed from it, or the `SEALKIT_COMMIT` the build was given, else "unknown" (a source archive
/// without git). The GitCommit plugin writes it for each build that changes it (Plugins/GitCommit),
/// so a plain `swift build`, Scripts/install and Scripts/package name it the same way.
let buildCommit = generatedCommit
