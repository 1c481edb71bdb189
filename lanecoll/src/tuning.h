/* The tuning table (schema "lanecoll.tuning/1") written by `hpcscope tune`:
 *
 *   {"schema": "lanecoll.tuning/1",
 *    "rules": [{"collective": "allreduce", "nodes": 2, "ppn": 2,
 *               "min_bytes": 0, "max_bytes": 65535, "algorithm": "lane"}, ...]}
 *
 * nodes and ppn are optional (absent = any); byte bounds are inclusive; the first
 * matching rule wins; overlapping byte ranges for the same (collective, nodes, ppn)
 * are an error. */
#ifndef LANECOLL_TUNING_H
#define LANECOLL_TUNING_H

#include <stddef.h>

typedef struct lc_rule {
    int coll;              /* lc_coll */
    int nodes, ppn;        /* -1 = any */
    long long min_bytes, max_bytes;
    int variant;           /* lc_variant */
    int line;              /* of the rule in the file */
} lc_rule;

typedef struct lc_tuning {
    lc_rule *rules;
    int n;
} lc_tuning;

/* Loads and validates path. Returns 0, or -1 with a message naming the file and the
 * line or key in err. */
int lc_tuning_load(const char *path, lc_tuning *t, char *err, size_t errlen);
void lc_tuning_free(lc_tuning *t);
/* 1 if any rule names collective c (so the decomposition is worth building). */
int lc_tuning_mentions(const lc_tuning *t, int coll);
/* First matching rule, NULL if none. */
const lc_rule *lc_tuning_match(const lc_tuning *t, int coll, int nodes, int ppn,
                               long long bytes);

#endif
