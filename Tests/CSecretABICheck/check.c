/* SealKit's declarations of GLib and libsecret (Sources/CSecret/include/sealkit_secret_abi.h), compiled against
 * the real headers: any difference fails the build of the tests. The shipped code does not include the
 * headers, so that nothing links libsecret and GLib (they are opened on the first keyring call). */
#include <libsecret/secret.h>
#include <stddef.h>

#include "sealkit_secret_abi.h"
#include "sealkit_secret_abi_check.h"

/* Every function in the lists, with the header's types: GError is GLib's GError here, and so on. */
#undef SEALKIT_SECRET_TYPE
#define SEALKIT_SECRET_TYPE(name) name
#define SAME_FUNCTION(name, result, parameters)                                                                        \
    _Static_assert(__builtin_types_compatible_p(__typeof__(name), result parameters), #name ": another type in its header");
SEALKIT_GLIB_FUNCTIONS(SAME_FUNCTION)
SEALKIT_GOBJECT_FUNCTIONS(SAME_FUNCTION)
SEALKIT_GIO_FUNCTIONS(SAME_FUNCTION)
SEALKIT_SECRET_FUNCTIONS(SAME_FUNCTION)

/* SealKit's types, field by field. */
#define SAME_FIELD(type, field)                                                                                        \
    _Static_assert(offsetof(sealkit_##type, field) == offsetof(type, field)                                            \
                       && sizeof(((sealkit_##type *)0)->field) == sizeof(((type *)0)->field),                          \
                   #type "." #field ": another place or size in the header");
#define SAME_SIZE(type) _Static_assert(sizeof(sealkit_##type) == sizeof(type), #type ": another size in the header");
SAME_SIZE(GError)
SAME_FIELD(GError, domain)
SAME_FIELD(GError, code)
SAME_FIELD(GError, message)
SAME_SIZE(GList)
SAME_FIELD(GList, data)
SAME_FIELD(GList, next)
SAME_FIELD(GList, prev)
SAME_SIZE(SecretSchemaAttribute)
SAME_FIELD(SecretSchemaAttribute, name)
SAME_FIELD(SecretSchemaAttribute, type)
SAME_SIZE(SecretSchema)
SAME_FIELD(SecretSchema, name)
SAME_FIELD(SecretSchema, flags)
SAME_FIELD(SecretSchema, attributes)
SAME_FIELD(SecretSchema, reserved)
SAME_FIELD(SecretSchema, reserved1)
SAME_FIELD(SecretSchema, reserved7)

/* The enums, passed as unsigned int: the same type to the compiler (no negative value). */
#define SAME_TYPE(type)                                                                                                \
    _Static_assert(__builtin_types_compatible_p(sealkit_##type, type), #type ": another type in the header");
SAME_TYPE(SecretSchemaFlags)
SAME_TYPE(SecretSchemaAttributeType)
SAME_TYPE(SecretSearchFlags)
SAME_TYPE(SecretServiceFlags)
SAME_TYPE(SecretCollectionFlags)

/* The constants. */
#define SAME_VALUE(name) _Static_assert(SEALKIT_##name == name, #name ": another value in the header");
SAME_VALUE(SECRET_SCHEMA_NONE)
SAME_VALUE(SECRET_SCHEMA_ATTRIBUTE_STRING)
SAME_VALUE(SECRET_SEARCH_ALL)
SAME_VALUE(SECRET_SERVICE_OPEN_SESSION)
SAME_VALUE(SECRET_COLLECTION_NONE)
SAME_VALUE(SECRET_ERROR_IS_LOCKED)
SAME_VALUE(G_IO_ERROR_CANCELLED)
SAME_VALUE(G_DBUS_ERROR_SERVICE_UNKNOWN)
SAME_VALUE(G_DBUS_ERROR_NAME_HAS_NO_OWNER)
SAME_VALUE(G_DBUS_ERROR_SPAWN_EXEC_FAILED)
SAME_VALUE(G_DBUS_ERROR_SPAWN_CHILD_EXITED)
SAME_VALUE(G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND)
_Static_assert(__builtin_strcmp(SEALKIT_SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_DEFAULT) == 0,
               "SECRET_COLLECTION_DEFAULT: another value in the header");

/* A function to compile to (the target is built for its checks alone). */
int sealkit_secret_abi_checked(void) { return 1; }
