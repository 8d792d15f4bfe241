/* InfiniCore's declarations first, then InfiniRT's headers (C99): one declaration of each enum. */
/* The order is the test: no formatter may sort these. */
/* clang-format off */
#include "infinicore_double/infinicore_as_published.h"
#include <infinirt.h>
#include <infinicore.h>
/* clang-format on */

int InfinicoreFirstStatus(void) { return (int)INFINI_STATUS_BAD_TENSOR_STRIDES; }
int InfinicoreFirstDtype(void) { return (int)INFINI_DTYPE_BF16; }
int InfinicoreFirstDevice(void) { return (int)INFINI_DEVICE_HYGON; }
