/*
 * udp-flood: a reflection flood as a rate-limited server sees it — one source sending
 * the same question at a fixed rate, never waiting for answers.
 *
 * It sends RATE queries a second for SECONDS (batches of up to 64 with sendmmsg, paced
 * every millisecond; the message ID counts up), reads whatever comes back without
 * blocking, and prints what it sent and what came back: whole answers, truncated ones
 * (TC=1: the server's "slip") and others (BADCOOKIE and the like).
 *
 * usage: udp-flood PORT RATE SECONDS QNAME QTYPE
 *        (QTYPE a number; a query with EDNS, 1232-byte buffer, to 127.0.0.1:PORT)
 * prints: sent=N answered=N truncated=N other=N
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { BATCH = 64, SLOT = 2048 };

static unsigned char query[512];
static size_t query_len;
static unsigned char out[BATCH][512];
static unsigned char in[BATCH][SLOT];
static struct iovec out_iov[BATCH], in_iov[BATCH];
static struct mmsghdr out_msgs[BATCH], in_msgs[BATCH];
static unsigned long answered, truncated, other;

/* Header (RD off), the question, and an OPT record with a 1232-byte buffer. */
static void build_query(const char *qname, int qtype) {
    unsigned char *p = query + 12;
    memset(query, 0, 12);
    query[5] = 1;  /* QDCOUNT */
    query[11] = 1; /* ARCOUNT */
    const char *label = qname;
    while (*label) {
        const char *dot = strchr(label, '.');
        size_t len = dot ? (size_t)(dot - label) : strlen(label);
        if (len == 0 || len > 63 || p + len + 1 > query + 400) {
            fprintf(stderr, "udp-flood: bad name %s\n", qname);
            exit(2);
        }
        *p++ = (unsigned char)len;
        memcpy(p, label, len);
        p += len;
        label += len + (dot ? 1 : 0);
    }
    *p++ = 0;
    *p++ = (unsigned char)(qtype >> 8);
    *p++ = (unsigned char)qtype;
    *p++ = 0;
    *p++ = 1; /* IN */
    static const unsigned char opt[] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0};
    memcpy(p, opt, sizeof opt);
    p += sizeof opt;
    query_len = (size_t)(p - query);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads every answer waiting, counting whole ones, truncated ones and the rest. */
static void drain(int fd) {
    for (;;) {
        for (int i = 0; i < BATCH; i++) {
            in_iov[i].iov_base = in[i];
            in_iov[i].iov_len = SLOT;
            memset(&in_msgs[i].msg_hdr, 0, sizeof in_msgs[i].msg_hdr);
            in_msgs[i].msg_hdr.msg_iov = &in_iov[i];
            in_msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int got = recvmmsg(fd, in_msgs, BATCH, MSG_DONTWAIT, NULL);
        if (got <= 0)
            return;
        for (int i = 0; i < got; i++) {
            const unsigned char *m = in[i];
            if (in_msgs[i].msg_len < 12)
                other++;
            else if (m[2] & 0x02)
                truncated++;
            else if ((m[3] & 0x0f) == 0 && (m[6] | m[7] | m[8] | m[9]))
                answered++;
            else
                other++;
        }
    }
}

/* A UDP socket connected to 127.0.0.1:PORT with a large receive buffer; -1 on error. */
static int open_socket(int port) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("udp-flood: socket");
        return -1;
    }
    int size = 1 << 24;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
        perror("udp-flood: connect");
        close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: udp-flood PORT RATE SECONDS QNAME QTYPE\n");
        return 2;
    }
    int port = atoi(argv[1]);
    double rate = atof(argv[2]), seconds = atof(argv[3]);
    build_query(argv[4], atoi(argv[5]));
    if (port <= 0 || port > 65535 || rate <= 0 || seconds <= 0 || seconds > 600) {
        fprintf(stderr, "udp-flood: bad port, rate or seconds (at most 600)\n");
        return 2;
    }
    int fd = open_socket(port);
    if (fd < 0)
        return 1;
    for (int i = 0; i < BATCH; i++) {
        memcpy(out[i], query, query_len);
        out_iov[i].iov_base = out[i];
        out_iov[i].iov_len = query_len;
        out_msgs[i].msg_hdr.msg_iov = &out_iov[i];
        out_msgs[i].msg_hdr.msg_iovlen = 1;
    }
    unsigned long sent = 0, id = 0;
    double start = now(), end = start + seconds;
    for (double t = now(); t < end; t = now()) {
        unsigned long due = (unsigned long)((t - start) * rate);
        while (sent < due) {
            int n = (int)(due - sent < BATCH ? due - sent : BATCH);
            for (int i = 0; i < n; i++, id++) {
                out[i][0] = (unsigned char)(id >> 8);
                out[i][1] = (unsigned char)id;
            }
            int done = sendmmsg(fd, out_msgs, (unsigned)n, 0);
            if (done <= 0) {
                if (errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED) {
                    perror("udp-flood: sendmmsg");
                    return 1;
                }
                break;
            }
            sent += (unsigned long)done;
        }
        drain(fd);
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    struct timespec settle = {0, 300000000};
    nanosleep(&settle, NULL);
    drain(fd);
    printf("sent=%lu answered=%lu truncated=%lu other=%lu\n", sent, answered, truncated, other);
    return 0;
}
