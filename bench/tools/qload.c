/*
 * qload: a lean closed-loop UDP load of queries or updates — dnsperf's job at a fraction
 * of its CPU per message (on loopback about 5.5 µs a query against 9.5), so that one
 * client core keeps a server saturated that has more of a core than dnsperf can keep
 * busy (about 0.75 of one, with a quarter of the client's core to spare).
 *
 * It reads FILE, builds every message once, and keeps up to OUTSTANDING of them in flight
 * to 127.0.0.1:PORT for SECONDS, cycling through the file over 4 nonblocking sockets:
 * sendmmsg and recvmmsg in batches of up to 64, poll() to wait. An answer (QR=1) with the
 * ID of a message in flight on its socket completes it; one not answered within a second
 * is lost and its slot reused. After SECONDS it waits at most a second more for the
 * answers still due.
 *
 * FILE is a dnsperf query file (one `name TYPE` a line, RD set, no EDNS), or with -u a
 * dnsperf -u file restricted to what bench/update_rate.py writes: blocks of a zone line,
 * `add NAME TTL A ADDRESS` or `delete NAME A ADDRESS`, and `send` (one RFC 2136 UPDATE
 * each). With -Q RATE it sends at most RATE messages a second (batches every millisecond).
 *
 * Alternating loads, so that a figure with and without a second load comes from the
 * same seconds of a machine whose speed wanders: with -O PERIOD (and -Q) the messages go
 * only in the first half of every PERIOD seconds of the monotonic clock (from a multiple
 * of PERIOD, so that other processes know the phase), at RATE a second of that half;
 * with -B MS the answers are also counted per MS milliseconds of the monotonic clock,
 * and printed on a second line.
 *
 * usage: qload [-u] [-Q RATE] [-O PERIOD] [-B MS] PORT SECONDS FILE [OUTSTANDING]
 *        (OUTSTANDING 1..4096, default 256)
 * prints: sent=N answered=N lost=N seconds=S qps=Q latency_us=L noerror=N nxdomain=N
 *         other=N
 *         and with -B: bucket_ms=MS first=I counts=C,C,... (answers read in bucket I,
 *         I + 1, ...: bucket I is [I * MS, (I + 1) * MS) ms of CLOCK_MONOTONIC)
 *         (S the run time: SECONDS, or up to the last answer if that came in the extra
 *         second; Q = answered / S; L the mean time from a message's batch being sent to
 *         its answer's batch being read; noerror, nxdomain and other count the answers'
 *         RCODEs)
 * A bad FILE line is reported as `file:line: what was expected`, exit status 2.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    SOCKETS = 4,
    BATCH = 64,
    SLOT = 1024, /* receive buffer per answer; only the header is read */
    MAX_OUTSTANDING = 4096,
    LOCAL_BITS = 10, /* ID = generation (6 bits) | slot index on its socket */
    MAX_QUERIES = 10000000,
    MAX_LINE = 1024,
};
#define TIMEOUT 1.0    /* seconds until a query counts as lost */
#define SCAN_EVERY 0.1 /* seconds between looks for lost queries */

/* The messages (queries or updates), wire form back to back: message i is
 * wire[start[i] .. start[i + 1]). */
static unsigned char *wire;
static size_t wire_len, wire_cap;
static size_t *start;
static size_t queries, start_cap;

struct slot {
    double sent;           /* when its batch went out */
    unsigned short id;     /* the ID it was sent with */
    unsigned char head[2]; /* that ID in network order: the first iovec */
    int busy;
};
static struct slot slots[MAX_OUTSTANDING];
static int outstanding = 256, sockets;
static int fds[SOCKETS];
static int free_slots[SOCKETS][MAX_OUTSTANDING / SOCKETS + 1], free_count[SOCKETS];
static int in_flight;
static size_t cursor; /* the next query to send */
static double rate, begin_t; /* -Q: messages a second (0: as fast as answered) */
static double period;        /* -O: seconds of a send-then-pause cycle (0: no pause) */
static double bucket;        /* -B: seconds per answer bucket (0: none) */
enum { MAX_BUCKETS = 1 << 16 };
static unsigned long buckets[MAX_BUCKETS];
static long first_bucket = -1;

