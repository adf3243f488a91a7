// libsecret (the freedesktop Secret Service client) for SealSecretService.
// Only glue lives here: C's static schema table and a hash table of string attributes,
// which are awkward to build from Swift. Nothing here handles secrets.
#include <libsecret/secret.h>

// The attributes every SealKit item carries; docs/format.md documents them.
#define SEALKIT_ATTRIBUTE_APPLICATION "application"
#define SEALKIT_ATTRIBUTE_NAMESPACE "namespace"
#define SEALKIT_ATTRIBUTE_ID "id"
#define SEALKIT_ATTRIBUTE_VERSION "version"

/// The schema of SealKit's items. Searches match its name (stored by libsecret as the
/// `xdg:schema` attribute) as well as the attributes given.
static inline const SecretSchema *sealkit_secret_schema(void) {
    static const SecretSchema schema = {
        "org.sealkit.Key",
        SECRET_SCHEMA_NONE,
        {
            {SEALKIT_ATTRIBUTE_APPLICATION, SECRET_SCHEMA_ATTRIBUTE_STRING},
            {SEALKIT_ATTRIBUTE_NAMESPACE, SECRET_SCHEMA_ATTRIBUTE_STRING},
            {SEALKIT_ATTRIBUTE_ID, SECRET_SCHEMA_ATTRIBUTE_STRING},
            {SEALKIT_ATTRIBUTE_VERSION, SECRET_SCHEMA_ATTRIBUTE_STRING},
            {NULL, 0},
        },
    };
    return &schema;
}

/// An empty attribute table owning copies of its keys and values.
static inline GHashTable *sealkit_attributes_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

static inline void sealkit_attributes_set(GHashTable *attributes, const char *name, const char *value) {
    g_hash_table_replace(attributes, g_strdup(name), g_strdup(value));
}

/// The value of `name` in an item's attributes, or NULL.
static inline const char *sealkit_attributes_get(GHashTable *attributes, const char *name) {
    return (const char *)g_hash_table_lookup(attributes, name);
}

/// Whether `error` says the operation was cancelled (SealKit cancels on its time limit).
static inline gboolean sealkit_error_is_cancelled(const GError *error) {
    return g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/// Whether `error` says the Secret Service is not on the bus at all.
static inline gboolean sealkit_error_is_no_service(const GError *error) {
    return g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN)
        || g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER)
        || g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND)
        || g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_SPAWN_EXEC_FAILED)
        || g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_SPAWN_CHILD_EXITED);
}

/// Whether `error` is libsecret's "the collection or item is locked".
static inline gboolean sealkit_error_is_locked(const GError *error) {
    return g_error_matches(error, SECRET_ERROR, SECRET_ERROR_IS_LOCKED);
}
