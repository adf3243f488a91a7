#include "sealkit_zbar.h"

#include <pthread.h>
#include <stdio.h>

static const char *const zbar_names[] = {
    "zbar_image_scanner_create", "zbar_image_scanner_destroy", "zbar_image_scanner_set_config", "zbar_image_create",
    "zbar_image_destroy", "zbar_image_set_format", "zbar_image_set_size", "zbar_image_set_data", "zbar_scan_image",
    "zbar_image_first_symbol", "zbar_symbol_get_data_length", "zbar_symbol_get_data", "zbar_symbol_get_loc_size",
    "zbar_symbol_get_loc_x", "zbar_symbol_get_loc_y", "zbar_symbol_next",
};
#define ZBAR_COUNT (sizeof zbar_names / sizeof zbar_names[0])
static void *zbar_addresses[ZBAR_COUNT];
static sealkit_zbar_functions zbar_functions;
static sealkit_library zbar = {"libzbar.so.0", "libzbar0", zbar_names, zbar_addresses, ZBAR_COUNT, 0, 0, {0}};

_Static_assert(sizeof(sealkit_zbar_functions) == ZBAR_COUNT * sizeof(void *), "one name for each of zbar's functions");

/* The addresses, in zbar_names' order, with zbar.h's types. */
static void fill_zbar_functions(void) {
    zbar_functions.image_scanner_create = (__typeof__(zbar_functions.image_scanner_create))zbar_addresses[0];
    zbar_functions.image_scanner_destroy = (__typeof__(zbar_functions.image_scanner_destroy))zbar_addresses[1];
    zbar_functions.image_scanner_set_config = (__typeof__(zbar_functions.image_scanner_set_config))zbar_addresses[2];
    zbar_functions.image_create = (__typeof__(zbar_functions.image_create))zbar_addresses[3];
    zbar_functions.image_destroy = (__typeof__(zbar_functions.image_destroy))zbar_addresses[4];
    zbar_functions.image_set_format = (__typeof__(zbar_functions.image_set_format))zbar_addresses[5];
    zbar_functions.image_set_size = (__typeof__(zbar_functions.image_set_size))zbar_addresses[6];
    zbar_functions.image_set_data = (__typeof__(zbar_functions.image_set_data))zbar_addresses[7];
    zbar_functions.scan_image = (__typeof__(zbar_functions.scan_image))zbar_addresses[8];
    zbar_functions.image_first_symbol = (__typeof__(zbar_functions.image_first_symbol))zbar_addresses[9];
    zbar_functions.symbol_get_data_length = (__typeof__(zbar_functions.symbol_get_data_length))zbar_addresses[10];
    zbar_functions.symbol_get_data = (__typeof__(zbar_functions.symbol_get_data))zbar_addresses[11];
    zbar_functions.symbol_get_loc_size = (__typeof__(zbar_functions.symbol_get_loc_size))zbar_addresses[12];
    zbar_functions.symbol_get_loc_x = (__typeof__(zbar_functions.symbol_get_loc_x))zbar_addresses[13];
    zbar_functions.symbol_get_loc_y = (__typeof__(zbar_functions.symbol_get_loc_y))zbar_addresses[14];
    zbar_functions.symbol_next = (__typeof__(zbar_functions.symbol_next))zbar_addresses[15];
}

const sealkit_zbar_functions *sealkit_zbar(char *error, size_t error_size) {
    if (sealkit_library_load(&zbar) != 0) {
        if (error != NULL && error_size > 0) snprintf(error, error_size, "%s", zbar.error);
        return NULL;
    }
    static pthread_once_t typed = PTHREAD_ONCE_INIT;
    pthread_once(&typed, fill_zbar_functions);
    return &zbar_functions;
}
