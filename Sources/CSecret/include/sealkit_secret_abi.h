#ifndef SEALKIT_SECRET_ABI_H
#define SEALKIT_SECRET_ABI_H
#include <stdint.h>

/* The part of GLib's and libsecret's C interface that SealKitKeyring uses, declared here (start-up
 * time). libsecret and GLib are opened with dlopen by the first keyring call, not linked; their headers need
 * pkg-config's flags (-I.../glib-2.0 and the like), and SwiftPM links every library pkg-config names, so the
 * binary would load libsecret and its GLib stack at start-up again. Tests/CSecretABICheck compiles these
 * declarations against the real headers (libsecret-1-dev) and fails the build on any difference: a type's size
 * or fields, a constant, a function's type. Each type is GLib's or libsecret's name with `sealkit_` before it. */

typedef struct sealkit_GError {
    uint32_t domain;
    int code;
    char *message;
} sealkit_GError;

typedef struct sealkit_GList {
    void *data;
    struct sealkit_GList *next;
    struct sealkit_GList *prev;
} sealkit_GList;

/* Opaque: only pointers to them are handled. */
typedef struct sealkit_GHashTable sealkit_GHashTable;
typedef struct sealkit_GCancellable sealkit_GCancellable;
typedef struct sealkit_SecretService sealkit_SecretService;
typedef struct sealkit_SecretItem sealkit_SecretItem;
typedef struct sealkit_SecretCollection sealkit_SecretCollection;

/* libsecret's flag and kind enums, whose values are all non-negative: passed as unsigned int. */
typedef unsigned int sealkit_SecretSchemaFlags;
typedef unsigned int sealkit_SecretSchemaAttributeType;
typedef unsigned int sealkit_SecretSearchFlags;
typedef unsigned int sealkit_SecretServiceFlags;
typedef unsigned int sealkit_SecretCollectionFlags;

typedef struct sealkit_SecretSchemaAttribute {
    const char *name;
    sealkit_SecretSchemaAttributeType type;
} sealkit_SecretSchemaAttribute;

typedef struct sealkit_SecretSchema {
    const char *name;
    sealkit_SecretSchemaFlags flags;
    sealkit_SecretSchemaAttribute attributes[32];
    int reserved;
    void *reserved1;
    void *reserved2;
    void *reserved3;
    void *reserved4;
    void *reserved5;
    void *reserved6;
    void *reserved7;
} sealkit_SecretSchema;

#define SEALKIT_SECRET_SCHEMA_NONE 0u
#define SEALKIT_SECRET_SCHEMA_ATTRIBUTE_STRING 0u
#define SEALKIT_SECRET_SEARCH_ALL 2u              /* 1 << 1 */
#define SEALKIT_SECRET_SERVICE_OPEN_SESSION 2u    /* 1 << 1 */
#define SEALKIT_SECRET_COLLECTION_NONE 0u
#define SEALKIT_SECRET_COLLECTION_DEFAULT "default"
#define SEALKIT_SECRET_ERROR_IS_LOCKED 2
#define SEALKIT_G_IO_ERROR_CANCELLED 19
#define SEALKIT_G_DBUS_ERROR_SERVICE_UNKNOWN 2
#define SEALKIT_G_DBUS_ERROR_NAME_HAS_NO_OWNER 3
#define SEALKIT_G_DBUS_ERROR_SPAWN_EXEC_FAILED 23
#define SEALKIT_G_DBUS_ERROR_SPAWN_CHILD_EXITED 25
#define SEALKIT_G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND 31

/* SEALKIT_SECRET_TYPE(GError) is SealKit's declaration of GError; the check makes it the header's own. */
#define SEALKIT_SECRET_TYPE(name) sealkit_##name

/* The functions used, one library's per list, as F(name, return type, parameter types): none is variadic. The
 * lists give the names dlsym looks up, the types they are called with, and what the check compares. */
