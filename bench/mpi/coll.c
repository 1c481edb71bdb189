/* coll.c - MPI collectives: native vs lanecoll's full-lane and hierarchical mock-ups
 * (Träff & Hunold, "Decomposing MPI collectives for exploiting multi-lane communication",
 * sections 3 and 4), as performance-guideline measurements.
 *
 * For each selected collective, count and algorithm (native MPI_<Coll>, LC_<Coll>_lane,
 * LC_<Coll>_hier, LC_<Coll>_lane_v where it exists) the methodology of the paper and ReproMPI (docs/architecture.md):
 *   - one untimed probe call (the first lanecoll call on a communicator builds and caches
 *     its node/lane decomposition) tells whether lanecoll ran the algorithm or fell back
 *     to native because a restriction failed; a fallback is reported in a summary record
 *     ("metric":"fallback") and not timed, so a table never shows native under a lane name;
 *   - --warmup discarded calls, then --repetitions timed calls, each after MPI_Barrier;
 *   - the time of a repetition is the completion time of the slowest process: every rank
 *     times its own call and one MPI_Reduce(MAX) after the loop gives rank 0 the maximum
 *     per repetition; all repetitions are written (raw values, nothing averaged).
 * Validation (--validate, on by default): before timing a (collective, count), an untimed
 * pass runs native, then every selected lanecoll algorithm on the same input and compares every defined
 * receive element bit for bit (MPI_INT, MPI_SUM; the root's buffer for gather/reduce, not
 * rank 0's for exscan). A mismatch is an error record naming collective, algorithm,
 * count, ranks and first offset; the wrong algorithm is then not timed.
 *
 * What "count" means per collective: see coll_catalog.h (total count for bcast, reduce,
 * allreduce, scan, exscan; per-process block for the others; the mean block of irregular
 * counts for allgatherv, gatherv, scatterv). Default sweep ("auto"):
 * like the paper, counts scaled by p for total collectives (p, 10p, ..., 10000p) and
 * block counts 1, 10, ..., 10000 for block collectives, so the total data is p*10^k in
 * both; auto drops counts whose buffers exceed --max-bytes (and says so in a summary).
 * Explicit counts above the limit are refused before anything is measured.
 *
 * Memory per process: send + receive (+ a reference copy of the receive buffer when
 * validating) of the largest role, allocated on every rank, e.g. alltoall with block c on
 * p ranks: 2*p*c*4 bytes (+ p*c*4).
 *
 * Output: JSONL (rank 0, flushed per record): meta; a summary "decomposition" (nodes, ppn,
 * regularity, node override, lanecoll available); one sample per (collective, algorithm,
 * count) as soon as it is measured: metric "time", unit "us", params {collective,
 * algorithm, count, bytes, nodes, ppn, p, regular, node_override}.
 *
 * Beyond the paper: barrier, alltoallv, alltoallw and reduce_scatter are measured native
 * only (lanecoll has no decomposition of them) and validated against the values they must
 * produce; reduce_scatterv (MPI_Reduce + MPI_Scatterv) and alltoallv (regular counts) are
 * the program's own guideline mock-ups (coll_catalog.h hs_mockups). --protocol osu
 * replaces the loop above by OSU 7.4's (measure_osu: one mean per rank), --npmin K runs
 * everything on the first K, 2K, 4K, ... ranks and then all (IMB-MPI1's -npmin).
 *
 * native is PMPI_<Coll> (the library's own collective even under an interposition
 * library); "tuned" calls MPI_<Coll>, i.e. what liblanecoll_pmpi.so (LD_PRELOAD +
 * LANECOLL_TUNING) chose; the decomposition summary names the object that provides
 * MPI_Allreduce so a "tuned" run without interposition is recognisable. --interleave runs
 * the algorithms in turn inside each repetition (shuffled order; samples written after
 * the last algorithm) so that a drifting machine affects all of them alike.
 * Exit: 0 ok, 1 measurement failed (error record written), 2 bad usage or over the limit.
 */
#define _GNU_SOURCE    /* dladdr */
#include "coll_util.h" /* first: sets _POSIX_C_SOURCE */

#include <dlfcn.h>
#include <math.h>

#include "binding_mpi.h"
#include "coll_catalog.h"
#include "coll_nodes.h"
#include "coll_repeat.h"
#include "timer.h"

#define COLL_VERSION "0.1.0"
#define SENTINEL 0x5a5a5a5a /* preset receive value; far above any |sum| of the data */

static const char *o_colls, *o_algs, *o_counts, *o_out, *o_protocol;
static int64_t o_reps, o_warmup, o_maxbytes, o_osu_iters, o_osu_skip, o_npmin;
static int osu; /* --protocol osu */
static int o_validate, o_interleave;

