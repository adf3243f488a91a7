#include "process_hardening.h"

#include <sys/prctl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int sealkit_set_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int sealkit_is_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

int sealkit_keep_freed_heap(int bytes) {
#if defined(__GLIBC__)
    // Setting the trim threshold turns off glibc's dynamic mmap threshold, which would leave every block
    // above 128 KiB to mmap and munmap (and their page faults); so the mmap threshold is set too, to the most
    // glibc allows (32 MiB on 64-bit).
    return mallopt(M_TRIM_THRESHOLD, bytes) && mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
#else
    (void)bytes;
    return 0;
#endif
}
