#include "sealkit_secret.h"

#include <pthread.h>
#include <stdio.h>

#include "sealkit_library.h"

/* Each library's names, in its list's order, and the addresses dlsym found for them. */
#define NAME(name, result, parameters) #name,
static const char *const glib_names[] = {SEALKIT_GLIB_FUNCTIONS(NAME)};
static const char *const gobject_names[] = {SEALKIT_GOBJECT_FUNCTIONS(NAME)};
static const char *const gio_names[] = {SEALKIT_GIO_FUNCTIONS(NAME)};
static const char *const secret_names[] = {SEALKIT_SECRET_FUNCTIONS(NAME)};
#undef NAME
#define COUNT(names) (sizeof names / sizeof names[0])
static void *glib_addresses[COUNT(glib_names)], *gobject_addresses[COUNT(gobject_names)],
    *gio_addresses[COUNT(gio_names)], *secret_addresses[COUNT(secret_names)];
/* libsecret needs the other three, so opening it would bring them along; each is opened by its own SONAME all the
 * same, so that its functions come from where the headers say and a missing one is named. */
static sealkit_library glib = {"libglib-2.0.so.0", "libglib2.0-0", glib_names, glib_addresses, COUNT(glib_names), 0, 0, {0}};
static sealkit_library gobject = {"libgobject-2.0.so.0", "libglib2.0-0", gobject_names, gobject_addresses, COUNT(gobject_names), 0, 0, {0}};
static sealkit_library gio = {"libgio-2.0.so.0", "libglib2.0-0", gio_names, gio_addresses, COUNT(gio_names), 0, 0, {0}};
static sealkit_library secret = {"libsecret-1.so.0", "libsecret-1-0", secret_names, secret_addresses, COUNT(secret_names), 0, 0, {0}};

static sealkit_secret_functions functions;

_Static_assert(sizeof(sealkit_secret_functions)
                   == (COUNT(glib_names) + COUNT(gobject_names) + COUNT(gio_names) + COUNT(secret_names)) * sizeof(void *),
               "one name for each function");

/* The addresses, in the lists' order, with the headers' types. */
static void fill_functions(void) {
    void *const *addresses;
    size_t index;
#define FILL(name, result, parameters) functions.name = (result(*) parameters)addresses[index++];
    addresses = glib_addresses, index = 0;
    SEALKIT_GLIB_FUNCTIONS(FILL)
    addresses = gobject_addresses, index = 0;
    SEALKIT_GOBJECT_FUNCTIONS(FILL)
    addresses = gio_addresses, index = 0;
    SEALKIT_GIO_FUNCTIONS(FILL)
    addresses = secret_addresses, index = 0;
    SEALKIT_SECRET_FUNCTIONS(FILL)
#undef FILL
}

const sealkit_secret_functions *sealkit_secret(char *error, size_t error_size) {
    sealkit_library *libraries[] = {&glib, &gobject, &gio, &secret};
    for (size_t index = 0; index < COUNT(libraries); index++) {
        if (sealkit_library_load(libraries[index]) != 0) {
            if (error != NULL && error_size > 0) snprintf(error, error_size, "%s", libraries[index]->error);
            return NULL;
        }
    }
    static pthread_once_t typed = PTHREAD_ONCE_INIT;
    pthread_once(&typed, fill_functions);
    return &functions;
}

const sealkit_SecretSchema *sealkit_secret_schema(void) {
    static const sealkit_SecretSchema schema = {
        "org.sealkit.Key",
        SEALKIT_SECRET_SCHEMA_NONE,
        {
            {SEALKIT_ATTRIBUTE_APPLICATION, SEALKIT_SECRET_SCHEMA_ATTRIBUTE_STRING},
            {SEALKIT_ATTRIBUTE_NAMESPACE, SEALKIT_SECRET_SCHEMA_ATTRIBUTE_STRING},
            {SEALKIT_ATTRIBUTE_ID, SEALKIT_SECRET_SCHEMA_ATTRIBUTE_STRING},
            {SEALKIT_ATTRIBUTE_VERSION, SEALKIT_SECRET_SCHEMA_ATTRIBUTE_STRING},
            {NULL, 0},
        },
        0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    };
    return &schema;
}

sealkit_GHashTable *sealkit_attributes_new(void) {
    return functions.g_hash_table_new_full(functions.g_str_hash, functions.g_str_equal, functions.g_free, functions.g_free);
}

void sealkit_attributes_set(sealkit_GHashTable *attributes, const char *name, const char *value) {
    functions.g_hash_table_replace(attributes, functions.g_strdup(name), functions.g_strdup(value));
}

const char *sealkit_attributes_get(sealkit_GHashTable *attributes, const char *name) {
    return (const char *)functions.g_hash_table_lookup(attributes, name);
}

void sealkit_objects_free(sealkit_GList *list) { functions.g_list_free_full(list, functions.g_object_unref); }

int sealkit_error_is_cancelled(const sealkit_GError *error) {
    return functions.g_error_matches(error, functions.g_io_error_quark(), SEALKIT_G_IO_ERROR_CANCELLED);
}

int sealkit_error_is_no_service(const sealkit_GError *error) {
    uint32_t dbus = functions.g_dbus_error_quark();
    return functions.g_error_matches(error, dbus, SEALKIT_G_DBUS_ERROR_SERVICE_UNKNOWN)
        || functions.g_error_matches(error, dbus, SEALKIT_G_DBUS_ERROR_NAME_HAS_NO_OWNER)
        || functions.g_error_matches(error, dbus, SEALKIT_G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND)
        || functions.g_error_matches(error, dbus, SEALKIT_G_DBUS_ERROR_SPAWN_EXEC_FAILED)
        || functions.g_error_matches(error, dbus, SEALKIT_G_DBUS_ERROR_SPAWN_CHILD_EXITED);
}

int sealkit_error_is_locked(const sealkit_GError *error) {
    return functions.g_error_matches(error, functions.secret_error_get_quark(), SEALKIT_SECRET_ERROR_IS_LOCKED);
}
