#ifndef SEALKIT_ZXING_READ_H
#define SEALKIT_ZXING_READ_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One QR code zxing-cpp found: its bytes (malloc'ed) and its top-left corner.
typedef struct {
    uint8_t *bytes;
    size_t count;
    int x;
    int y;
} sealkit_zxing_code;

/// sealkit_zxing_read's answer when zxing-cpp ran out of its time budget and was stopped.
#define SEALKIT_ZXING_OUT_OF_TIME (-1L)
/// sealkit_zxing_read's answer when no child process could be started (no pipe, no fork).
#define SEALKIT_ZXING_NO_CHILD (-2L)

/// Reads every QR code in an 8-bit grayscale image with zxing-cpp (trying harder, rotations and
/// downscaling), within a time budget.
///
/// zxing-cpp has no way to stop a decode, and some images (a screen tiled with finder patterns) cost
/// it time that grows with the cube of the number of candidate patterns. So the decode runs in a
/// forked child that writes its codes to a pipe; the caller waits at most `budget_milliseconds` and
/// then kills it. The child also dies with its parent, and by alarm shortly after the budget.
///
/// Returns how many codes were found (at most `capacity`, written to `codes`; the caller frees each
/// code's bytes), SEALKIT_ZXING_OUT_OF_TIME, or SEALKIT_ZXING_NO_CHILD. A child that crashes or
/// throws answers 0.
long sealkit_zxing_read(const uint8_t *pixels, int width, int height, sealkit_zxing_code *codes, size_t capacity,
                        int budget_milliseconds);

#ifdef __cplusplus
}
#endif
#endif
