/* disk.c - storage throughput, IOPS and latency with O_DIRECT (no page cache).
 *
 * Engine: synchronous pread/pwrite from --threads threads, one file per thread (what fio
 * calls ioengine=psync with numjobs=N): the queue depth seen by the device is the number
 * of threads. No libaio/io_uring, so one thread never has more than one I/O in flight.
 * Each point (test x block x threads) is time-based: every repetition runs --seconds;
 * sequential tests wrap around the file, random tests pick block-aligned offsets.
 * Written data is random (not compressible or dedupable); no fsync, as fio by default.
 *
 * O_DIRECT rule: file offsets, transfer sizes and buffer addresses must be multiples of
 * the logical block size of the device under --dir (512 B or 4 KiB; read from sysfs
 * queue/logical_block_size). Below it the kernel refuses pread/pwrite with EINVAL (no
 * silent buffering), so blocks that are not multiples are refused here up front, naming
 * the device's size. Blocks: multiples of 512 B, at most 1 GiB; buffers 4 KiB-aligned.
 *
 * Safety: free space is checked before writing (refused with the numbers and how to
 * change --size); files live in a new private folder (mkdtemp: mode 0700, a name no one
 * can plant beforehand) made in --dir (default /var/tmp, disk-backed where /tmp may be
 * tmpfs, which has no O_DIRECT), created with O_CREAT | O_EXCL | O_NOFOLLOW (an existing
 * entry is never opened: a link planted in a shared --dir cannot redirect the writes),
 * and removed with their folder at the end, on error, and on SIGINT/SIGTERM/SIGHUP/
 * SIGPIPE (handler).
 *
 * Repetitions: --reps exactly, or with --precision as many as the target asks of the
 * bandwidth (and IOPS), --reps the most (node_repeat.h).
 *
 * Cost: files of --size per thread; time = points x (warm-up + repetitions) x --seconds.
 */
#define _GNU_SOURCE
#include "node_repeat.h"
#include "node_util.h"
#include "timer.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char *out_path, *dir_opt, *tests_opt, *threads_opt, *blocks_opt;
static int64_t file_size, reps;
static double seconds;

static const hs_option opts[] = {
    { "dir", HS_OPT_STR, &dir_opt, "",
      "directory in which a new private folder holds the test files; empty = /var/tmp" },
    { "size", HS_OPT_SIZE, &file_size, "1G", "bytes of each thread's file" },
    { "tests", HS_OPT_STR, &tests_opt, "all",
      "comma list of seqwrite,seqread,randread,randwrite" },
    { "blocks", HS_OPT_STR, &blocks_opt, "4K,64K,1M,16M,100M",
      "block sizes (multiples of the device's logical block size: 512 B or 4 KiB)" },
    { "threads", HS_OPT_STR, &threads_opt, "1,2",
      "thread counts (= queue depth), e.g. 1,2,4" },
    { "seconds", HS_OPT_DOUBLE, &seconds, "1", "duration of one repetition" },
    { "reps", HS_OPT_INT, &reps, "3",
      "timed repetitions per point after one warm-up (with --precision the most)" },
    { "out", HS_OPT_STR, &out_path, "-", "JSONL output file, - for stdout" },
    NODE_REPEAT_OPTIONS,
    { 0 }
};

#define MAX_THREADS 256
#define LAT_KEEP 4096 /* per-I/O latencies kept per thread and repetition (reservoir) */

static FILE *out;
static char dir[4096];
static int made_dir;
static char paths[MAX_THREADS][4200];
static int nfiles; /* files this process created (cleanup removes only those) */

/* Logical block size of the block device holding `path` (its partition's disk for a
 * partition), or 0 when the file system has none (tmpfs, overlay, NFS: then the I/O
 * itself tells). */
static int64_t dio_align(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    static const char *fmts[] = { "/sys/dev/block/%u:%u/queue/logical_block_size",
                                  "/sys/dev/block/%u:%u/../queue/logical_block_size" };
    for (int i = 0; i < 2; i++) {
        char p[128];
        snprintf(p, sizeof p, fmts[i], major(st.st_dev), minor(st.st_dev));
        FILE *f = fopen(p, "r");
        long long v = 0;
        if (!f) continue;
        int ok = fscanf(f, "%lld", &v) == 1;
        fclose(f);
        if (ok && v > 0) return v;
    }
    return 0;
}

static int64_t align; /* dio_align of --dir; 0 = unknown */

/* --------------------------------------------------------------- cleanup */