static struct iovec out_iov[BATCH][2], in_iov[BATCH];
static struct mmsghdr out_msgs[BATCH], in_msgs[BATCH];
static unsigned char in[BATCH][SLOT];

static unsigned long sent, answered, lost, noerror, nxdomain, other;
static double latency_sum, last_answer;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bad_line(const char *file, unsigned long line, const char *expected) {
    fprintf(stderr, "%s:%lu: %s\n", file, line, expected);
    exit(2);
}

/* Appends `len` bytes to the wire arena. */
static void append(const void *bytes, size_t len) {
    if (wire_len + len > wire_cap) {
        wire_cap = wire_cap ? wire_cap * 2 : 1 << 20;
        wire = realloc(wire, wire_cap);
        if (!wire) {
            perror("qload: realloc");
            exit(1);
        }
    }
    memcpy(wire + wire_len, bytes, len);
    wire_len += len;
}

/* The name in presentation form (`\X` and `\DDD` escapes, trailing dot optional) as
 * wire labels in `out`; its length, or 0 if it is not a valid name. */
static size_t name_to_wire(const char *name, unsigned char out[255]) {
    size_t len = 0, label = 0; /* label: where the current label's length byte is */
    if (strcmp(name, ".") == 0) {
        out[0] = 0;
        return 1;
    }
    out[len++] = 0;
    for (const char *p = name; *p; p++) {
        int c = (unsigned char)*p;
        if (c == '.') {
            if (out[label] == 0)
                return 0; /* empty label */
            if (p[1] == '\0')
                break;
            if (len >= 255)
                return 0;
            label = len;
            out[len++] = 0;
            continue;
        }
        if (c == '\\') {
            if (isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
                isdigit((unsigned char)p[3])) {
                c = (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
                if (c > 255)
                    return 0;
                p += 3;
            } else if (p[1]) {
                c = (unsigned char)*++p;
            } else {
                return 0;
            }
        }
        if (out[label] == 63 || len >= 254)
            return 0; /* label over 63 bytes, or no room left for the root */
        out[label]++;
        out[len++] = (unsigned char)c;
    }
    if (out[label] == 0 || len >= 255)
        return 0;
    out[len++] = 0; /* the root */
    return len;
}

/* The type's number, from its mnemonic or TYPEnnn; -1 if unknown. */
static int type_number(const char *type) {
    static const struct {
        const char *name;
        int number;
    } types[] = {
        {"A", 1},      {"NS", 2},      {"CNAME", 5},  {"SOA", 6},         {"PTR", 12},
        {"MX", 15},    {"TXT", 16},    {"AAAA", 28},  {"SRV", 33},        {"DS", 43},
        {"RRSIG", 46}, {"NSEC", 47},   {"DNSKEY", 48}, {"NSEC3", 50},     {"NSEC3PARAM", 51},
        {"CAA", 257},  {"ANY", 255},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcasecmp(type, types[i].name) == 0)
            return types[i].number;
    if (strncasecmp(type, "TYPE", 4) == 0 && isdigit((unsigned char)type[4])) {
        char *end;
        long n = strtol(type + 4, &end, 10);
        if (*end == '\0' && n <= 65535)
            return (int)n;
    }
    return -1;
}

/* Starts the next message at the end of the wire arena. */
static void begin_message(void) {
    if (queries + 1 >= start_cap) {
        start_cap = start_cap ? start_cap * 2 : 1 << 16;
        start = realloc(start, start_cap * sizeof *start);
        if (!start) {
            perror("qload: realloc");
            exit(1);
        }
    }
    start[queries++] = wire_len;
}

/* Adds one query: header (ID 0, RD set, one question), name, type, class IN. */
static void add_query(const unsigned char *name, size_t name_len, int type) {
    static const unsigned char header[12] = {0, 0, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    const unsigned char tail[4] = {(unsigned char)(type >> 8), (unsigned char)type, 0, 1};
    begin_message();
    append(header, sizeof header);
    append(name, name_len);
    append(tail, sizeof tail);
    start[queries] = wire_len;
}

/* Adds one UPDATE (RFC 2136): zone `zone` IN SOA, one update record `owner TYPE A`
 * of class IN with TTL `ttl` (add) or class NONE with TTL 0 (delete), RDATA `addr`. */
static void add_update(const unsigned char *zone, size_t zone_len, const unsigned char *owner,
                       size_t owner_len, int add, unsigned ttl, const unsigned char addr[4]) {
    static const unsigned char header[12] = {0, 0, 0x28, 0, 0, 1, 0, 0, 0, 1, 0, 0};
    static const unsigned char zone_tail[4] = {0, 6, 0, 1};
    const unsigned char rr[10] = {0, 1, 0, (unsigned char)(add ? 1 : 254),
                                  (unsigned char)(ttl >> 24), (unsigned char)(ttl >> 16),
                                  (unsigned char)(ttl >> 8), (unsigned char)ttl, 0, 4};
    begin_message();
    append(header, sizeof header);
    append(zone, zone_len);
    append(zone_tail, sizeof zone_tail);
    append(owner, owner_len);
    append(rr, sizeof rr);
    append(addr, 4);
    start[queries] = wire_len;
}

/* One line of a dnsperf -u block after its zone line: `add NAME TTL A ADDRESS` or
 * `delete NAME A ADDRESS`, into an UPDATE of `zone`; exits with status 2 if it is not. */
static void update_line(const char *file, unsigned long number, char *line,
                        const unsigned char *zone, size_t zone_len) {
    char *save, *op = strtok_r(line, " \t\r\n", &save);
    int add = op && strcasecmp(op, "add") == 0;
    if (!op || (!add && strcasecmp(op, "delete") != 0))
        bad_line(file, number, "`add NAME TTL A ADDRESS`, `delete NAME A ADDRESS` or `send`");
    char *name = strtok_r(NULL, " \t\r\n", &save);
    char *ttl = add ? strtok_r(NULL, " \t\r\n", &save) : "0";
    char *type = strtok_r(NULL, " \t\r\n", &save);
    char *address = strtok_r(NULL, " \t\r\n", &save);
    unsigned char owner[255], addr[4];
    size_t owner_len = name ? name_to_wire(name, owner) : 0;
    char *end = NULL;
    unsigned long seconds = ttl ? strtoul(ttl, &end, 10) : 0;
    if (owner_len == 0 || !ttl || *end || seconds > 0x7fffffff || !type ||
        strcasecmp(type, "A") != 0 || !address || inet_pton(AF_INET, address, addr) != 1 ||
        strtok_r(NULL, " \t\r\n", &save))
        bad_line(file, number, add ? "add NAME TTL A ADDRESS" : "delete NAME A ADDRESS");
    if (queries >= MAX_QUERIES)
        bad_line(file, number, "at most 10000000 updates");
    add_update(zone, zone_len, owner, owner_len, add, (unsigned)seconds, addr);
}

/* Calls `each` on every line of `file` but blank ones and `;` comments; returns how
 * many lines it read. Exits with status 2 if the file cannot be read or a line is over
 * MAX_LINE characters. */
static unsigned long each_line(const char *file,
                               void (*each)(const char *, unsigned long, char *, char *)) {
    FILE *f = fopen(file, "r");
    if (!f) {
        perror(file);
        exit(2);
    }
    char line[MAX_LINE + 2], copy[MAX_LINE + 2];
    unsigned long number = 0;
    while (fgets(line, sizeof line, f)) {
        number++;
        size_t len = strlen(line);
        if (len > MAX_LINE && line[len - 1] != '\n')
            bad_line(file, number, "a line of at most 1024 characters");
        memcpy(copy, line, len + 1);
        char *save, *word = strtok_r(copy, " \t\r\n", &save);
        if (word && word[0] != ';')
            each(file, number, line, word);
    }
    if (ferror(f)) {
        perror(file);
        exit(2);
    }
    fclose(f);
    return number;
}

/* The update block being read: its zone (none between blocks), and whether its record
 * line came. */
static unsigned char block_zone[255];
static size_t block_zone_len;
static int block_has_record;

/* One line of a dnsperf -u file, whose first word is `word`. */
static void update_file_line(const char *file, unsigned long number, char *line, char *word) {
    if (block_zone_len == 0) {
        char *save;
        block_zone_len = name_to_wire(strtok_r(line, " \t\r\n", &save), block_zone);
        if (block_zone_len == 0 || strtok_r(NULL, " \t\r\n", &save))
            bad_line(file, number, "a zone name starting an update block");
    } else if (strcasecmp(word, "send") == 0) {
        if (!block_has_record)
            bad_line(file, number, "an add or delete line before `send`");
        block_zone_len = 0;
        block_has_record = 0;
    } else if (block_has_record) {
        bad_line(file, number, "`send` (one record an update)");
    } else {
        update_line(file, number, line, block_zone, block_zone_len);
        block_has_record = 1;
    }
}

/* Reads a dnsperf -u file (blocks of a zone line, one add or delete line, `send`) into
 * the wire arena, exiting with status 2 on a bad line. */
static void load_updates(const char *file) {
    unsigned long lines = each_line(file, update_file_line);
    if (queries == 0 || block_zone_len != 0)
        bad_line(file, lines, "whole update blocks, at least one");
}

/* One line of a query file: `NAME TYPE`. */
static void query_file_line(const char *file, unsigned long number, char *line, char *word) {
    (void)word;
    char *save, *name = strtok_r(line, " \t\r\n", &save);
    char *type = strtok_r(NULL, " \t\r\n", &save);
    if (!type || strtok_r(NULL, " \t\r\n", &save))
        bad_line(file, number, "a query: NAME TYPE");
    unsigned char name_wire[255];
    size_t name_len = name_to_wire(name, name_wire);
    if (name_len == 0)
        bad_line(file, number, "a domain name (labels of 1 to 63 bytes, 255 in all)");
    int number_of_type = type_number(type);
    if (number_of_type < 0)
        bad_line(file, number, "a query type (a mnemonic such as AAAA, or TYPEnnn)");
    if (queries >= MAX_QUERIES)
        bad_line(file, number, "at most 10000000 queries");
    add_query(name_wire, name_len, number_of_type);
}

/* Reads the query file into the wire arena, exiting with status 2 on a bad line. */
static void load_queries(const char *file) {
    unsigned long lines = each_line(file, query_file_line);
    if (queries == 0)
        bad_line(file, lines, "at least one query");
}

/* A nonblocking UDP socket connected to 127.0.0.1:PORT; exits on error. */
static int open_socket(int port) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        perror("qload: socket");
        exit(1);
    }
    int size = 1 << 22;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
        perror("qload: connect");
        exit(1);
    }
    return fd;
}

