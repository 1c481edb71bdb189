/* Per-call algorithm choice for the interposition library (select.h).
 *
 * Order: LANECOLL_<COLL> (or LANECOLL_ALL), then the tuning table, then native. A
 * chosen lane/hier algorithm whose restrictions fail runs the native collective, with
 * the policy of LANECOLL_FALLBACK: error (message, MPI_Abort), warn (one message per
 * collective and process, the default) or silent. Every decision that is the same on
 * all processes of comm, so all of them run the same algorithm. Settings are read once
 * and are read-only afterwards (thread safe). */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "select.h"
#include "tuning.h"

typedef enum { POLICY_ERROR, POLICY_WARN, POLICY_SILENT } policy;

static struct {
    int forced[LC_NCOLL]; /* algorithm (lc_alg), or -1 when not forced */
    const char *forced_by[LC_NCOLL];
    char forced_var[LC_NCOLL][48];
    policy fallback;
    lc_tuning tuning;
    const char *tuning_path;
    char error[1024];
} settings;

static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static int warned[LC_NCOLL];

/* 1 when every call of the collective resolves to native without looking at anything
 * (see select.h). Written once inside settings_once, cleared by lc_native_only_revoke;
 * relaxed atomics: a reader that sees 1 needs no other data, one that sees 0 takes the
 * full path, which synchronises through pthread_once. */
int lc_native_only[LC_NCOLL];

/* The bytes a lane/hier tuning rule of each collective may cover (the hull of those
 * rules); everything when the settings are not read yet, something is forced, a log is
 * written or a fallback reason was recorded. Written like lc_native_only. */
long long lc_pick_lo[LC_NCOLL] = { [0 ... LC_NCOLL - 1] = LLONG_MIN };
long long lc_pick_hi[LC_NCOLL] = { [0 ... LC_NCOLL - 1] = LLONG_MAX };

static void pick_everything(int c)
{
    __atomic_store_n(&lc_pick_lo[c], LLONG_MIN, __ATOMIC_RELAXED);
    __atomic_store_n(&lc_pick_hi[c], LLONG_MAX, __ATOMIC_RELAXED);
}

/* Set once a fallback reason was recorded anywhere; native choices must then clear the
 * communicator's reason, which needs its state (an attribute lookup). */
static int reasons_recorded;
/* Settings read and valid (release store after compute_native_only; acquire loads on
 * the per-call path replace pthread_once, which costs ~10 ns here even when done). */
static int settings_ready;

void lc_native_only_revoke(void)
{
    if (!__atomic_load_n(&reasons_recorded, __ATOMIC_RELAXED))
        __atomic_store_n(&reasons_recorded, 1, __ATOMIC_RELAXED);
    for (int c = 0; c < LC_NCOLL; c++) {
        if (__atomic_load_n(&lc_native_only[c], __ATOMIC_RELAXED))
            __atomic_store_n(&lc_native_only[c], 0, __ATOMIC_RELAXED);
        if (__atomic_load_n(&lc_pick_lo[c], __ATOMIC_RELAXED) != LLONG_MIN)
            pick_everything(c);
    }
}

/* The settings alone decide native for collective c: not forced to lane/hier, no
 * tuning rule that may pick lane/hier, no log to write. Depends only on the environment
 * and the tuning file, which all processes share, so all of them skip the (collective)
 * decomposition build together. */
static void compute_native_only(void)
{
    for (int c = 0; c < LC_NCOLL; c++) {
        int f = settings.forced[c];
        int native =
            !lc_log_enabled() &&
            (f == LC_NATIVE || (f < 0 && !lc_tuning_may_decompose(&settings.tuning, c)));
        __atomic_store_n(&lc_native_only[c], native, __ATOMIC_RELAXED);
        long long lo, hi;
        if (lc_log_enabled() || f >= 0 ||
            !lc_tuning_pick_hull(&settings.tuning, c, &lo, &hi)) {
            pick_everything(c);
        } else {
            __atomic_store_n(&lc_pick_lo[c], lo, __ATOMIC_RELAXED);
            __atomic_store_n(&lc_pick_hi[c], hi, __ATOMIC_RELAXED);
        }
    }
    __atomic_store_n(&settings_ready, 1, __ATOMIC_RELEASE);
}

/* The algorithm called `value` for collective coll (LANECOLL_<COLL>), or the variant
 * name itself for coll < 0 (LANECOLL_ALL: any name some collective has). */
