/* bench_child.c — first calls in a fresh process. A cold start and a warm start are only
 * honest in a new process (no in-memory caches, plugins loaded from scratch), so the bench
 * re-executes itself with a hidden flag and TC_CACHE_DIR pointed where it wants; the child
 * prints one line, "TCBENCH key=value ...", that the parent parses. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_driver.h"

extern char **environ;

#define CHILD_TAG "TCBENCH "

/* environ with TC_CACHE_DIR replaced; built before fork (the child may only exec). */
static char **child_env(const char *cache_dir, char *entry, size_t cap) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  if (!env) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TC_CACHE_DIR=", 13)) env[k++] = environ[i];
  snprintf(entry, cap, "TC_CACHE_DIR=%s", cache_dir);
  env[k++] = entry;
  env[k] = NULL;
  return env;
}

static void child_parse(const char *text, bench_first_call *out) {
  const char *line = strstr(text, CHILD_TAG);
  if (!line) {
    snprintf(out->error, sizeof out->error, "the child process gave no answer");
    return;
  }
  line += strlen(CHILD_TAG);
  const char *err = strstr(line, "error=");
  if (err) {
    snprintf(out->error, sizeof out->error, "%.*s", (int)strcspn(err + 6, "\n"), err + 6);
    return;
  }
  sscanf(line,
         "first_call_s=%lf compile_s=%lf kernels=%d graphs=%d compiles=%d entries=%d total_s=%lf median_s=%lf "
         "calls=%d",
         &out->seconds, &out->compile_s, &out->kernels, &out->graphs, &out->compiles, &out->entries, &out->total_s,
         &out->median_s, &out->calls);
  out->ok = true;
}

