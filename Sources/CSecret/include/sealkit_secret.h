#ifndef SEALKIT_SECRET_H
#define SEALKIT_SECRET_H
#include <stddef.h>

#include "sealkit_secret_abi.h"

/* libsecret (the freedesktop Secret Service client) and GLib for SealKitKeyring, opened on the first keyring
 * call (CLibraryLoader), not linked: a command that does not touch the desktop keyring does not load them
 * (start-up time). Only glue lives here: the table of functions, C's static schema, a hash table of string
 * attributes and GError's kinds. Nothing here handles secrets. */

// The attributes every SealKit item carries; docs/format.md documents them.
#define SEALKIT_ATTRIBUTE_APPLICATION "application"
#define SEALKIT_ATTRIBUTE_NAMESPACE "namespace"
#define SEALKIT_ATTRIBUTE_ID "id"
#define SEALKIT_ATTRIBUTE_VERSION "version"

#define SEALKIT_SECRET_FIELD(name, result, parameters) result(*name) parameters;
/// The GLib and libsecret functions SealKitKeyring calls, under their own names, with their headers' types.
typedef struct sealkit_secret_functions {
    SEALKIT_GLIB_FUNCTIONS(SEALKIT_SECRET_FIELD)
    SEALKIT_GOBJECT_FUNCTIONS(SEALKIT_SECRET_FIELD)
    SEALKIT_GIO_FUNCTIONS(SEALKIT_SECRET_FIELD)
    SEALKIT_SECRET_FUNCTIONS(SEALKIT_SECRET_FIELD)
} sealkit_secret_functions;
#undef SEALKIT_SECRET_FIELD

/// libsecret and GLib (libglib-2.0, libgobject-2.0, libgio-2.0, libsecret-1), loaded on first use: their
/// functions, or NULL when one cannot be loaded (the loader's line, naming the library and its Debian package, is
/// copied to `error`, `error_size` bytes, when it is not NULL). The functions below need it to have succeeded.
const sealkit_secret_functions *sealkit_secret(char *error, size_t error_size);

/// The schema of SealKit's items. Searches match its name (stored by libsecret as the `xdg:schema` attribute) as
/// well as the attributes given.
const sealkit_SecretSchema *sealkit_secret_schema(void);

/// An empty attribute table owning copies of its keys and values.
sealkit_GHashTable *sealkit_attributes_new(void);

void sealkit_attributes_set(sealkit_GHashTable *attributes, const char *name, const char *value);

/// The value of `name` in an item's attributes, or NULL.
const char *sealkit_attributes_get(sealkit_GHashTable *attributes, const char *name);

/// Frees a list of objects (a search's items) and drops a reference to each.
void sealkit_objects_free(sealkit_GList *list);

/// Whether `error` says the operation was cancelled (SealKit cancels on its time limit).
int sealkit_error_is_cancelled(const sealkit_GError *error);

/// Whether `error` says the Secret Service is not on the bus at all.
int sealkit_error_is_no_service(const sealkit_GError *error);

/// Whether `error` is libsecret's "the collection or item is locked".
int sealkit_error_is_locked(const sealkit_GError *error);

#endif
