/* zxing-cpp has only a C++ API: CZXingRead wraps the part SealKit uses in C. This module exists for its
   pkg-config flags and link line. */
#include <stddef.h>
