/* Test helper for a kernel that refuses openat2(2) (tests/it/escaping_links.rs
 * kernel_without_openat2_...): runs a program with a seccomp filter that
 * fails every openat2(2) with ERRNO (ENOSYS, as before Linux 5.6, or EPERM,
 * as some container runtimes' filters do).
 *
 *   no_openat2 ERRNO -- PROGRAM ARGS...
 *
 * ERRNO is a number. x86_64 and aarch64 only (the filter checks the
 * architecture and lets every other call through). Build: gcc -O2. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "x86_64 or aarch64"
#endif

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int main(int argc, char **argv) {
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: no_openat2 ERRNO -- PROGRAM ARGS...\n");
        return 2;
    }
    unsigned err = (unsigned)atoi(argv[1]);
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("no_openat2: seccomp");
        return 2;
    }
    execvp(argv[3], argv + 3);
    perror("no_openat2: exec");
    return 127;
}
