/* bench/timer: times whole processes in interleaved pairs (issue 17).
 *
 *   timer [-n RUNS] [-w WARMUP] [-p PROCS] [-l LABEL] -- A ARGS... [::: B ARGS...]
 *
 * Runs command A and command B alternately (A B, B A, A B, ... so that
 * neither always runs first), each as a whole process: fork, execvp, wait4,
 * wall time from CLOCK_MONOTONIC around fork..wait4, peak RSS from wait4's
 * rusage (ru_maxrss, KB). Their stdin, stdout and stderr are /dev/null.
 * Prints one tab-separated line:
 *
 *   label  A_median_us A_p25 A_p75  B_median_us B_p25 B_p75
 *          ratio_median ratio_p25 ratio_p75  diff_median_us
 *          A_maxrss_kb B_maxrss_kb  A_exit B_exit  runs
 *
 * where ratio = A/B and diff = A - B of the same pair (medians of pairwise
 * ratios, not ratios of medians: both runs of a pair saw the same load).
 * Without B only the A columns are filled ("-" elsewhere).
 *
 * -p PROCS forks PROCS idle children (each blocked in pause()) before the
 * warm-up and kills them after the last run: a host with that many more
 * processes, for the real-time competitor scan, which looks at every one.
 *
 * Build: cc -O2 -o bench/out/timer bench/timer.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Runs argv once; returns wall µs, stores the peak RSS (KB) and exit code. */
static double run(char **argv, long *rss, int *code) {
  double t0 = now_us();
  pid_t pid = fork();
  if (pid < 0) {
    perror("timer: fork");
    exit(2);
  }
  if (pid == 0) {
    int fd = open("/dev/null", O_RDWR);
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    if (fd > 2) close(fd);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      perror("timer: wait4");
      exit(2);
    }
  }
  double t = now_us() - t0;
  *rss = ru.ru_maxrss;
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n), sorted in place; linear interpolation. */
static double quantile(double *v, int n, double q) {
  qsort(v, n, sizeof *v, cmp);
  double pos = q * (n - 1);
  int i = (int)pos;
  double f = pos - i;
  return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

int main(int argc, char **argv) {
  int runs = 200, warmup = 10, procs = 0;
  const char *label = "-";
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (i + 1 >= argc) break;
    if (!strcmp(argv[i], "-n")) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-p")) procs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-l")) label = argv[++i];
    else {
      fprintf(stderr, "timer: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (i >= argc - 1 || runs < 1) {
    fprintf(stderr, "usage: timer [-n RUNS] [-w WARMUP] [-p PROCS] [-l LABEL] -- A... [::: B...]\n");
    return 2;
  }
  char **a = &argv[i + 1], **b = NULL;
  for (int k = i + 1; k < argc; k++)
    if (!strcmp(argv[k], ":::")) {
      argv[k] = NULL;
      b = &argv[k + 1];
      if (!*b) b = NULL;
      break;
    }
  pid_t *idle = NULL;
  if (procs > 0) {
    idle = calloc(procs, sizeof *idle);
    for (int k = 0; k < procs; k++) {
      idle[k] = fork();
      if (idle[k] == 0) {
        for (;;) pause();
      }
      if (idle[k] < 0) {
        perror("timer: fork (idle processes)");
        procs = k;
        break;
      }
    }
  }
  double *ta = calloc(runs, sizeof(double)), *tb = calloc(runs, sizeof(double));
  double *ratio = calloc(runs, sizeof(double)), *diff = calloc(runs, sizeof(double));
  long *ra = calloc(runs, sizeof(long)), *rb = calloc(runs, sizeof(long));
  int code_a = 0, code_b = 0;
  long rss;
  int code;
  for (int k = 0; k < warmup; k++) {
    run(a, &rss, &code);
    if (b) run(b, &rss, &code);
  }
  for (int k = 0; k < runs; k++) {
    if (b && (k & 1)) {
      tb[k] = run(b, &rb[k], &code_b);
      ta[k] = run(a, &ra[k], &code_a);
    } else {
      ta[k] = run(a, &ra[k], &code_a);
      if (b) tb[k] = run(b, &rb[k], &code_b);
    }
    if (b) {
      ratio[k] = ta[k] / tb[k];
      diff[k] = ta[k] - tb[k];
    }
  }
  for (int k = 0; k < procs; k++) kill(idle[k], SIGKILL);
  for (int k = 0; k < procs; k++) waitpid(idle[k], NULL, 0);
  long max_a = 0, max_b = 0;
  for (int k = 0; k < runs; k++) {
    if (ra[k] > max_a) max_a = ra[k];
    if (rb[k] > max_b) max_b = rb[k];
  }
  printf("%s\t%.0f\t%.0f\t%.0f", label, quantile(ta, runs, .5), quantile(ta, runs, .25),
         quantile(ta, runs, .75));
  if (b)
    printf("\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.0f\t%ld\t%ld\t%d\t%d\t%d\n",
           quantile(tb, runs, .5), quantile(tb, runs, .25), quantile(tb, runs, .75),
           quantile(ratio, runs, .5), quantile(ratio, runs, .25), quantile(ratio, runs, .75),
           quantile(diff, runs, .5), max_a, max_b, code_a, code_b, runs);
  else
    printf("\t-\t-\t-\t-\t-\t-\t-\t%ld\t-\t%d\t-\t%d\n", max_a, code_a, runs);
  return 0;
}
