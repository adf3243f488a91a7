// libsecret's and GLib's real headers, for Tests/CSecretABICheck: it compiles SealKit's own declarations of what
// SealKitKeyring uses (Sources/CSecret) against them. Nothing shipped includes them, so that nothing links
// libsecret and GLib: they are opened on the first keyring call (start-up time).
#include <libsecret/secret.h>
