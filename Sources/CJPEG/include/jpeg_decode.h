#ifndef SEALKIT_JPEG_DECODE_H
#define SEALKIT_JPEG_DECODE_H
#include <stddef.h>

/// The most scans a progressive JPEG may have. libjpeg-turbo's encoders write 10 at most (6 for
/// grayscale) and tuned ones a few dozen; every scan costs a pass over the whole image.
#define SEALKIT_JPEG_MAX_SCANS 100

/// The size of the buffer sealkit_jpeg_decode_gray writes its message to.
#define SEALKIT_JPEG_ERROR_SIZE 320

/// Decodes a JPEG held in memory to 8-bit grayscale with libjpeg(-turbo). libjpeg reports errors by
/// calling a function that must not return; Swift cannot longjmp, so this wrapper does, and turns
/// every libjpeg error into a return value with its message.
///
/// Strict, as `djpeg -strict -maxscans 100` is: libjpeg's warnings (corrupt data it would skip,
/// a premature end of the file) are errors, and a progressive file with more than
/// SEALKIT_JPEG_MAX_SCANS scans is refused as soon as its scan 101 begins.
///
/// libjpeg (libjpeg.so.62) is opened on the first call (dlopen), not linked into the executable.
///
/// Returns 0 and sets *pixels (malloc'ed, width * height bytes; the caller frees it), *width and
/// *height; or -1 with a message in `error` (SEALKIT_JPEG_ERROR_SIZE bytes) for a broken image, -2 when
/// the image has more than `max_pixels` pixels (checked from its header, before any allocation), -3
/// with the loader's message in `error` when libjpeg cannot be loaded.
int sealkit_jpeg_decode_gray(const unsigned char *data, size_t size, size_t max_pixels,
                             unsigned char **pixels, int *width, int *height, char *error);

#endif