static int parse_variant(const char *var, const char *value, int coll, int *out)
{
    int a = coll >= 0 ? lc_alg_find(coll, value) : lc_variant_known(value) ? 0 : -1;
    if (a >= 0) {
        *out = a;
        return 0;
    }
    char names[256];
    lc_variant_list(coll, names, sizeof names);
    snprintf(settings.error, sizeof settings.error,
             "lanecoll: %s=%s: unknown value (expected one of: %s)", var, value, names);
    return -1;
}

static int read_overrides(void)
{
    int all = -1;
    const char *all_s = getenv("LANECOLL_ALL");
    if (all_s && *all_s && parse_variant("LANECOLL_ALL", all_s, -1, &all)) return -1;
    for (int c = 0; c < LC_NCOLL; c++) {
        char *var = settings.forced_var[c];
        snprintf(var, sizeof settings.forced_var[c], "LANECOLL_%s", lc_coll_name(c));
        for (char *q = var; *q; q++) *q = (char)toupper((unsigned char)*q);
        const char *s = getenv(var);
        settings.forced[c] = -1;
        if (s && *s) {
            if (parse_variant(var, s, c, &settings.forced[c])) return -1;
            settings.forced_by[c] = var;
        } else if (all >= 0) {
            /* LANECOLL_ALL=hier or lane_v leaves the collectives without it native */
            int a = lc_alg_find(c, all_s);
            settings.forced[c] = a >= 0 ? a : LC_NATIVE;
            settings.forced_by[c] = "LANECOLL_ALL";
        }
    }
    return 0;
}

/* LANECOLL_PIPELINE_BLOCK: bytes per pipeline block (bcast_pipeline, _pipeline1), read
 * by the one parser of numeric variables (lc_env_number: out of range is refused, as
 * LANECOLL_NODE_SIZE). */
static int read_pipeline_block(void)
{
    const char *s = getenv("LANECOLL_PIPELINE_BLOCK");
    long long v;
    if (!s || !*s || lc_env_number(s, &v)) return 0;
    snprintf(settings.error, sizeof settings.error,
             "lanecoll: LANECOLL_PIPELINE_BLOCK=%s: expected a positive integer (bytes) up "
             "to %lld",
             s, LC_ENV_MAX);
    return -1;
}

static int read_policy(void)
{
    const char *s = getenv("LANECOLL_FALLBACK");
    settings.fallback = POLICY_WARN;
    if (!s || !*s || strcmp(s, "warn") == 0) return 0;
    if (strcmp(s, "error") == 0) {
        settings.fallback = POLICY_ERROR;
        return 0;
    }
    if (strcmp(s, "silent") == 0) {
        settings.fallback = POLICY_SILENT;
        return 0;
    }
    snprintf(
        settings.error, sizeof settings.error,
        "lanecoll: LANECOLL_FALLBACK=%s: unknown value (expected error, warn or silent)",
        s);
    return -1;
}

/* Every LANECOLL_ variable in the environment must be one lanecoll reads: a misspelt
 * LANECOLL_ALLREDCUE=lane would otherwise be ignored silently. LANECOLL_TEST_* and
 * LANECOLL_SKIP_* belong to the test scripts and are let through. */
extern char **environ;
static int check_names(void)
{
    static const char *const fixed[] = { "ALL",           "TUNING",        "FALLBACK",
                                         "LOG",           "NODE_SIZE",     "NODE_SIZES",
                                         "NODE_NAME_SEP", "PIPELINE_BLOCK" };
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "LANECOLL_", 9) != 0) continue;
        const char *name = *e + 9;
        size_t len = strcspn(name, "=");
        int known = strncmp(name, "TEST_", 5) == 0 || strncmp(name, "SKIP_", 5) == 0;
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed && !known; i++)
            known = strlen(fixed[i]) == len && strncmp(name, fixed[i], len) == 0;
        for (int c = 0; c < LC_NCOLL && !known; c++)
            known = strlen(settings.forced_var[c]) == len + 9 &&
                    strncmp(settings.forced_var[c] + 9, name, len) == 0;
        if (!known) {
            snprintf(settings.error, sizeof settings.error,
                     "lanecoll: %.*s: unknown variable (lanecoll reads LANECOLL_<COLL>, "
                     "LANECOLL_ALL, LANECOLL_TUNING, LANECOLL_FALLBACK, LANECOLL_LOG, "
                     "LANECOLL_NODE_SIZE, LANECOLL_NODE_SIZES, LANECOLL_NODE_NAME_SEP, "
                     "LANECOLL_PIPELINE_BLOCK)",
                     (int)(len + 9), *e);
            return -1;
        }
    }
    return 0;
}

/* All settings are checked here, at MPI_Init, whether or not an algorithm is forced:
 * the node override too (used only when a decomposition is built). */
