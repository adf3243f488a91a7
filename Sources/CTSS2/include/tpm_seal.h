#ifndef SEALKIT_TPM_SEAL_H
#define SEALKIT_TPM_SEAL_H

#include <stddef.h>
#include <stdint.h>

/// What a TPM call ended with.
enum sealkit_tpm_status {
    SEALKIT_TPM_OK = 0,
    /// The TCTI could not be loaded or the TPM did not answer.
    SEALKIT_TPM_UNAVAILABLE = 1,
    /// The PIN (the sealed object's authorization value) is wrong; the TPM counted a failure.
    SEALKIT_TPM_WRONG_PIN = 2,
    /// The TPM is in dictionary-attack lockout.
    SEALKIT_TPM_LOCKOUT = 3,
    /// The storage primary key of this TPM is not the one the blob was sealed under.
    SEALKIT_TPM_OTHER_TPM = 4,
    /// The blob does not unmarshal, does not load (integrity), or does not hold a 32-byte key.
    SEALKIT_TPM_DAMAGED = 5,
    /// The TPM has no free slot for an object or session: a process that was killed left some loaded, on a TPM
    /// reached without a resource manager (the kernel's /dev/tpmrm0 flushes what a process leaves).
    SEALKIT_TPM_FULL = 7,
    /// Anything else the TPM refused (for example an owner hierarchy with a password); `tpm_rc` says what.
    SEALKIT_TPM_FAILED = 6,
    /// tpm2-tss (libtss2-esys, libtss2-tctildr, libtss2-mu), opened on the first call with dlopen, cannot be
    /// loaded: `sealkit_tpm_library_error` says which library and which Debian package.
    SEALKIT_TPM_NO_LIBRARY = 8,
    /// The TPM did not answer within the call's time limit (the call goes on, on a thread of its own, and ends
    /// when the TPM or the connection does; nothing of the caller's is touched afterwards).
    SEALKIT_TPM_TIMEOUT = 9,
};

/// After SEALKIT_TPM_NO_LIBRARY: one line naming the library that cannot be loaded, its Debian package and the
/// loader's reason (a static string, the same for the life of the process).
const char *sealkit_tpm_library_error(void);

/// The largest blob `sealkit_tpm_seal` writes: a marshalled TPM2B_PUBLIC then a TPM2B_PRIVATE.
#define SEALKIT_TPM_BLOB_MAX 1024
/// The size of a primary key's name (a TPM2B_NAME's bytes: a SHA-256 name is 34).
#define SEALKIT_TPM_NAME_MAX 68

/// Seals `data` (`data_len` bytes, at most 128) to the TPM at `tcti` (a TCTI string for
/// Tss2_TctiLdr_Initialize) under the owner hierarchy's storage primary key, re-created from a
/// fixed template each time, with `pin` as the sealed object's authorization value (may be empty: the
/// object is then outside the TPM's dictionary-attack protection, noDA). Waits at most `timeout_ms`.
/// Writes the marshalled public and private parts to `blob`, and the primary key's name to `name`.
/// Every handle it loads is flushed before it returns. Returns a `sealkit_tpm_status`; on
/// SEALKIT_TPM_FAILED, `*tpm_rc` holds the TSS2 response code.
int sealkit_tpm_seal(const char *tcti, uint32_t timeout_ms, const uint8_t *pin, size_t pin_len, const uint8_t *data, size_t data_len,
                     uint8_t *blob, size_t *blob_len, uint8_t *name, size_t *name_len, uint32_t *tpm_rc);

/// Unseals a blob `sealkit_tpm_seal` made, checking first that this TPM's primary key has `name`.
/// Writes the data to `out` (`out_len` bytes exactly, else SEALKIT_TPM_DAMAGED) and zeroes every
/// buffer of the TSS that held it. Every handle is flushed before it returns. Waits at most `timeout_ms`.
int sealkit_tpm_unseal(const char *tcti, uint32_t timeout_ms, const uint8_t *pin, size_t pin_len, const uint8_t *blob, size_t blob_len,
                       const uint8_t *name, size_t name_len, uint8_t *out, size_t out_len, uint32_t *tpm_rc);

/// Reads the TPM's dictionary-attack counters: the failures it counts now (`failures`), how many put it in
/// lockout (`maximum`), the seconds after which it forgets one (`interval`), and the seconds the lockout
/// hierarchy waits after a failure of its own (`recovery`). Waits at most `timeout_ms`.
int sealkit_tpm_lockout(const char *tcti, uint32_t timeout_ms, uint32_t *failures, uint32_t *maximum, uint32_t *interval,
                        uint32_t *recovery, uint32_t *tpm_rc);

#endif
