/* Test helper for the real-time scan (tests/rt_scan.rs): the usual layout
 * of a real-time application. The main thread stays SCHED_OTHER; thread
 * "spin" confines itself to CPU argv[1], takes SCHED_FIFO argv[2] and
 * busy-loops (runnable); thread "nap" takes SCHED_FIFO argv[3] and
 * sleeps. Prints "ready" once both are set (exit 1 when a call fails),
 * then waits to be killed. Build: gcc -O2 -pthread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int cpu, spin_prio, nap_prio;
static pthread_barrier_t ready;

static void set_fifo(int prio) {
    struct sched_param p = {.sched_priority = prio};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0) {
        perror("pthread_setschedparam");
        exit(1);
    }
}

static void *spin(void *arg) {
    cpu_set_t set;
    (void)arg;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setname_np(pthread_self(), "spin");
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        perror("pthread_setaffinity_np");
        exit(1);
    }
    set_fifo(spin_prio);
    pthread_barrier_wait(&ready);
    for (;;) {
    }
    return NULL;
}

static void *nap(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "nap");
    set_fifo(nap_prio);
    pthread_barrier_wait(&ready);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t a, b;
    if (argc != 4)
        return 2;
    cpu = atoi(argv[1]);
    spin_prio = atoi(argv[2]);
    nap_prio = atoi(argv[3]);
    pthread_barrier_init(&ready, NULL, 3);
    pthread_create(&a, NULL, spin, NULL);
    pthread_create(&b, NULL, nap, NULL);
    pthread_barrier_wait(&ready);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
