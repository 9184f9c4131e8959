/* host_alloc.c — host memory for tensor storage, with a small cache of large blocks.
 *
 * Why: a compiled call allocates its outputs afresh, and glibc serves large blocks with mmap,
 * so every call paid page faults on tens of megabytes (softmax's median halved once they went
 * away). Freed blocks of 1 MiB or more are kept, up to 16 blocks and 1 GiB, and handed out
 * again for the same rounded size. This cache is the core's one piece of global state besides
 * the registry; it is guarded by a mutex. */
#include <pthread.h>
#include <stdlib.h>

#include "tensor/tensor.h"

#define BLOCK_ALIGN 64
#define CACHE_MIN_BYTES ((size_t)1 << 20)
#define CACHE_MAX_BYTES ((size_t)1 << 30)
#define CACHE_SLOTS 16

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *p;
  size_t bytes;
  uint64_t last_use;
} cache[CACHE_SLOTS];
static size_t cache_bytes;
static uint64_t cache_clock;

size_t host_block_size(size_t bytes) {
  size_t rounded = bytes ? (bytes + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN : BLOCK_ALIGN;
  return rounded < bytes ? 0 : rounded;
}

void *host_block_alloc(size_t bytes) {
  size_t size = host_block_size(bytes);
  if (!size) return NULL;
  if (size >= CACHE_MIN_BYTES) {
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++) {
      if (cache[i].p && cache[i].bytes == size) {
        void *p = cache[i].p;
        cache[i].p = NULL;
        cache_bytes -= size;
        pthread_mutex_unlock(&cache_lock);
        return p;
      }
    }
    pthread_mutex_unlock(&cache_lock);
  }
  return aligned_alloc(BLOCK_ALIGN, size);
}

void host_block_free(void *p, size_t bytes) {
  if (!p) return;
  size_t size = host_block_size(bytes);
  if (size < CACHE_MIN_BYTES || size > CACHE_MAX_BYTES) {
    free(p);
    return;
  }
  pthread_mutex_lock(&cache_lock);
  /* Make room: evict least recently cached blocks until this one fits. */
  while (cache_bytes + size > CACHE_MAX_BYTES) {
    int oldest = -1;
    for (int i = 0; i < CACHE_SLOTS; i++)
      if (cache[i].p && (oldest < 0 || cache[i].last_use < cache[oldest].last_use)) oldest = i;
    if (oldest < 0) break;
    free(cache[oldest].p);
    cache_bytes -= cache[oldest].bytes;
    cache[oldest].p = NULL;
  }
  int slot = -1;
  for (int i = 0; i < CACHE_SLOTS && slot < 0; i++)
    if (!cache[i].p) slot = i;
  if (slot < 0) { /* full: replace the oldest */
    slot = 0;
    for (int i = 1; i < CACHE_SLOTS; i++)
      if (cache[i].last_use < cache[slot].last_use) slot = i;
    free(cache[slot].p);
    cache_bytes -= cache[slot].bytes;
  }
  cache[slot].p = p;
  cache[slot].bytes = size;
  cache[slot].last_use = ++cache_clock;
  cache_bytes += size;
  pthread_mutex_unlock(&cache_lock);
}

/* Returns every cached block to the system (tests and leak checkers call this at exit). */
void host_block_trim(void) {
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < CACHE_SLOTS; i++) {
    free(cache[i].p);
    cache[i].p = NULL;
  }
  cache_bytes = 0;
  pthread_mutex_unlock(&cache_lock);
}

__attribute__((destructor)) static void host_block_cleanup(void) { host_block_trim(); }
