/* mpiio.c - MPI-IO bandwidth: independent and collective writes and reads, to one shared
 * file and to a file per process (the questions of IMB-IO and of IOR's MPI-IO mode).
 *
 * Each rank moves --block-size bytes in transfers of T bytes (--transfer-sizes):
 *   shared file:  rank r's block at offset r x block (IOR's segmented layout, 1 segment);
 *   per process:  rank r's own file from offset 0 (opened on MPI_COMM_SELF, as IOR -F).
 *   independent:  MPI_File_write_at / MPI_File_read_at, one call per transfer;
 *   collective:   MPI_File_write_at_all / MPI_File_read_at_all, one call per transfer.
 *
 * What is timed (IOR's default, which times open to close): after an MPI_Barrier each
 * rank times MPI_File_open, the transfers, MPI_File_sync (writes: the data is on the
 * device, or the file server, before the clock stops; IOR needs -e for that) and
 * MPI_File_close; the repetition's time is the slowest rank's (IOR: the latest close
 * minus the earliest open, on MPI_Wtime; the same to within the barrier's exit skew).
 * Bandwidth = ranks x block / time / 1e6 (MB/s; IOR prints MiB/s). Before each write the
 * file is removed and created again outside the clock (IOR creates inside its open).
 * Files are opened with MPI_MODE_UNIQUE_OPEN, as IOR's MPI-IO backend does.
 *
 * Reads and the page cache: reading back what was just written measures memory, not the
 * file system. Two things defeat it here: after the write each node drops the file's
 * pages from its page cache (fdatasync + posix_fadvise POSIX_FADV_DONTNEED, outside the
 * clock; "cache": "dropped" when it succeeded, "kept" when not), and with more than one
 * rank each reads the block another rank wrote, shifted by the ranks of one node as
 * IOR's -C does ("reorder": the shift), so across nodes a reader never has the data in
 * its own cache. On a file system whose files are memory (tmpfs) both reads and writes
 * are memory speed whatever is done: the suite names the file system (disk_facts).
 *
 * Files: a new private folder (mkdtemp, 0700) in --dir made by rank 0; every file in it
 * created by its owner with O_CREAT | O_EXCL | O_NOFOLLOW before MPI_File_open opens it
 * without MPI_MODE_CREATE, so no planted name is followed; files and folder are removed
 * at the end, on errors and on SIGINT/SIGTERM/SIGHUP/SIGPIPE. Each transfer carries its
 * owner rank and offset in its first and last 8 bytes, checked after every read (the
 * run fails on a mismatch); the rest of a transfer is random (xorshift), never zeros a
 * virtual disk could skip. Memory: one buffer of the largest transfer per rank.
 * Disk: ranks x block at a time. Every rank must see --dir's private folder (a shared
 * file system for several nodes); a rank that cannot is named.
 *
 * Output: JSONL (rank 0): meta, then per (transfer, layout, mode, op) one sample of
 * metric "bandwidth", unit "MB/s", one value per repetition, params {op, mode, layout,
 * transfer, block, ranks, nodes, reorder, cache, timed: "open+io+sync+close" (writes) or
 * "open+io+close" (reads)}.
 * Exit: 0 ok, 1 measurement failed, 2 bad usage.
 */
#define _GNU_SOURCE
#include "coll_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "binding_mpi.h"
#include "timer.h"

#define MPIIO_VERSION "0.1.0"
#define MAX_SIZES 32

static const char *o_out, *o_dir, *o_sizes, *o_modes, *o_layouts;
static int64_t o_block, o_reps;

static const hs_option options[] = {
    { "dir", HS_OPT_STR, &o_dir, ".",
      "folder in which a new private folder holds the files" },
    { "transfer-sizes", HS_OPT_STR, &o_sizes, "64K,1M,4M",
      "bytes per MPI-IO call, comma list (each dividing --block-size)" },
    { "block-size", HS_OPT_SIZE, &o_block, "16M", "bytes each rank writes and reads" },
    { "modes", HS_OPT_STR, &o_modes, "independent,collective",
      "independent (write_at/read_at), collective (write_at_all/read_at_all)" },
    { "layouts", HS_OPT_STR, &o_layouts, "shared,per_process",
      "shared (one file) and/or per_process (a file per rank)" },
    { "repetitions", HS_OPT_INT, &o_reps, "3", "timed write+read pairs per point" },
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" },
    { 0 }
};

static int64_t sizes[MAX_SIZES];
static int nsizes;

