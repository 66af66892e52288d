/*
 * nvdisasm as a fork server: preloaded (LD_PRELOAD) into an nvdisasm started on a
 * sentinel input, it stops nvdisasm where its start-up is done and forks one child per
 * request from there. See harness/src/oracle/server.rs for why and how it is used.
 *
 * In raw mode (`nvdisasm -b SM90 … FILE`), nvdisasm 13.5 opens its input twice with
 * fopen: once to read its first 64 bytes (an ELF header?), then, after some 0.25-0.5 s
 * of CPU spent building its tables for the architecture, to read the words. This library
 * replaces fopen: at the second fopen of the sentinel (the path in
 * SASS_HARNESS_SERVER_SENTINEL) it writes "ready" on stdout and reads requests from
 * stdin, three lines each: the input's path, then the files that take the child's stdout
 * and stderr. For each it forks; the child opens the request's input in place of the
 * sentinel and goes on as nvdisasm would have; the server waits for it and answers
 * "exit N" or "signal N". It ends when stdin closes. Nothing else of nvdisasm changes.
 *
 * The child's output files are capped at SASS_HARNESS_SERVER_FSIZE bytes (RLIMIT_FSIZE:
 * past it the child dies of SIGXFSZ), as the harness caps a plain run's pipes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PATH_CAP 4096

typedef FILE *(*fopen_fn)(const char *, const char *);

static char request_input[PATH_CAP];

/* One '\n'-terminated line of fd into buf (without the '\n'); -1 at EOF, on an error or
 * when the line does not fit. */
static int read_line(int fd, char *buf, size_t cap) {
    size_t n = 0;
    while (n + 1 < cap) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        if (c == '\n') {
            buf[n] = 0;
            return 0;
        }
        buf[n++] = c;
    }
    return -1;
}

static void write_all(int fd, const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(0); /* the harness is gone */
        s += w;
        n -= (size_t)w;
    }
}

static void answer(int fd, const char *what, int n) {
    char line[64];
    int len = snprintf(line, sizeof line, "%s %d\n", what, n);
    write_all(fd, line, (size_t)len);
}

/* fd `target` now reads or writes `path`; -1 on failure. */
static int redirect(int target, const char *path, int flags) {
    int fd = open(path, flags | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    if (dup2(fd, target) < 0) return -1; /* dup2 clears O_CLOEXEC on target */
    close(fd);
    return 0;
}

/* The child's side of a request: its streams, its output cap. */
static void become_child(const char *out, const char *err) {
    const int w = O_WRONLY | O_CREAT | O_TRUNC;
    if (redirect(0, "/dev/null", O_RDONLY) || redirect(1, out, w) || redirect(2, err, w)) _exit(125);
    const char *cap = getenv("SASS_HARNESS_SERVER_FSIZE");
    if (cap) {
        struct rlimit r;
        r.rlim_cur = r.rlim_max = (rlim_t)strtoull(cap, NULL, 10);
        setrlimit(RLIMIT_FSIZE, &r);
    }
}

/* Serves requests until stdin closes; returns only in a child, with its input's path. */
static const char *serve(void) {
    int replies = fcntl(1, F_DUPFD_CLOEXEC, 10);
    if (replies < 0) _exit(124);
    write_all(replies, "ready\n", 6);
    for (;;) {
        char out[PATH_CAP], err[PATH_CAP];
        if (read_line(0, request_input, PATH_CAP) || read_line(0, out, PATH_CAP) || read_line(0, err, PATH_CAP)) _exit(0);
        pid_t pid = fork();
        if (pid < 0) {
            answer(replies, "fork-failed", errno);
            continue;
        }
        if (pid == 0) {
            close(replies);
            become_child(out, err);
            return request_input;
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0) {
            if (errno != EINTR) {
                answer(replies, "wait-failed", errno);
                _exit(0);
            }
        }
        if (WIFEXITED(st)) answer(replies, "exit", WEXITSTATUS(st));
        else answer(replies, "signal", WTERMSIG(st));
    }
}

FILE *fopen(const char *path, const char *mode) {
    static fopen_fn real;
    static int sentinel_opens;
    if (!real) real = (fopen_fn)dlsym(RTLD_NEXT, "fopen");
    const char *sentinel = getenv("SASS_HARNESS_SERVER_SENTINEL");
    if (sentinel && path && strcmp(path, sentinel) == 0 && ++sentinel_opens == 2) path = serve();
    return real(path, mode);
}
