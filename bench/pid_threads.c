/* bench/pid.sh's target: a process of N threads that sleep (pthread
 * stacks of 64 KiB), printing "ready" once all run. Build: gcc -O2 -pthread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *sleeper(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 << 10);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, &a, sleeper, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
}
