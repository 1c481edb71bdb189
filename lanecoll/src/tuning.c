/* Loading and validating the tuning table (tuning.h). Every error names the file and
 * the line of the offending value, and the key or rule involved. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "json.h"
#include "tuning.h"

#define SCHEMA "lanecoll.tuning/1"

static char *read_file(const char *path, size_t *lenp, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "lanecoll: tuning file '%s': cannot open (%s)", path,
                 strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        /* fopen opens a directory for reading; its first read fails with EISDIR, which
         * would otherwise read as an empty file ("line 1: unexpected end of file") */
        fclose(f);
        snprintf(err, errlen, "lanecoll: tuning file '%s': is a directory", path);
        return NULL;
    }
    size_t cap = 4096, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len > (size_t)LC_TUNING_MAX_BYTES) {
            fclose(f);
            free(buf);
            snprintf(err, errlen, "lanecoll: tuning file '%s': larger than %ld bytes", path,
                     LC_TUNING_MAX_BYTES);
            return NULL;
        }
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else
                buf = nb;
        }
    }
    int failed = ferror(f), why = errno;
    fclose(f);
    if (buf && failed) {
        free(buf);
        snprintf(err, errlen, "lanecoll: tuning file '%s': cannot read (%s)", path,
                 strerror(why));
        return NULL;
    }
    if (!buf) {
        snprintf(err, errlen, "lanecoll: tuning file '%s': out of memory", path);
        return NULL;
    }
    buf[len] = '\0';
    *lenp = len;
    return buf;
}

/* Non-negative integer member, exact in 64 bits (byte bounds reach 2^63-1, see
 * hpcscope's tune.TOP_BYTES, which a double cannot hold); at most `max`. Optional
 * members may be absent (*out = -1). */
static int get_count(const lj_value *rule, const char *key, int optional, long long max,
                     long long *out, const char *path, int index, char *err, size_t errlen)
{
    const lj_value *v = lj_get(rule, key);
    const char *what = NULL;
    if (!v) {
        if (optional) {
            *out = -1;
            return 0;
        }
        snprintf(err, errlen,
                 "lanecoll: tuning file '%s' line %d: rule %d: missing key \"%s\"", path,
                 rule->line, index, key);
        return -1;
    }
    if (v->type != LJ_NUMBER)
        what = "must be a non-negative integer";
    else if (v->integer == 0)
        what = "must be an integer (no fraction or exponent)";
    else if (v->integer == 2 && v->number < 0)
        what = "must be a non-negative integer";
    else if (v->integer == 2 || v->ivalue > max)
        what = max == INT64_MAX ? "is above 9223372036854775807 (INT64_MAX)"
                                : "is above 2147483647 (INT_MAX)";
    else if (v->ivalue < 0)
        what = "must be a non-negative integer";
    if (what) {
        snprintf(err, errlen, "lanecoll: tuning file '%s' line %d: rule %d: \"%s\" %s",
                 path, v->line, index, key, what);
        return -1;
    }
    *out = v->ivalue;
    return 0;
}

static int get_name(const lj_value *rule, const char *key, const char **out,
                    const char *path, int index, char *err, size_t errlen)
{
    const lj_value *v = lj_get(rule, key);
    if (!v || v->type != LJ_STRING) {
        snprintf(err, errlen, "lanecoll: tuning file '%s' line %d: rule %d: %s key \"%s\"",
                 path, v ? v->line : rule->line, index,
                 v ? "expected a string for" : "missing", key);
        return -1;
    }
    *out = v->string;
    return 0;
}

static const char *const known_keys[] = { "collective", "nodes",     "ppn",
                                          "min_bytes",  "max_bytes", "algorithm" };

