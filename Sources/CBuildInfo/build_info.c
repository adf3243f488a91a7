#include "build_info.h"

// A fixed 48-byte field of its own: objcopy --update-section replaces it with the commit,
// NUL-padded to the same size and always NUL-terminated, in an installed copy of the binary. Not const, so no compiler
// folds "unknown" into the reader.
#if defined(__ELF__)
__attribute__((section(".sealkit_commit"), used))
#endif
char sealkit_commit_field[48] = "unknown";

const char *sealkit_build_commit(void) { return sealkit_commit_field; }