/* Slot k belongs to socket k % sockets, where it is number k / sockets. */
static void setup_slots(int port) {
    sockets = outstanding < SOCKETS ? outstanding : SOCKETS;
    for (int s = 0; s < sockets; s++)
        fds[s] = open_socket(port);
    for (int k = outstanding - 1; k >= 0; k--) {
        int s = k % sockets;
        free_slots[s][free_count[s]++] = k;
    }
    for (int i = 0; i < BATCH; i++) {
        in_iov[i].iov_base = in[i];
        in_iov[i].iov_len = SLOT;
        in_msgs[i].msg_hdr.msg_iov = &in_iov[i];
        in_msgs[i].msg_hdr.msg_iovlen = 1;
        out_msgs[i].msg_hdr.msg_iov = out_iov[i];
        out_msgs[i].msg_hdr.msg_iovlen = 2;
    }
}

/* Seconds of sending time up to t: all of it, or with -O the first halves of the
 * cycles. */
static double send_time(double t) {
    if (period <= 0)
        return t;
    double cycles = (double)(long)(t / period), into = t - cycles * period;
    return cycles * period / 2 + (into < period / 2 ? into : period / 2);
}

/* When the next paced batch may go after t: in a millisecond, or with -O in a pause,
 * when the next cycle starts. */
