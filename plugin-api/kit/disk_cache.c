/* disk_cache.c — the checksummed disk cache. One file per entry, <sha256(ns, key)>.<kind>:
 * a fixed header (magic, format version, payload size, the payload's SHA-256, the key hash)
 * then the payload. Written to a temporary file and renamed (readers see all or nothing);
 * read without following links, from a regular file of ours that nobody else can write,
 * verified whole. Anything wrong: the entry is removed and the read is a miss with a note.
 * A hit is handed back in memory and as a sealed memfd, so what the caller loads (dlopen) is
 * exactly what was verified, whatever happens to the file afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_kit.h"

#define CACHE_MAGIC "TCKCACHE"
#define CACHE_VERSION 1u
#define CACHE_HEADER_SIZE 88 /* magic 8, version 4, reserved 4, size 8, payload sha 32, key hash 32 */
#define CACHE_MAX_PAYLOAD ((uint64_t)1 << 30)

static tc_status say(char *err, size_t cap, tc_status s, const char *fmt, ...) TCK_PRINTF(4, 5);
static tc_status say(char *err, size_t cap, tc_status s, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return s;
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void key_hash(const char *ns, const void *key, size_t key_len, uint8_t out[32]) {
  tck_sha256 c;
  tck_sha256_init(&c);
  tck_sha256_update(&c, ns ? ns : "", ns ? strlen(ns) : 0);
  tck_sha256_update(&c, "", 1); /* separator: (ns "ab", key "c") differs from (ns "a", key "bc") */
  tck_sha256_update(&c, key, key_len);
  tck_sha256_final(&c, out);
}

static void payload_hash(const void *data, size_t n, uint8_t out[32]) {
  tck_sha256 c;
  tck_sha256_init(&c);
  tck_sha256_update(&c, data, n);
  tck_sha256_final(&c, out);
}

/* kind becomes a file suffix: short, and nothing that could leave the directory. */
static bool kind_ok(const char *kind) {
  if (!kind || !kind[0] || strlen(kind) > 16) return false;
  for (const char *c = kind; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
      return false;
  return true;
}

static tc_status entry_path(const char *dir, const char *ns, const void *key, size_t key_len, const char *kind,
                            uint8_t hash[32], char *path, size_t path_cap, char *err, size_t cap) {
  if (!dir || !dir[0]) return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: no directory");
  if (!key && key_len) return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: key is NULL");
  if (!kind_ok(kind))
    return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: kind '%s' must be 1..16 of [A-Za-z0-9_-]", kind ? kind : "");
  key_hash(ns, key, key_len, hash);
  char hex[65];
  tck_sha256_hex(hash, hex);
  if ((size_t)snprintf(path, path_cap, "%s/%s.%s", dir, hex, kind) >= path_cap)
    return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: directory path too long");
  return TC_OK;
}

tc_status tck_cache_dir_prepare(const char *dir, char *err, size_t cap) {
  if (!dir || !dir[0]) return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: no directory");
  char p[4096];
  if ((size_t)snprintf(p, sizeof p, "%s", dir) >= sizeof p)
    return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: directory path too long");
  for (char *c = p + 1;; c++) {
    if (*c != '/' && *c != 0) continue;
    char saved = *c;
    *c = 0;
    if (mkdir(p, 0700) != 0 && errno != EEXIST)
      return say(err, cap, TC_ERR_UNAVAILABLE, "cache: cannot create %s: %s", p, strerror(errno));
    *c = saved;
    if (!saved) break;
  }
  struct stat st;
  if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return say(err, cap, TC_ERR_UNAVAILABLE, "cache: %s is not a directory", dir);
  /* Entries are loaded as code: a directory someone else owns or may write into could have
   * entries planted in it. */
  if (st.st_uid != geteuid())
    return say(err, cap, TC_ERR_UNAVAILABLE, "cache: %s is owned by uid %u, not this user: refused", dir,
               (unsigned)st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return say(err, cap, TC_ERR_UNAVAILABLE, "cache: %s may be written by others (mode %04o): refused", dir,
               (unsigned)(st.st_mode & 07777));
  return TC_OK;
}

/* Reads all of fd (at most max bytes; more is an error) into a malloc'd buffer. */
static bool read_all(int fd, size_t expect, uint8_t **out) {
  uint8_t *buf = malloc(expect ? expect : 1);
  if (!buf) return false;
  size_t got = 0;
  while (got < expect) {
    ssize_t n = read(fd, buf + got, expect - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  uint8_t extra;
  if (got != expect || read(fd, &extra, 1) != 0) { /* shorter or longer than fstat said */
    free(buf);
    return false;
  }
  *out = buf;
  return true;
}

static bool write_all(int fd, const void *data, size_t n) {
  const uint8_t *p = data;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* A sealed memfd holding data: the path opens exactly these bytes, and nobody can change them. */
static void make_memfd(tck_cache_hit *hit) {
  hit->fd = -1;
  hit->path[0] = 0;
#if defined(__linux__) && defined(MFD_ALLOW_SEALING)
  int fd = memfd_create("tc-cache", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return;
  if (!write_all(fd, hit->data, hit->size) ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    close(fd);
    return;
  }
  hit->fd = fd;
  snprintf(hit->path, sizeof hit->path, "/proc/self/fd/%d", fd);
#endif
}

void tck_cache_hit_free(tck_cache_hit *hit) {
  if (!hit) return;
  free(hit->data);
  if (hit->fd >= 0) close(hit->fd);
  hit->data = NULL;
  hit->size = 0;
  hit->fd = -1;
  hit->path[0] = 0;
}

/* Why an entry is bad, or NULL when it verifies; on success *file and *size hold the verified file (header included) and the payload size. */
static const char *read_entry(const char *path, const uint8_t hash[32], uint8_t **file, size_t *size, bool *absent) {
  *absent = false;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) {
      *absent = true;
      return "absent";
    }
    return errno == ELOOP ? "a symbolic link" : "unreadable";
  }
  struct stat st;
  const char *why = NULL;
  if (fstat(fd, &st) != 0) why = "unreadable";
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != geteuid()) why = "owned by another user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) why = "writable by group or others";
  else if (st.st_size < CACHE_HEADER_SIZE) why = "truncated (shorter than its header)";
  else if ((uint64_t)st.st_size > CACHE_MAX_PAYLOAD + CACHE_HEADER_SIZE) why = "larger than the size cap";
  else if (!read_all(fd, (size_t)st.st_size, file)) why = "unreadable or changed while read";
  close(fd);
  if (why) return why;
  const uint8_t *h = *file;
  uint64_t n = (uint64_t)st.st_size - CACHE_HEADER_SIZE;
  uint8_t sum[32];
  if (memcmp(h, CACHE_MAGIC, 8) != 0) why = "not a cache entry (bad magic)";
  else if (get_u32(h + 8) != CACHE_VERSION) why = "of another format version";
  else if (get_u64(h + 16) != n) why = "truncated (size does not match its header)";
  else if (memcmp(h + 56, hash, 32) != 0) why = "for another key";
  else {
    payload_hash(h + CACHE_HEADER_SIZE, (size_t)n, sum);
    if (memcmp(h + 24, sum, 32) != 0) why = "corrupt (checksum mismatch)";
  }
  if (why) {
    free(*file);
    *file = NULL;
    return why;
  }
  *size = (size_t)n;
  return NULL;
}

tc_status tck_cache_get(const char *dir, const char *ns, const void *key, size_t key_len, const char *kind,
                        tck_cache_hit *hit, bool *found, char *err, size_t cap) {
  if (err && cap) err[0] = 0;
  if (found) *found = false;
  if (!hit || !found) return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: hit and found must not be NULL");
  *hit = (tck_cache_hit){NULL, 0, -1, ""};
  uint8_t hash[32];
  char path[4200];
  tc_status s = entry_path(dir, ns, key, key_len, kind, hash, path, sizeof path, err, cap);
  if (s != TC_OK) return s;
  uint8_t *file = NULL;
  size_t size = 0;
  bool absent;
  const char *why = read_entry(path, hash, &file, &size, &absent);
  if (absent) return TC_OK;
  if (why) {
    /* A directory cannot be unlinked; leave it (it will keep reading as a miss). */
    bool removed = unlink(path) == 0;
    say(err, cap, TC_OK, "cache: discarded %s: %s%s", path, why, removed ? "" : " (could not remove it)");
    return TC_OK;
  }
  /* Last used now: the size cap evicts the least recently used (cache_admin.c). The name, not
   * the verified bytes, is touched; a failure only makes the entry look older. */
  utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);
  memmove(file, file + CACHE_HEADER_SIZE, size); /* keep one allocation: the payload */
  hit->data = file;
  hit->size = size;
  make_memfd(hit);
  *found = true;
  return TC_OK;
}

static bool read_file(const char *path, uint8_t **data, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= CACHE_MAX_PAYLOAD &&
            read_all(fd, (size_t)st.st_size, data);
  if (ok) *size = (size_t)st.st_size;
  close(fd);
  return ok;
}

tc_status tck_cache_put(const char *dir, const char *ns, const void *key, size_t key_len, const char *kind,
                        const void *data, size_t size, const char *from_path, char *err, size_t cap) {
  if (err && cap) err[0] = 0;
  uint8_t hash[32];
  char path[4200], tmp[4200];
  tc_status s = entry_path(dir, ns, key, key_len, kind, hash, path, sizeof path, err, cap);
  if (s != TC_OK) return s;
  uint8_t *owned = NULL;
  if (!data) {
    if (!from_path) return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: neither data nor from_path");
    if (!read_file(from_path, &owned, &size))
      return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: cannot read %s (or larger than the cap)", from_path);
    data = owned;
  }
  if ((uint64_t)size > CACHE_MAX_PAYLOAD) {
    free(owned);
    return say(err, cap, TC_ERR_INVALID_ARGUMENT, "cache: %zu bytes is over the size cap", size);
  }
  s = tck_cache_dir_prepare(dir, err, cap);
  if (s != TC_OK) {
    free(owned);
    return s;
  }
  uint8_t h[CACHE_HEADER_SIZE] = {0};
  memcpy(h, CACHE_MAGIC, 8);
  put_u32(h + 8, CACHE_VERSION);
  put_u64(h + 16, (uint64_t)size);
  payload_hash(data, size, h + 24);
  memcpy(h + 56, hash, 32);
  snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
  int fd = mkstemp(tmp); /* 0600, ours */
  if (fd < 0) {
    free(owned);
    return say(err, cap, TC_ERR_UNAVAILABLE, "cache: cannot create a file in %s: %s", dir, strerror(errno));
  }
  bool ok = write_all(fd, h, sizeof h) && write_all(fd, data, size);
  ok = close(fd) == 0 && ok;
  free(owned);
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return say(err, cap, TC_ERR_UNAVAILABLE, "cache: cannot write %s: %s", path, strerror(e));
  }
  tck_cache_trim(dir, tck_cache_cap_bytes());
  return TC_OK;
}