static hs_option options[] = {
    { "collectives", HS_OPT_STR, &o_colls, NULL /* every collective of the catalogue */,
      "comma-separated collectives" },
    { "algorithms", HS_OPT_STR, &o_algs, NULL /* native + the catalogue's variants */,
      "comma-separated: native (PMPI_<Coll>), the lanecoll variants (LC_<Coll>_<variant>: "
      "lane, hier, lane_v, ...; which collective has which: --list-algorithms), "
      "tuned (MPI_<Coll>: the choice of an interposition library such as "
      "liblanecoll_pmpi.so)" },
    { "counts", HS_OPT_STR, &o_counts, "auto",
      "auto, a list (64,1p,10p: p suffix = times ranks) or a sweep FROM:TO[:FACTOR] "
      "(1p:10000p:10); total count or per-process block, see --help text" },
    { "repetitions", HS_OPT_INT, &o_reps, "100", "timed repetitions per measurement" },
    { "warmup", HS_OPT_INT, &o_warmup, "5", "discarded calls before the repetitions" },
    { "max-bytes", HS_OPT_SIZE, &o_maxbytes, "1G",
      "memory limit per process for the buffers of one measurement" },
    { "validate", HS_OPT_FLAG, &o_validate, "1",
      "untimed pass comparing lane/hier results with native, bit for bit (--validate=0: "
      "off)" },
    { "interleave", HS_OPT_FLAG, &o_interleave, "0",
      "run the algorithms in turn within each repetition (shuffled order) instead of one "
      "after the other: fairer comparisons on a machine whose speed drifts" },
    HS_REPEAT_OPTIONS,
    { "protocol", HS_OPT_STR, &o_protocol, "hpcscope",
      "hpcscope (each repetition after MPI_Barrier, the slowest rank's time per "
      "repetition) or osu (OSU 7.4's collective loop: MPI_Wtime around each call, "
      "MPI_Barrier after it, every rank's mean over the iterations; one value per rank)" },
    { "osu-iterations", HS_OPT_INT, &o_osu_iters, "0",
      "--protocol osu: timed iterations per size, small and large alike (OSU's -i); 0 = "
      "OSU's: 1000, 100 above 8 KiB" },
    { "osu-skip", HS_OPT_INT, &o_osu_skip, "-1",
      "--protocol osu: untimed iterations first (OSU's -x); -1 = OSU's: 100, 10 above 8 "
      "KiB" },
    { "npmin", HS_OPT_INT, &o_npmin, "0",
      "IMB-MPI1's -npmin: measure everything on the first K ranks, then 2K, 4K, ... and "
      "finally all ranks (params p says how many); 0 = all ranks only" },
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" },
    { 0 }
};

static int sel_coll[NCOLL], sel_alg[NALG];
static const char *alg_choices;  /* "--algorithms: choose from native, lane, ..." */
static const char *coll_choices; /* "--collectives: choose from bcast, ..." */
enum { SKIP_NONE, SKIP_WRONG, SKIP_MISSING }; /* why an algorithm is not timed */

static int check(int quiet)
{
    const char *why = NULL;
    char bad[96] = "";
    memset(sel_coll, 0, sizeof sel_coll);
    memset(sel_alg, 0, sizeof sel_alg);
    for (const char *s = o_colls; *s && !why;) {
        size_t len = strcspn(s, ",");
        int found = 0;
        for (int c = 0; c < NCOLL; c++)
            if (strlen(colls[c].name) == len && !strncmp(colls[c].name, s, len))
                sel_coll[c] = found = 1;
        if (!found) {
            snprintf(bad, sizeof bad, "unknown collective '%.*s'",
                     (int)(len < 40 ? len : 40), s);
            why = coll_choices;
        }
        s += len + (s[len] == ',');
    }
    for (const char *s = o_algs; *s && !why;) {
        size_t len = strcspn(s, ",");
        int found = 0;
        for (int a = 0; a < n_alg; a++)
            if (strlen(alg_names[a]) == len && !strncmp(alg_names[a], s, len))
                sel_alg[a] = found = 1;
        if (!found) {
            snprintf(bad, sizeof bad, "unknown algorithm '%.*s'",
                     (int)(len < 40 ? len : 40), s);
            why = alg_choices;
        }
        s += len + (s[len] == ',');
    }
    if (!why) {
        int any_c = 0, any_a = 0;
        for (int c = 0; c < NCOLL; c++) any_c |= sel_coll[c];
        for (int a = 0; a < n_alg; a++) any_a |= sel_alg[a];
        if (!any_c)
            why = "--collectives: none selected";
        else if (!any_a)
            why = "--algorithms: none selected";
        else if (o_reps < 1)
            why = "--repetitions must be >= 1";
        else if (o_warmup < 0)
            why = "--warmup must be >= 0";
        else if (o_maxbytes < 1)
            why = "--max-bytes must be > 0";
        else if (strcmp(o_protocol, "hpcscope") && strcmp(o_protocol, "osu"))
            why = "--protocol must be hpcscope or osu";
        else if (!strcmp(o_protocol, "osu") && (o_interleave || hs_rep_precision > 0))
            why = "--protocol osu keeps OSU's fixed counts, one algorithm after the other: "
                  "drop --precision and --interleave, or use --protocol hpcscope";
        else if (o_osu_iters < 0 || o_osu_skip < -1)
            why = "--osu-iterations must be >= 0 and --osu-skip >= -1";
        else if (o_npmin < 0 || o_npmin > HB.size)
            why = "--npmin must be between 1 and the number of ranks (0: off)";
        else
            why = hs_repeat_problem();
    }
    if (!why) return -1;
    if (!quiet) fprintf(stderr, "coll: %s%s%s (see --help)\n", bad, *bad ? ": " : "", why);
    return 2;
}

/* ---- run state ----------------------------------------------------------------------- */

