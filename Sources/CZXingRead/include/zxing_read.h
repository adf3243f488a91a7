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

/// Reads every QR code in an 8-bit grayscale image with zxing-cpp (trying harder, rotations and
/// downscaling). Returns how many codes were found (at most `capacity`, written to `codes`); the
/// caller frees each code's bytes. Never throws: a C++ exception becomes 0.
size_t sealkit_zxing_read(const uint8_t *pixels, int width, int height, sealkit_zxing_code *codes, size_t capacity);

#ifdef __cplusplus
}
#endif
#endif
