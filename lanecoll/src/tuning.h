/* The tuning table (schema "lanecoll.tuning/1") written by `hpcscope tune`:
 *
 *   {"schema": "lanecoll.tuning/1",
 *    "rules": [{"collective": "allreduce", "nodes": 2, "ppn": 2,
 *               "min_bytes": 0, "max_bytes": 65535, "algorithm": "lane"}, ...]}
 *
 * nodes and ppn are optional (absent = any); byte bounds are inclusive; the first
 * matching rule wins; overlapping byte ranges for the same (collective, nodes, ppn)
 * are an error.
 *
 * Limits (a larger or deeper file is refused with a message naming it):
 *   file size      LC_TUNING_MAX_BYTES (4 MiB)
 *   rules          LC_TUNING_MAX_RULES (10000); overlap checks are O(rules^2) at load
 *   nesting depth  LJ_MAX_DEPTH (64, json.h)
 * The text must not contain a NUL byte, and no object may repeat a key. */
#ifndef LANECOLL_TUNING_H
#define LANECOLL_TUNING_H

#include <stddef.h>

#include "internal.h"

#define LC_TUNING_MAX_BYTES (4L * 1024 * 1024)
#define LC_TUNING_MAX_RULES 10000

#pragma GCC visibility push(hidden)

typedef struct lc_rule {
    int coll;       /* lc_coll */
    int nodes, ppn; /* -1 = any */
    long long min_bytes, max_bytes;
    int alg;  /* lc_alg: the algorithm for this collective */
    int line; /* of the rule in the file */
} lc_rule;

typedef struct lc_tuning {
    lc_rule *rules; /* in file order (line numbers, overlap messages) */
    int n;
    /* The same rules grouped by collective, file order kept within each group (first
     * match wins), so a lookup scans only its collective's rules: a few compares each. */
    lc_rule *by_coll;
    int start[LC_NCOLL], count[LC_NCOLL];
    int non_native[LC_NCOLL]; /* rules of the collective that pick lane or hier */
} lc_tuning;

/* Loads and validates path. Returns 0, or -1 with a message naming the file and the
 * line or key in err. */
int lc_tuning_load(const char *path, lc_tuning *t, char *err, size_t errlen);
void lc_tuning_free(lc_tuning *t);
/* 1 if some rule may pick lane or hier for collective c (only then is the
 * decomposition, which supplies nodes and ppn, worth building for a choice). */
int lc_tuning_may_decompose(const lc_tuning *t, int coll);
/* 1 if some lane/hier rule of collective c covers `bytes` (whatever its nodes and ppn):
 * when 0 the call is native without looking at the communicator. A few compares per
 * lane/hier rule of c. */
int lc_tuning_may_pick(const lc_tuning *t, int coll, long long bytes);
/* The smallest min_bytes and largest max_bytes of collective c's lane/hier rules;
 * returns 0 (and leaves *lo, *hi alone) when it has none. */
int lc_tuning_pick_hull(const lc_tuning *t, int coll, long long *lo, long long *hi);
/* The algorithm (lc_alg) that the first matching rule, or native where none matches,
 * gives collective c on a communicator of `nodes` nodes and `ppn` processes per node at
 * every byte count 0..LLONG_MAX; -1 when it depends on the byte count. O(r^2) for the r
 * rules of c: call once per communicator and cache. */
int lc_tuning_fixed_choice(const lc_tuning *t, int coll, int nodes, int ppn);
/* First matching rule, NULL if none. */
const lc_rule *lc_tuning_match(const lc_tuning *t, int coll, int nodes, int ppn,
                               long long bytes);

#pragma GCC visibility pop

#endif
