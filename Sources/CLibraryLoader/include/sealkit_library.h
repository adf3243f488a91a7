#ifndef SEALKIT_LIBRARY_H
#define SEALKIT_LIBRARY_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma clang assume_nonnull begin

/* Libraries that only some commands use are opened with dlopen on first use, not linked (start-up
 * time): the image readers (zbar and its X11, V4L and D-Bus chain, zxing-cpp, libjpeg) by the first image read,
 * tpm2-tss by the first TPM call. Each is opened by its SONAME, the ABI the code was built against. */

/// A shared library opened at run time: its SONAME, the Debian package that provides it, the symbols
/// resolved from it (`count` names, their addresses in `functions`), and the outcome of the one attempt.
typedef struct sealkit_library {
    const char *soname;
    const char *package;
    const char *_Nonnull const *_Nonnull names;
    void *_Nullable *_Nonnull functions;
    size_t count;
    /* The functions' own. */
    int tried;
    int loaded;
    char error[320];
} sealkit_library;

/// Opens `library` (dlopen RTLD_NOW | RTLD_LOCAL) and resolves its symbols, once per process, whatever
/// the number of threads asking (`library` is a static of its user's, zero but for its first five fields):
/// 0 when every symbol was found, else -1 with one line in `library->error`
/// naming the library, its Debian package and the loader's reason (and the library left closed).
/// The library stays loaded for the life of the process.
int sealkit_library_load(sealkit_library *library);

#pragma clang assume_nonnull end

#ifdef __cplusplus
}
#endif
#endif
