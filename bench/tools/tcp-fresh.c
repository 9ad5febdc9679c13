/*
 * tcp-fresh: DNS over TCP with a fresh connection for every query.
 *
 * dnsperf keeps its TCP connections open; this tool measures the other extreme, the
 * rate of connect + one query + answer + close. It keeps CONCURRENCY connections in
 * flight (non-blocking sockets, epoll); each connection sends one query in TCP framing
 * (RFC 7766 §8), reads the answer, and is closed with an RST (SO_LINGER 0) so that the
 * client does not run out of ports in TIME_WAIT. Bounded by time, count and a per
 * connection timeout.
 *
 * usage: tcp-fresh -p PORT -f QUERIES.bin [-s ADDR] [-c CONCURRENCY] [-l SECONDS]
 *                  [-n MAX_QUERIES] [-t TIMEOUT_MS]
 * QUERIES.bin holds queries in TCP framing (2-byte length, then the message).
 * Prints one line: completed=N failed=N seconds=S qps=Q
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MAX_CONNS = 1024, ANSWER_MAX = 65535 + 2 };
enum state { IDLE, CONNECTING, READING };

struct query { const uint8_t *wire; size_t len; }; /* framed: 2-byte length included */

struct conn {
    int fd;
    enum state state;
    double started;
    size_t query, got;
    uint8_t answer[ANSWER_MAX];
};

static struct query *queries;
static size_t query_count, next_query;
static struct conn conns[MAX_CONNS];
static struct sockaddr_in server;
static int epfd;
static unsigned long completed, failed;
static double timeout_s = 2.0;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void load_queries(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    static uint8_t *data;
    size_t cap = 1 << 20, len = 0, n;
    data = malloc(cap);
    while (data && (n = fread(data + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) data = realloc(data, cap *= 2);
    }
    fclose(f);
    if (!data) { fprintf(stderr, "out of memory\n"); exit(2); }
    queries = calloc(len / 14 + 1, sizeof *queries);
    for (size_t off = 0; queries && off + 2 <= len;) {
        size_t msg = (size_t)data[off] << 8 | data[off + 1];
        if (msg < 12 || off + 2 + msg > len) break;
        queries[query_count++] = (struct query){data + off, msg + 2};
        off += 2 + msg;
    }
    if (query_count == 0) { fprintf(stderr, "%s: no queries\n", path); exit(2); }
}

static void finish(struct conn *c, int ok) {
    struct linger lg = {1, 0}; /* RST on close: no TIME_WAIT on our side */
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(c->fd);
    c->state = IDLE;
    if (ok) completed++; else failed++;
}

static void open_conn(struct conn *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    c->query = next_query++ % query_count;
    c->got = 0;
    c->started = now();
    c->state = CONNECTING;
    if (c->fd < 0) { failed++; c->state = IDLE; return; }
    if (connect(c->fd, (struct sockaddr *)&server, sizeof server) != 0 && errno != EINPROGRESS) {
        finish(c, 0);
        return;
    }
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Connected: send the whole query (a few dozen bytes fit any fresh socket buffer). */
static void on_writable(struct conn *c) {
    int err = 0;
    socklen_t len = sizeof err;
    const struct query *q = &queries[c->query];
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0 || write(c->fd, q->wire, q->len) != (ssize_t)q->len) {
        finish(c, 0);
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->state = READING;
}

/* Reads until the framed answer is complete; checks ID and QR. */
static void on_readable(struct conn *c) {
    ssize_t n = read(c->fd, c->answer + c->got, sizeof c->answer - c->got);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        finish(c, 0);
        return;
    }
    c->got += (size_t)n;
    if (c->got < 2) return;
    size_t need = 2 + ((size_t)c->answer[0] << 8 | c->answer[1]);
    if (c->got < need) return;
    const uint8_t *q = queries[c->query].wire;
    int ok = need >= 14 && c->answer[2] == q[2] && c->answer[3] == q[3] && (c->answer[4] & 0x80);
    finish(c, ok);
}

static void usage(void) {
    fprintf(stderr, "usage: tcp-fresh -p PORT -f QUERIES.bin [-s ADDR] [-c CONCURRENCY] "
                    "[-l SECONDS] [-n MAX_QUERIES] [-t TIMEOUT_MS]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *addr = "127.0.0.1", *file = NULL;
    int port = 0, concurrency = 8, opt;
    double seconds = 10;
    unsigned long max_queries = 0;
    while ((opt = getopt(argc, argv, "s:p:f:c:l:n:t:")) != -1) {
        switch (opt) {
        case 's': addr = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 'f': file = optarg; break;
        case 'c': concurrency = atoi(optarg); break;
        case 'l': seconds = atof(optarg); break;
        case 'n': max_queries = strtoul(optarg, NULL, 10); break;
        case 't': timeout_s = atof(optarg) / 1000; break;
        default: usage();
        }
    }
    if (!file || port <= 0 || concurrency < 1 || concurrency > MAX_CONNS || seconds <= 0) usage();
    server = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    if (inet_pton(AF_INET, addr, &server.sin_addr) != 1) usage();
    load_queries(file);
    epfd = epoll_create1(0);
    double start = now(), end = start + seconds;
    struct epoll_event events[64];
    for (;;) {
        double t = now();
        int more = t < end && (max_queries == 0 || completed + failed < max_queries);
        for (int i = 0; i < concurrency; i++) {
            if (conns[i].state == IDLE && more) open_conn(&conns[i]);
            else if (conns[i].state != IDLE && t - conns[i].started > timeout_s) finish(&conns[i], 0);
        }
        if (!more) break;
        int n = epoll_wait(epfd, events, 64, 10);
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (c->state == CONNECTING) on_writable(c);
            else if (c->state == READING) on_readable(c);
        }
    }
    double elapsed = now() - start;
    for (int i = 0; i < concurrency; i++)
        if (conns[i].state != IDLE) close(conns[i].fd); /* in flight at the end: not counted */
    printf("completed=%lu failed=%lu seconds=%.3f qps=%.1f\n", completed, failed, elapsed,
           (double)completed / elapsed);
    return 0;
}