static void cleanup(void)
{
    for (int i = 0; i < nfiles; i++) unlink(paths[i]); /* async-signal-safe */
    if (made_dir) rmdir(dir);
}

static void on_signal(int sig)
{
    cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* --------------------------------------------------------------- one point */

typedef struct {
    int fd, id, write, random;
    size_t block;
    char *buf;
    double deadline;
    int64_t bytes, ops;
    double lat_us[LAT_KEEP];
    int nlat;
    uint64_t rng;
    int err;
} worker;

static pthread_barrier_t start_barrier;
static double start_time;

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    /* Not pinned: I/O threads sleep in the kernel; pinning them next to the virtio
     * completion interrupts halved sequential throughput on a 2-CPU VM. */
    int64_t nblk = file_size / (int64_t)w->block, next = 0;
    w->bytes = w->ops = 0;
    w->nlat = 0;
    pthread_barrier_wait(&start_barrier);
    if (w->id == 0) start_time = hs_now_s();
    for (;;) {
        int64_t blk =
            w->random ? (int64_t)(xorshift(&w->rng) % (uint64_t)nblk) : next++ % nblk;
        off_t off = (off_t)(blk * (int64_t)w->block);
        double t0 = hs_now_s();
        ssize_t n = w->write ? pwrite(w->fd, w->buf, w->block, off)
                             : pread(w->fd, w->buf, w->block, off);
        double t1 = hs_now_s();
        if (n != (ssize_t)w->block) {
            w->err = n < 0 ? errno : EIO;
            return NULL;
        }
        w->bytes += n;
        double lat = (t1 - t0) * 1e6;
        if (w->nlat < LAT_KEEP)
            w->lat_us[w->nlat++] = lat;
        else { /* reservoir sampling keeps a uniform subset of all I/Os */
            uint64_t k = xorshift(&w->rng) % (uint64_t)(w->ops + 1);
            if (k < LAT_KEEP) w->lat_us[k] = lat;
        }
        w->ops++;
        if (t1 >= w->deadline) return NULL;
    }
}

/* Begins the sample record of a point in j: metric, unit and params (left open). */
static void point_params(hs_json *j, const char *metric, const char *unit, const char *op,
                         const char *pattern, size_t block, int threads)
{
    node_sample_begin(j, metric, unit);
    hs_json_str(j, "workload", "disk");
    hs_json_str(j, "op", op);
    hs_json_str(j, "pattern", pattern);
    hs_json_int(j, "block", (int64_t)block);
    hs_json_int(j, "threads", threads);
    hs_json_int(j, "depth", threads);
    hs_json_str(j, "engine", "psync");
    hs_json_bool(j, "direct", 1);
    hs_json_int(j, "file_bytes", file_size);
    if (align) hs_json_int(j, "logical_block", align);
}

