/* alloc_count.c — counts the process's heap allocations (alloc_count.h). glibc supports replacing
 * its allocator by defining these functions in the program; each forwards to glibc's own
 * (__libc_*), so free() and everything else stay glibc's. */
#include <stddef.h>

#include "alloc_count.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
bool alloc_counting(void) { return false; }
long alloc_count(void) { return 0; }
#else
#include <errno.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static atomic_long count;

static void counted(void) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); }

void *malloc(size_t n) { return counted(), __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return counted(), __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return counted(), __libc_realloc(p, n); }
void *aligned_alloc(size_t align, size_t n) { return counted(), __libc_memalign(align, n); }
void *memalign(size_t align, size_t n) { return counted(), __libc_memalign(align, n); }
int posix_memalign(void **out, size_t align, size_t n) {
  counted();
  void *p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

bool alloc_counting(void) { return true; }
long alloc_count(void) { return atomic_load(&count); }
#endif
