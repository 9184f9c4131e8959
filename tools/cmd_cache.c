/* cmd_cache.c — `tc cache [stats|list|clear] [DIR]`: what the disk cache holds, per backend
 * directory (and the registry's), and emptying it. Only entries are touched: files named as the
 * cache names them (plugin-api/kit/cache_admin.c); anything else in the directory stays. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tc/tc.h"
#include "tc_cli.h"
#include "tc_kit.h"

static const char usage_text[] = "usage: tc cache [stats|list|clear] [DIR]\n"
                                 "  DIR: one directory of the cache (a backend's name, or registry)\n";

typedef struct totals {
  int entries;
  uint64_t bytes;
  const char *dir_name; /* for list */
  time_t now;
} totals;

static void add_entry(const tck_cache_entry *e, void *ud) {
  totals *t = ud;
  t->entries++;
  t->bytes += e->bytes;
  if (t->dir_name) {
    long long age = (long long)(t->now - e->used_s);
    printf("%s/%-82s %10llu bytes  used %lld s ago\n", t->dir_name, e->name, (unsigned long long)e->bytes,
           age < 0 ? 0 : age);
  }
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

int cmd_cache(int argc, char **argv) {
  const char *action = "stats", *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (i == 1 && (!strcmp(argv[i], "stats") || !strcmp(argv[i], "list") || !strcmp(argv[i], "clear"))) action = argv[i];
    else if (argv[i][0] != '-' && !only) only = argv[i];
    else {
      fprintf(stderr, "tc cache: unexpected argument '%s'\n%s", argv[i], usage_text);
      return 2;
    }
  }
  char base[768];
  tck_cache_base(base, sizeof base);
  if (!base[0]) {
    printf("cache: off (TC_CACHE_DIR=off, or neither XDG_CACHE_HOME nor HOME is set)\n");
    return 0;
  }
  printf("cache: %s (cap %.0f MiB per directory, TC_CACHE_MAX_MB)\n", base, mib(tck_cache_cap_bytes()));
  DIR *d = opendir(base);
  if (!d) {
    printf("  empty (not created yet)\n");
    return only ? 1 : 0;
  }
  totals all = {0};
  int dirs = 0, removed = 0;
  bool seen_only = false;
  struct dirent *e;
  char names[1024] = "", path[1100];
  while ((e = readdir(d))) {
    struct stat st;
    if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
      continue;
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "", e->d_name);
    if (only && strcmp(only, e->d_name)) continue;
    seen_only = true;
    snprintf(path, sizeof path, "%s/%s", base, e->d_name);
    dirs++;
    if (!strcmp(action, "clear")) {
      int n = tck_cache_clear(path);
      printf("  %-16s %d entries removed\n", e->d_name, n < 0 ? 0 : n);
      removed += n > 0 ? n : 0;
      continue;
    }
    totals t = {.dir_name = !strcmp(action, "list") ? e->d_name : NULL, .now = time(NULL)};
    tck_cache_scan(path, add_entry, &t);
    if (!strcmp(action, "stats")) printf("  %-16s %6d entries %10.2f MiB\n", e->d_name, t.entries, mib(t.bytes));
    all.entries += t.entries;
    all.bytes += t.bytes;
  }
  closedir(d);
  if (only && !seen_only) {
    fprintf(stderr, "tc cache: no directory '%s' in %s (there: %s)\n", only, base, names[0] ? names : "none");
    return 1;
  }
  if (!strcmp(action, "clear")) printf("removed %d entries\n", removed);
  else printf("total: %d entries, %.2f MiB in %d directories\n", all.entries, mib(all.bytes), dirs);
  return 0;
}