static hs_nodes ND;
static int *sbuf, *rbuf, *ref;
static double *t_local, *t_max;

static inline int value_at(int rank, int64_t i)
{
    return (int)(((uint64_t)rank * 7919u + (uint64_t)i * 104729u) % 2001u) - 1000;
}

static int64_t need_bytes(int c, int64_t count, int p)
{
    int64_t s, r;
    coll_elems(c, count, p, &s, &r);
    return (s + r * (o_validate ? 2 : 1)) * (int64_t)sizeof(int);
}

/* Does this rank's receive buffer hold a defined result for collective c? */
static int defined_here(int c)
{
    if (colls[c].root_only) return HB.rank == 0;
    if (c == C_exscan) return HB.rank != 0;
    return 1;
}

/* Sets the buffers to the call's input: send data everywhere, receive sentinel, and for
 * bcast the root's data in the (receive) buffer. */
static void prepare(int c, int64_t count)
{
    int64_t s, r;
    coll_elems(c, count, HB.size, &s, &r);
    for (int64_t i = 0; i < s; i++) sbuf[i] = value_at(HB.rank, i);
    for (int64_t i = 0; i < r; i++) rbuf[i] = SENTINEL;
    if (c == C_bcast && HB.rank == 0)
        for (int64_t i = 0; i < r; i++) rbuf[i] = value_at(0, i);
}

/* Whether lanecoll fell back to native on any rank; rank 0 gets the reason text. */
static int fell_back(char *reason, size_t len)
{
    const char *why = coll_fallback(HB.comm);
    int mine = why != NULL, any = 0;
    TRY(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, HB.comm));
    if (any && HB.rank == 0) snprintf(reason, len, "%s", why ? why : "on another rank");
    return any;
}

/* OSU 7.4's size of (c, count) in bytes: what its programs print in "# Size" and switch
 * their loop counts by. It is the per-process block (our bytes) except for
 * Reduce_scatter and Reduce_scatter_block, whose size is the whole vector (p blocks). */
static int64_t osu_size(int c, int64_t count)
{
    int64_t bytes = count * (int64_t)sizeof(int);
    return c == C_reduce_scatter || c == C_reduce_scatter_block ? bytes * HB.size : bytes;
}

/* OSU 7.4's loop counts for (c, count) (osu_util.h: COLL_LOOP_SMALL 1000, COLL_SKIP_SMALL
 * 100, COLL_LOOP_LARGE 100, COLL_SKIP_LARGE 10 above LARGE_MESSAGE_SIZE 8192; barrier
 * always small), unless --osu-iterations / --osu-skip set them (as OSU's -i and -x). */
static void osu_loop(int c, int64_t count, int64_t *iters, int64_t *skip)
{
    int large = c != C_barrier && osu_size(c, count) > 8192;
    *iters = o_osu_iters > 0 ? o_osu_iters : large ? 100 : 1000;
    *skip = o_osu_skip >= 0 ? o_osu_skip : large ? 10 : 100;
}

static void params_json(hs_json *j, int c, int a, int64_t count)
{
    hs_json_open_object(j, "params");
    hs_json_str(j, "collective", colls[c].name);
    hs_json_str(j, "algorithm", alg_names[a]);
    hs_json_int(j, "count", count);
    hs_json_int(j, "bytes", count * (int64_t)sizeof(int));
    hs_nodes_params(j, &ND, HB.size);
    if (osu) {
        int64_t iters, skip;
        osu_loop(c, count, &iters, &skip);
        hs_json_str(j, "protocol", "osu");
        hs_json_int(j, "iterations", iters);
        hs_json_int(j, "osu_size", osu_size(c, count));
        if (c == C_allgatherv || c == C_gatherv || c == C_scatterv || c == C_alltoallv ||
            c == C_alltoallw || c == C_reduce_scatter)
            hs_json_str(j, "blocks", "regular"); /* OSU's, not the weights 1, 2, 3 */
    }
    hs_json_close(j);
}

/* Summary record saying an algorithm was not timed and why (not an error: lanecoll
 * documents these restrictions, and the run is still valid). */
static void not_timed(int c, int a, int64_t count, const char *metric, const char *why)
{
    if (HB.rank != 0) return;
    hs_json j;
    hs_json_begin(&j, "summary");
    hs_json_str(&j, "metric", metric);
    params_json(&j, c, a, count);
    hs_json_str(&j, "reason", why);
    hs_json_emit(&j, HB.out);
}

/* ---- validation ---------------------------------------------------------------------- */

/* Returns 1 when algorithm a disagrees with ref (rank 0 wrote the error record), which
 * holds native's result, or for a native-only collective the values it must produce
 * (`against` names which). */
