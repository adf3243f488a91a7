#include "jpeg_decode.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

#include "sealkit_library.h"

/* libjpeg is opened on the first JPEG read (CLibraryLoader), not linked: a command that reads no image
 * does not load it. These are the functions this file calls, with jpeglib.h's types. */
static const char *const names[] = {
    "jpeg_std_error", "jpeg_CreateDecompress", "jpeg_mem_src", "jpeg_read_header", "jpeg_start_decompress",
    "jpeg_read_scanlines", "jpeg_finish_decompress", "jpeg_destroy_decompress",
};
static void *addresses[sizeof names / sizeof names[0]];
static sealkit_library library = {"libjpeg.so.62", "libjpeg62-turbo", names, addresses, sizeof names / sizeof names[0], 0, 0, {0}};
#define CALL(index, function) ((__typeof__(function) *)addresses[index])
#define jpeg_std_error CALL(0, jpeg_std_error)
#define jpeg_CreateDecompress CALL(1, jpeg_CreateDecompress)
#define jpeg_mem_src CALL(2, jpeg_mem_src)
#define jpeg_read_header CALL(3, jpeg_read_header)
#define jpeg_start_decompress CALL(4, jpeg_start_decompress)
#define jpeg_read_scanlines CALL(5, jpeg_read_scanlines)
#define jpeg_finish_decompress CALL(6, jpeg_finish_decompress)
#define jpeg_destroy_decompress CALL(7, jpeg_destroy_decompress)

struct failure {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char *message;
};

static void on_error(j_common_ptr info) {
    struct failure *failure = (struct failure *)info->err;
    (*info->err->format_message)(info, failure->message);
    longjmp(failure->jump, 1);
}

/* Warnings are corrupt data libjpeg would skip (a premature end, a bogus progression, a repeated
 * scan): each is an error here, as djpeg -strict makes them, so a damaged file fails at once instead
 * of being decoded (slowly) into something else. Trace messages (level 0 and up) stay quiet. */
static void on_message(j_common_ptr info, int level) {
    if (level < 0) on_error(info);
}

/* libjpeg-turbo's own defence against progressive-JPEG scan bombs (djpeg -maxscans, tjbench
 * -limitscans): a progress monitor that stops the decode once the file has more scans than any
 * encoder writes. Each scan costs a pass over every coefficient of the image, so a few bytes a scan
 * would otherwise buy seconds of work. */
struct scan_limit {
    struct jpeg_progress_mgr manager;
    int max_scans;
};

static void on_progress(j_common_ptr info) {
    struct scan_limit *limit = (struct scan_limit *)info->progress;
    j_decompress_ptr decompress = (j_decompress_ptr)info;
    if (decompress->input_scan_number > limit->max_scans) {
        struct failure *failure = (struct failure *)info->err;
        snprintf(failure->message, JMSG_LENGTH_MAX, "more than %d progressive scans", limit->max_scans);
        longjmp(failure->jump, 1);
    }
}

int sealkit_jpeg_decode_gray(const unsigned char *data, size_t size, size_t max_pixels,
                             unsigned char **pixels, int *width, int *height, char *error) {
    struct jpeg_decompress_struct info;
    struct failure failure;
    struct scan_limit limit;
    unsigned char *volatile out = NULL;
    error[0] = 0;
    if (sealkit_library_load(&library) != 0) {
        snprintf(error, SEALKIT_JPEG_ERROR_SIZE, "%s", library.error);
        return -3;
    }
    failure.message = error;
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = on_error;
    failure.manager.emit_message = on_message;
    if (setjmp(failure.jump)) {
        jpeg_destroy_decompress(&info);
        free(out);
        return -1;
    }
    jpeg_create_decompress(&info);
    memset(&limit, 0, sizeof limit);
    limit.manager.progress_monitor = on_progress;
    limit.max_scans = SEALKIT_JPEG_MAX_SCANS;
    info.progress = &limit.manager;
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if ((size_t)info.image_width * (size_t)info.image_height > max_pixels) {
        jpeg_destroy_decompress(&info);
        return -2;
    }
    info.out_color_space = JCS_GRAYSCALE;
    jpeg_start_decompress(&info);
    size_t stride = info.output_width;
    out = malloc(stride * info.output_height);
    if (out == NULL) {
        strcpy(error, "out of memory");
        jpeg_destroy_decompress(&info);
        return -1;
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = out + (size_t)info.output_scanline * stride;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    *width = (int)info.output_width;
    *height = (int)info.output_height;
    jpeg_destroy_decompress(&info);
    *pixels = out;
    return 0;
}
