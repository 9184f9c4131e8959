/* compile_cc.c — runs the system C compiler on a generated unit. The source and the object go
 * to temporary names beside the destination, which is renamed into place only when the compiler
 * succeeded, so a reader never sees a half-written shared object. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "icpu.h"

extern char **environ;

/* -ffp-contract=off: a*b+c rounds twice, as the reference does, so pointwise results match
 * debug-eager bit for bit. -fno-trapping-math and -fno-math-errno change no result (tc reads
 * neither floating-point exception flags nor errno): without them GCC predicates the arithmetic
 * under a select (erf's |x| >= 4 test lands on its critical path: 5-8% of ln_gelu) and calls
 * sqrtf through the PLT, spilling every vector register around the call. */
static const char *const compile_flags[] = {"-O3",          "-march=native",       "-ffp-contract=off", "-fno-trapping-math",
                                            "-fno-math-errno", "-fopenmp",          "-shared",           "-fPIC"};
static const char *const link_flags[] = {"-lmvec", "-lm"};

/* The flags as one string, for the cache key. */
const char *cc_flags(bool with_blas) {
  static char text[2][256];
  char *t = text[with_blas];
  if (!*t) {
    for (size_t i = 0; i < sizeof compile_flags / sizeof compile_flags[0]; i++)
      snprintf(t + strlen(t), sizeof text[0] - strlen(t), "%s%s", *t ? " " : "", compile_flags[i]);
    for (size_t i = 0; i < sizeof link_flags / sizeof link_flags[0]; i++)
      snprintf(t + strlen(t), sizeof text[0] - strlen(t), " %s", link_flags[i]);
    if (with_blas) snprintf(t + strlen(t), sizeof text[0] - strlen(t), " -lopenblas");
  }
  return t;
}

/* Runs argv with stdout+stderr into log_path; returns the exit status (or -1). */
static int run_logged(char *const argv[], const char *log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addclose(&fa, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *read_text(const char *path, size_t max) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = malloc(max + 1);
  size_t n = buf ? fread(buf, 1, max, f) : 0;
  fclose(f);
  if (buf) buf[n] = 0;
  return buf;
}

static bool locate(const char *cc, char *path, size_t cap, struct stat *st) {
  if (strchr(cc, '/')) return snprintf(path, cap, "%s", cc) < (int)cap && stat(path, st) == 0 && access(path, X_OK) == 0;
  const char *dirs = getenv("PATH");
  if (!dirs || !*dirs) dirs = "/usr/local/bin:/usr/bin:/bin";
  for (const char *d = dirs; *d;) {
    size_t n = strcspn(d, ":");
    if (n > 0 && snprintf(path, cap, "%.*s/%s", (int)n, d, cc) < (int)cap && stat(path, st) == 0 && S_ISREG(st->st_mode) &&
        access(path, X_OK) == 0)
      return true;
    d += n + (d[n] == ':');
  }
  return false;
}

bool cc_locate(const char *cc, char *path, size_t cap) {
  struct stat st;
  return locate(cc, path, cap, &st);
}

/* `cc --version`, remembered in the host's disk cache (kind "cc-version") per compiler
 * executable (path, inode, size, modification time: an upgraded compiler is a new file), since
 * running it cost 3 ms of every warm start. */
static char *cc_version(const icpu_ctx *ctx) {
  const tc_host_api *h = ctx->host;
  char exe[4096], key[4400] = "";
  struct stat st;
  if (icpu_host_has_cache(h) && locate(ctx->cc, exe, sizeof exe, &st)) {
    snprintf(key, sizeof key, "%s %llu %llu %lld %lld.%09ld", exe, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    tc_cache_get_args get = {.struct_size = sizeof get, .key = key, .key_len = strlen(key), .kind = "cc-version"};
    tc_error *e = h->cache_get(h->host_ctx, &get);
    if (e) {
      icpu_log(ctx, "cache", "inductor-cpu: compiler version memo unreadable: %s", h->error_message(h->host_ctx, e));
      h->error_free(h->host_ctx, e);
    } else if (get.entry) {
      char *known = get.size > 0 ? strndup(get.data, get.size) : NULL;
      h->cache_release(h->host_ctx, get.entry);
      if (known) return known;
    }
  }
  char log[] = "/tmp/tc-icpu-ccid-XXXXXX";
  int fd = mkstemp(log);
  if (fd < 0) return NULL;
  close(fd);
  char *argv[] = {(char *)ctx->cc, "--version", NULL};
  int rc = run_logged(argv, log);
  char *ver = rc == 0 ? read_text(log, 4096) : NULL;
  unlink(log);
  if (ver && ver[0] && key[0]) {
    tc_cache_put_args put = {.struct_size = sizeof put, .key = key, .key_len = strlen(key), .kind = "cc-version",
                             .data = ver, .size = strlen(ver)};
    tc_error *e = h->cache_put(h->host_ctx, &put);
    if (e) {
      icpu_log(ctx, "cache", "inductor-cpu: compiler version memo not stored: %s", h->error_message(h->host_ctx, e));
      h->error_free(h->host_ctx, e);
    }
  }
  return ver;
}

const char *cc_identity(icpu_ctx *ctx) {
  if (ctx->cc_identity) return ctx->cc_identity;
  char *ver = cc_version(ctx);
  /* -march=native makes the object depend on the CPU: key on its feature flags too. */
  char *cpu = NULL;
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[8192];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "flags", 5) == 0) { cpu = strdup(line); break; }
    fclose(f);
  }
  size_t n = strlen(ctx->cc) + (ver ? strlen(ver) : 0) + (cpu ? strlen(cpu) : 0) + 8;
  ctx->cc_identity = malloc(n);
  if (ctx->cc_identity) snprintf(ctx->cc_identity, n, "%s\n%s\n%s", ctx->cc, ver ? ver : "?", cpu ? cpu : "?");
  free(ver);
  free(cpu);
  return ctx->cc_identity ? ctx->cc_identity : "unknown";
}