static int compare_with_ref(int c, int a, int64_t count, const char *against)
{
    int64_t s, r;
    coll_elems(c, count, HB.size, &s, &r);
    long long mine[4] = { 0, -1, 0, 0 }; /* mismatches, first offset, got, expected */
    if (defined_here(c))
        for (int64_t i = 0; i < r; i++)
            if (rbuf[i] != ref[i] && mine[0]++ == 0) {
                mine[1] = i;
                mine[2] = rbuf[i];
                mine[3] = ref[i];
            }
    long long *all = HB.rank == 0 ? malloc(sizeof(long long) * 4 * (size_t)HB.size) : NULL;
    TRY(MPI_Gather(mine, 4, MPI_LONG_LONG, all, 4, MPI_LONG_LONG, 0, HB.comm));
    int bad = 0;
    if (HB.rank == 0) {
        long long total = 0, ranks = 0;
        int first = -1;
        for (int q = 0; q < HB.size; q++)
            if (all[4 * q] > 0) {
                total += all[4 * q];
                ranks++;
                if (first < 0) first = q;
            }
        if (total > 0) {
            bad = 1;
            const long long *f = all + 4 * first;
            char msg[512];
            snprintf(
                msg, sizeof msg,
                "validation failed: %s %s count %lld differs from %s on %lld rank(s), "
                "%lld element(s); first on rank %d at element %lld (got %lld, %s %lld)",
                colls[c].name, alg_names[a], (long long)count, against, ranks, total, first,
                f[1], f[2], against, f[3]);
            hs_json j;
            hs_json_begin(&j, "error");
            hs_json_str(&j, "message", msg);
            hs_json_str(&j, "collective", colls[c].name);
            hs_json_str(&j, "algorithm", alg_names[a]);
            hs_json_int(&j, "count", count);
            hs_json_int(&j, "mismatches", total);
            hs_json_int(&j, "ranks", ranks);
            hs_json_emit(&j, HB.out);
        }
        free(all);
    }
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* The result a native-only collective must produce on this rank, computed from the input
 * (value_at) without communication: alltoallv/w receive from rank r its block for this
 * rank, which sits at r's send displacement sum_{j<me} vcounts[(r+j)%p]; reduce_scatter's
 * block is the sum over the ranks of their elements at this rank's displacement. O(p^2)
 * and O(p * count): untimed. Barrier has no data (r = 0). */
static void expected_result(int c, int64_t count)
{
    int p = HB.size, me = HB.rank;
    int64_t s, r;
    coll_elems(c, count, p, &s, &r);
    for (int64_t i = 0; i < r; i++) ref[i] = SENTINEL; /* beyond the block: untouched */
    if (c == C_barrier || coll_vector_layout(count, p)) return;
    if (c == C_reduce_scatter) {
        for (int64_t k = 0; k < hs_vcounts[me]; k++) {
            int sum = 0;
            for (int q = 0; q < p; q++) sum += value_at(q, hs_vdispls[me] + k);
            ref[k] = sum;
        }
        return;
    }
    int64_t at = 0; /* receive displacement: blocks in rank order */
    for (int r = 0; r < p; r++) {
        int64_t from = 0, n = hs_vcounts[(r + me) % p];
        for (int j = 0; j < me; j++) from += hs_vcounts[(r + j) % p];
        for (int64_t k = 0; k < n; k++) ref[at + k] = value_at(r, from + k);
        at += n;
    }
}

/* Untimed pass: native into ref, then each selected lanecoll algorithm compared with it.
 * skip[a] becomes SKIP_WRONG for an algorithm whose result differs (not timed then).
 * Unavailable algorithms are left to measure(), which reports them. */
static int validate(int c, int64_t count, int skip[NALG])
{
    int64_t s, r;
    int failed = 0;
    coll_elems(c, count, HB.size, &s, &r);
    prepare(c, count);
    TRY(coll_call(c, A_NATIVE, sbuf, rbuf, (int)count, HB.comm));
    const char *against = "native";
    if (coll_native_only(c)) { /* nothing to compare with: check native itself */
        expected_result(c, count);
        if (compare_with_ref(c, A_NATIVE, count, "the expected values")) {
            skip[A_NATIVE] = SKIP_WRONG;
            failed = 1;
        }
        against = "the expected values";
    } else
        memcpy(ref, rbuf, sizeof(int) * (size_t)r);
    for (int a = A_NATIVE + 1; a < n_alg; a++) {
        if (!sel_alg[a] || skip[a]) continue;
        prepare(c, count);
        int rc = coll_call(c, a, sbuf, rbuf, (int)count, HB.comm);
        if (rc == HS_UNAVAILABLE) continue;
        TRY(rc);
        if (compare_with_ref(c, a, count, against)) {
            skip[a] = SKIP_WRONG;
            failed = 1;
        }
    }
    return failed;
}

/* ---- measurement --------------------------------------------------------------------- */

/* Probe call of algorithm a (untimed; builds lanecoll's cache): 1 when a can be timed,
 * 0 when it is unavailable or lanecoll fell back to native (a summary says which). */
static int probe(int c, int a, int64_t count)
{
    char reason[300] = "";
    prepare(c, count);
    int rc = coll_call(c, a, sbuf, rbuf, (int)count, HB.comm);
    if (rc == HS_UNAVAILABLE) {
        not_timed(c, a, count, "unavailable",
                  "this coll binary was built without lanecoll (lanecoll.h not found)");
        return 0;
    }
    TRY(rc);
    if (coll_is_lanecoll(a) && fell_back(reason, sizeof reason)) {
        not_timed(c, a, count, "fallback", reason);
        return 0;
    }
    return 1;
}

/* One timed call after a barrier; microseconds on this rank. */
static double timed_call(int c, int a, int n)
{
    TRY(MPI_Barrier(HB.comm));
    double t0 = hs_now_s();
    int rc = coll_call(c, a, sbuf, rbuf, n, HB.comm);
    double t1 = hs_now_s();
    TRY(rc);
    return (t1 - t0) * 1e6;
}

/* The order of the algorithms in repetition i of --interleave: a Fisher-Yates shuffle
 * driven by splitmix64 of the repetition index, so every rank computes the same order
 * (collectives must be called in the same order everywhere) with no communication. A
 * fixed rotation would always run each algorithm right after the same other one, which
 * then hands it its cache state (measured: up to 1.3x on this 2-core VM). */
static void shuffled_order(int64_t i, int *order, int na)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
    for (int k = 0; k < na; k++) order[k] = k;
    for (int k = na - 1; k > 0; k--) {
        x += 0x9E3779B97F4A7C15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        int j = (int)(z % (uint64_t)(k + 1));
        int tmp = order[k];
        order[k] = order[j];
        order[j] = tmp;
    }
}

