/* net.c - TCP and UDP throughput with 1..N streams and several block sizes, and TCP
 * request/response latency, between a server and a client this program starts itself
 * (--role both, on 127.0.0.1) or on two hosts (--role server on one, --role client
 * --host H on the other).
 *
 * Protocol: every client stream opens a TCP connection and sends a 16-byte header
 * {mode, block}. TCP stream: the client sends blocks for --seconds, shuts down its write
 * side, and the server answers with the bytes it received; throughput = received bytes /
 * time until that answer (the receiver's count, so bytes still in socket buffers are not
 * counted). UDP: the server opens a UDP socket and sends its port back; the client sends
 * datagrams for --seconds, then asks for the received bytes over TCP (loss = sent -
 * received). Request/response: the server echoes each block; one value is the mean half
 * round trip of a batch of exchanges (OSU definition, batched so timer cost stays out).
 *
 * Two nodes: the server ends when a client sends a quit header (--stop-server), so a
 * SLURM step (srun -N2: task 0 server, task 1 client) ends by itself; the client retries
 * its first connection for --connect-wait seconds while the server starts. --server-node,
 * --client-node, --link-dev and --link-mbit are labels the caller gives (where each side
 * ran, the NIC and its stated speed, -1: none stated) and go into every sample.
 *
 * Network only where asked: the default host is 127.0.0.1 and --role both binds there.
 * Repetitions: --reps exactly, or with --precision as many as the target asks, --reps the
 * most (node_repeat.h; request/response: batches of --seconds / 10 each).
 * Cost: points x (warm-up + repetitions) x --seconds.
 */
#define _GNU_SOURCE
#include "node_repeat.h"
#include "node_util.h"
#include "timer.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *out_path, *role, *host, *tests_opt, *streams_opt, *blocks_opt, *rr_opt,
    *server_node, *client_node, *link_dev, *beside_opt;
static int64_t port, reps, link_mbit;
static double seconds, connect_wait;
static int stop_server;

static const hs_option opts[] = {
    { "role", HS_OPT_STR, &role, "both",
      "both (server and client here), server, or client" },
    { "host", HS_OPT_STR, &host, "127.0.0.1",
      "server address (client) / bind address (server)" },
    { "port", HS_OPT_INT, &port, "0",
      "TCP port of the server; 0 = a free one (--role both), "
      "5301 otherwise" },
    { "tests", HS_OPT_STR, &tests_opt, "all", "comma list of tcp,udp,rr" },
    { "streams", HS_OPT_STR, &streams_opt, "1,2",
      "parallel streams (threads), e.g. 1,2,4" },
    { "blocks", HS_OPT_STR, &blocks_opt, "1K,32K,128K",
      "bytes per send (TCP) / datagram (UDP)" },
    { "rr-bytes", HS_OPT_STR, &rr_opt, "1,64,1K", "message sizes of the TCP ping-pong" },
    { "seconds", HS_OPT_DOUBLE, &seconds, "1", "duration of one repetition" },
    { "reps", HS_OPT_INT, &reps, "3",
      "timed repetitions per point after one warm-up (with --precision the most)" },
    { "stop-server", HS_OPT_FLAG, &stop_server, "0",
      "client: tell the server to exit at the end" },
    { "connect-wait", HS_OPT_DOUBLE, &connect_wait, "0",
      "client: seconds to retry the first connection while the server starts" },
    { "server-node", HS_OPT_STR, &server_node, "", "label: where the server runs" },
    { "client-node", HS_OPT_STR, &client_node, "", "label: where the client runs" },
    { "link-dev", HS_OPT_STR, &link_dev, "", "label: the network device between them" },
    { "link-mbit", HS_OPT_INT, &link_mbit, "-1",
      "label: the device's stated speed in Mbit/s, -1 = none stated" },
    { "out", HS_OPT_STR, &out_path, "-", "JSONL output file, - for stdout" },
    { "beside", HS_OPT_STR, &beside_opt, "",
      "name of the reference tool this run brackets (param \"beside\" of the TCP/UDP "
      "stream samples): ours measured seconds from the tool, apart from the sweep" },
    NODE_REPEAT_OPTIONS,
    { 0 }
};