static int parse_rule(const lj_value *r, int index, lc_rule *out, const char *path,
                      char *err, size_t errlen)
{
    const char *coll, *alg;
    long long nodes, ppn;
    if (r->type != LJ_OBJECT) {
        snprintf(err, errlen,
                 "lanecoll: tuning file '%s' line %d: rule %d is not an object", path,
                 r->line, index);
        return -1;
    }
    for (int i = 0; i < r->n; i++) {
        int known = 0;
        for (size_t k = 0; k < sizeof known_keys / sizeof *known_keys; k++)
            known |= strcmp(r->keys[i], known_keys[k]) == 0;
        if (!known) {
            snprintf(err, errlen,
                     "lanecoll: tuning file '%s' line %d: rule %d: unknown key "
                     "\"%s\"",
                     path, r->items[i].line, index, r->keys[i]);
            return -1;
        }
    }
    if (get_name(r, "collective", &coll, path, index, err, errlen) ||
        get_name(r, "algorithm", &alg, path, index, err, errlen) ||
        get_count(r, "nodes", 1, INT_MAX, &nodes, path, index, err, errlen) ||
        get_count(r, "ppn", 1, INT_MAX, &ppn, path, index, err, errlen) ||
        get_count(r, "min_bytes", 0, INT64_MAX, &out->min_bytes, path, index, err,
                  errlen) ||
        get_count(r, "max_bytes", 0, INT64_MAX, &out->max_bytes, path, index, err, errlen))
        return -1;
    out->coll = lc_coll_from_name(coll);
    out->nodes = (int)nodes;
    out->ppn = (int)ppn;
    out->line = r->line;
    if (out->coll < 0) {
        snprintf(err, errlen,
                 "lanecoll: tuning file '%s' line %d: rule %d: unknown "
                 "collective \"%s\"",
                 path, lj_get(r, "collective")->line, index, coll);
        return -1;
    }
    out->alg = lc_alg_find(out->coll, alg);
    if (out->alg < 0) {
        char names[256];
        lc_variant_list(out->coll, names, sizeof names);
        snprintf(err, errlen,
                 "lanecoll: tuning file '%s' line %d: rule %d: unknown "
                 "algorithm \"%s\" for %s (expected one of: %s)",
                 path, lj_get(r, "algorithm")->line, index, alg, coll, names);
        return -1;
    }
    if (out->min_bytes > out->max_bytes) {
        snprintf(err, errlen,
                 "lanecoll: tuning file '%s' line %d: rule %d: min_bytes > "
                 "max_bytes",
                 path, r->line, index);
        return -1;
    }
    return 0;
}

static int check_overlaps(const lc_tuning *t, const char *path, char *err, size_t errlen)
{
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < i; j++) {
            const lc_rule *a = &t->rules[j], *b = &t->rules[i];
            if (a->coll == b->coll && a->nodes == b->nodes && a->ppn == b->ppn &&
                a->min_bytes <= b->max_bytes && b->min_bytes <= a->max_bytes) {
                snprintf(err, errlen,
                         "lanecoll: tuning file '%s' line %d: rule %d overlaps "
                         "rule %d (line %d): same collective, nodes and ppn, byte ranges "
                         "intersect",
                         path, b->line, i, j, a->line);
                return -1;
            }
        }
    return 0;
}

static int load_tree(const lj_value *doc, const char *path, lc_tuning *t, char *err,
                     size_t errlen)
{
    const lj_value *schema = lj_get(doc, "schema"), *rules = lj_get(doc, "rules");
    if (doc->type != LJ_OBJECT) {
        snprintf(err, errlen, "lanecoll: tuning file '%s' line %d: expected an object",
                 path, doc->line);
        return -1;
    }
    if (!schema || schema->type != LJ_STRING || strcmp(schema->string, SCHEMA) != 0) {
        snprintf(err, errlen,
                 "lanecoll: tuning file '%s' line %d: key \"schema\" must be "
                 "\"" SCHEMA "\"",
                 path, schema ? schema->line : doc->line);
        return -1;
    }
    if (!rules || rules->type != LJ_ARRAY) {
        snprintf(err, errlen,
                 "lanecoll: tuning file '%s' line %d: %s key \"rules\" (an "
                 "array)",
                 path, rules ? rules->line : doc->line, rules ? "expected" : "missing");
        return -1;
    }
    for (int i = 0; i < doc->n; i++)
        if (strcmp(doc->keys[i], "schema") && strcmp(doc->keys[i], "rules")) {
            snprintf(err, errlen, "lanecoll: tuning file '%s' line %d: unknown key \"%s\"",
                     path, doc->items[i].line, doc->keys[i]);
            return -1;
        }
    if (rules->n > LC_TUNING_MAX_RULES) {
        snprintf(err, errlen, "lanecoll: tuning file '%s' line %d: %d rules, at most %d",
                 path, rules->line, rules->n, LC_TUNING_MAX_RULES);
        return -1;
    }
    t->rules = calloc(rules->n > 0 ? (size_t)rules->n : 1, sizeof *t->rules);
    if (!t->rules) {
        snprintf(err, errlen, "lanecoll: out of memory");
        return -1;
    }
    for (int i = 0; i < rules->n; i++, t->n++)
        if (parse_rule(&rules->items[i], i, &t->rules[i], path, err, errlen)) return -1;
    return check_overlaps(t, path, err, errlen);
}