/* What one measurement times: (c, count) with the algorithms algs[0..na). */
typedef struct {
    int c, n, na;
    const int *algs;
} timing;

/* Repetitions [from, to) of every algorithm (hs_repeat_fn): one algorithm (na 1), or
 * (--interleave) all of them within each repetition in a freshly shuffled order, the
 * order of repetition i being that of call o_warmup + i, as when warm-ups and repetitions
 * were one loop. */
static void time_reps(int64_t from, int64_t to, void *arg)
{
    const timing *t = arg;
    int order[NALG];
    for (int64_t i = from; i < to; i++) {
        shuffled_order(o_warmup + i, order, t->na);
        for (int k = 0; k < t->na; k++) {
            int slot = t->na > 1 ? order[k] : 0;
            t_local[(size_t)slot * o_reps + i] = timed_call(t->c, t->algs[slot], t->n);
        }
    }
}

typedef struct {
    int c, a;
    int64_t count;
} cell;

static void cell_params(hs_json *j, const void *arg)
{
    const cell *x = arg;
    params_json(j, x->c, x->a, x->count);
}

/* --protocol osu: OSU 7.4's collective loop for algorithm a (osu_allreduce.c and the
 * others): MPI_Barrier, then skip + iterations calls, each between two MPI_Wtime reads
 * and followed by an MPI_Barrier outside the timer (not for barrier itself: osu_barrier
 * times MPI_Barrier back to back); a rank's latency is its timed sum / iterations. OSU
 * prints the mean, min and max of those over the ranks; here rank 0 gathers them and
 * writes them all, in rank order, as the sample's values (one per rank). */