static double next_send(double t) {
    double soon = t + 0.001;
    if (period <= 0)
        return soon;
    double cycle = (double)(long)(t / period) * period;
    return t - cycle < period / 2 || cycle + period < soon ? soon : cycle + period;
}

/* Counts an answer read at t in its bucket (-B). */
static void count_bucket(double t) {
    long b = (long)(t / bucket);
    if (first_bucket < 0)
        first_bucket = b;
    if (b - first_bucket < MAX_BUCKETS)
        buckets[b - first_bucket]++;
}

/* Sends the next queries on socket s's free slots; 0 if the socket would block. */
static int send_free(int s, double t) {
    while (free_count[s] > 0) {
        int n = free_count[s] < BATCH ? free_count[s] : BATCH;
        if (rate > 0) {
            double due = rate * (send_time(t) - send_time(begin_t)) - (double)sent;
            if (due < 1)
                return 1;
            if (due < n)
                n = (int)due;
        }
        size_t first = cursor;
        for (int i = 0; i < n; i++) {
            struct slot *slot = &slots[free_slots[s][free_count[s] - 1 - i]];
            int local = (int)((slot - slots) / sockets);
            slot->id = (unsigned short)(((slot->id >> LOCAL_BITS) + 1) << LOCAL_BITS | local);
            slot->head[0] = (unsigned char)(slot->id >> 8);
            slot->head[1] = (unsigned char)slot->id;
            out_iov[i][0].iov_base = slot->head;
            out_iov[i][0].iov_len = 2;
            out_iov[i][1].iov_base = wire + start[cursor] + 2;
            out_iov[i][1].iov_len = start[cursor + 1] - start[cursor] - 2;
            cursor = cursor + 1 == queries ? 0 : cursor + 1;
        }
        int done = sendmmsg(fds[s], out_msgs, (unsigned)n, 0);
        if (done < 0) {
            if (errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED) {
                perror("qload: sendmmsg");
                exit(1);
            }
            done = 0;
        }
        for (int i = 0; i < done; i++) {
            struct slot *slot = &slots[free_slots[s][--free_count[s]]];
            slot->sent = t;
            slot->busy = 1;
        }
        sent += (unsigned long)done;
        in_flight += done;
        if (done < n) {
            cursor = (first + (size_t)done) % queries; /* resend the rest later */
            return 0;
        }
    }
    return 1;
}

