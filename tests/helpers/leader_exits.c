/* Test helper for issue 35 class 2 (tests/it/claims.rs): a process whose
 * main thread exits while another runs. A thread named "worker" is
 * started, then main() calls pthread_exit(3): the main thread ends and
 * stays in /proc as a zombie leader (state Z, delay_group_leader() in
 * kernel/exit.c) while "worker" waits for its stdin to close, then exits
 * the process with status 0. Build: gcc -O2 -pthread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *worker(void *arg) {
    char buf[64];
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    while (read(0, buf, sizeof buf) > 0) {
    }
    exit(0);
    return NULL;
}

int main(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    pthread_exit(NULL);
}
