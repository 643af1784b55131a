/* Test helper for what an exec'd command inherits (tests/live.rs
 * exec_inherits_what_taskset_passes_on): two modes.
 *
 *   inherited as CLOSE IGNORE BLOCK -- PROGRAM ARGS...
 *     sets up a caller's state, then execvp(3)s PROGRAM: closes the
 *     standard descriptors whose digits are in CLOSE ("012", "-": none),
 *     sets SIG_IGN on the signal numbers of IGNORE ("13,2,1", "-") and
 *     blocks those of BLOCK in the signal mask.
 *   inherited probe FILE
 *     writes to FILE, before opening anything else, what its descriptors
 *     0-2 name ("fd 0: /dev/null", "fd 1: closed", pipes and sockets
 *     without their inode numbers) and its SigPnd, SigBlk, SigIgn and
 *     SigCgt lines of /proc/self/status.
 *
 * Build: gcc -O2. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void numbers(const char *list, void (*each)(int)) {
    if (strcmp(list, "-") == 0)
        return;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        each(atoi(t));
    free(copy);
}

static sigset_t blocked;
static void ignore(int sig) { signal(sig, SIG_IGN); }
static void block(int sig) { sigaddset(&blocked, sig); }

static int as(int argc, char **argv) {
    if (argc < 7 || strcmp(argv[5], "--") != 0) {
        fprintf(stderr, "usage: inherited as CLOSE IGNORE BLOCK -- PROGRAM ARGS...\n");
        return 2;
    }
    sigemptyset(&blocked);
    numbers(argv[3], ignore);
    numbers(argv[4], block);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    for (const char *c = argv[2]; *c; c++)
        if (*c >= '0' && *c <= '2')
            close(*c - '0');
    execvp(argv[6], argv + 6);
    return 127;
}

static int probe(const char *file) {
    char text[8192];
    size_t n = 0;
    for (int fd = 0; fd < 3; fd++) {
        char path[32], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len < 0) {
            strcpy(target, "closed");
        } else {
            target[len] = 0;
            char *bracket = strchr(target, '[');
            if (bracket && (strncmp(target, "pipe:", 5) == 0 || strncmp(target, "socket:", 7) == 0))
                *bracket = 0;
        }
        n += snprintf(text + n, sizeof text - n, "fd %d: %s\n", fd, target);
    }
    FILE *status = fopen("/proc/self/status", "r");
    if (!status)
        return 1;
    char line[512];
    while (fgets(line, sizeof line, status))
        if (strncmp(line, "Sig", 3) == 0 && strncmp(line, "SigQ", 4) != 0)
            n += snprintf(text + n, sizeof text - n, "%s", line);
    fclose(status);
    int out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0 || write(out, text, n) != (ssize_t)n)
        return 1;
    close(out);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "probe") == 0)
        return probe(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "as") == 0)
        return as(argc, argv);
    fprintf(stderr, "usage: inherited as ... | inherited probe FILE\n");
    return 2;
}
