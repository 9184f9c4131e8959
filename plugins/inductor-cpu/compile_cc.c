/* compile_cc.c — runs the system C compiler on a generated unit (or on several parts of one at
 * once: cc_start, then cc_finish). The source and the object go to temporary names beside the
 * destination, which is renamed into place only when the compiler succeeded, so a reader never
 * sees a half-written shared object. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
/* -mprefer-vector-width=512: GCC vectorizes for 256-bit vectors on the AVX-512 Xeons unless
 * told otherwise (a frequency concern of older parts); the GPU machine's Xeon ran softmax at
 * 2 threads in 5.62 ms with it against 8.22 ms without (session 9, same call), ln_gelu within
 * the noise. A no-op without AVX-512. */
/* -Werror=implicit-function-declaration: the prelude declares the C library's names itself
 * (tc_cpu_prelude.h), and a name it missed would otherwise compile as a function returning int. */
static const char *const compile_flags[] = {"-march=native",       "-mprefer-vector-width=512", "-ffp-contract=off",
                                            "-fno-trapping-math",  "-fno-math-errno",           "-fopenmp",
                                            "-shared",             "-fPIC",
                                            "-Werror=implicit-function-declaration"};
static const char *const link_flags[] = {"-lmvec", "-lm"};
/* Per tier, in front of the rest. FAST is FULL with only passes that run after GCC's GIMPLE
 * optimizers switched off or made cheaper: what decides a result's bits (which loops are
 * vectorized and how, the order of `omp simd` reductions, libmvec or libm calls) is settled in
 * GIMPLE, which is the same in both (-fdump-tree-optimized compares equal), and the RTL passes
 * never reassociate or contract floating-point arithmetic. What they cost is instruction
 * scheduling, register allocation and redundancy elimination: about a quarter of the compiler's
 * time on attn_block (-pipe and no unwind tables: a little more). -O1 costs half, but vectorizes
 * some `omp simd` loops differently (Philox's rounds not unrolled first; a 7-wide row at another
 * vector size): two conformance cases differed in their last bits. */
/* FULL adds -funroll-loops, an RTL pass too (the optimized GIMPLE of ln_gelu, softmax, mlp and
 * attn_block, the last two with the generated GEMM and fused attention as well, compares equal
 * with and without it): more vectors in flight in loops that are chains of dependent FMAs,
 * erf's rational and exp's polynomial. ln_gelu's unit 11% faster, softmax's 4-8% (AVX2 Zen 3,
 * bench/probes/row_kernel_host.c); 7-14% more compile time, paid in the background build. */
static const char *const full_flags[] = {"-O3", "-funroll-loops", NULL};
static const char *const fast_flags[] = {"-O3",
                                         "-fno-schedule-insns2",
                                         "-fira-region=one",
                                         "-fira-algorithm=priority",
                                         "-fno-caller-saves",
                                         "-fno-gcse",
                                         "-fno-gcse-after-reload",
                                         "-fno-rerun-cse-after-loop",
                                         "-fno-cse-follow-jumps",
                                         "-fno-forward-propagate",
                                         "-fno-cprop-registers",
                                         "-fno-dse",
                                         "-fno-ree",
                                         "-fno-if-conversion",
                                         "-fno-if-conversion2",
                                         "-fno-crossjumping",
                                         "-fno-peephole2",
                                         "-fno-reorder-blocks",
                                         "-fno-split-wide-types",
                                         "-fno-combine-stack-adjustments",
                                         "-fno-asynchronous-unwind-tables",
                                         "-pipe",
                                         NULL};
static const char *const *const tier_flags[] = {[ICPU_TIER_FULL] = full_flags, [ICPU_TIER_FAST] = fast_flags};

/* The flags as one string per tier and blas, for the cache key (the FULL tier's reads as it
 * always has, so existing cache entries stay valid). Made once: two contexts compile at once. */
static char flags_text[2][2][1024];
static pthread_once_t flags_once = PTHREAD_ONCE_INIT;

static void flags_text_init(void) {
  for (int tier = 0; tier < 2; tier++)
    for (int blas = 0; blas < 2; blas++) {
      char *t = flags_text[tier][blas];
      size_t cap = sizeof flags_text[0][0];
      for (const char *const *f = tier_flags[tier]; *f; f++)
        snprintf(t + strlen(t), cap - strlen(t), "%s%s", *t ? " " : "", *f);
      for (size_t i = 0; i < sizeof compile_flags / sizeof compile_flags[0]; i++)
        snprintf(t + strlen(t), cap - strlen(t), " %s", compile_flags[i]);
      for (size_t i = 0; i < sizeof link_flags / sizeof link_flags[0]; i++)
        snprintf(t + strlen(t), cap - strlen(t), " %s", link_flags[i]);
      if (blas) snprintf(t + strlen(t), cap - strlen(t), " -lopenblas");
    }
}

