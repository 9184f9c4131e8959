/* host_access.h — moving tensor bytes between host memory and backends (host_access.c). */
#ifndef TC_HOST_ACCESS_H
#define TC_HOST_ACCESS_H

#include "internal.h"

/* Copies the view (rank, sizes, strides in elements, starting at src) row-major into dst. */
void host_copy_strided(void *dst, const void *src, size_t itemsize, int rank, const int64_t *sizes,
                       const int64_t *strides);
/* t with its elements readable from host memory: a view sharing t's storage when it is already
 * host memory, else a contiguous host copy. New reference; NULL with an error naming op. */
tc_tensor *tensor_on_host(const char *op, tc_tensor *t);

#endif