static int measure_osu(int c, int64_t count, int a)
{
    int64_t iters, skip;
    osu_loop(c, count, &iters, &skip);
    double timer = 0;
    TRY(MPI_Barrier(HB.comm));
    for (int64_t i = 0; i < iters + skip; i++) {
        double t0 = MPI_Wtime();
        int rc = coll_call(c, a, sbuf, rbuf, (int)count, HB.comm);
        double t1 = MPI_Wtime();
        TRY(rc);
        if (c != C_barrier) TRY(MPI_Barrier(HB.comm));
        if (i >= skip) timer += t1 - t0;
    }
    double latency = timer * 1e6 / (double)iters;
    TRY(MPI_Gather(&latency, 1, MPI_DOUBLE, t_max, 1, MPI_DOUBLE, 0, HB.comm));
    hs_repeat_result r = { HB.size, NULL };
    cell x = { c, a, count };
    int bad = hs_repeat_emit("time", &r, t_max, skip, cell_params, &x);
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* Times every algorithm in algs[0..na) for (c, count): warm-ups then repetitions
 * (coll_repeat.h: a fixed count or to --precision), either algorithm after algorithm, or
 * (--interleave) all algorithms within each repetition in a freshly shuffled order. Rank 0
 * writes one sample per algorithm (and with --precision a summary of its precision).
 * Returns 0, or 1 when a record could not be written. */
static int measure(int c, int64_t count, const int *algs, int na)
{
    int n = (int)count;
    if (na == 0) return 0;
    if (osu) {
        int bad = 0;
        for (int k = 0; k < na && !bad; k++) bad = measure_osu(c, count, algs[k]);
        return bad;
    }
    int order[NALG];
    for (int64_t i = 0; i < o_warmup; i++) {
        shuffled_order(i, order, na);
        for (int k = 0; k < na; k++) timed_call(c, algs[na > 1 ? order[k] : 0], n);
    }
    timing t = { c, n, na, algs };
    hs_repeat_result r = hs_repeat(time_reps, &t, na, o_reps, t_local, t_max);
    int bad = 0;
    for (int k = 0; k < na; k++) {
        cell x = { c, algs[k], count };
        bad |= hs_repeat_emit("time", &r, t_max + (size_t)k * o_reps, o_warmup, cell_params,
                              &x);
    }
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* ---- plan: counts per collective, memory check --------------------------------------- */

typedef struct {
    int64_t *counts;
    int n;
} count_list;

/* Fills lists[c] for every selected collective. Returns -1 to go on, or 2 after rank 0
 * wrote an error record (bad spec, explicit count over the limit or over an MPI int). */
static int plan_counts(count_list lists[NCOLL], int64_t *max_send, int64_t *max_recv,
                       int report)
{
    int automatic = !strcmp(o_counts, "auto");
    *max_send = *max_recv = 1;
    for (int c = 0; c < NCOLL; c++) {
        if (!sel_coll[c]) continue;
        const char *why,
            *spec = automatic ? (colls[c].block ? "1:10000:10" : "1p:10000p:10") : o_counts;
        if (c == C_barrier) spec = "0"; /* no data: one measurement, count 0 */
        int n = hs_counts_parse(spec, HB.size, &lists[c].counts, &why);
        if (n < 0) {
            if (HB.rank == 0) hs_json_error(HB.out, "--counts '%s': %s", o_counts, why);
            return 2;
        }
        int kept = 0;
        char dropped[256] = "";
        for (int i = 0; i < n; i++) {
            int64_t count = lists[c].counts[i], s, r;
            coll_elems(c, count, HB.size, &s, &r);
            int64_t need = need_bytes(c, count, HB.size);
            int too_big = count > INT_MAX || s > INT_MAX || r > INT_MAX;
            if (!too_big && need <= o_maxbytes) {
                lists[c].counts[kept++] = count;
                if (s > *max_send) *max_send = s;
                if (r > *max_recv) *max_recv = r;
                continue;
            }
            if (automatic) {
                size_t used = strlen(dropped);
                snprintf(dropped + used, sizeof dropped - used, "%s%lld", used ? "," : "",
                         (long long)count);
                continue;
            }
            if (HB.rank == 0) {
                if (too_big)
                    hs_json_error(HB.out,
                                  "%s count %lld on %d ranks needs buffers of more "
                                  "than INT_MAX elements; lower --counts",
                                  colls[c].name, (long long)count, HB.size);
                else
                    hs_json_error(
                        HB.out,
                        "%s count %lld on %d ranks needs %lld bytes of "
                        "buffers per process (send %lld + receive %lld elements of "
                        "4 bytes%s), above --max-bytes %lld; raise the limit (e.g. "
                        "--max-bytes %lldM) or lower --counts",
                        colls[c].name, (long long)count, HB.size, (long long)need,
                        (long long)s, (long long)r,
                        o_validate ? ", twice for validation" : "", (long long)o_maxbytes,
                        (long long)(need >> 20) + 1);
            }
            return 2;
        }
        lists[c].n = kept;
        if (*dropped && HB.rank == 0 && report) {
            hs_json j;
            hs_json_begin(&j, "summary");
            hs_json_str(&j, "metric", "counts_dropped");
            hs_json_str(&j, "collective", colls[c].name);
            hs_json_str(&j, "counts", dropped);
            hs_json_int(&j, "max_bytes", o_maxbytes);
            hs_json_str(&j, "reason", "buffers above --max-bytes per process");
            hs_json_emit(&j, HB.out);
        }
    }
    return -1;
}

static void decomposition_summary(void)
{
    if (HB.rank != 0) return;
    hs_json j;
    hs_json_begin(&j, "summary");
    hs_json_str(&j, "metric", "decomposition");
    hs_json_int(&j, "nodes", ND.nodes);
    hs_json_int(&j, "ppn", ND.ppn);
    hs_json_int(&j, "min_ppn", ND.min_ppn);
    hs_json_int(&j, "max_ppn", ND.max_ppn);
    hs_json_int(&j, "p", HB.size);
    hs_json_bool(&j, "regular", ND.regular);
    hs_json_bool(&j, "consecutive", ND.consecutive);
    hs_json_str(&j, "node_override", ND.override);
    hs_json_bool(&j, "lanecoll", HS_HAVE_LANECOLL);
    Dl_info info; /* who answers MPI_Allreduce: libmpi, or an interposition library */
    void *fn = (void *)MPI_Allreduce;
    hs_json_str(&j, "mpi_coll_provider",
                dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "");
#if HS_HAVE_LANECOLL
    hs_json_str(&j, "lanecoll_version", LANECOLL_VERSION);
#endif
    hs_json_emit(&j, HB.out);
}

/* JSON string (the catalogue's texts are ASCII; quotes, backslashes and control
 * characters escaped anyway). */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

/* --list-algorithms: the collectives and the algorithms this build can run, as one JSON
 * document on stdout (schema hpcscope.algorithms/1; no MPI_Init). native is always
 * there; the lanecoll variants only when this binary was built with lanecoll. */
static int list_algorithms(void)
{
    printf("{\"schema\":\"hpcscope.algorithms/1\",\"program\":\"coll\",\"version\":");
    json_string(COLL_VERSION);
    printf(",\"lanecoll\":%s,\"lanecoll_version\":", HS_HAVE_LANECOLL ? "true" : "false");
#if HS_HAVE_LANECOLL
    json_string(LANECOLL_VERSION);
#else
    printf("null");
#endif
    printf(",\"extra_algorithms\":[{\"variant\":\"tuned\",\"description\":");
    json_string("MPI_<Coll>: whatever an interposition library (liblanecoll_pmpi.so with "
                "LANECOLL_TUNING) chooses; native without one");
    printf("}],\"collectives\":[");
    for (int c = 0; c < NCOLL; c++) {
        printf("%s{\"name\":", c ? "," : "");
        json_string(colls[c].name);
        printf(",\"block\":%s,\"root\":%s,\"reduction\":%s,\"root_only\":%s,\"vector\":%s,"
               "\"algorithms\":[{\"variant\":\"native\",\"restrictions\":\"\","
               "\"cost\":\"the MPI library's own collective (PMPI_<Coll>)\"}",
               colls[c].block ? "true" : "false", colls[c].rooted ? "true" : "false",
               colls[c].reduction ? "true" : "false", colls[c].root_only ? "true" : "false",
               colls[c].vector ? "true" : "false");
        for (int i = 0; i < HS_NDEF; i++) {
            if (lc_algs[i].coll != c || !lc_algs[i].fn) continue;
            printf(",{\"variant\":");
            json_string(lc_algs[i].variant);
            printf(",\"restrictions\":");
            json_string(lc_algs[i].restrictions);
            printf(",\"cost\":");
            json_string(lc_algs[i].cost);
            printf("}");
        }
        for (int i = 0; i < HS_NMOCKUP; i++) {
            if (hs_mockups[i].coll != c) continue;
            printf(",{\"variant\":");
            json_string(hs_mockups[i].variant);
            printf(",\"restrictions\":");
            json_string(hs_mockups[i].restrictions);
            printf(",\"cost\":");
            json_string(hs_mockups[i].cost);
            printf(",\"mockup\":true}");
        }
        printf("],\"native_only\":%s}", coll_native_only(c) ? "true" : "false");
    }
    printf("]}\n");
    return fflush(stdout) == 0 ? 0 : 1;
}

/* Every selected (collective, count, algorithm) on HB.comm: validation, probe, timing.
 * Returns 1 when a record could not be written; *failed becomes 1 when a validation
 * failed. Frees the count lists. */
static int run_collectives(count_list lists[NCOLL], int *failed)
{
    int write_failed = 0;
    for (int c = 0; c < NCOLL && !write_failed; c++) {
        if (!sel_coll[c]) continue;
        for (int i = 0; i < lists[c].n && !write_failed; i++) {
            int64_t count = lists[c].counts[i];
            int skip[NALG] = { SKIP_NONE };
            for (int a = 0; a < n_alg; a++)
                if (!coll_has(c, a)) skip[a] = SKIP_MISSING;
            if (o_validate) *failed |= validate(c, count, skip);
            int algs[NALG], na = 0;
            for (int a = 0; a < n_alg; a++) {
                if (!sel_alg[a] || skip[a] == SKIP_WRONG)
                    continue; /* error record written */
                if (skip[a] == SKIP_MISSING && c == C_alltoall &&
                    !strcmp(alg_names[a], "hier"))
                    not_timed(c, a, count, "unavailable",
                              "no hierarchical alltoall (paper, section 3.6)");
                else if (skip[a] == SKIP_MISSING)
                    continue; /* e.g. lane_v where lane has no regular/vector choice, or
                                 hier for gatherv/scatterv (not in the catalogue) */
                else if (probe(c, a, count))
                    algs[na++] = a;
            }
            /* paper order: one algorithm's repetitions after the other (each set of
             * samples written as soon as it is measured), unless --interleave */
            if (o_interleave) write_failed = measure(c, count, algs, na);
            for (int k = 0; k < na && !o_interleave && !write_failed; k++)
                write_failed = measure(c, count, &algs[k], 1);
        }
        free(lists[c].counts);
    }
    return write_failed;
}

/* One rank count of --npmin (all ranks without it): the first np ranks of
 * MPI_COMM_WORLD as HB.comm measure everything (their own node decomposition and
 * counts, params p = np) while the others wait at the closing barrier. Returns 1 when a
 * record could not be written (known to every rank). */
static int run_level(int np, int world_size, int *failed)
{
    MPI_Comm sub = MPI_COMM_WORLD;
    int write_failed = 0;
    if (np < world_size)
        TRY(MPI_Comm_split(MPI_COMM_WORLD, HB.rank < np ? 0 : MPI_UNDEFINED, HB.rank,
                           &sub));
    if (sub != MPI_COMM_NULL) {
        HB.comm = sub;
        HB.size = np;
        if (o_npmin > 0) { /* ND is the last level's: this one's own */
            hs_nodes_free(&ND);
            if (hs_nodes_get(sub, &ND) != MPI_SUCCESS) {
                if (HB.rank == 0)
                    hs_json_error(HB.out, "cannot determine the nodes of %d ranks", np);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        if (np < world_size) decomposition_summary();
        count_list lists[NCOLL];
        memset(lists, 0, sizeof lists);
        int64_t max_send, max_recv; /* within all ranks' limits, checked in main */
        if (plan_counts(lists, &max_send, &max_recv, np < world_size) >= 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        write_failed = run_collectives(lists, failed);
        if (sub != MPI_COMM_WORLD) TRY(MPI_Comm_free(&sub));
    }
    HB.comm = MPI_COMM_WORLD;
    HB.size = world_size;
    TRY(MPI_Bcast(&write_failed, 1, MPI_INT, 0, MPI_COMM_WORLD));
    return write_failed;
}

int main(int argc, char **argv)
{
    coll_catalog_init();
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--list-algorithms")) return list_algorithms();
    /* --algorithms defaults to native and every lanecoll variant; its error names all */
    static char alg_default[256], choices[320];
    size_t used = 0;
    for (int a = 0; a < A_TUNED; a++)
        used += (size_t)snprintf(alg_default + used, sizeof alg_default - used, "%s%s",
                                 a ? "," : "", alg_names[a]);
    used = (size_t)snprintf(choices, sizeof choices, "--algorithms: choose from");
    for (int a = 0; a < n_alg; a++)
        used += (size_t)snprintf(choices + used, sizeof choices - used, "%s %s",
                                 a ? "," : "", alg_names[a]);
    alg_choices = choices;
    static char coll_default[512], coll_names[600];
    used = 0;
    for (int c = 0; c < NCOLL; c++)
        used += (size_t)snprintf(coll_default + used, sizeof coll_default - used, "%s%s",
                                 c ? "," : "", colls[c].name);
    used = (size_t)snprintf(coll_names, sizeof coll_names, "--collectives: choose from");
    for (int c = 0; c < NCOLL; c++)
        used += (size_t)snprintf(coll_names + used, sizeof coll_names - used, "%s %s",
                                 c ? "," : "", colls[c].name);
    coll_choices = coll_names;
    for (hs_option *o = options; o->name; o++) {
        if (o->target == &o_algs) o->def = alg_default;
        if (o->target == &o_colls) o->def = coll_default;
    }

    MPI_Init(&argc, &argv);
    HB.program = "coll";
    HB.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(HB.comm, &HB.rank);
    MPI_Comm_size(HB.comm, &HB.size);
    MPI_Comm_set_errhandler(HB.comm, MPI_ERRORS_RETURN);

    int rc = hs_parse_quiet(
        options, argc, argv,
        "MPI collectives, native vs lanecoll full-lane (lane) and "
        "hierarchical (hier) mock-ups (Traff & Hunold), as JSONL records.\n"
        "count = MPI count for bcast/reduce/allreduce/scan/exscan, the "
        "per-process block for gather/scatter/allgather/alltoall/"
        "reduce_scatter_block, the mean block for allgatherv/gatherv/scatterv/alltoallv/"
        "alltoallw/reduce_scatter (irregular counts, weights 1,2,3 over the ranks; regular "
        "with --protocol osu), 0 for "
        "barrier.\nexample: LANECOLL_NODE_SIZE=1 "
        "mpirun -np 2 "
        "coll --collectives allreduce,bcast --counts 1p:1000p --repetitions 20",
        check);
    if (rc >= 0) return hs_finish(rc);
    osu = !strcmp(o_protocol, "osu");
    hs_regular_vectors = osu; /* OSU's vector programs: every block the same */
    if (!hs_open_out(o_out)) return hs_finish(1);
    if (hs_write_meta_mpi(HB.out, "coll", COLL_VERSION, options, HB.comm) != 0)
        return hs_finish(1);

    rc = hs_nodes_get(HB.comm, &ND);
    if (rc != MPI_SUCCESS) {
        if (HB.rank == 0)
            hs_json_error(HB.out,
                          "cannot determine the nodes of the ranks (check the "
                          "LANECOLL_NODE_* setting '%s')",
                          ND.override);
        return hs_finish(1);
    }
    decomposition_summary();

    count_list lists[NCOLL];
    memset(lists, 0, sizeof lists);
    int64_t max_send, max_recv;
    rc = plan_counts(lists, &max_send, &max_recv, 1);
    if (rc >= 0) return hs_finish(rc);

    sbuf = hs_alloc((size_t)max_send, sizeof(int));
    rbuf = hs_alloc((size_t)max_recv, sizeof(int));
    ref = o_validate ? hs_alloc((size_t)max_recv, sizeof(int)) : NULL;
    size_t slots = (size_t)(o_reps > HB.size ? o_reps : HB.size); /* osu: one per rank */
    t_local = malloc(sizeof(double) * slots * NALG);
    t_max = malloc(sizeof(double) * slots * NALG);
    int ok = sbuf && rbuf && (ref || !o_validate) && t_local && t_max, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, HB.comm);
    if (!all_ok) {
        if (HB.rank == 0)
            hs_json_error(HB.out, "cannot allocate buffers of %lld + %lld elements",
                          (long long)max_send, (long long)max_recv);
        return hs_finish(1);
    }

    int levels[64], nlevels = 0; /* rank counts: --npmin K, 2K, 4K, ..., all */
    for (int64_t np = o_npmin; np > 0 && np < HB.size && nlevels < 63; np *= 2)
        levels[nlevels++] = (int)np;
    levels[nlevels++] = HB.size;
    int64_t series = 0; /* what the budget is shared out over (counted at all ranks) */
    for (int c = 0; c < NCOLL; c++) {
        for (int a = 0; a < n_alg && sel_coll[c]; a++)
            series += sel_alg[a] && coll_has(c, a) ? lists[c].n : 0;
        free(lists[c].counts);
    }
    hs_repeat_init(series * nlevels);

    int failed = 0, write_failed = 0, world_size = HB.size;
    for (int l = 0; l < nlevels && !write_failed; l++)
        write_failed = run_level(levels[l], world_size, &failed);
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    failed = any_failed;
    free(sbuf);
    free(rbuf);
    free(ref);
    free(t_local);
    free(t_max);
    hs_nodes_free(&ND);
    return hs_finish(failed || write_failed ? 1 : 0);
}
