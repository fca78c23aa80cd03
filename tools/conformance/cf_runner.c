/* cf_runner: one child process per case (fork), its cf_result read back
 * through a pipe, its stdout/stderr through another (kept as a tail for
 * crash reports), SIGKILL past the time limit. The parent never loads ONNX
 * Runtime: a GPU runtime initialised before fork() is unusable in the
 * child, and a crash must cost one case, not the run. */
#include "tools/conformance/cf_runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/conformance/cf_model.h"

#define TAIL 1024

typedef struct child {
  pid_t pid;
  int res_fd, out_fd;     /* -1 once at EOF */
  size_t idx;             /* case index in run */
  double start, deadline;
  int timed_out;
  unsigned char res[sizeof(cf_result)];
  size_t res_len;
  char tail[TAIL];        /* last TAIL bytes of the child's output (ring) */
  size_t tail_len;
} child;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Case folders (those holding model.onnx) matching the filter, sorted. */
static int list_cases(const cf_runner_opts *o, char ***names, size_t *n) {
  DIR *d = opendir(o->cases_dir);
  if (!d) {
    fprintf(stderr, "hipdnn-ep-conformance: cannot open cases folder %s: %s\n", o->cases_dir,
            strerror(errno));
    return 1;
  }
  regex_t re;
  if (o->filter && regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB)) {
    fprintf(stderr, "hipdnn-ep-conformance: bad --filter regex '%s'\n", o->filter);
    closedir(d);
    return 1;
  }
  size_t cap = 0;
  *names = NULL;
  *n = 0;
  struct dirent *e;
  char path[4096];
  int rc = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s/model.onnx", o->cases_dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (o->filter && regexec(&re, e->d_name, 0, NULL, 0) != 0) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 512;
      char **nn = realloc(*names, cap * sizeof *nn);
      if (!nn) { rc = 1; break; }
      *names = nn;
    }
    if (!((*names)[*n] = strdup(e->d_name))) { rc = 1; break; }
    (*n)++;
  }
  closedir(d);
  if (o->filter) regfree(&re);
  if (!rc) qsort(*names, *n, sizeof **names, cmp_name);
  return rc;
}

static void tail_add(child *c, const char *buf, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    if (c->tail_len == TAIL) {
      memmove(c->tail, c->tail + 1, TAIL - 1);
      c->tail_len--;
    }
    c->tail[c->tail_len++] = buf[i];
  }
}

static int start_child(const cf_config *cfg, const cf_runner_opts *o, cf_run *run, size_t idx,
                       child *c) {
  int rp[2], op[2];
  if (pipe(rp)) return 1;
  if (pipe(op)) { close(rp[0]); close(rp[1]); return 1; }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(rp[0]); close(rp[1]); close(op[0]); close(op[1]);
    return 1;
  }
  if (pid == 0) {
    close(rp[0]);
    close(op[0]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) { dup2(devnull, 0); close(devnull); }
    dup2(op[1], 1);
    dup2(op[1], 2);
    close(op[1]);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", o->cases_dir, run->cases[idx].name);
    cf_result r;
    (o->case_fn ? o->case_fn : cf_case_run)(cfg, dir, run->cases[idx].name, &r);
    fflush(NULL);
    const unsigned char *p = (const unsigned char *)&r;
    size_t left = sizeof r;
    while (left) {
      ssize_t w = write(rp[1], p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) _exit(3);
      p += w;
      left -= (size_t)w;
    }
    close(rp[1]);
    _exit(0);
  }
  close(rp[1]);
  close(op[1]);
  memset(c, 0, sizeof *c);
  c->pid = pid;
  c->res_fd = rp[0];
  c->out_fd = op[0];
  c->idx = idx;
  c->start = now_s();
  c->deadline = c->start + o->timeout_s;
  return 0;
}

/* The child has closed both pipes (or was killed): reap and classify. */
static void finish_child(const cf_runner_opts *o, cf_run *run, child *c) {
  int st = 0;
  while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {}
  cf_case_rec *rec = &run->cases[c->idx];
  rec->ms = (now_s() - c->start) * 1e3;
  int have = c->res_len == sizeof(cf_result);
  if (have) memcpy(&rec->r, c->res, sizeof rec->r);
  rec->r.detail[sizeof rec->r.detail - 1] = 0;
  rec->r.device[sizeof rec->r.device - 1] = 0;
  char tail[TAIL + 1];
  memcpy(tail, c->tail, c->tail_len);
  tail[c->tail_len] = 0;
  for (char *p = tail; *p; ++p)
    if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
  /* keep the end of the output: that is where a sanitizer or abort message is */
  const char *t = c->tail_len > 600 ? tail + c->tail_len - 600 : tail;
  if (c->timed_out) {
    rec->r.status = CF_TIMEOUT;
    snprintf(rec->r.detail, sizeof rec->r.detail, "no result after %g s; output: %.600s",
             o->timeout_s, t);
  } else if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    char prev[64] = "";
    if (have) snprintf(prev, sizeof prev, " after reporting %s", cf_status_name(rec->r.status));
    rec->r.status = CF_CRASH;
    snprintf(rec->r.detail, sizeof rec->r.detail, "signal %d (%s)%s; output: %.600s", sig,
             strsignal(sig), prev, t);
  } else if (!have || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    rec->r.status = CF_CRASH;
    snprintf(rec->r.detail, sizeof rec->r.detail, "exit status %d without a result; output: %.600s",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, t);
  }
  int s = rec->r.status;
  if (o->log && (o->verbose || cf_failed(s))) {
    fprintf(o->log, "%-8s %s (%.0f ms)%s%s\n", cf_status_name(s), rec->name, rec->ms,
            rec->r.detail[0] ? ": " : "", rec->r.detail);
    fflush(o->log);
  }
  if (o->verbose && o->log && c->tail_len && !cf_failed(s)) {
    fprintf(o->log, "         output: %s\n", t);
  }
}

