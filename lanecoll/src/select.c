/* Per-call algorithm choice for the interposition library (select.h).
 *
 * Order: LANECOLL_<COLL> (or LANECOLL_ALL), then the tuning table, then native. A
 * chosen lane/hier algorithm whose restrictions fail runs the native collective, with
 * the policy of LANECOLL_FALLBACK: error (message, MPI_Abort), warn (one message per
 * collective and process, the default) or silent. Every decision that is the same on
 * all processes of comm, so all of them run the same algorithm. Settings are read once
 * and are read-only afterwards (thread safe). */
#include <ctype.h>
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
    int forced[LC_NCOLL];         /* variant, or -1 when not forced */
    const char *forced_by[LC_NCOLL];
    char forced_var[LC_NCOLL][48];
    policy fallback;
    lc_tuning tuning;
    const char *tuning_path;
    char error[1024];
} settings;

static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static int warned[LC_NCOLL];

static int parse_variant(const char *var, const char *value, int coll, int *out)
{
    int v = lc_variant_from_name(value);
    if (v >= 0 && (coll < 0 || lc_restrictions((lc_coll)coll, (lc_variant)v) >= 0)) {
        *out = v;
        return 0;
    }
    snprintf(settings.error, sizeof settings.error,
             "lanecoll: %s=%s: unknown value (expected native, lane%s)", var, value,
             coll == LC_ALLTOALL ? "; alltoall has no hier algorithm" : " or hier");
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
            /* LANECOLL_ALL=hier leaves alltoall (which has no hier) native */
            settings.forced[c] = lc_restrictions(c, all) >= 0 ? all : LC_NATIVE;
            settings.forced_by[c] = "LANECOLL_ALL";
        }
    }
    return 0;
}

static int read_policy(void)
{
    const char *s = getenv("LANECOLL_FALLBACK");
    settings.fallback = POLICY_WARN;
    if (!s || !*s || strcmp(s, "warn") == 0) return 0;
    if (strcmp(s, "error") == 0) { settings.fallback = POLICY_ERROR; return 0; }
    if (strcmp(s, "silent") == 0) { settings.fallback = POLICY_SILENT; return 0; }
    snprintf(settings.error, sizeof settings.error,
             "lanecoll: LANECOLL_FALLBACK=%s: unknown value (expected error, warn or silent)", s);
    return -1;
}

static void read_settings(void)
{
    if (read_overrides() || read_policy()) return;
    if (lc_log_open(settings.error, sizeof settings.error)) return;
    const char *path = getenv("LANECOLL_TUNING");
    if (path && *path) {
        settings.tuning_path = path;
        lc_tuning_load(path, &settings.tuning, settings.error, sizeof settings.error);
    }
}

/* Every process found the same error; the one that printed it aborts the job after a
 * short pause, the others wait longer. MPICH's hydra drops the message about one time
 * in ten if the job is torn down right after it was written. */
static void abort_after_message(MPI_Comm comm, int rank, int code)
{
    if (rank != 0) sleep(5);
    else usleep(300000);
    PMPI_Abort(comm, code);
}

void lc_select_init(int collective_abort)
{
    pthread_once(&settings_once, read_settings);
    if (!settings.error[0]) return;
    int rank = 0;
    if (collective_abort) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) { fprintf(stderr, "%s\n", settings.error); fflush(stderr); }
    abort_after_message(MPI_COMM_WORLD, rank, 2);
}

/* Chosen variant and why, before restrictions are checked. */
static lc_variant choose(const lc_call *call, long long bytes, const lc_decomp *d,
                         char *why, size_t len)
{
    int c = call->coll;
    if (settings.forced[c] >= 0) {
        snprintf(why, len, "env %s", settings.forced_by[c]);
        return (lc_variant)settings.forced[c];
    }
    if (d) {
        int ppn = d->regular ? d->min_ppn : d->max_ppn;
        const lc_rule *r = lc_tuning_match(&settings.tuning, c, d->nnodes, ppn, bytes);
        if (r) {
            snprintf(why, len, "tuning %s:%d", settings.tuning_path, r->line);
            return (lc_variant)r->variant;
        }
    }
    snprintf(why, len, "default");
    return LC_NATIVE;
}

/* "Allreduce" from "allreduce", for messages that name the MPI function. */
static const char *mpi_name(lc_coll c, char *buf, size_t len)
{
    snprintf(buf, len, "%s", lc_coll_name(c));
    buf[0] = (char)toupper((unsigned char)buf[0]);
    return buf;
}

static void on_fallback(const lc_call *call, lc_variant v, const char *reason)
{
    char name[32];
    int rank = 0;
    PMPI_Comm_rank(call->comm, &rank);
    if (settings.fallback == POLICY_ERROR) {
        if (rank == 0) {
            fprintf(stderr, "lanecoll: MPI_%s: %s algorithm cannot run: %s "
                    "(LANECOLL_FALLBACK=error)\n", mpi_name(call->coll, name, sizeof name),
                    lc_variant_name(v), reason);
            fflush(stderr);
        }
        abort_after_message(call->comm, rank, 3);
    }
    if (settings.fallback == POLICY_WARN && rank == 0 &&
        !__atomic_exchange_n(&warned[call->coll], 1, __ATOMIC_RELAXED))
        fprintf(stderr, "lanecoll: warning: MPI_%s: %s algorithm not usable, running the "
                "native collective: %s (reported once per collective)\n",
                mpi_name(call->coll, name, sizeof name), lc_variant_name(v), reason);
}

lc_variant lc_dispatch(const lc_call *call, long long bytes, const lc_decomp **d)
{
    char why[512];
    const char *reason = NULL;
    int inter = 1, err;
    lc_select_init(0);
    *d = NULL;
    if (call->comm == MPI_COMM_NULL || PMPI_Comm_test_inter(call->comm, &inter) ||
        inter || !call->args_ok) {
        lc_log_choice(call, bytes, NULL, LC_NATIVE, call->args_ok ?
                      "not an intracommunicator" : "invalid arguments: passed to MPI");
        return LC_NATIVE;
    }
    const lc_decomp *known = NULL;
    if (lc_log_enabled() || (settings.forced[call->coll] < 0 &&
                             lc_tuning_mentions(&settings.tuning, call->coll)))
        known = lc_decomposition(call->comm, &err);
    lc_variant v = choose(call, bytes, known, why, sizeof why);
    if (v != LC_NATIVE) {
        *d = lc_prepare(call, v, &reason);
        if (!*d) {
            on_fallback(call, v, reason);
            size_t used = strlen(why);
            snprintf(why + used, sizeof why - used, "; fallback from %s: %s",
                     lc_variant_name(v), reason);
            v = LC_NATIVE;
        }
    } else {
        lc_comm_state *s = lc_state(call->comm);
        if (s) s->reason[0] = '\0';
    }
    lc_log_choice(call, bytes, *d ? *d : known, v, why);
    return v;
}