static int check(int quiet)
{
    static char why[160];
    const char *s = o_sizes;
    why[0] = '\0';
    nsizes = 0;
    while (*s && !why[0]) {
        char item[32];
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof item || nsizes == MAX_SIZES) {
            snprintf(why, sizeof why,
                     "--transfer-sizes '%s': give up to %d sizes, e.g. 64K,1M", o_sizes,
                     MAX_SIZES);
            break;
        }
        memcpy(item, s, len);
        item[len] = '\0';
        if (hs_parse_size(item, &sizes[nsizes]) != 0 || sizes[nsizes] < 16 ||
            sizes[nsizes] > (1 << 30))
            snprintf(why, sizeof why, "--transfer-sizes: '%s' is not a size from 16 to 1G",
                     item);
        else if (o_block % sizes[nsizes] != 0)
            snprintf(why, sizeof why,
                     "--transfer-sizes: %s does not divide --block-size %lld", item,
                     (long long)o_block);
        nsizes++;
        s += len + (s[len] == ',');
    }
    if (!why[0] && nsizes == 0) snprintf(why, sizeof why, "--transfer-sizes is empty");
    if (!why[0] && (o_block < 16 || o_block > ((int64_t)64 << 30)))
        snprintf(why, sizeof why, "--block-size must be from 16 bytes to 64G");
    if (!why[0] && o_reps < 1) snprintf(why, sizeof why, "--repetitions must be >= 1");
    if (!why[0] && !strstr(o_modes, "independent") && !strstr(o_modes, "collective"))
        snprintf(why, sizeof why, "--modes: give independent and/or collective");
    if (!why[0] && !strstr(o_layouts, "shared") && !strstr(o_layouts, "per_process"))
        snprintf(why, sizeof why, "--layouts: give shared and/or per_process");
    if (!why[0]) return -1;
    if (!quiet) fprintf(stderr, "mpiio: %s (see --help)\n", why);
    return 2;
}

/* ---- files: a private folder, names removed at the end and on signals */

static char dir[4096], own_path[4200], shared_path[4200];
static volatile sig_atomic_t have_own, have_shared, have_dir;

static void clean_up(void)
{
    if (have_own) unlink(own_path); /* async-signal-safe */
    if (have_shared) unlink(shared_path);
    if (have_dir) rmdir(dir);
}

static void on_signal(int sig)
{
    clean_up();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A new file at path, never an existing entry or a link. 0 or errno. */
static int create_new(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}

/* Drops the file's pages from this node's page cache (after the data is on the device).
 * 1 when the kernel accepted it. */
static int drop_cache(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    int ok = fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    close(fd);
    return ok;
}

/* Data nobody can compress or deduplicate (xorshift64, per rank): a virtual disk that
 * detects zero blocks (QEMU detect-zeroes) would otherwise write zeros for free. */
static void fill_random(char *p, int64_t n)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ (uint64_t)(HB.rank + 1) * 0xBF58476D1CE4E5B9ull;
    for (int64_t i = 0; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
}

/* ---- one point */

static char *buf;
static MPI_Comm node_comm;
static int nodes, shift;

static void stamp(int64_t owner, int64_t offset, int64_t t)
{
    memcpy(buf, &offset, 8);
    int64_t tail = owner;
    memcpy(buf + t - 8, &tail, 8);
}

static int stamped(int64_t owner, int64_t offset, int64_t t)
{
    int64_t head, tail;
    memcpy(&head, buf, 8);
    memcpy(&tail, buf + t - 8, 8);
    return head == offset && tail == owner;
}

typedef struct {
    int shared, collective;
    int64_t t;
} point;

/* One timed open..close of `op` (1 write, 0 read); seconds of this rank, or -1 after a
 * failure (error on stderr / record from rank 0 by the caller). *bad: stamp mismatches. */
static double timed(const point *p, int write, long long *bad)
{
    int whose = write ? HB.rank : (HB.rank + shift) % HB.size;
    char other[4200];
    const char *path = p->shared ? shared_path : own_path;
    if (!p->shared && !write) {
        snprintf(other, sizeof other, "%s/rank%d", dir, whose);
        path = other;
    }
    MPI_Comm comm = p->shared ? HB.comm : MPI_COMM_SELF;
    MPI_Offset base = p->shared ? (MPI_Offset)whose * o_block : 0;
    MPI_File fh;
    TRY(MPI_Barrier(HB.comm));
    double t0 = hs_now_s();
    /* MPI_MODE_UNIQUE_OPEN: no one else opens the file (a private folder), so ROMIO may
     * skip its file locking, as IOR's MPI-IO backend always asks */
    int amode = (write ? MPI_MODE_WRONLY : MPI_MODE_RDONLY) | MPI_MODE_UNIQUE_OPEN;
    int rc = MPI_File_open(comm, path, amode, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) return -1;
    for (int64_t off = 0; off < o_block && rc == MPI_SUCCESS; off += p->t) {
        MPI_Status st;
        if (write) {
            stamp(whose, base + off, p->t);
            rc = p->collective
                     ? MPI_File_write_at_all(fh, base + off, buf, (int)p->t, MPI_BYTE, &st)
                     : MPI_File_write_at(fh, base + off, buf, (int)p->t, MPI_BYTE, &st);
        } else {
            rc = p->collective
                     ? MPI_File_read_at_all(fh, base + off, buf, (int)p->t, MPI_BYTE, &st)
                     : MPI_File_read_at(fh, base + off, buf, (int)p->t, MPI_BYTE, &st);
            if (rc == MPI_SUCCESS && !stamped(whose, base + off, p->t)) (*bad)++;
        }
    }
    if (rc == MPI_SUCCESS && write) rc = MPI_File_sync(fh);
    int closed = MPI_File_close(&fh);
    double t = hs_now_s() - t0;
    return rc == MPI_SUCCESS && closed == MPI_SUCCESS ? t : -1;
}

/* Creates this point's files anew (owners only), outside the clock. 0 on every rank, or
 * -1 on every rank when any failed (named on stderr by that rank). */
static int fresh_files(const point *p)
{
    int err = 0, any = 0;
    if (p->shared) {
        if (HB.rank == 0) {
            if (have_shared) unlink(shared_path);
            err = create_new(shared_path);
            have_shared = err == 0;
        }
    } else {
        if (have_own) unlink(own_path);
        err = create_new(own_path);
        have_own = err == 0;
    }
    if (err)
        fprintf(stderr, "mpiio: rank %d cannot create a file in %s: %s\n", HB.rank, dir,
                strerror(err));
    MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, HB.comm);
    return any ? -1 : 0;
}

