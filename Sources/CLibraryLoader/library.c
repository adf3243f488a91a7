#include "sealkit_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* One lock for every library: each is opened once, and opening is rare (the first image a process reads). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(sealkit_library *library, const char *why) {
    snprintf(library->error, sizeof library->error, "%s cannot be loaded (Debian package %s): %s", library->soname,
             library->package, why != NULL ? why : "unknown error");
}

int sealkit_library_load(sealkit_library *library) {
    pthread_mutex_lock(&lock);
    if (!library->tried) {
        library->tried = 1;
        dlerror();
        void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            fail(library, dlerror());
        } else {
            size_t index = 0;
            for (; index < library->count; index++) {
                dlerror();
                library->functions[index] = dlsym(handle, library->names[index]);
                if (library->functions[index] == NULL) break;
            }
            if (index == library->count) {
                library->loaded = 1;  // never closed: its functions are used for the life of the process
            } else {
                char why[160];
                snprintf(why, sizeof why, "no symbol %s", library->names[index]);
                fail(library, why);
                memset(library->functions, 0, library->count * sizeof *library->functions);
                dlclose(handle);
            }
        }
    }
    int loaded = library->loaded;
    pthread_mutex_unlock(&lock);
    return loaded ? 0 : -1;
}