static int run_point(const char *test, size_t block, int threads, worker *ws, int *fds)
{
    int is_write = strstr(test, "write") != NULL, is_rand = !strncmp(test, "rand", 4);
    double *lat = malloc(sizeof(double) * LAT_KEEP * threads);
    int nlat = 0;
    node_rep rp; /* series 0: bandwidth, 1: IOPS */
    if (!lat || node_rep_begin(&rp, 2, 1, (int)reps) != 0) {
        free(lat);
        hs_json_error(out, "out of memory for %d threads' latencies", threads);
        return -1;
    }
    while (node_rep_more(&rp)) {
        int r = rp.n;
        pthread_t tid[MAX_THREADS];
        pthread_barrier_init(&start_barrier, NULL, (unsigned)threads);
        double deadline = hs_now_s() + seconds + 0.01;
        for (int t = 0; t < threads; t++) {
            ws[t] = (worker){ .fd = fds[t],
                              .id = t,
                              .write = is_write,
                              .random = is_rand,
                              .block = block,
                              .buf = ws[t].buf,
                              .deadline = deadline,
                              .rng = 0x9E3779B97F4A7C15ull + 7919u * (uint64_t)(t + 1) +
                                     (uint64_t)r };
            pthread_create(&tid[t], NULL, run_worker, &ws[t]);
        }
        int64_t bytes = 0, ops = 0;
        double end = 0;
        for (int t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            if (ws[t].err) {
                hs_json_error(out, "%s of %zu-byte blocks in %s failed: %s%s", test, block,
                              dir, strerror(ws[t].err),
                              ws[t].err == EINVAL
                                  ? " (O_DIRECT refuses blocks that are not "
                                    "multiples of the device's logical "
                                    "block size: use larger blocks)"
                                  : "");
                free(lat);
                node_rep_end(&rp);
                return -1;
            }
            bytes += ws[t].bytes;
            ops += ws[t].ops;
        }
        end = hs_now_s();
        pthread_barrier_destroy(&start_barrier);
        rp.v[0][r] = (double)bytes / (end - start_time) / 1e6;
        rp.v[1][r] = (double)ops / (end - start_time);
        rp.n++;
        if (r == 0) continue; /* warm-up: latencies not kept */
        for (int t = 0; t < threads; t++)
            for (int i = 0; i < ws[t].nlat && nlat < LAT_KEEP * threads; i++)
                lat[nlat++] = ws[t].lat_us[i];
    }
    const char *op = is_write ? "write" : "read", *pat = is_rand ? "rand" : "seq";
    hs_json j;
    point_params(&j, "bandwidth", "MB/s", op, pat, block, threads);
    node_rep_emit(&j, out, &rp, 0);
    point_params(&j, "iops", "IOPS", op, pat, block, threads);
    node_rep_emit(&j, out, &rp, 1);
    node_rep_end(&rp);
    /* Latency: a uniform sample of single I/O latencies of the timed repetitions, then
     * percentiles derived from it (summary; the store recomputes from the values). */
    point_params(&j, "latency", "us", op, pat, block, threads);
    node_sample_end(&j, out, lat, nlat, 0);
    node_sort(lat, nlat);
    hs_json_begin(&j, "summary");
    hs_json_str(&j, "metric", "latency");
    hs_json_str(&j, "unit", "us");
    hs_json_open_object(&j, "params");
    hs_json_str(&j, "workload", "disk");
    hs_json_str(&j, "op", op);
    hs_json_str(&j, "pattern", pat);
    hs_json_int(&j, "block", (int64_t)block);
    hs_json_int(&j, "threads", threads);
    hs_json_close(&j);
    static const double pct[] = { 50, 90, 99, 99.9 };
    static const char *names[] = { "p50", "p90", "p99", "p99_9" };
    for (int i = 0; i < 4; i++)
        hs_json_double(&j, names[i], lat[(int)(pct[i] / 100 * (nlat - 1))]);
    hs_json_int(&j, "count", nlat);
    hs_json_emit(&j, out);
    free(lat);
    return 0;
}

/* --------------------------------------------------------------- main */