static int emit(const point *p, int write, const double *mbs, int cache)
{
    hs_json j;
    hs_json_begin(&j, "sample");
    hs_json_str(&j, "benchmark", "mpiio");
    hs_json_str(&j, "metric", "bandwidth");
    hs_json_str(&j, "unit", "MB/s");
    hs_json_open_object(&j, "params");
    hs_json_str(&j, "op", write ? "write" : "read");
    hs_json_str(&j, "mode", p->collective ? "collective" : "independent");
    hs_json_str(&j, "layout", p->shared ? "shared" : "per_process");
    hs_json_int(&j, "transfer", p->t);
    hs_json_int(&j, "block", o_block);
    hs_json_int(&j, "ranks", HB.size);
    hs_json_int(&j, "nodes", nodes);
    if (!write) {
        hs_json_int(&j, "reorder", shift);
        hs_json_str(&j, "cache", cache ? "dropped" : "kept");
    }
    hs_json_str(&j, "timed", write ? "open+io+sync+close" : "open+io+close");
    hs_json_close(&j);
    hs_json_double_array(&j, "values", mbs, (size_t)o_reps);
    hs_json_int(&j, "warmups", 0);
    return hs_json_emit(&j, HB.out) != 0;
}

static int measure(const point *p)
{
    double *mbs[2];
    mbs[0] = malloc(sizeof(double) * (size_t)o_reps);
    mbs[1] = malloc(sizeof(double) * (size_t)o_reps);
    int dropped_all = 1;
    long long bad = 0, bad_all = 0;
    for (int64_t r = 0; r < o_reps; r++) {
        if (fresh_files(p) != 0) return 1;
        for (int write = 1; write >= 0; write--) {
            if (!write) { /* the written data out of this node's page cache */
                int local_rank, dropped = 1;
                MPI_Comm_rank(node_comm, &local_rank);
                if (!p->shared || local_rank == 0)
                    dropped = drop_cache(p->shared ? shared_path : own_path);
                int all = 0;
                MPI_Allreduce(&dropped, &all, 1, MPI_INT, MPI_MIN, HB.comm);
                dropped_all &= all;
            }
            double t = timed(p, write, &bad), slowest = 0;
            int failed = t < 0, any = 0;
            MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, HB.comm);
            if (any) {
                if (HB.rank == 0)
                    hs_json_error(HB.out,
                                  "MPI-IO %s failed (%s, %s file, transfer %lld) on "
                                  "at least one rank",
                                  write ? "write" : "read",
                                  p->collective ? "collective" : "independent",
                                  p->shared ? "shared" : "per-process", (long long)p->t);
                return 1;
            }
            MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, HB.comm);
            mbs[write][r] = (double)HB.size * (double)o_block / slowest / 1e6;
        }
    }
    MPI_Reduce(&bad, &bad_all, 1, MPI_LONG_LONG, MPI_SUM, 0, HB.comm);
    int rc = 0;
    if (HB.rank == 0) {
        if (bad_all)
            hs_json_error(HB.out,
                          "validation failed: %lld transfers read back another "
                          "owner or offset than written (transfer %lld)",
                          bad_all, (long long)p->t);
        rc = bad_all ? 1 : emit(p, 1, mbs[1], 1) | emit(p, 0, mbs[0], dropped_all);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, HB.comm);
    free(mbs[0]);
    free(mbs[1]);
    return rc;
}