/* Completes the query an answer on socket s is for, if it is one in flight. */
static void complete(int s, const unsigned char *m, unsigned len, double t) {
    if (len < 12 || !(m[2] & 0x80))
        return;
    int id = m[0] << 8 | m[1], k = (id & ((1 << LOCAL_BITS) - 1)) * sockets + s;
    if (k >= outstanding || !slots[k].busy || slots[k].id != id)
        return; /* late, stray or mangled */
    slots[k].busy = 0;
    free_slots[s][free_count[s]++] = k;
    in_flight--;
    answered++;
    if (bucket > 0)
        count_bucket(t);
    latency_sum += t - slots[k].sent;
    last_answer = t;
    int rcode = m[3] & 0x0f;
    if (rcode == 0)
        noerror++;
    else if (rcode == 3)
        nxdomain++;
    else
        other++;
}

/* Reads every answer waiting on socket s. */
static void receive(int s) {
    for (;;) {
        int got = recvmmsg(fds[s], in_msgs, BATCH, MSG_DONTWAIT, NULL);
        if (got <= 0)
            return; /* EAGAIN, or ECONNREFUSED from an ICMP error: nothing to read */
        double t = now();
        for (int i = 0; i < got; i++)
            complete(s, in[i], in_msgs[i].msg_len, t);
        if (got < BATCH)
            return;
    }
}

/* Frees the slots of queries sent more than TIMEOUT before t, counting them lost. */
static void expire(double t) {
    for (int k = 0; k < outstanding; k++) {
        if (slots[k].busy && t - slots[k].sent > TIMEOUT) {
            int s = k % sockets;
            slots[k].busy = 0;
            free_slots[s][free_count[s]++] = k;
            in_flight--;
            lost++;
        }
    }
}

/* Waits until `until` at the latest for answers (and for room to send on the sockets
 * `blocked` marks full); reads those that came. */
