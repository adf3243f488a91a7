#include "jpeg_decode.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

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

/* Warnings (corrupt data libjpeg can skip) are kept quiet: the decode either yields an image or fails. */
static void on_message(j_common_ptr info) { (void)info; }

int sealkit_jpeg_decode_gray(const unsigned char *data, size_t size, size_t max_pixels,
                             unsigned char **pixels, int *width, int *height, char *error) {
    struct jpeg_decompress_struct info;
    struct failure failure;
    unsigned char *volatile out = NULL;
    error[0] = 0;
    failure.message = error;
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = on_error;
    failure.manager.output_message = on_message;
    if (setjmp(failure.jump)) {
        jpeg_destroy_decompress(&info);
        free(out);
        return -1;
    }
    jpeg_create_decompress(&info);
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
