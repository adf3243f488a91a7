#ifndef SEALKIT_SECRET_ABI_CHECK_H
#define SEALKIT_SECRET_ABI_CHECK_H
/// 1: check.c compiled, so SealKit's declarations of GLib and libsecret match the real headers.
int sealkit_secret_abi_checked(void);
#endif