static void read_settings(void)
{
    int wsize = 0;
    if (read_overrides() || check_names() || read_policy() || read_pipeline_block()) return;
    if (PMPI_Comm_size(MPI_COMM_WORLD, &wsize) == MPI_SUCCESS &&
        lc_node_settings_check(wsize, settings.error, sizeof settings.error))
        return;
    if (lc_log_open(settings.error, sizeof settings.error)) return;
    const char *path = getenv("LANECOLL_TUNING");
    if (path && *path) {
        settings.tuning_path = path;
        if (lc_tuning_load(path, &settings.tuning, settings.error, sizeof settings.error))
            return;
    }
    compute_native_only();
}

/* Every process found the same error; the one that printed it aborts the job after a
 * pause of a second, the others wait longer. MPICH's hydra drops the message when its
 * proxy is killed before it forwarded it (about 1 run in 10 with 0.3 s on a loaded
 * machine). Only the error path pays. */
static void abort_after_message(MPI_Comm comm, int rank, int code)
{
    if (rank != 0)
        sleep(5);
    else
        sleep(1);
    PMPI_Abort(comm, code);
}

void lc_select_init(int collective_abort)
{
    if (__atomic_load_n(&settings_ready, __ATOMIC_ACQUIRE)) return;
    pthread_once(&settings_once, read_settings);
    if (!settings.error[0]) return;
    int rank = 0;
    if (collective_abort) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        fprintf(stderr, "%s\n", settings.error);
        fflush(stderr);
    }
    abort_after_message(MPI_COMM_WORLD, rank, 2);
}

/* The ppn that tuning rules speak of: the largest number on a node for irregular
 * layouts. */
static int rule_ppn(const lc_decomp *d) { return d->regular ? d->min_ppn : d->max_ppn; }

/* Chosen variant before restrictions are checked; *rule is the tuning rule that chose
 * it (NULL: forced by the environment when settings.forced[c] >= 0, else default). */
static lc_alg choose(lc_coll c, long long bytes, const lc_decomp *d, const lc_rule **rule)
{
    *rule = NULL;
    if (settings.forced[c] >= 0) return (lc_alg)settings.forced[c];
    if (d) {
        *rule = lc_tuning_match(&settings.tuning, c, d->nnodes, rule_ppn(d), bytes);
        if (*rule) return (lc_alg)(*rule)->alg;
    }
    return LC_NATIVE;
}

/* The reason= text of the log line; only formatted when the log is on (an snprintf
 * costs ~100 ns, more than the rest of the choice). */
static void log_reason(lc_coll c, const lc_rule *rule, lc_alg chosen, const char *fallback,
                       char *why, size_t len)
{
    int used;
    if (settings.forced[c] >= 0)
        used = snprintf(why, len, "env %s", settings.forced_by[c]);
    else if (rule)
        used = snprintf(why, len, "tuning %s:%d", settings.tuning_path, rule->line);
    else
        used = snprintf(why, len, "default");
    if (fallback && used >= 0 && (size_t)used < len)
        snprintf(why + used, len - (size_t)used, "; fallback from %s: %s",
                 lc_alg_variant(chosen), fallback);
}

lc_route lc_route_for_bytes(lc_coll c, long long bytes)
{
    if (!__atomic_load_n(&settings_ready, __ATOMIC_ACQUIRE) || lc_log_enabled() ||
        __atomic_load_n(&reasons_recorded, __ATOMIC_RELAXED))
        return LC_ROUTE_FULL;
    int f = settings.forced[c];
    if (f == LC_NATIVE) return LC_ROUTE_NATIVE;
    if (f >= 0) return LC_ROUTE_FULL;
    return lc_tuning_may_pick(&settings.tuning, c, bytes) ? LC_ROUTE_RULES
                                                          : LC_ROUTE_NATIVE;
}