const char *cc_flags(icpu_tier tier, bool with_blas) {
  pthread_once(&flags_once, flags_text_init);
  return flags_text[tier][with_blas];
}

/* Starts argv with stdout+stderr into log_path; the child's pid, or -1. */
static pid_t spawn_logged(char *const argv[], const char *log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addclose(&fa, 0);
  /* The compiler takes signals whatever the spawning thread blocks (the background build's
   * thread blocks them all): ^C stops it with the program. */
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
  posix_spawnattr_destroy(&at);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

/* Waits for pid; its exit status (or -1). */
static int wait_exit(pid_t pid) {
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_logged(char *const argv[], const char *log_path) {
  return wait_exit(spawn_logged(argv, log_path));
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

bool cc_is_gcc(icpu_ctx *ctx) {
  /* GCC's --version says "gcc (...) 12.2.0" (or g++, or a cross prefix) and names the Free
   * Software Foundation; clang names itself ("clang version", "Apple clang"). */
  const char *id = cc_identity(ctx);
  return strstr(id, "Free Software Foundation") && !strstr(id, "clang");
}

tc_status cc_start(const char *cc, const char *source, icpu_tier tier, bool with_blas, const char *so_path,
                   icpu_cc_run *r, char *err, size_t cap) {
  memset(r, 0, sizeof *r);
  r->pid = -1;
  r->tier = tier;
  snprintf(r->cc, sizeof r->cc, "%s", cc);
  snprintf(r->so_path, sizeof r->so_path, "%s", so_path);
  char src[4200];
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
  snprintf(r->src_c, sizeof r->src_c, "%s.c", src);
  snprintf(r->obj, sizeof r->obj, "%s.so", src);
  snprintf(r->log, sizeof r->log, "%s.log", src);
  if (!wrote || rename(src, r->src_c) != 0) {
    unlink(src);
    r->src_c[0] = 0;
    snprintf(err, cap, "cannot write the generated source beside %s", so_path);
    return TC_ERR_COMPILE;
  }
  char *argv[48];
  int n = 0;
  argv[n++] = (char *)cc;
  for (const char *const *f = tier_flags[tier]; *f; f++)
    argv[n++] = (char *)*f;
  for (size_t i = 0; i < sizeof compile_flags / sizeof compile_flags[0]; i++) argv[n++] = (char *)compile_flags[i];
  argv[n++] = "-o";
  argv[n++] = r->obj;
  argv[n++] = r->src_c;
  for (size_t i = 0; i < sizeof link_flags / sizeof link_flags[0]; i++) argv[n++] = (char *)link_flags[i];
  if (with_blas) argv[n++] = "-lopenblas";
  argv[n] = NULL;
  r->pid = spawn_logged(argv, r->log);
  return TC_OK; /* a failed spawn is cc_finish's to report, with the rest */
}

tc_status cc_finish(icpu_cc_run *r, char *err, size_t cap) {
  if (!r->src_c[0]) return TC_ERR_COMPILE; /* cc_start failed: err says why */
  int rc = wait_exit(r->pid);
  tc_status st = TC_OK;
  if (rc != 0) {
    char *msg = read_text(r->log, 3000);
    const char *why = msg ? msg : r->pid < 0 ? "(could not be started)" : "(no output)";
    snprintf(err, cap, "%s failed (exit %d) compiling %s%s:\n%s", r->cc, rc, r->src_c,
             r->tier == ICPU_TIER_FAST ? " (fast build)" : "", why);
    free(msg);
    st = TC_ERR_COMPILE;
  } else if (rename(r->obj, r->so_path) != 0) {
    snprintf(err, cap, "cannot move the compiled object to %s: %s", r->so_path, strerror(errno));
    st = TC_ERR_COMPILE;
  }
  unlink(r->obj);
  unlink(r->log);
  if (st == TC_OK || !getenv("TC_KEEP_FAILED_SOURCE")) unlink(r->src_c);
  return st;
}

tc_status cc_compile(const char *cc, const char *source, icpu_tier tier, bool with_blas, const char *so_path, char *err,
                     size_t cap) {
  icpu_cc_run r;
  tc_status st = cc_start(cc, source, tier, with_blas, so_path, &r, err, cap);
  return st != TC_OK ? st : cc_finish(&r, err, cap);
}
