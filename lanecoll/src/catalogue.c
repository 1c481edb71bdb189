/* The catalogue: every algorithm with its restrictions, cost and body, generated from
 * lanecoll_algorithms.def (MPICH style: one table). The dispatcher (prepare.c) checks
 * the restriction flags listed there; the algorithm files assume them. Indexed by
 * algorithm id (lc_alg), so the per-call lookup of flags and body is one load. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const lc_alg_entry lc_algorithms[LC_NALG] = {
    [LC_NATIVE] = { (lc_coll)-1, 0, NULL, { NULL, "native", "", "" } },
#define LC_ALGORITHM(coll, variant, flags, restrictions, cost)      \
    [LC_A_##coll##_##variant] = { LC_C_##coll,                      \
                                  (flags),                          \
                                  (lc_alg_fn)lc_##coll##_##variant, \
                                  { #coll, #variant, restrictions, cost } },
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM
};

static const char *const coll_names[LC_NCOLL] = {
#define X(coll, ...) #coll,
    LC_COLLECTIVES(X)
#undef X
};

const char *lc_coll_name(lc_coll c) { return coll_names[c]; }
const char *lc_alg_variant(lc_alg a) { return lc_algorithms[a].info.variant; }

int lc_coll_from_name(const char *name)
{
    for (int c = 0; c < LC_NCOLL; c++)
        if (strcmp(name, coll_names[c]) == 0) return c;
    return -1;
}

int lc_alg_find(int c, const char *variant)
{
    if (strcmp(variant, "native") == 0) return LC_NATIVE;
    for (int a = 1; a < LC_NALG; a++)
        if ((int)lc_algorithms[a].coll == c &&
            strcmp(variant, lc_algorithms[a].info.variant) == 0)
            return a;
    return -1;
}

int lc_variant_known(const char *variant)
{
    for (int a = 0; a < LC_NALG; a++)
        if (strcmp(variant, lc_algorithms[a].info.variant) == 0) return 1;
    return 0;
}

/* Algorithm a is the first of its variant name (among those of c when c >= 0). */
static int first_of_variant(int c, int a)
{
    for (int b = 1; b < a; b++)
        if ((c < 0 || (int)lc_algorithms[b].coll == c) &&
            strcmp(lc_algorithms[a].info.variant, lc_algorithms[b].info.variant) == 0)
            return 0;
    return 1;
}

void lc_variant_list(int c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < LC_NALG; a++) {
        if (a > 0 &&
            ((c >= 0 && (int)lc_algorithms[a].coll != c) || !first_of_variant(c, a)))
            continue;
        int k = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                         lc_algorithms[a].info.variant);
        if (k < 0 || (size_t)k >= len - used) return;
        used += (size_t)k;
    }
}

int lc_restrictions(lc_coll c, lc_alg a)
{
    if (a == LC_NATIVE) return 0;
    if ((int)a < 0 || a >= LC_NALG || lc_algorithms[a].coll != c) return -1;
    return lc_algorithms[a].flags;
}

/* Entry i in the order of lanecoll_algorithms.def; NULL past the end. */
const LC_Algorithm *LC_Catalogue_get(int i)
{
    return i >= 0 && i < LC_NALG - 1 ? &lc_algorithms[i + 1].info : NULL;
}

int LC_Catalogue_size(void) { return LC_NALG - 1; }
