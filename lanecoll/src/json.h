/* A small JSON reader for the tuning file: the whole document into a tree whose values
 * remember their line, so errors can name it. Not a general-purpose library: no
 * \u escapes beyond ASCII, numbers kept as double. */
#ifndef LANECOLL_JSON_H
#define LANECOLL_JSON_H

#include <stddef.h>

typedef enum { LJ_NULL, LJ_BOOL, LJ_NUMBER, LJ_STRING, LJ_ARRAY, LJ_OBJECT } lj_type;

typedef struct lj_value {
    lj_type type;
    int line;
    double number;            /* LJ_NUMBER, LJ_BOOL (0/1) */
    char *string;             /* LJ_STRING */
    int n;                    /* LJ_ARRAY, LJ_OBJECT: number of items */
    struct lj_value *items;   /* LJ_ARRAY, LJ_OBJECT */
    char **keys;              /* LJ_OBJECT: keys[i] names items[i] */
} lj_value;

/* Parses text into *out. Returns 0, or -1 with "line N: what" in err. */
int lj_parse(const char *text, lj_value *out, char *err, size_t errlen);
void lj_free(lj_value *v);
/* Member `key` of an object, NULL if absent. */
const lj_value *lj_get(const lj_value *obj, const char *key);

#endif
