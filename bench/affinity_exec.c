/* bench/affinity_exec: the floor of `pinrun --cpus N --quiet -- CMD`
 * (issue 17): sets this process's CPU affinity to one CPU and execs CMD,
 * nothing else. Built static (no dynamic loader):
 *
 *   cc -O2 -static -o bench/out/affinity_exec bench/affinity_exec.c
 *   bench/out/affinity_exec 1 /bin/true
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 125;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(atoi(argv[1]), &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) return 125;
  execvp(argv[2], &argv[2]);
  return 127;
}
