/* Test helper for --omp (issue 22): prints the OpenMP variables it got,
 * then, per OpenMP thread, "thread I place P cpu C allowed LIST" with
 * sched_getcpu(3) and the thread's own Cpus_allowed_list. Build: gcc -O2
 * -fopenmp -static. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *env(const char *k) {
    const char *v = getenv(k);
    return v ? v : "(unset)";
}

int main(void) {
    printf("GOMP_CPU_AFFINITY=%s OMP_PLACES=%s OMP_PROC_BIND=%s\n", env("GOMP_CPU_AFFINITY"),
           env("OMP_PLACES"), env("OMP_PROC_BIND"));
#pragma omp parallel
    {
        char path[64], line[256], cpus[128] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%ld/status", (long)syscall(SYS_gettid));
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "Cpus_allowed_list:\t", 19))
                sscanf(line + 19, "%127s", cpus);
        if (f)
            fclose(f);
#pragma omp critical
        printf("thread %d place %d cpu %d allowed %s\n", omp_get_thread_num(), omp_get_place_num(),
               sched_getcpu(), cpus);
    }
    return 0;
}
