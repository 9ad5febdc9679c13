/*
 * udp-floor: the limit of the UDP socket path on this machine.
 *
 * A responder that does no DNS work: it takes datagrams in batches (recvmmsg), turns
 * each query into its own "answer" by setting QR and AA in the header, and sends the
 * batch back (sendmmsg) to where it came from. A DNS server reading and writing the same
 * sockets cannot answer faster than this; the benchmark reports it beside the servers.
 *
 * usage: udp-floor PORT        (listens on 127.0.0.1:PORT until killed)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum { BATCH = 64, SLOT = 2048 };

static unsigned char slots[BATCH][SLOT];
static struct sockaddr_in peers[BATCH];
static struct iovec iovs[BATCH];
static struct mmsghdr msgs[BATCH];

static int listen_on(int port) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("udp-floor: bind");
        exit(1);
    }
    return fd;
}

/* Points every message header at its slot, ready for the next recvmmsg. */
static void arm(void) {
    for (int i = 0; i < BATCH; i++) {
        iovs[i].iov_base = slots[i];
        iovs[i].iov_len = SLOT;
        memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
        msgs[i].msg_hdr.msg_name = &peers[i];
        msgs[i].msg_hdr.msg_namelen = sizeof peers[i];
        msgs[i].msg_hdr.msg_iov = &iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: udp-floor PORT\n");
        return 2;
    }
    int fd = listen_on(atoi(argv[1]));
    for (;;) {
        arm();
        int got = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
        if (got <= 0)
            continue;
        for (int i = 0; i < got; i++) {
            if (msgs[i].msg_len >= 12)
                slots[i][2] |= 0x84; /* QR and AA */
            iovs[i].iov_len = msgs[i].msg_len;
        }
        sendmmsg(fd, msgs, (unsigned)got, 0);
    }
}
