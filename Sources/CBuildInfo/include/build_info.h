#ifndef SEALKIT_BUILD_INFO_H
#define SEALKIT_BUILD_INFO_H

/// The commit this binary was built from, as a C string: "unknown" as built. Scripts/install
/// (behind Scripts/package too) writes the commit into the binary it installs, in place of
/// "unknown" in the ELF section `.sealkit_commit` (Scripts/lib/release.sh, `stamp_commit`), so the
/// build itself does not depend on the commit: no source file is rewritten, nothing is rebuilt.
const char *sealkit_build_commit(void);

#endif