static void wait_and_receive(double until, const int *blocked, double t) {
    struct pollfd pfd[SOCKETS];
    for (int s = 0; s < sockets; s++) {
        pfd[s].fd = fds[s];
        pfd[s].events = (short)(POLLIN | (blocked[s] ? POLLOUT : 0));
        pfd[s].revents = 0;
    }
    int ms = (int)((until - t) * 1000);
    if (poll(pfd, (nfds_t)sockets, ms < 1 ? 1 : ms) < 0 && errno != EINTR) {
        perror("qload: poll");
        exit(1);
    }
    for (int s = 0; s < sockets; s++)
        if (pfd[s].revents & (POLLIN | POLLERR))
            receive(s);
}

/* The main loop: keeps the slots busy until `end`, then drains until `end + TIMEOUT`. */
static void run(double begin, double end) {
    double t = begin, next_scan = begin + SCAN_EVERY;
    int blocked[SOCKETS] = {0};
    while (t < end) {
        for (int s = 0; s < sockets; s++)
            blocked[s] = !send_free(s, t);
        double until = next_scan < end ? next_scan : end;
        if (rate > 0 && next_send(t) < until)
            until = next_send(t); /* the next paced batch */
        wait_and_receive(until, blocked, t);
        t = now();
        if (t >= next_scan) {
            expire(t);
            next_scan = t + SCAN_EVERY;
        }
    }
    int none[SOCKETS] = {0};
    double stop = end + TIMEOUT;
    while (in_flight > 0 && t < stop) {
        wait_and_receive(stop, none, t);
        t = now();
    }
    lost += (unsigned long)in_flight;
}

/* The -B line: bucket_ms=MS first=I counts=C,C,... */
static void print_buckets(void) {
    long used = 0;
    for (long b = 0; b < MAX_BUCKETS; b++)
        if (buckets[b])
            used = b + 1;
    printf("bucket_ms=%.0f first=%ld counts=", bucket * 1000, first_bucket < 0 ? 0 : first_bucket);
    for (long b = 0; b < used; b++)
        printf(b ? ",%lu" : "%lu", buckets[b]);
    printf("\n");
}

int main(int argc, char **argv) {
    int updates = 0;
    while (argc > 1 && argv[1][0] == '-') {
        if (strcmp(argv[1], "-u") == 0) {
            updates = 1;
        } else if (strcmp(argv[1], "-Q") == 0 && argc > 2) {
            rate = atof(argv[2]);
            argc--, argv++;
        } else if (strcmp(argv[1], "-O") == 0 && argc > 2) {
            period = atof(argv[2]);
            argc--, argv++;
        } else if (strcmp(argv[1], "-B") == 0 && argc > 2) {
            bucket = atof(argv[2]) / 1000;
            argc--, argv++;
        } else {
            argc = 0;
            break;
        }
        argc--, argv++;
    }
    if (argc != 4 && argc != 5) {
        fprintf(stderr,
                "usage: qload [-u] [-Q RATE] [-O PERIOD] [-B MS] PORT SECONDS FILE "
                "[OUTSTANDING]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    double seconds = atof(argv[2]);
    if (argc == 5)
        outstanding = atoi(argv[4]);
    if (port <= 0 || port > 65535 || seconds <= 0 || seconds > 600 || outstanding < 1 ||
        outstanding > MAX_OUTSTANDING || rate < 0 || rate > 1e7 || period < 0 ||
        (period > 0 && rate <= 0) || bucket < 0 || (bucket > 0 && bucket < 0.001)) {
        fprintf(stderr, "qload: bad port, seconds (at most 600), outstanding (1..4096), "
                        "rate (at most 10000000), period (needs -Q) or bucket (ms, at "
                        "least 1)\n");
        return 2;
    }
    if (updates)
        load_updates(argv[3]);
    else
        load_queries(argv[3]);
    setup_slots(port);
    double begin = now();
    begin_t = begin;
    last_answer = begin;
    run(begin, begin + seconds);
    double measured = last_answer > begin + seconds ? last_answer - begin : seconds;
    printf("sent=%lu answered=%lu lost=%lu seconds=%.3f qps=%.0f latency_us=%.0f "
           "noerror=%lu nxdomain=%lu other=%lu\n",
           sent, answered, lost, measured, (double)answered / measured,
           answered ? latency_sum / (double)answered * 1e6 : 0.0, noerror, nxdomain, other);
    if (bucket > 0)
        print_buckets();
    return 0;
}