#define SEALKIT_GLIB_FUNCTIONS(F)                                                                                      \
    F(g_free, void, (void *))                                                                                          \
    F(g_strdup, char *, (const char *))                                                                                \
    F(g_str_hash, unsigned int, (const void *))                                                                        \
    F(g_str_equal, int, (const void *, const void *))                                                                  \
    F(g_hash_table_new_full, SEALKIT_SECRET_TYPE(GHashTable) *,                                                        \
      (unsigned int (*)(const void *), int (*)(const void *, const void *), void (*)(void *), void (*)(void *)))       \
    F(g_hash_table_replace, int, (SEALKIT_SECRET_TYPE(GHashTable) *, void *, void *))                                  \
    F(g_hash_table_lookup, void *, (SEALKIT_SECRET_TYPE(GHashTable) *, const void *))                                  \
    F(g_hash_table_unref, void, (SEALKIT_SECRET_TYPE(GHashTable) *))                                                   \
    F(g_list_free_full, void, (SEALKIT_SECRET_TYPE(GList) *, void (*)(void *)))                                        \
    F(g_error_free, void, (SEALKIT_SECRET_TYPE(GError) *))                                                             \
    F(g_error_matches, int, (const SEALKIT_SECRET_TYPE(GError) *, uint32_t, int))

#define SEALKIT_GOBJECT_FUNCTIONS(F)                                                                                   \
    F(g_object_ref, void *, (void *))                                                                                  \
    F(g_object_unref, void, (void *))

#define SEALKIT_GIO_FUNCTIONS(F)                                                                                       \
    F(g_cancellable_new, SEALKIT_SECRET_TYPE(GCancellable) *, (void))                                                  \
    F(g_cancellable_cancel, void, (SEALKIT_SECRET_TYPE(GCancellable) *))                                               \
    F(g_io_error_quark, uint32_t, (void))                                                                              \
    F(g_dbus_error_quark, uint32_t, (void))

#define SEALKIT_SECRET_FUNCTIONS(F)                                                                                    \
    F(secret_error_get_quark, uint32_t, (void))                                                                        \
    F(secret_service_get_sync, SEALKIT_SECRET_TYPE(SecretService) *,                                                   \
      (SEALKIT_SECRET_TYPE(SecretServiceFlags), SEALKIT_SECRET_TYPE(GCancellable) *, SEALKIT_SECRET_TYPE(GError) **))  \
    F(secret_service_search_sync, SEALKIT_SECRET_TYPE(GList) *,                                                        \
      (SEALKIT_SECRET_TYPE(SecretService) *, const SEALKIT_SECRET_TYPE(SecretSchema) *,                                \
       SEALKIT_SECRET_TYPE(GHashTable) *, SEALKIT_SECRET_TYPE(SecretSearchFlags), SEALKIT_SECRET_TYPE(GCancellable) *, \
       SEALKIT_SECRET_TYPE(GError) **))                                                                                \
    F(secret_item_get_attributes, SEALKIT_SECRET_TYPE(GHashTable) *, (SEALKIT_SECRET_TYPE(SecretItem) *))              \
    F(secret_item_get_locked, int, (SEALKIT_SECRET_TYPE(SecretItem) *))                                                \
    F(secret_collection_for_alias_sync, SEALKIT_SECRET_TYPE(SecretCollection) *,                                       \
      (SEALKIT_SECRET_TYPE(SecretService) *, const char *, SEALKIT_SECRET_TYPE(SecretCollectionFlags),                 \
       SEALKIT_SECRET_TYPE(GCancellable) *, SEALKIT_SECRET_TYPE(GError) **))                                           \
    F(secret_collection_get_locked, int, (SEALKIT_SECRET_TYPE(SecretCollection) *))                                    \
    F(secret_password_lookupv_nonpageable_sync, char *,                                                                \
      (const SEALKIT_SECRET_TYPE(SecretSchema) *, SEALKIT_SECRET_TYPE(GHashTable) *,                                   \
       SEALKIT_SECRET_TYPE(GCancellable) *, SEALKIT_SECRET_TYPE(GError) **))                                           \
    F(secret_password_storev_sync, int,                                                                                \
      (const SEALKIT_SECRET_TYPE(SecretSchema) *, SEALKIT_SECRET_TYPE(GHashTable) *, const char *, const char *,       \
       const char *, SEALKIT_SECRET_TYPE(GCancellable) *, SEALKIT_SECRET_TYPE(GError) **))                             \
    F(secret_password_clearv_sync, int,                                                                                \
      (const SEALKIT_SECRET_TYPE(SecretSchema) *, SEALKIT_SECRET_TYPE(GHashTable) *,                                   \
       SEALKIT_SECRET_TYPE(GCancellable) *, SEALKIT_SECRET_TYPE(GError) **))                                           \
    F(secret_password_free, void, (char *))

#endif
