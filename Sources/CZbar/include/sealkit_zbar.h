#ifndef SEALKIT_ZBAR_H
#define SEALKIT_ZBAR_H
#include <stddef.h>
#include <zbar.h>

#include "sealkit_library.h"

#pragma clang assume_nonnull begin

/// The zbar functions SealKitQR's scanner calls (libzbar.so.0), with zbar.h's types.
typedef struct {
    __typeof__(zbar_image_scanner_create) *image_scanner_create;
    __typeof__(zbar_image_scanner_destroy) *image_scanner_destroy;
    __typeof__(zbar_image_scanner_set_config) *image_scanner_set_config;
    __typeof__(zbar_image_create) *image_create;
    __typeof__(zbar_image_destroy) *image_destroy;
    __typeof__(zbar_image_set_format) *image_set_format;
    __typeof__(zbar_image_set_size) *image_set_size;
    __typeof__(zbar_image_set_data) *image_set_data;
    __typeof__(zbar_scan_image) *scan_image;
    __typeof__(zbar_image_first_symbol) *image_first_symbol;
    __typeof__(zbar_symbol_get_data_length) *symbol_get_data_length;
    __typeof__(zbar_symbol_get_data) *symbol_get_data;
    __typeof__(zbar_symbol_get_loc_size) *symbol_get_loc_size;
    __typeof__(zbar_symbol_get_loc_x) *symbol_get_loc_x;
    __typeof__(zbar_symbol_get_loc_y) *symbol_get_loc_y;
    __typeof__(zbar_symbol_next) *symbol_next;
} sealkit_zbar_functions;

/// zbar, loaded on first use: its functions, or NULL when libzbar.so.0 cannot be loaded (the reason is
/// copied to `error`, `error_size` bytes, when it is not NULL). (libjpeg is CJPEG's, zxing-cpp CZXing's.)
const sealkit_zbar_functions *_Nullable sealkit_zbar(char *_Nullable error, size_t error_size);

#pragma clang assume_nonnull end

#endif