enum { MODE_TCP = 1, MODE_RR = 2, MODE_UDP = 3, MODE_QUIT = 4 };
#define UDP_MAX 65507
#define MAX_STREAMS 128

static FILE *out;

static int full_io(int fd, void *buf, size_t n, int writing)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = writing ? send(fd, (char *)buf + done, n - done, MSG_NOSIGNAL)
                            : recv(fd, (char *)buf + done, n - done, 0);
        if (k <= 0) return -1;
        done += (size_t)k;
    }
    return 0;
}

/* ---------------------------------------------------------------- server */

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    int64_t hdr[2];
    if (full_io(fd, hdr, sizeof hdr, 0) != 0) goto done;
    if (hdr[0] == MODE_QUIT) exit(0); /* the client is done (--stop-server) */
    size_t block = (size_t)hdr[1];
    if (block == 0 || block > (256u << 20)) goto done;
    char *buf = malloc(block);
    if (hdr[0] == MODE_TCP) {
        int64_t total = 0;
        ssize_t k;
        while ((k = recv(fd, buf, block, 0)) > 0) total += k;
        full_io(fd, &total, sizeof total, 1);
    } else if (hdr[0] == MODE_RR) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while (full_io(fd, buf, block, 0) == 0 && full_io(fd, buf, block, 1) == 0) {}
    } else if (hdr[0] == MODE_UDP) {
        struct sockaddr_in a;
        socklen_t len = sizeof a;
        getsockname(fd, (struct sockaddr *)&a, &len); /* same address as the TCP side */
        a.sin_port = 0;
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        int big = 8 << 20;
        setsockopt(u, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        bind(u, (struct sockaddr *)&a, sizeof a);
        getsockname(u, (struct sockaddr *)&a, &len);
        int64_t uport = ntohs(a.sin_port), counts[2] = { 0, 0 }, done_msg;
        full_io(fd, &uport, sizeof uport, 1);
        /* Count datagrams until the client says it is done on the TCP connection. */
        for (;;) {
            fd_set set;
            FD_ZERO(&set);
            FD_SET(u, &set);
            FD_SET(fd, &set);
            if (select((fd > u ? fd : u) + 1, &set, NULL, NULL, NULL) < 0) break;
            if (FD_ISSET(u, &set)) {
                ssize_t k = recv(u, buf, block, MSG_DONTWAIT);
                if (k > 0) {
                    counts[0] += k;
                    counts[1]++;
                }
            }
            if (FD_ISSET(fd, &set)) {
                /* drain what is already queued, then answer */
                ssize_t k;
                while ((k = recv(u, buf, block, MSG_DONTWAIT)) > 0) {
                    counts[0] += k;
                    counts[1]++;
                }
                if (full_io(fd, &done_msg, sizeof done_msg, 0) == 0)
                    full_io(fd, counts, sizeof counts, 1);
                break;
            }
        }
        close(u);
    }
    free(buf);
done:
    close(fd);
    return NULL;
}

static int listen_fd = -1;

static void *accept_loop(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL;
        }
        pthread_t t;
        pthread_create(&t, NULL, serve, (void *)(intptr_t)fd);
        pthread_detach(t);
    }
}

static int start_server(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        hs_json_error(out, "--host %s is not an IPv4 address", host);
        return 2;
    }
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(listen_fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        if (e == EADDRINUSE)
            hs_json_error(out, "port %lld on %s is in use; choose another with --port",
                          (long long)port, host);
        else
            hs_json_error(out, "cannot listen on %s port %lld: %s", host, (long long)port,
                          strerror(e));
        return 2;
    }
    listen(listen_fd, 256);
    socklen_t len = sizeof a;
    getsockname(listen_fd, (struct sockaddr *)&a, &len);
    port = ntohs(a.sin_port);
    return 0;
}

