/* bench/replay: the physical limit of a pinrun run (issue 17). It makes the
 * file-system calls a run of pinrun made, recorded by bench/record-reads.py
 * from `strace -f -y`, in C with nothing else: no argument parsing, no
 * text parsing, no plan, no allocation. Then, given a command, it sets its
 * CPU affinity to the CPU the recorded run placed its command on (a `c`
 * line; -c CPU, else 0: moving to another CPU costs its own wake-up) and
 * execs the command, as pinrun does last. Its
 * time is what the kernel charges for the files the run's checks read
 * plus exec: the floor pinrun's own code sits on. Built static, like
 * pinrun's default build:
 *
 *   cc -O2 -static -pthread -o bench/out/replay bench/replay.c
 *   bench/out/replay [-t THREADS] [-c CPU] LIST [COMMAND [ARG]...]
 *
 * LIST, one call per line (tab-separated):
 *   f DIR REL   openat(DIR, REL, O_RDONLY|O_NONBLOCK|O_CLOEXEC) (DIR "."
 *               is AT_FDCWD, else a directory opened O_PATH once and
 *               kept), one read(2) of 64 KiB (more only while a read
 *               fills it), close(2). A failed open is a call made too.
 *   F DIR REL   the same with an fstat(2) after the open (a dump's files:
 *               pinrun checks each one's type).
 *   d DIR REL   the directory opened, getdents64(2) to the end, closed.
 *   s DIR REL   statx(2) of a path (fstatat for a file's existence).
 *   p DIR REL   an O_PATH open kept as the base of later lines.
 *   c CPU       the CPU to move to before the exec (-c overrides it).
 *   rt          the live real-time-competitor scan: /proc listed; per
 *               process one fstatat(2) of /proc/PID/task (its link count
 *               is its thread count + 2) and one sched_getscheduler(2);
 *               a process with more than one thread has its task
 *               directory listed and sched_getscheduler(2) per thread.
 * With -t N, the f/F lines are made by N threads taking blocks of 32
 * lines from a shared counter (pinrun's parallel map), the other lines by
 * the main thread before them; the threads are joined before exec.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct line {
  char kind;
  int dirfd;
  char *rel;
};

static struct line *lines;
static size_t nlines;
static _Atomic size_t next_block;
enum { BLOCK = 32 };

static int base_of(const char *dir) {
  static char *names[256];
  static int fds[256];
  static int n;
  if (strcmp(dir, ".") == 0) return AT_FDCWD;
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], dir) == 0) return fds[i];
  int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (n < 256) {
    names[n] = strdup(dir);
    fds[n++] = fd;
  }
  return fd;
}

static void read_file(const struct line *l) {
  static __thread char buf[65536];
  int fd = openat(l->dirfd, l->rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  if (l->kind == 'F') {
    struct stat st;
    fstat(fd, &st);
  }
  while (read(fd, buf, sizeof buf) == (ssize_t)sizeof buf) {
  }
  close(fd);
}

static void list_dir(int dirfd, const char *rel) {
  static char buf[32768];
  int fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  while (syscall(SYS_getdents64, fd, buf, sizeof buf) > 0) {
  }
  close(fd);
}

static void rt_scan(void) {
  static char buf[32768];
  int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long n;
  while ((n = syscall(SYS_getdents64, proc, buf, sizeof buf)) > 0) {
    for (long off = 0; off < n;) {
      struct dirent64 *d = (struct dirent64 *)(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
      int pid = atoi(d->d_name);
      char path[300];
      snprintf(path, sizeof path, "%s/task", d->d_name);
      struct stat st;
      if (fstatat(proc, path, &st, 0) != 0) continue;
      sched_getscheduler(pid);
      if (st.st_nlink <= 3) continue;
      char tbuf[8192];
      int t = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      long m;
      while (t >= 0 && (m = syscall(SYS_getdents64, t, tbuf, sizeof tbuf)) > 0)
        for (long o = 0; o < m;) {
          struct dirent64 *e = (struct dirent64 *)(tbuf + o);
          o += e->d_reclen;
          if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
            sched_getscheduler(atoi(e->d_name));
        }
      if (t >= 0) close(t);
    }
  }
  close(proc);
}

static void *reader(void *arg) {
  (void)arg;
  for (;;) {
    size_t b = atomic_fetch_add(&next_block, BLOCK);
    if (b >= nlines) return NULL;
    for (size_t i = b; i < b + BLOCK && i < nlines; i++)
      if (lines[i].kind == 'f' || lines[i].kind == 'F') read_file(&lines[i]);
  }
}

int main(int argc, char **argv) {
  int threads = 1, cpu = 0, cpu_given = 0, a = 1;
  while (a + 1 < argc && argv[a][0] == '-') {
    if (strcmp(argv[a], "-t") == 0)
      threads = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "-c") == 0)
      cpu = atoi(argv[a + 1]), cpu_given = 1;
    else
      break;
    a += 2;
  }
  if (a >= argc) {
    fprintf(stderr, "usage: replay [-t THREADS] [-c CPU] LIST [COMMAND [ARG]...]\n");
    return 125;
  }
  FILE *f = fopen(argv[a], "re");
  if (!f) return 125;
  size_t cap = 0;
  char *l = NULL;
  size_t len = 0;
  while (getline(&l, &len, f) > 0) {
    l[strcspn(l, "\n")] = 0;
    if (nlines == cap) lines = realloc(lines, (cap = cap * 2 + 64) * sizeof *lines);
    struct line *x = &lines[nlines++];
    x->kind = l[0];
    x->dirfd = AT_FDCWD;
    x->rel = NULL;
    if (x->kind == 'c' && !cpu_given) cpu = atoi(l + 2);
    char *t1 = strchr(l, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (t2) {
      *t2 = 0;
      x->dirfd = base_of(t1 + 1);
      x->rel = strdup(t2 + 1);
    }
  }
  fclose(f);
  for (size_t i = 0; i < nlines; i++) {
    struct line *x = &lines[i];
    struct stat st;
    switch (x->kind) {
    case 'd': list_dir(x->dirfd, x->rel); break;
    case 's': fstatat(x->dirfd, x->rel, &st, 0); break;
    case 'p': close(openat(x->dirfd, x->rel, O_PATH | O_CLOEXEC)); break;
    case 'r': rt_scan(); break;
    }
  }
  pthread_t tid[64];
  if (threads > 64) threads = 64;
  for (int i = 1; i < threads; i++) pthread_create(&tid[i], NULL, reader, NULL);
  reader(NULL);
  for (int i = 1; i < threads; i++) pthread_join(tid[i], NULL);
  if (a + 1 >= argc) return 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) return 125;
  execvp(argv[a + 1], &argv[a + 1]);
  return 127;
}