tc_status cc_compile(icpu_ctx *ctx, const char *source, bool with_blas, const char *so_path, char *err, size_t cap) {
  char src[4200], obj[4220], log[4220];
  snprintf(src, sizeof src, "%s.%d.XXXXXX", so_path, (int)getpid());
  int fd = mkstemp(src);
  if (fd < 0) {
    snprintf(err, cap, "cannot create a temporary file beside %s: %s", so_path, strerror(errno));
    return TC_ERR_COMPILE;
  }
  size_t len = strlen(source);
  bool wrote = write(fd, source, len) == (ssize_t)len;
  close(fd);
  /* cc picks the language from the extension. */
  char src_c[4210];
  snprintf(src_c, sizeof src_c, "%s.c", src);
  snprintf(obj, sizeof obj, "%s.so", src);
  snprintf(log, sizeof log, "%s.log", src);
  if (!wrote || rename(src, src_c) != 0) {
    unlink(src);
    snprintf(err, cap, "cannot write the generated source beside %s", so_path);
    return TC_ERR_COMPILE;
  }
  char *argv[24];
  int n = 0;
  argv[n++] = ctx->cc;
  for (size_t i = 0; i < sizeof compile_flags / sizeof compile_flags[0]; i++) argv[n++] = (char *)compile_flags[i];
  argv[n++] = "-o";
  argv[n++] = obj;
  argv[n++] = src_c;
  for (size_t i = 0; i < sizeof link_flags / sizeof link_flags[0]; i++) argv[n++] = (char *)link_flags[i];
  if (with_blas) argv[n++] = "-lopenblas";
  argv[n] = NULL;
  int rc = run_logged(argv, log);
  tc_status st = TC_OK;
  if (rc != 0) {
    char *msg = read_text(log, 3000);
    snprintf(err, cap, "%s failed (exit %d) compiling %s:\n%s", ctx->cc, rc, src_c, msg ? msg : "(no output)");
    free(msg);
    st = TC_ERR_COMPILE;
  } else if (rename(obj, so_path) != 0) {
    snprintf(err, cap, "cannot move the compiled object to %s: %s", so_path, strerror(errno));
    st = TC_ERR_COMPILE;
  }
  unlink(obj);
  unlink(log);
  if (st == TC_OK || !getenv("TC_KEEP_FAILED_SOURCE")) unlink(src_c);
  return st;
}