/* Stable counting sort of the rules by collective (load time, O(rules)). */
static int index_rules(lc_tuning *t, char *err, size_t errlen)
{
    int next[LC_NCOLL];
    t->by_coll = calloc(t->n > 0 ? (size_t)t->n : 1, sizeof *t->by_coll);
    if (!t->by_coll) {
        snprintf(err, errlen, "lanecoll: out of memory");
        return -1;
    }
    for (int i = 0; i < t->n; i++) {
        t->count[t->rules[i].coll]++;
        t->non_native[t->rules[i].coll] += t->rules[i].alg != LC_NATIVE;
    }
    for (int c = 0, at = 0; c < LC_NCOLL; at += t->count[c++]) t->start[c] = next[c] = at;
    for (int i = 0; i < t->n; i++) t->by_coll[next[t->rules[i].coll]++] = t->rules[i];
    return 0;
}

int lc_tuning_load(const char *path, lc_tuning *t, char *err, size_t errlen)
{
    char perr[200];
    lj_value doc;
    memset(t, 0, sizeof *t);
    size_t len = 0;
    char *text = read_file(path, &len, err, errlen);
    if (!text) return -1;
    if (lj_parse(text, len, &doc, perr, sizeof perr)) {
        snprintf(err, errlen, "lanecoll: tuning file '%s' %s", path, perr);
        free(text);
        return -1;
    }
    free(text);
    int rc = load_tree(&doc, path, t, err, errlen);
    lj_free(&doc);
    if (rc == 0) rc = index_rules(t, err, errlen);
    if (rc) lc_tuning_free(t);
    return rc;
}

void lc_tuning_free(lc_tuning *t)
{
    free(t->rules);
    free(t->by_coll);
    memset(t, 0, sizeof *t);
}

int lc_tuning_may_decompose(const lc_tuning *t, int coll)
{
    return coll >= 0 && coll < LC_NCOLL && t->non_native[coll] > 0;
}

int lc_tuning_may_pick(const lc_tuning *t, int coll, long long bytes)
{
    if (coll < 0 || coll >= LC_NCOLL || !t->non_native[coll]) return 0;
    const lc_rule *r = t->by_coll + t->start[coll], *end = r + t->count[coll];
    for (; r < end; r++)
        if (r->alg != LC_NATIVE && bytes >= r->min_bytes && bytes <= r->max_bytes) return 1;
    return 0;
}

int lc_tuning_pick_hull(const lc_tuning *t, int coll, long long *lo, long long *hi)
{
    if (!lc_tuning_may_decompose(t, coll)) return 0;
    const lc_rule *r = t->by_coll + t->start[coll], *end = r + t->count[coll];
    *lo = LLONG_MAX;
    *hi = 0;
    for (; r < end; r++) {
        if (r->alg == LC_NATIVE) continue;
        if (r->min_bytes < *lo) *lo = r->min_bytes;
        if (r->max_bytes > *hi) *hi = r->max_bytes;
    }
    return 1;
}

const lc_rule *lc_tuning_match(const lc_tuning *t, int coll, int nodes, int ppn,
                               long long bytes)
{
    if (coll < 0 || coll >= LC_NCOLL) return NULL;
    const lc_rule *r = t->by_coll + t->start[coll], *end = r + t->count[coll];
    for (; r < end; r++)
        if ((r->nodes < 0 || r->nodes == nodes) && (r->ppn < 0 || r->ppn == ppn) &&
            bytes >= r->min_bytes && bytes <= r->max_bytes)
            return r;
    return NULL;
}

/* The choice is a step function of the byte count that can change only where a rule
 * for this shape begins or ends, so evaluating it at 0 and at every min_bytes and
 * max_bytes + 1 of those rules sees every step. */
int lc_tuning_fixed_choice(const lc_tuning *t, int coll, int nodes, int ppn)
{
    if (coll < 0 || coll >= LC_NCOLL) return LC_NATIVE;
    const lc_rule *first = lc_tuning_match(t, coll, nodes, ppn, 0);
    int alg = first ? first->alg : LC_NATIVE;
    const lc_rule *r = t->by_coll + t->start[coll], *end = r + t->count[coll];
    for (; r < end; r++) {
        if ((r->nodes >= 0 && r->nodes != nodes) || (r->ppn >= 0 && r->ppn != ppn))
            continue;
        long long edge[2] = { r->min_bytes, r->max_bytes };
        int nedge = 1 + (r->max_bytes < LLONG_MAX);
        if (nedge == 2) edge[1] = r->max_bytes + 1;
        for (int e = 0; e < nedge; e++) {
            const lc_rule *m = lc_tuning_match(t, coll, nodes, ppn, edge[e]);
            if ((m ? m->alg : LC_NATIVE) != alg) return -1;
        }
    }
    return alg;
}