/* Rank 0 makes the private folder; every rank must see it. 0, or 1/2 after an error
 * record (2: the folder cannot be used, a usage problem). */
static int make_dir(void)
{
    int err = 0;
    if (HB.rank == 0) {
        struct statvfs vfs;
        snprintf(dir, sizeof dir, "%s/hpcscope-mpiio-XXXXXX", o_dir);
        if (statvfs(o_dir, &vfs) == 0 && (double)vfs.f_bavail * (double)vfs.f_frsize <
                                             (double)HB.size * (double)o_block) {
            hs_json_error(HB.out,
                          "--dir %s: %.0f MiB free, the files need %.0f MiB (ranks x "
                          "--block-size); free space or lower --block-size",
                          o_dir, (double)vfs.f_bavail * (double)vfs.f_frsize / 1048576.0,
                          (double)HB.size * (double)o_block / 1048576.0);
            err = 2;
        } else if (!mkdtemp(dir)) { /* mkdir: never an existing entry, mode 0700 */
            hs_json_error(HB.out, "--dir %s: cannot make a folder there: %s", o_dir,
                          strerror(errno));
            err = 2;
        } else {
            have_dir = 1;
        }
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, HB.comm);
    if (err) return err;
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, HB.comm);
    struct stat st;
    int missing = stat(dir, &st) != 0 ? HB.rank : -1, first = -1;
    MPI_Allreduce(&missing, &first, 1, MPI_INT, MPI_MAX, HB.comm);
    if (first >= 0) {
        if (HB.rank == 0)
            hs_json_error(HB.out,
                          "--dir %s is not shared by every rank's node (rank %d cannot "
                          "see %s): give a folder of a shared file system",
                          o_dir, first, dir);
        return 2;
    }
    snprintf(own_path, sizeof own_path, "%s/rank%d", dir, HB.rank);
    snprintf(shared_path, sizeof shared_path, "%s/shared", dir);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    (void)hs_counts_parse; /* coll_util.h's count lists: not used here */
    HB.program = "mpiio";
    HB.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(HB.comm, &HB.rank);
    MPI_Comm_size(HB.comm, &HB.size);
    MPI_Comm_set_errhandler(HB.comm, MPI_ERRORS_RETURN);
    int rc =
        hs_parse_quiet(options, argc, argv,
                       "MPI-IO bandwidth: independent and collective writes and reads to "
                       "a shared file and a file per process.\nexample: mpirun -np 4 "
                       "mpiio --dir /scratch/me --transfer-sizes 64K,1M --block-size 16M",
                       check);
    if (rc >= 0) return hs_finish(rc);
    if (!hs_open_out(o_out)) return hs_finish(1);
    if (hs_write_meta_mpi(HB.out, "mpiio", MPIIO_VERSION, options, HB.comm) != 0)
        return hs_finish(1);
    /* nodes and the reader's shift: IOR's -C moves a reader by the ranks of one node */
    TRY(MPI_Comm_split_type(HB.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm));
    int local_rank, local_size, leader;
    MPI_Comm_rank(node_comm, &local_rank);
    MPI_Comm_size(node_comm, &local_size);
    leader = local_rank == 0;
    MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, HB.comm);
    MPI_Allreduce(&local_size, &shift, 1, MPI_INT, MPI_MIN, HB.comm);
    if (HB.size == 1)
        shift = 0;
    else if (nodes == 1)
        shift = 1;
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
    rc = make_dir();
    int64_t largest = 0;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > largest) largest = sizes[i];
    if (!rc) {
        buf = hs_alloc((size_t)largest, 1);
        if (buf) fill_random(buf, largest);
        int ok = buf != NULL, all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, HB.comm);
        if (!all) {
            if (HB.rank == 0)
                hs_json_error(HB.out, "cannot allocate %lld bytes", (long long)largest);
            rc = 1;
        }
    }
    for (int i = 0; i < nsizes && !rc; i++)
        for (int shared = 1; shared >= 0 && !rc; shared--) {
            if (!strstr(o_layouts, shared ? "shared" : "per_process")) continue;
            for (int coll = 0; coll <= 1 && !rc; coll++) {
                if (!strstr(o_modes, coll ? "collective" : "independent")) continue;
                point p = { shared, coll, sizes[i] };
                rc = measure(&p);
            }
        }
    MPI_Barrier(HB.comm);
    if (have_own) unlink(own_path);
    have_own = 0;
    MPI_Barrier(HB.comm); /* every rank's file gone before rank 0 removes the folder */
    if (HB.rank == 0) clean_up();
    have_shared = have_dir = 0;
    free(buf);
    MPI_Comm_free(&node_comm);
    return hs_finish(rc);
}
