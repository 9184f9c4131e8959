/* cache_admin.c — where the cache lives, what is in it, and keeping it under its size cap.
 * The entry format and its checks are disk_cache.c's; this file only looks at names, sizes and
 * times. "Last used" is the entry's mtime: a write sets it, a verified hit refreshes it, so the
 * least recently used entries go first when a directory grows past the cap. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_kit.h"

#define DEFAULT_CAP_MB 1024

void tck_cache_base(char *out, size_t cap) {
  const char *dir = getenv("TC_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  out[0] = 0;
  if (dir && dir[0]) {
    if (strcmp(dir, "off") != 0) snprintf(out, cap, "%s", dir);
  } else if (xdg && xdg[0]) {
    snprintf(out, cap, "%s/tc", xdg);
  } else if (home && home[0]) {
    snprintf(out, cap, "%s/.cache/tc", home);
  }
}

uint64_t tck_cache_cap_bytes(void) {
  const char *v = getenv("TC_CACHE_MAX_MB");
  char *end = NULL;
  unsigned long long mb = v && v[0] ? strtoull(v, &end, 10) : DEFAULT_CAP_MB;
  if (v && v[0] && (!end || *end)) mb = DEFAULT_CAP_MB; /* not a number: the default, not "no cap" */
  return (uint64_t)mb << 20;
}

/* <64 hex digits>.<kind>: what disk_cache.c writes. Anything else in the directory is not ours
 * to list, count or delete (temporary files of a write in flight start with ".tmp-"). */
static const char *entry_kind(const char *name) {
  for (int i = 0; i < 64; i++)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return NULL;
  return name[64] == '.' && name[65] ? name + 65 : NULL;
}

int tck_cache_scan(const char *dir, tck_cache_visit fn, void *ud) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *kind = entry_kind(e->d_name);
    struct stat st;
    if (!kind || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    size_t len = strlen(e->d_name);
    if (len >= sizeof ((tck_cache_entry *)0)->name) continue; /* kinds are at most 16 characters */
    tck_cache_entry ent = {.bytes = (uint64_t)st.st_size, .used_s = (int64_t)st.st_mtime};
    memcpy(ent.name, e->d_name, len + 1);
    ent.kind = ent.name + (kind - e->d_name);
    n++;
    if (fn) fn(&ent, ud);
  }
  closedir(d);
  return n;
}

typedef struct entry_list {
  tck_cache_entry *v;
  int n, cap;
  bool oom;
} entry_list;

static void collect(const tck_cache_entry *e, void *ud) {
  entry_list *l = ud;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    tck_cache_entry *grown = realloc(l->v, (size_t)cap * sizeof *grown);
    if (!grown) { l->oom = true; return; }
    l->v = grown, l->cap = cap;
  }
  l->v[l->n] = *e;
  l->v[l->n].kind = l->v[l->n].name + (e->kind - e->name); /* into the copy's own name */
  l->n++;
}

static int oldest_first(const void *a, const void *b) {
  const tck_cache_entry *x = a, *y = b;
  if (x->used_s != y->used_s) return x->used_s < y->used_s ? -1 : 1;
  return strcmp(x->name, y->name);
}

int tck_cache_trim(const char *dir, uint64_t max_bytes) {
  entry_list l = {0};
  if (tck_cache_scan(dir, collect, &l) < 0 || l.oom) {
    free(l.v);
    return l.oom ? -1 : 0;
  }
  uint64_t total = 0;
  for (int i = 0; i < l.n; i++) total += l.v[i].bytes;
  int removed = 0;
  if (total > max_bytes) {
    qsort(l.v, (size_t)l.n, sizeof *l.v, oldest_first);
    char path[4200];
    for (int i = 0; i < l.n && total > max_bytes; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, l.v[i].name);
      /* Another process may have removed it first: either way it no longer counts. */
      if (unlink(path) == 0 || errno == ENOENT) total -= l.v[i].bytes, removed++;
    }
  }
  free(l.v);
  return removed;
}

int tck_cache_clear(const char *dir) {
  entry_list l = {0};
  if (tck_cache_scan(dir, collect, &l) < 0 || l.oom) {
    free(l.v);
    return -1;
  }
  int removed = 0;
  char path[4200];
  for (int i = 0; i < l.n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, l.v[i].name);
    removed += unlink(path) == 0;
  }
  free(l.v);
  return removed;
}
