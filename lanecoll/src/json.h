/* A small JSON reader for the tuning file: the whole document into a tree whose values
 * remember their line, so errors can name it. Not a general-purpose library: no
 * \u escapes beyond ASCII. Numbers follow the JSON grammar; integer literals (no
 * fraction or exponent) are also kept exactly as 64-bit integers, because byte counts
 * up to 2^63-1 do not survive a double (53-bit mantissa). */
#ifndef LANECOLL_JSON_H
#define LANECOLL_JSON_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

/* Deepest nesting of objects and arrays accepted. */
#define LJ_MAX_DEPTH 64

typedef enum { LJ_NULL, LJ_BOOL, LJ_NUMBER, LJ_STRING, LJ_ARRAY, LJ_OBJECT } lj_type;

typedef struct lj_value {
    lj_type type;
    int line;
    double number;          /* LJ_NUMBER, LJ_BOOL (0/1) */
    int integer;            /* LJ_NUMBER: 1 integer literal in [INT64_MIN, INT64_MAX],
                                 2 integer literal outside it, 0 fraction or exponent */
    long long ivalue;       /* LJ_NUMBER with integer == 1: the exact value */
    char *string;           /* LJ_STRING */
    int n;                  /* LJ_ARRAY, LJ_OBJECT: number of items */
    struct lj_value *items; /* LJ_ARRAY, LJ_OBJECT */
    char **keys;            /* LJ_OBJECT: keys[i] names items[i] */
} lj_value;

/* Parses text into *out. Returns 0, or -1 with "line N: what" in err. */
/* Parses text[0..len) (text[len] must be '\0'). A NUL byte inside it, a duplicate key
 * in an object or nesting deeper than LJ_MAX_DEPTH is an error. */
int lj_parse(const char *text, size_t len, lj_value *out, char *err, size_t errlen);
void lj_free(lj_value *v);
/* Member `key` of an object, NULL if absent. */
const lj_value *lj_get(const lj_value *obj, const char *key);

#pragma GCC visibility pop

#endif
