#ifndef SEALKIT_PROCESS_HARDENING_H
#define SEALKIT_PROCESS_HARDENING_H

/// Marks the process non-dumpable (prctl PR_SET_DUMPABLE 0): no core file, no ptrace or
/// /proc/<pid>/mem access by other processes of the same user. Swift cannot call prctl, a C
/// variadic function, itself. Returns 0 on success, -1 with errno set.
int sealkit_set_undumpable(void);

/// Whether the process is dumpable (prctl PR_GET_DUMPABLE): 1, 0, or -1 with errno set.
int sealkit_is_dumpable(void);

/// Keeps up to `bytes` of freed memory at the heap's top for reuse instead of returning it to the kernel,
/// and serves blocks up to 32 MiB from the heap (mallopt M_TRIM_THRESHOLD and M_MMAP_THRESHOLD; glibc
/// only, a no-op elsewhere). Returns 1 on success, 0 otherwise.
int sealkit_keep_freed_heap(int bytes);

#endif
