/* Test helper for --steer-irqs with irqbalance (issue 21): a client of
 * irqbalance's control socket written after its own, irqbalance-ui's
 * get_data() (ui/irqbalance-ui.c): connect to SOCKET, send COMMAND in one
 * sendmsg() with SCM_CREDENTIALS, print the reply until irqbalance closes
 * the connection. "irqbalance_query SOCKET setup" prints e.g.
 * "SLEEP 10 BANNED 0000f0f0". Independent of pinrun's own client.
 * Build: gcc -O2. Exit 1 on any failure. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: irqbalance_query SOCKET COMMAND\n");
        return 1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", argv[1]);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        perror("connect");
        return 1;
    }
    struct ucred cred = {.pid = getpid(), .uid = geteuid(), .gid = getegid()};
    char ctl[CMSG_SPACE(sizeof cred)];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = argv[2], .iov_len = strlen(argv[2])};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                         .msg_controllen = sizeof ctl};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof cred);
    memcpy(CMSG_DATA(c), &cred, sizeof cred);
    if (sendmsg(fd, &msg, 0) < 0) {
        perror("sendmsg");
        return 1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, stdout);
    putchar('\n');
    return n < 0;
}
