/* Test helper for --probe-tracer (issue 36, vm/scenarios/probe-osnoise.sh):
 * a pinned, periodic source of noise that the osnoise tracer names by its
 * comm and pid.
 *
 *   noise_hog CPU RUN_US PERIOD_US
 *     pins itself to CPU (sched_setaffinity(2)), takes SCHED_FIFO priority
 *     1 (sched_setscheduler(2): it preempts a SCHED_OTHER probe at once),
 *     then forever: spins RUN_US of CLOCK_MONOTONIC, sleeps to the next
 *     period boundary still ahead (clock_nanosleep(2), TIMER_ABSTIME).
 *     Boundaries already passed are skipped, not caught up: in a VM whose
 *     vCPU stopped for longer than PERIOD_US - RUN_US, catching up spun on
 *     and merged runs into one gap of up to 860 ms (7 gaps in 3 s instead
 *     of 75, vm/scenarios/probe-osnoise.sh, BENCHMARKS.md "In the VM guest").
 *
 * Build: gcc -O2. Exit 1 when it cannot pin itself or take the policy. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: noise_hog CPU RUN_US PERIOD_US\n");
        return 1;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[1]), &set);
    struct sched_param p = {.sched_priority = 1};
    if (sched_setaffinity(0, sizeof set, &set) != 0 || sched_setscheduler(0, SCHED_FIFO, &p) != 0) {
        perror("noise_hog");
        return 1;
    }
    long long run = atoll(argv[2]) * 1000, period = atoll(argv[3]) * 1000;
    long long next = now_ns();
    for (;;) {
        long long end = now_ns() + run;
        while (now_ns() < end)
            ;
        long long now = now_ns();
        do
            next += period;
        while (next <= now);
        struct timespec t = {.tv_sec = next / 1000000000LL, .tv_nsec = next % 1000000000LL};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    }
}
