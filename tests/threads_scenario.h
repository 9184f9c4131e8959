/* threads_scenario.h — the many-threads scenario shared by the Criterion suite and the
 * ThreadSanitizer check (threads_scenario.c). */
#ifndef TC_THREADS_SCENARIO_H
#define TC_THREADS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>

#include "tc/tc.h"

/* Four threads call one function compiled for `backend` (with `options`) on two input shapes:
 * true when every result matched eager and each shape compiled exactly once; else false with
 * why in err. */
bool threads_one_function(const char *backend, const char *options, char *err, size_t cap);

#endif
