#ifndef SEALKIT_ZXING_READ_H
#define SEALKIT_ZXING_READ_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One QR code zxing-cpp found: its bytes (malloc'ed) and the bounding box of its four corners.
typedef struct {
    uint8_t *bytes;
    size_t count;
    int left;
    int top;
    int right;
    int bottom;
} sealkit_zxing_code;

/// A decode running in a helper process (sealkit_zxing_start), until sealkit_zxing_finish or
/// sealkit_zxing_cancel. Its fields are the functions' own.
typedef struct {
    int pid;
    int fd;
    long long deadline;
    void *answer;
    size_t limit;
    int state;
    int budget;
    long long cutoff;
} sealkit_zxing_job;

/// sealkit_zxing_finish's and sealkit_zxing_poll's answer when zxing-cpp ran out of its time budget and
/// was stopped.
#define SEALKIT_ZXING_OUT_OF_TIME (-1L)

/// sealkit_zxing_finish's answer when no whole reading came back: the helper could not be started, or it
/// crashed, threw or answered something that is not a list of codes.
#define SEALKIT_ZXING_FAILED (-2L)

/// How many times its budget a helper may take in wall-clock time, at most, when it is not given the CPU
/// time to spend its budget (a loaded machine): `budget * SEALKIT_ZXING_WALL_FACTOR` milliseconds.
#define SEALKIT_ZXING_WALL_FACTOR 3

/// The most pixels an image sent to the helper may have (QRScanner's limit: 40 megapixels).
#define SEALKIT_ZXING_MAXIMUM_PIXELS 40000000LL

/// Opens zxing-cpp (libZXing.so.2, with dlopen: it is not linked into the executable) in this process,
/// once: 0 when it and the functions used could be loaded, else -1 with one line in `error` (`error_size`
/// bytes) naming the library, its Debian package and the loader's reason. The helper opens it again in its
/// own process; a host checks here first, so that a missing library is an error and not an empty reading.
int sealkit_zxing_load(char *error, size_t error_size);

/// Starts reading every QR code in an 8-bit grayscale image with zxing-cpp (trying harder, rotations
/// and downscaling), and in its negative too when `inverted_too` is non-zero, within a time budget.
///
/// zxing-cpp has no way to stop a decode, and some images (a screen tiled with finder patterns) cost
/// it time that grows with the cube of the number of candidate patterns. So the decode runs in a
/// helper process, which can be killed: the executable the caller runs in (`/proc/self/exe`), started
/// with posix_spawn under a name and argument that a constructor in this file recognises before the
/// executable's own main runs. The host is never forked: the helper is a fresh process image, so no
/// lock another thread of the host held (zbar's, the allocator's, the Swift runtime's) is copied into it.
/// The pixels are copied into a memory file the helper reads as stdin, and its codes come back on a
/// pipe. The budget is the helper's CPU time: sealkit_zxing_finish kills it once it has used
/// `budget_milliseconds` of CPU, so a helper that a loaded machine leaves waiting for a core is not
/// stopped before it has had its budget; but never later than SEALKIT_ZXING_WALL_FACTOR times the
/// budget after the start. The helper also dies with the thread that started it, by its CPU limit
/// shortly after the budget, and by alarm shortly after the wall-clock bound.
///
/// Returns 0 (the job is set; a job with nothing to do finishes with 0 codes), or -1 when no helper
/// could be started (no memory file, pipe or process): the job then finishes with SEALKIT_ZXING_FAILED.
int sealkit_zxing_start(const uint8_t *pixels, int width, int height, size_t capacity, int budget_milliseconds,
                        int inverted_too, sealkit_zxing_job *job);

/// Reads what the helper has answered so far without waiting: 1 when the answer is complete (call
/// sealkit_zxing_finish, which then does not wait), 0 while it is still working, SEALKIT_ZXING_OUT_OF_TIME
/// once its budget has run out. For callers that wait in their own way (an async task sleeping between polls).
int sealkit_zxing_poll(sealkit_zxing_job *job);

/// Waits for a job's codes, until its deadline at most: how many were found (at most `capacity`,
/// written to `codes`; the caller frees each code's bytes), SEALKIT_ZXING_OUT_OF_TIME, or
/// SEALKIT_ZXING_FAILED for a helper that crashed, threw or was never started. Only a count is a whole
/// reading. The job is over afterwards.
long sealkit_zxing_finish(sealkit_zxing_job *job, sealkit_zxing_code *codes, size_t capacity);

/// Ends a job without its answer: the helper is killed and reaped.
void sealkit_zxing_cancel(sealkit_zxing_job *job);

#ifdef __cplusplus
}
#endif
#endif