static int prepare(int threads, int *fds, size_t max_block, worker *ws)
{
    for (int t = 0; t < threads; t++) {
        /* A new file, never an existing entry (O_EXCL also refuses a symlink, dangling or
         * not): another name is tried on EEXIST, a bounded number of times. */
        fds[t] = -1;
        errno = EEXIST;
        for (int try = 0; try < 100 && fds[t] < 0 && errno == EEXIST; try++) {
            snprintf(paths[t], sizeof paths[t], "%s/hpcscope-disk.%d.%d.%d", dir,
                     (int)getpid(), t, try);
            fds[t] =
                open(paths[t],
                     O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_DIRECT | O_CLOEXEC, 0600);
        }
        if (fds[t] >= 0) nfiles = t + 1;
        if (fds[t] < 0) {
            int e = errno;
            hs_json_error(out, "cannot create %s with O_DIRECT: %s%s", paths[t],
                          strerror(e),
                          e == EINVAL ? " (the file system has no O_DIRECT, e.g. tmpfs: "
                                        "choose --dir on a disk)"
                                      : "");
            return e == EACCES || e == EROFS || e == ENOENT || e == EINVAL ? 2 : 1;
        }
        if (posix_memalign((void **)&ws[t].buf, 4096, max_block) != 0) {
            hs_json_error(out, "cannot allocate a %zu-byte I/O buffer", max_block);
            return 1;
        }
        uint64_t s = 0x2545F4914F6CDD1Dull + (uint64_t)t;
        for (size_t i = 0; i < max_block / 8; i++)
            ((uint64_t *)ws[t].buf)[i] = xorshift(&s);
        /* Lay the file out untimed so reads never hit holes. */
        struct stat st;
        if (fstat(fds[t], &st) == 0 && st.st_size >= file_size) continue;
        for (int64_t off = 0; off < file_size; off += (int64_t)max_block) {
            size_t n = (size_t)(file_size - off) < max_block ? (size_t)(file_size - off)
                                                             : max_block;
            if (pwrite(fds[t], ws[t].buf, n, off) != (ssize_t)n) {
                hs_json_error(out, "writing %s failed: %s", paths[t], strerror(errno));
                return 1;
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rc = hs_options_parse(opts, argc, argv, "disk",
                              "O_DIRECT sequential/random read/write throughput, IOPS and "
                              "latency percentiles; threads x pread/pwrite (psync).");
    if (rc >= 0) return rc;
    if (!(out = node_open_out(out_path))) return 2;
    int64_t threads[NODE_MAX_LIST], blocks[NODE_MAX_LIST];
    int nt = node_parse_int_list(threads_opt, threads, NODE_MAX_LIST, 1);
    int nb = node_parse_size_list(blocks_opt, blocks, NODE_MAX_LIST);
    int64_t max_threads = 0, max_block = 0;
    for (int i = 0; i < nt; i++)
        max_threads = threads[i] > max_threads ? threads[i] : max_threads;
    for (int i = 0; i < nb; i++) {
        max_block = blocks[i] > max_block ? blocks[i] : max_block;
        if (blocks[i] % 512 || blocks[i] > (1 << 30)) nb = -1;
    }
    if (nt <= 0 || nb <= 0 || max_threads > MAX_THREADS || reps < 1 || reps > 60 ||
        seconds <= 0 || file_size < max_block || file_size % 4096) {
        fprintf(stderr,
                "disk: bad options: --threads 1..%d, --blocks multiples of 512 up to 1G, "
                "--size a "
                "multiple of 4K and at least the largest block, --reps 1..60\n",
                MAX_THREADS);
        return 2;
    }
    if (node_repeat_problem()) {
        fprintf(stderr, "disk: %s\n", node_repeat_problem());
        return 2;
    }

    {
        const char *base = *dir_opt                      ? dir_opt
                           : getenv("HPCSCOPE_DISK_TMP") ? getenv("HPCSCOPE_DISK_TMP")
                                                         : "/var/tmp";
        snprintf(dir, sizeof dir, "%s/hpcscope-disk-XXXXXX", base);
        if (!mkdtemp(dir)) { /* mkdir: never an existing entry, mode 0700 */
            hs_json_error(out, "cannot create a folder in %s%s: %s",
                          *dir_opt ? "--dir " : "", base, strerror(errno));
            return 2;
        }
        made_dir = 1;
    }
    align = dio_align(dir);
    for (int i = 0; i < nb && align; i++)
        if (blocks[i] % align) {
            fprintf(stderr,
                    "disk: --blocks %lld: O_DIRECT on %s needs multiples of the device's "
                    "logical block size, %lld B (below it the kernel refuses the I/O); "
                    "use e.g. %lld\n",
                    (long long)blocks[i], dir, (long long)align,
                    (long long)((blocks[i] / align + 1) * align));
            if (made_dir) rmdir(dir);
            return 2;
        }
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL); /* our stdout closed (e.g. `| head`): still clean up */

    struct statvfs vfs;
    int64_t need = file_size * max_threads;
    if (statvfs(dir, &vfs) == 0) {
        int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
        int64_t keep = avail / 10; /* leave 10% for everyone else */
        if (need > avail - keep) {
            hs_json_error(
                out,
                "the test needs %lld bytes (%lld files x --size %lld) but %s has "
                "%lld bytes free (limit: 90%% = %lld); use a file size of at most %lld "
                "(this program's --size; hpcscope run node --quick uses 256 MiB) or "
                "another "
                "directory (hpcscope run node --disk-dir DIR)",
                (long long)need, (long long)max_threads, (long long)file_size, dir,
                (long long)avail, (long long)(avail - keep),
                (long long)((avail - keep) / max_threads / 4096 * 4096));
            cleanup();
            return 2;
        }
    }
    if (node_meta(out, "disk", opts) != 0) {
        cleanup();
        return 1;
    }

    static worker ws[MAX_THREADS];
    int fds[MAX_THREADS];
    rc = prepare((int)max_threads, fds, (size_t)max_block, ws);
    static const char *tests[] = { "seqwrite", "seqread", "randread", "randwrite" };
    int ntests = 0;
    for (size_t k = 0; k < 4; k++) ntests += node_list_has(tests_opt, tests[k]);
    node_repeat_init(2 * nb * ntests * nt); /* bandwidth and IOPS */
    for (int b = 0; b < nb && !rc; b++)
        for (size_t k = 0; k < 4 && !rc; k++)
            for (int i = 0; i < nt && !rc && node_list_has(tests_opt, tests[k]); i++)
                rc = run_point(tests[k], (size_t)blocks[b], (int)threads[i], ws, fds) ? 1
                                                                                      : 0;
    for (int t = 0; t < nfiles; t++) close(fds[t]);
    cleanup();
    return rc;
}