/* ---------------------------------------------------------------- client */

static int connect_mode(int mode, size_t block)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, host, &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    /* Only the first connection waits for a server that is still starting. */
    static int connected_once;
    double until = hs_now_s() + (connected_once ? 0 : connect_wait);
    while (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        if (e != ECONNREFUSED || hs_now_s() >= until) {
            errno = e;
            return -1;
        }
        usleep(50000);
        fd = socket(AF_INET, SOCK_STREAM, 0);
    }
    connected_once = 1;
    int64_t hdr[2] = { mode, (int64_t)block };
    if (full_io(fd, hdr, sizeof hdr, 1) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

typedef struct {
    int mode, id;
    size_t block;
    int64_t received, sent_dgrams, recv_dgrams;
    double end;
    int err;
} stream_job;

/* Where the two sides ran, for every sample (two-node runs). */
static void labels(hs_json *j)
{
    if (*server_node) hs_json_str(j, "server_node", server_node);
    if (*client_node) hs_json_str(j, "client_node", client_node);
    if (*link_dev) hs_json_str(j, "link_dev", link_dev);
    if (*link_dev || link_mbit >= 0) hs_json_int(j, "link_mbit", link_mbit);
    if (*server_node && *client_node && strcmp(server_node, client_node))
        hs_json_int(j, "nodes", 2);
}

static pthread_barrier_t barrier;
static double start_time;

static void *run_stream(void *arg)
{
    stream_job *s = arg;
    /* Not pinned, like iperf3: the kernel's TCP work runs in the sender's and receiver's
     * context, and a pinned sender next to a busy CPU lost 3x on a shared 2-CPU VM. */
    char *buf = calloc(1, s->block);
    int fd = connect_mode(s->mode, s->block), u = -1;
    int64_t sent = 0;
    if (fd < 0) s->err = errno ? errno : ECONNREFUSED;
    if (!s->err && s->mode == MODE_UDP) {
        int64_t uport;
        struct sockaddr_in a = { .sin_family = AF_INET };
        inet_pton(AF_INET, host, &a.sin_addr);
        if (full_io(fd, &uport, sizeof uport, 0) != 0) s->err = EPROTO;
        a.sin_port = htons((uint16_t)uport);
        u = socket(AF_INET, SOCK_DGRAM, 0);
        if (!s->err && connect(u, (struct sockaddr *)&a, sizeof a) != 0) s->err = errno;
    }
    pthread_barrier_wait(&barrier); /* every stream connected before the clock starts */
    if (s->id == 0) start_time = hs_now_s();
    double deadline = hs_now_s() + seconds;
    while (!s->err) {
        for (int i = 0; i < 16; i++) { /* check the clock every 16 sends */
            if (s->mode == MODE_UDP) {
                if (send(u, buf, s->block, 0) == (ssize_t)s->block) sent++;
            } else if (full_io(fd, buf, s->block, 1) != 0) {
                s->err = errno ? errno : EPIPE;
                break;
            }
        }
        if (hs_now_s() >= deadline) break;
    }
    if (!s->err && s->mode == MODE_TCP) {
        shutdown(fd, SHUT_WR);
        if (full_io(fd, &s->received, sizeof s->received, 0) != 0) s->err = EPROTO;
    } else if (!s->err) {
        int64_t done = 1, counts[2];
        usleep(20000); /* let datagrams in flight arrive */
        if (full_io(fd, &done, sizeof done, 1) || full_io(fd, counts, sizeof counts, 0))
            s->err = EPROTO;
        s->received = counts[0];
        s->recv_dgrams = counts[1];
        s->sent_dgrams = sent;
    }
    s->end = hs_now_s();
    if (u >= 0) close(u);
    if (fd >= 0) close(fd);
    free(buf);
    return NULL;
}

static int throughput_point(int mode, size_t block, int streams)
{
    int rc;
    node_rep rp;
    if (node_rep_begin(&rp, 1, 1, (int)reps) != 0) return -1;
    int64_t sent = 0, got = 0;
    while (node_rep_more(&rp)) {
        stream_job jobs[MAX_STREAMS];
        pthread_t tid[MAX_STREAMS];
        pthread_barrier_init(&barrier, NULL, (unsigned)streams);
        for (int i = 0; i < streams; i++) {
            jobs[i] = (stream_job){ .mode = mode, .id = i, .block = block };
            pthread_create(&tid[i], NULL, run_stream, &jobs[i]);
        }
        int64_t bytes = 0;
        double end = 0;
        for (int i = 0; i < streams; i++) {
            pthread_join(tid[i], NULL);
            if (jobs[i].err) {
                hs_json_error(out, "%s stream to %s port %lld failed: %s",
                              mode == MODE_UDP ? "UDP" : "TCP", host, (long long)port,
                              strerror(jobs[i].err));
                node_rep_end(&rp);
                return -1;
            }
            bytes += jobs[i].received;
            if (rp.n) { /* not the warm-up */
                sent += jobs[i].sent_dgrams;
                got += jobs[i].recv_dgrams;
            }
            end = jobs[i].end > end ? jobs[i].end : end;
        }
        pthread_barrier_destroy(&barrier);
        rp.v[0][rp.n++] = 8.0 * (double)bytes / (end - start_time) / 1e6;
    }
    hs_json j;
    node_sample_begin(&j, "throughput", "Mbit/s");
    hs_json_str(&j, "workload", "net");
    hs_json_str(&j, "protocol", mode == MODE_UDP ? "udp" : "tcp");
    hs_json_str(&j, "op", "stream");
    hs_json_int(&j, "block", (int64_t)block);
    hs_json_int(&j, "streams", streams);
    hs_json_str(&j, "host", host);
    labels(&j);
    if (*beside_opt) hs_json_str(&j, "beside", beside_opt);
    if (mode == MODE_UDP) { /* loss over the timed repetitions */
        hs_json_int(&j, "datagrams_sent", sent);
        hs_json_int(&j, "datagrams_received", got);
    }
    rc = node_rep_emit(&j, out, &rp, 0);
    node_rep_end(&rp);
    return rc;
}

static int rr_point(size_t bytes)
{
    int fd = connect_mode(MODE_RR, bytes);
    if (fd < 0) {
        hs_json_error(out, "TCP request/response to %s port %lld failed: %s", host,
                      (long long)port, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char *buf = calloc(1, bytes);
    /* Batches of exchanges: about --seconds / 20 each; 20 values per repetition set. */
    int64_t batch = 64;
    double t0 = hs_now_s();
    for (int64_t i = 0; i < batch; i++)
        if (full_io(fd, buf, bytes, 1) || full_io(fd, buf, bytes, 0)) goto fail;
    double per = (hs_now_s() - t0) / (double)batch;
    /* Fixed: 20 batches (and one warm-up) in --reps x --seconds; adaptive: each batch
     * --seconds / 10, as many as the target asks, at most 20 x --reps. */
    int adaptive = node_precision > 0;
    batch = (int64_t)(seconds * (adaptive ? 2.0 : (double)reps) / 20.0 / per) + 1;
    node_rep rp;
    if (node_rep_begin(&rp, 1, 1, adaptive ? 20 * (int)reps : 20) != 0) goto fail;
    while (node_rep_more(&rp)) {
        t0 = hs_now_s();
        for (int64_t i = 0; i < batch; i++)
            if (full_io(fd, buf, bytes, 1) || full_io(fd, buf, bytes, 0)) {
                node_rep_end(&rp);
                goto fail;
            }
        rp.v[0][rp.n++] = (hs_now_s() - t0) / (double)batch / 2.0 * 1e6;
    }
    close(fd);
    free(buf);
    hs_json j;
    node_sample_begin(&j, "latency", "us");
    hs_json_str(&j, "workload", "net");
    hs_json_str(&j, "protocol", "tcp");
    hs_json_str(&j, "op", "request_response");
    hs_json_int(&j, "bytes", (int64_t)bytes);
    hs_json_int(&j, "streams", 1);
    hs_json_int(&j, "batch", batch);
    hs_json_str(&j, "definition", "half_round_trip");
    hs_json_str(&j, "host", host);
    labels(&j);
    int rc = node_rep_emit(&j, out, &rp, 0);
    node_rep_end(&rp);
    return rc;
fail:
    hs_json_error(out, "TCP request/response of %zu bytes broke: %s", bytes,
                  strerror(errno));
    close(fd);
    free(buf);
    return -1;
}

int main(int argc, char **argv)
{
    int rc =
        hs_options_parse(opts, argc, argv, "net",
                         "TCP/UDP throughput and TCP request/response latency between a "
                         "server and a client (both here on 127.0.0.1 by default).");
    if (rc >= 0) return rc;
    if (!(out = node_open_out(out_path))) return 2;
    signal(SIGPIPE, SIG_IGN);
    int both = !strcmp(role, "both"), server = !strcmp(role, "server"),
        client = !strcmp(role, "client");
    int64_t streams[NODE_MAX_LIST], blocks[NODE_MAX_LIST], rr[NODE_MAX_LIST];
    int ns = node_parse_int_list(streams_opt, streams, NODE_MAX_LIST, 1);
    int nb = node_parse_size_list(blocks_opt, blocks, NODE_MAX_LIST);
    int nrr = node_parse_size_list(rr_opt, rr, NODE_MAX_LIST);
    int bad = !(both || server || client) || ns <= 0 || nb <= 0 || nrr <= 0 || reps < 1 ||
              reps > 60 || seconds <= 0 || port < 0 || port > 65535;
    for (int i = 0; i < ns; i++) bad |= streams[i] > MAX_STREAMS;
    if (bad) {
        fprintf(stderr,
                "net: bad options: --role both|server|client, --streams 1..%d, "
                "--reps 1..60, --port 0..65535\n",
                MAX_STREAMS);
        return 2;
    }
    if (node_repeat_problem()) {
        fprintf(stderr, "net: %s\n", node_repeat_problem());
        return 2;
    }
    for (int i = 0; i < ns; i++) node_warn_threads("net", streams[i]);
    int udp_blocks = 0;
    for (int b = 0; b < nb; b++) udp_blocks += blocks[b] <= UDP_MAX;
    node_repeat_init(nb * ns * node_list_has(tests_opt, "tcp") +
                     udp_blocks * ns * node_list_has(tests_opt, "udp") +
                     nrr * node_list_has(tests_opt, "rr"));
    if (!port && !both) port = 5301;
    if (node_meta(out, "net", opts) != 0) return 1;
    if (both || server) {
        if ((rc = start_server()) != 0) return rc;
        if (server) {
            fprintf(stderr, "net: serving on %s port %lld until killed\n", host,
                    (long long)port);
            accept_loop(NULL);
            return 1;
        }
        pthread_t t;
        pthread_create(&t, NULL, accept_loop, NULL);
        pthread_detach(t);
    }
    for (int b = 0; b < nb && node_list_has(tests_opt, "tcp"); b++)
        for (int s = 0; s < ns; s++)
            if (throughput_point(MODE_TCP, (size_t)blocks[b], (int)streams[s])) return 1;
    for (int b = 0; b < nb && node_list_has(tests_opt, "udp"); b++) {
        if (blocks[b] > UDP_MAX) {
            fprintf(stderr, "net: UDP block %lld skipped: larger than a datagram (%d)\n",
                    (long long)blocks[b], UDP_MAX);
            continue;
        }
        for (int s = 0; s < ns; s++)
            if (throughput_point(MODE_UDP, (size_t)blocks[b], (int)streams[s])) return 1;
    }
    for (int i = 0; i < nrr && node_list_has(tests_opt, "rr"); i++)
        if (rr_point((size_t)rr[i])) return 1;
    if (client && stop_server) {
        int fd = connect_mode(MODE_QUIT, 1);
        if (fd >= 0) close(fd);
    }
    return 0;
}