lc_bytes_need lc_bytes_shared(lc_coll c, MPI_Comm comm)
{
    lc_select_init(0);
    if (lc_log_enabled()) return LC_BYTES_BROADCAST; /* the log line reports them */
    if (settings.forced[c] >= 0 || !lc_tuning_may_decompose(&settings.tuning, c))
        return LC_BYTES_LOCAL;
    /* Settings alone do not settle it: ask the table about this communicator's shape.
     * The decomposition (built collectively on first use) is reached by every process
     * alike, since everything above depends on the settings only. */
    int err;
    lc_comm_state *s = lc_state(comm);
    const lc_decomp *d = s ? lc_decomposition_state(comm, s, &err) : NULL;
    if (!d) return LC_BYTES_BROADCAST;
    signed char known = __atomic_load_n(&s->bytes_rule[c], __ATOMIC_RELAXED);
    if (!known) {
        int fixed = lc_tuning_fixed_choice(&settings.tuning, c, d->nnodes, rule_ppn(d));
        known = fixed == LC_NATIVE ? LC_BYTES_NATIVE
                : fixed >= 0       ? LC_BYTES_FREE
                                   : LC_BYTES_MATTER;
        __atomic_store_n(&s->bytes_rule[c], known, __ATOMIC_RELAXED);
    }
    if (known == LC_BYTES_NATIVE) {
        /* what lc_dispatch does for a native choice, without looking the state up again */
        if (s->reason[0]) s->reason[0] = '\0';
        return LC_BYTES_NATIVE_HERE;
    }
    return known == LC_BYTES_FREE ? LC_BYTES_ANY : LC_BYTES_BROADCAST;
}

/* "Allreduce" from "allreduce", for messages that name the MPI function. */
static const char *mpi_name(lc_coll c, char *buf, size_t len)
{
    snprintf(buf, len, "%s", lc_coll_name(c));
    buf[0] = (char)toupper((unsigned char)buf[0]);
    return buf;
}

static void on_fallback(const lc_call *call, lc_alg v, const char *reason)
{
    char name[32];
    int rank = 0;
    PMPI_Comm_rank(call->comm, &rank);
    if (settings.fallback == POLICY_ERROR) {
        if (rank == 0) {
            fprintf(stderr,
                    "lanecoll: MPI_%s: %s algorithm cannot run: %s "
                    "(LANECOLL_FALLBACK=error)\n",
                    mpi_name(call->coll, name, sizeof name), lc_alg_variant(v), reason);
            fflush(stderr);
        }
        abort_after_message(call->comm, rank, 3);
    }
    if (settings.fallback == POLICY_WARN && rank == 0 &&
        !__atomic_exchange_n(&warned[call->coll], 1, __ATOMIC_RELAXED))
        fprintf(stderr,
                "lanecoll: warning: MPI_%s: %s algorithm not usable, running the "
                "native collective: %s (reported once per collective)\n",
                mpi_name(call->coll, name, sizeof name), lc_alg_variant(v), reason);
}

/* The path after the wrappers' shortcuts (the choice may be lane/hier, or there is a
 * log to write or a fallback reason to clear). Per call without a log: the argument
 * checks, one attribute lookup (the comm state, which caches the decomposition: ~40 ns
 * on Open MPI 4.1, ~8 ns on MPICH 4.0 here), one scan of this collective's tuning
 * rules, and for lane/hier the restriction check; no strings. LC_ROUTE_RULES skips what
 * lc_route_for_bytes has settled (settings read, no log, a rule covers bytes). */
lc_alg lc_dispatch(const lc_call *call, long long bytes, lc_route route,
                   const lc_decomp **d)
{
    const char *reason = NULL;
    char why[512];
    int err;
    int full = route != LC_ROUTE_RULES;
    if (full) lc_select_init(0);
    *d = NULL;
    int logging = full && lc_log_enabled();
    /* args_ok is 0 for MPI_COMM_NULL and intercommunicators too: every wrapper's check
     * includes lc_args_ok_count, which tests both. */
    if (!call->args_ok) {
        if (logging)
            lc_log_choice(call, bytes, NULL, LC_NATIVE, "invalid arguments: passed to MPI");
        return LC_NATIVE;
    }
    lc_coll c = call->coll;
    lc_comm_state *s = lc_state(call->comm);
    const lc_decomp *known = NULL;
    /* Built (collectively, on first use) only when a rule may pick lane/hier for these
     * bytes or the log wants nodes/ppn: conditions every process evaluates alike, unlike
     * reasons_recorded, which may hold on some processes only. */
    if (s && (logging || !full ||
              (settings.forced[c] < 0 && lc_tuning_may_pick(&settings.tuning, c, bytes))))
        known = lc_decomposition_state(call->comm, s, &err);
    const lc_rule *rule;
    lc_alg v = choose(c, bytes, known, &rule), chosen = v;
    if (v != LC_NATIVE) {
        *d = lc_prepare_state(call, v, s, &reason);
        if (!*d) {
            on_fallback(call, v, reason);
            v = LC_NATIVE;
        }
    } else if (s) {
        s->reason[0] = '\0';
    }
    if (logging) {
        log_reason(c, rule, chosen, *d ? NULL : reason, why, sizeof why);
        lc_log_choice(call, bytes, *d ? *d : known, v, why);
    }
    return v;
}
