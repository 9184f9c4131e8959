/* alloc_count.h — how many heap allocations (malloc, calloc, realloc, aligned_alloc,
 * posix_memalign) this process has made: tests/alloc_count.c interposes glibc's allocator in
 * tc_tests. Under AddressSanitizer or ThreadSanitizer, whose runtimes own the allocator, nothing
 * is counted and alloc_counting() is false. */
#ifndef TC_TEST_ALLOC_COUNT_H
#define TC_TEST_ALLOC_COUNT_H

#include <stdbool.h>

bool alloc_counting(void);
long alloc_count(void);

#endif
