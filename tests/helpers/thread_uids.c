/* Test helper for issue 35 class 2 (tests/live.rs): a process whose
 * threads run as different users. Started as root with two uids A B:
 * thread "other" calls setresuid(B, B, B) and the main thread
 * setresuid(A, A, A), each by raw system call, which changes the calling
 * thread's credentials only (glibc's setresuid(3) would broadcast the
 * change to every thread, nptl's setxid). Prints "ready" once both run
 * as their user, then waits for its stdin to close. Build: gcc -O2
 * -pthread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long b;
static pthread_barrier_t set;

static void *other(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "other");
    if (syscall(SYS_setresuid, b, b, b) != 0) {
        perror("setresuid");
        exit(1);
    }
    pthread_barrier_wait(&set);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t t;
    char buf[64];
    if (argc != 3)
        return 2;
    long a = atol(argv[1]);
    b = atol(argv[2]);
    pthread_barrier_init(&set, NULL, 2);
    if (pthread_create(&t, NULL, other, NULL) != 0)
        return 1;
    if (syscall(SYS_setresuid, a, a, a) != 0) {
        perror("setresuid");
        return 1;
    }
    pthread_barrier_wait(&set);
    printf("ready\n");
    fflush(stdout);
    while (read(0, buf, sizeof buf) > 0) {
    }
    return 0;
}
