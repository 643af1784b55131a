/* Host side of a scenario's "#@ serial-feed BYTES QUIET_MS" (vm/run.sh):
 * the rate-limited input of the guest's ttyS1 (vm/boot.sh: a QEMU pipe
 * chardev whose PATH.in is the FIFO given here).
 *
 *   serial-feed FIFO BYTES QUIET_MS
 *     opens FIFO read-write (no wait for QEMU, no EOF or SIGPIPE when QEMU
 *     exits between vm/run.sh's tries), then forever: writes BYTES zero
 *     bytes, waits until QEMU has read all of them (FIONREAD 0, looked at
 *     every ms: QEMU reads only what ttyS1's receive FIFO has room for, so
 *     the guest has taken all but at most 16), then sleeps QUIET_MS.
 *     A burst is never written beside an unread one: however slowly the
 *     guest takes the bytes (a loaded host), the guest gets QUIET_MS with
 *     no input after each burst, so its IRQ thread cannot hold a CPU for
 *     longer than one burst takes (with /dev/zero as the input, it ran for
 *     hundreds of ms at a time at host load 13-21 and a probe on that CPU
 *     overran its watchdog: BENCHMARKS.md "In the VM guest").
 *     On SIGTERM (vm/run.sh's exit; also the death of its parent), prints
 *     to stderr how many bursts the guest took and how long the host
 *     waited for each (the first left out: it waits from boot until the
 *     guest opens ttyS1), then exits 0.
 *
 * Build: gcc -O2. Exit 1 on bad arguments or when FIFO cannot be opened. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_KEPT 100000

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static void sleep_us(long long us) {
    struct timespec t = {.tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000};
    nanosleep(&t, NULL);
}

static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4 || atoi(argv[2]) <= 0 || atoi(argv[3]) < 0) {
        fprintf(stderr, "usage: serial-feed FIFO BYTES QUIET_MS\n");
        return 1;
    }
    int bytes = atoi(argv[2]);
    long long quiet = atoll(argv[3]) * 1000;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) {
        perror("serial-feed: open");
        return 1;
    }
    char *zeros = calloc(bytes, 1);
    static long long taken[MAX_KEPT];
    long n = 0;
    while (!stop) {
        long long t0 = now_us();
        for (int off = 0; off < bytes && !stop;) {
            ssize_t w = write(fd, zeros + off, bytes - off);
            if (w > 0)
                off += w;
        }
        int left = 1;
        while (!stop && ioctl(fd, FIONREAD, &left) == 0 && left > 0)
            sleep_us(1000);
        if (stop)
            break;
        if (n < MAX_KEPT)
            taken[n] = now_us() - t0;
        n++;
        sleep_us(quiet);
    }
    long k = n < MAX_KEPT ? n : MAX_KEPT;
    if (k > 1) {
        qsort(taken + 1, k - 1, sizeof taken[0], cmp);
        fprintf(stderr,
                "serial-feed: %ld bursts of %d bytes taken, %lld ms of quiet after each; host ms to take one: median %.1f, max %.1f (the first, from boot: %.1f s)\n",
                n, bytes, quiet / 1000, taken[1 + (k - 1) / 2] / 1e3, taken[k - 1] / 1e3, taken[0] / 1e6);
    } else {
        fprintf(stderr, "serial-feed: %ld bursts of %d bytes taken\n", n, bytes);
    }
    return 0;
}
