/* Test helper for --thread-map (issue 22): starts 3 threads, which name
 * themselves w1, w2, w3 (pthread_setname_np) after a delay, waits until
 * each has been pinned or a deadline, then prints one line per thread of
 * /proc/self/task: "NAME Cpus_allowed_list". Build: gcc -O2 -pthread. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t done;

static void *worker(void *arg) {
    char name[16];
    usleep(50 * 1000); /* created as "named_threads", renamed later */
    snprintf(name, sizeof name, "w%ld", (long)arg);
    pthread_setname_np(pthread_self(), name);
    pthread_barrier_wait(&done); /* main prints while we live */
    pthread_barrier_wait(&done);
    return NULL;
}

/* Calls fn(name, Cpus_allowed_list) for each thread of /proc/self/task
 * (its status file); "?" for a field it lacks. */
static void each_task(void (*fn)(const char *, const char *, void *), void *arg) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[256], line[512], name[64] = "?", cpus[256] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "Name:\t", 6))
                sscanf(line + 6, "%63s", name);
            if (!strncmp(line, "Cpus_allowed_list:\t", 19))
                sscanf(line + 19, "%255s", cpus);
        }
        fclose(f);
        fn(name, cpus, arg);
    }
    if (d)
        closedir(d);
}

static void count_pinned(const char *name, const char *cpus, void *arg) {
    if ((!strcmp(name, "w1") || !strcmp(name, "w2")) && !strpbrk(cpus, ",-"))
        ++*(int *)arg;
}

/* Whether threads w1 and w2 each have one CPU in Cpus_allowed_list (the
 * watcher pinned them as the test's rules say). */
static int w1_w2_pinned(void) {
    int pinned = 0;
    each_task(count_pinned, &pinned);
    return pinned == 2;
}

static void print_task(const char *name, const char *cpus, void *arg) {
    (void)arg;
    printf("%s %s\n", name, cpus);
}

int main(int argc, char **argv) {
    /* argv[1]: how long to leave the watcher after the renames at most,
     * ms: the program prints as soon as w1 and w2 are pinned (a loaded
     * machine may take longer than an idle one), then 50 ms more for the
     * rest. */
    int settle_ms = argc > 1 ? atoi(argv[1]) : 200;
    pthread_t t[3];
    pthread_barrier_init(&done, NULL, 4);
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    pthread_barrier_wait(&done);
    for (int waited = 0; waited < settle_ms && !w1_w2_pinned(); waited += 10)
        usleep(10 * 1000);
    usleep(50 * 1000);
    each_task(print_task, NULL);
    fflush(stdout);
    pthread_barrier_wait(&done);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return 0;
}
