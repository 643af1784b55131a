/* --thread-map latency (issue 22): creates N threads one after another
 * (a random 0-4 ms apart, so creations do not lock to the watcher's scan
 * period); each names itself "bK" at once and polls its own affinity
 * every 20 us until it has one CPU (the rule 'b*=@0'), then records the
 * time from its start to that moment. Prints p50, p90, p99 and max in us,
 * and how many threads were never pinned within 1 s.
 * Build: gcc -O2 -pthread bench/thread_pin_latency.c -o thread_pin_latency */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *worker(void *arg) {
    double t0 = now_us();
    double *out = arg;
    char name[16];
    snprintf(name, sizeof name, "b%d", (int)(now_us()) % 1000);
    pthread_setname_np(pthread_self(), name);
    cpu_set_t s;
    for (;;) {
        sched_getaffinity(0, sizeof s, &s);
        if (CPU_COUNT(&s) == 1) {
            *out = now_us() - t0;
            return NULL;
        }
        if (now_us() - t0 > 1e6) {
            *out = -1;
            return NULL;
        }
        usleep(20);
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    double *lat = calloc(n, sizeof *lat);
    pthread_t *t = calloc(n, sizeof *t);
    srand(42);
    for (int i = 0; i < n; i++) {
        pthread_create(&t[i], NULL, worker, &lat[i]);
        usleep(rand() % 4000);
    }
    int missed = 0, k = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        if (lat[i] < 0)
            missed++;
        else
            lat[k++] = lat[i];
    }
    qsort(lat, k, sizeof *lat, cmp);
    if (k == 0) {
        printf("threads %d pinned 0\n", n);
        return 1;
    }
    printf("threads %d pinned %d p50 %.0f us p90 %.0f us p99 %.0f us max %.0f us missed %d\n", n, k,
           lat[k / 2], lat[k * 9 / 10], lat[k * 99 / 100], lat[k - 1], missed);
    return 0;
}