/* Reads the child's stdout until it closes or the deadline (0: none) passes. */
static bool child_read(int fd, char *text, size_t cap, double deadline) {
  size_t n = 0;
  for (;;) {
    int wait_ms = -1;
    if (deadline > 0) {
      double left = deadline - bench_now();
      if (left <= 0) break;
      wait_ms = (int)(left * 1000) + 1;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    ssize_t got = read(fd, text + n, cap - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      text[n] = 0;
      return true;
    }
    n += (size_t)got;
    if (n == cap - 1) n = 0; /* only the last line matters: the answer */
  }
  text[n] = 0;
  return false;
}

void bench_child_spawn(const bench_config *cfg, const char *kind, const char *name, const char *cache_dir,
                       double limit_s, bench_first_call *out) {
  memset(out, 0, sizeof *out);
  char threads[16], entry[4200];
  snprintf(threads, sizeof threads, "%d", cfg->threads);
  char *argv[] = {"tc", "bench", "--child", (char *)kind, "--models", (char *)name, "--backend",
                  (char *)cfg->backend, "--size", (char *)bench_size_name(cfg->size), "--threads", threads,
                  "--dynamic", (char *)bench_dynamic_name(cfg->dynamic), "--mode", (char *)bench_mode_name(cfg->mode), NULL};
  if (mkdir(cache_dir, 0700) && errno != EEXIST) {
    snprintf(out->error, sizeof out->error, "cannot create %s: %s", cache_dir, strerror(errno));
    return;
  }
  char **env = child_env(cache_dir, entry, sizeof entry);
  int fds[2];
  if (!env || pipe(fds)) {
    free(env);
    snprintf(out->error, sizeof out->error, "cannot start a child process: %s", strerror(errno));
    return;
  }
  fflush(stdout);
  fflush(stderr);
  double t0 = bench_now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execve("/proc/self/exe", argv, env);
    _exit(127);
  }
  free(env);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    snprintf(out->error, sizeof out->error, "fork failed: %s", strerror(errno));
    return;
  }
  char text[8192];
  bool finished = child_read(fds[0], text, sizeof text, limit_s > 0 ? t0 + limit_s : 0);
  close(fds[0]);
  if (!finished) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  out->process_s = bench_now() - t0;
  if (!finished) {
    out->timed_out = true;
    snprintf(out->error, sizeof out->error, "stopped after %.0f s", limit_s);
    return;
  }
  child_parse(text, out);
  if (!out->ok && !out->error[0])
    snprintf(out->error, sizeof out->error, "the child process failed (status %d)", status);
  /* An answer, then a crash at exit: a failure too (a program would have died there; session 10's
   * inductor-cuda died at exit while cuBLASLt started on a thread, after answering). */
  if (out->ok && WIFSIGNALED(status)) {
    out->ok = false;
    snprintf(out->error, sizeof out->error, "the child process died at exit, after its first call (signal %d: %s)",
             WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else if (out->ok && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    out->ok = false;
    snprintf(out->error, sizeof out->error, "the child process exited with status %d after its first call",
             WEXITSTATUS(status));
  }
}

/* ---------------------------------------------------------------- the child's side */
void bench_warm_starts(const bench_config *cfg, const char *kind, const char *name, const char *cache_dir, bench_result *r) {
  bench_first_call runs[BENCH_WARM_STARTS];
  r->n_warm = 0;
  for (int i = 0; i < BENCH_WARM_STARTS; i++) {
    bench_child_spawn(cfg, kind, name, cache_dir, 0, &runs[i]);
    if (!runs[i].ok) {
      r->warm = runs[i];
      return;
    }
    r->warm_s[r->n_warm++] = runs[i].seconds;
  }
  /* the median run, whole (its compile time and counts go with it) */
  int order[BENCH_WARM_STARTS];
  for (int i = 0; i < BENCH_WARM_STARTS; i++) order[i] = i;
  for (int i = 1; i < BENCH_WARM_STARTS; i++)
    for (int j = i; j > 0 && runs[order[j]].seconds < runs[order[j - 1]].seconds; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  r->warm = runs[order[BENCH_WARM_STARTS / 2]];
}

static void child_answer(const bench_first_call *r) {
  if (!r->ok) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s", r->error[0] ? r->error : "failed");
    for (char *p = msg; *p; p++)
      if (*p == '\n') *p = ' ';
    printf(CHILD_TAG "error=%s\n", msg);
    return;
  }
  printf(CHILD_TAG "first_call_s=%.9g compile_s=%.9g kernels=%d graphs=%d compiles=%d entries=%d total_s=%.9g "
                   "median_s=%.9g calls=%d\n",
         r->seconds, r->compile_s, r->kernels, r->graphs, r->compiles, r->entries, r->total_s, r->median_s, r->calls);
}

static void child_stats(const tc_compiled *c, bench_first_call *r) {
  tc_compile_stats st = {.struct_size = sizeof st};
  if (c && tc_compiled_stats(c, &st) == TC_OK) {
    r->compile_s = st.compile_seconds;
    r->kernels = st.n_kernels;
    r->graphs = st.n_graphs;
    r->compiles = st.n_compiles;
    r->entries = st.n_entries;
  }
}

static void child_first_call(const tc_model *m, const char *backend, tc_size_class size, const char *options,
                             bench_first_call *r) {
  tc_tensor *in[16] = {0};
  bool on_device;
  bench_runner run = {0};
  /* the device first, as an application opens it at start-up: its libraries load meanwhile */
  tc_status st = tc_backend_open(backend);
  if (st == TC_OK) st = m->make_inputs(size, 1, in);
  if (st == TC_OK) st = bench_place_inputs(in, m->n_inputs, backend, &on_device);
  if (st == TC_OK) st = bench_runner_init(&run, m, backend, options);
  if (st == TC_OK) {
    double t0 = bench_now();
    tc_tensor *out = bench_runner_call(&run, in);
    r->seconds = bench_now() - t0;
    r->ok = out != NULL;
    tc_release(out);
    child_stats(run.compiled, r);
  }
  if (!r->ok) snprintf(r->error, sizeof r->error, "%s", tc_last_error());
  bench_runner_free(&run);
  for (int i = 0; i < m->n_inputs; i++) tc_release(in[i]);
}

/* Eager calls on host inputs: the first, then timed ones within the eager timing. */
static void child_eager(const tc_model *m, tc_size_class size, const bench_timing *timing, bench_first_call *r) {
  tc_tensor *in[16] = {0};
  bench_runner run;
  bench_runner_init(&run, m, "eager", NULL);
  if (m->make_inputs(size, 1, in) == TC_OK) {
    double t0 = bench_now();
    tc_tensor *out = bench_runner_call(&run, in);
    r->seconds = bench_now() - t0;
    tc_tensor **sets[1] = {in};
    r->ok = out && bench_time_calls(&run, (tc_tensor **const *)sets, 1, timing, &r->median_s, &r->calls) == TC_OK;
    tc_release(out);
  }
  if (!r->ok) snprintf(r->error, sizeof r->error, "%s", tc_last_error());
  for (int i = 0; i < m->n_inputs; i++) tc_release(in[i]);
}

int bench_child_main(const char *kind, const char *name, const char *backend, const bench_config *cfg) {
  bench_first_call r = {0};
  char opt_buf[64];
  const char *options = bench_thread_options(cfg->threads, opt_buf, sizeof opt_buf);
  bench_set_threads(cfg->threads);
  const tc_model *m = tc_model_find(name);
  if (!strcmp(kind, "dyn")) bench_dyn_attn_child(backend, cfg->size, options, &r);
  else if (!m) snprintf(r.error, sizeof r.error, "unknown model '%s'", name);
  else if (!strcmp(kind, "eager")) child_eager(m, cfg->size, &cfg->eager_timing, &r);
  else child_first_call(m, backend, cfg->size, options, &r);
  child_answer(&r);
  fflush(stdout);
  return r.ok ? 0 : 1;
}