int cf_runner_run(const cf_config *cfg, const cf_runner_opts *o, cf_run *run) {
  char **names = NULL;
  size_t n = 0;
  if (list_cases(o, &names, &n)) return 1;
  if (n == 0) {
    fprintf(stderr, "hipdnn-ep-conformance: no case folder (with model.onnx) in %s%s%s\n",
            o->cases_dir, o->filter ? " matching " : "", o->filter ? o->filter : "");
    free(names);
    return 1;
  }
  int rc = 0;
  char path[4096], err[256];
  for (size_t i = 0; i < n && !rc; ++i) {
    cf_model m;
    snprintf(path, sizeof path, "%s/%s/model.onnx", o->cases_dir, names[i]);
    int bad = cf_model_read(path, &m, err, sizeof err);
    char *none[] = {(char *)"(unreadable model)"};
    if (!cf_run_add(run, names[i], bad ? none : m.ops, bad ? 1 : m.n_ops)) rc = 1;
    if (!bad) cf_model_free(&m);
  }
  for (size_t i = 0; i < n; ++i) free(names[i]);
  free(names);
  if (rc) { fprintf(stderr, "hipdnn-ep-conformance: out of memory\n"); return 1; }

  signal(SIGPIPE, SIG_IGN);
  int jobs = o->jobs < 1 ? 1 : o->jobs > 64 ? 64 : o->jobs;
  child *kids = calloc((size_t)jobs, sizeof *kids);
  if (!kids) return 1;
  size_t next = 0, done = 0;
  int active = 0;
  double t0 = now_s();
  while (done < run->n) {
    while (active < jobs && next < run->n) {
      int slot = 0;
      while (kids[slot].pid) slot++;
      if (start_child(cfg, o, run, next, &kids[slot])) {
        cf_case_rec *rec = &run->cases[next];
        rec->r.status = CF_CRASH;
        snprintf(rec->r.detail, sizeof rec->r.detail, "fork/pipe failed: %s", strerror(errno));
        done++;
      } else {
        active++;
      }
      next++;
    }
    if (!active) continue;
    struct pollfd pf[2 * 64];
    int map[2 * 64], np = 0;
    double soonest = 1e30;
    for (int k = 0; k < jobs; ++k) {
      if (!kids[k].pid) continue;
      if (kids[k].deadline < soonest) soonest = kids[k].deadline;
      if (kids[k].res_fd >= 0) { pf[np].fd = kids[k].res_fd; pf[np].events = POLLIN; map[np++] = k; }
      if (kids[k].out_fd >= 0) { pf[np].fd = kids[k].out_fd; pf[np].events = POLLIN; map[np++] = k; }
    }
    double wait = soonest - now_s();
    int ms = wait <= 0 ? 0 : (int)(wait * 1e3) + 1;
    int pr = poll(pf, (nfds_t)np, ms);
    if (pr < 0 && errno != EINTR) { perror("poll"); rc = 1; break; }
    for (int i = 0; i < np && pr > 0; ++i) {
      if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      child *c = &kids[map[i]];
      char buf[4096];
      ssize_t r;
      if (pf[i].fd == c->res_fd) {
        size_t room = sizeof c->res - c->res_len;
        r = read(c->res_fd, room ? (void *)(c->res + c->res_len) : (void *)buf,
                 room ? room : sizeof buf);
        if (r > 0 && room) c->res_len += (size_t)r;
        if (r == 0 || (r < 0 && errno != EINTR)) { close(c->res_fd); c->res_fd = -1; }
      } else {
        r = read(c->out_fd, buf, sizeof buf);
        if (r > 0) tail_add(c, buf, (size_t)r);
        if (r == 0 || (r < 0 && errno != EINTR)) { close(c->out_fd); c->out_fd = -1; }
      }
    }
    double t = now_s();
    for (int k = 0; k < jobs; ++k) {
      child *c = &kids[k];
      if (!c->pid) continue;
      if ((c->res_fd >= 0 || c->out_fd >= 0) && t >= c->deadline) {
        kill(c->pid, SIGKILL);
        c->timed_out = 1;
        if (c->res_fd >= 0) { close(c->res_fd); c->res_fd = -1; }
        if (c->out_fd >= 0) { close(c->out_fd); c->out_fd = -1; }
      }
      if (c->res_fd < 0 && c->out_fd < 0) {
        finish_child(o, run, c);
        c->pid = 0;
        active--;
        done++;
      }
    }
  }
  free(kids);
  run->wall_s = now_s() - t0;
  time_t end = time(NULL);
  struct tm utc;
  if (gmtime_r(&end, &utc)) strftime(run->date, sizeof run->date, "%Y-%m-%d %H:%M UTC", &utc);
  return rc;
}
