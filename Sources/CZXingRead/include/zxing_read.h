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

/// A decode running in a child process (sealkit_zxing_start), until sealkit_zxing_finish or
/// sealkit_zxing_cancel.
typedef struct {
    int pid;
    int fd;
    long long deadline;
} sealkit_zxing_job;

/// sealkit_zxing_finish's answer when zxing-cpp ran out of its time budget and was stopped.
#define SEALKIT_ZXING_OUT_OF_TIME (-1L)

/// Starts reading every QR code in an 8-bit grayscale image with zxing-cpp (trying harder, rotations
/// and downscaling), and in its negative too when `inverted_too` is non-zero, within a time budget.
///
/// zxing-cpp has no way to stop a decode, and some images (a screen tiled with finder patterns) cost
/// it time that grows with the cube of the number of candidate patterns. So the decode runs in a
/// forked child (on another core, while the caller does other work) that writes its codes to a pipe;
/// sealkit_zxing_finish waits until `budget_milliseconds` after the start at most and then kills it.
/// The child also dies with its parent, and by alarm shortly after the budget. The pixels must stay
/// unchanged until the job is finished or cancelled.
///
/// Returns 0 (the job is set; a job with nothing to do finishes with 0 codes), or -1 when no child
/// could be started (no pipe, no fork).
int sealkit_zxing_start(const uint8_t *pixels, int width, int height, size_t capacity, int budget_milliseconds,
                        int inverted_too, sealkit_zxing_job *job);

/// Waits for a job's codes: how many were found (at most `capacity`, written to `codes`; the caller
/// frees each code's bytes), or SEALKIT_ZXING_OUT_OF_TIME. A child that crashes or throws, or a job
/// that never started, answers 0. The job is over afterwards.
long sealkit_zxing_finish(sealkit_zxing_job *job, sealkit_zxing_code *codes, size_t capacity);

/// Ends a job without its answer: the child is killed and reaped.
void sealkit_zxing_cancel(sealkit_zxing_job *job);

#ifdef __cplusplus
}
#endif
#endif
