/* Recursive-descent JSON reader (see json.h). Limits, so that a hostile or broken file
 * is refused with a message instead of exhausting the stack or memory:
 *   nesting depth   at most LJ_MAX_DEPTH (64) levels of objects/arrays
 *   NUL bytes       refused anywhere in the text (a C string would silently end there)
 *   duplicate keys  refused within one object (JSON leaves them undefined)
 * The tuning loader adds its own limits on file size and rules (tuning.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

typedef struct parser {
    const char *s;
    int line;
    char *err;
    size_t errlen;
} parser;

static int fail(parser *p, const char *what)
{
    snprintf(p->err, p->errlen, "line %d: %s", p->line, what);
    return -1;
}

static void skip_space(parser *p)
{
    for (;; p->s++) {
        if (*p->s == '\n')
            p->line++;
        else if (*p->s != ' ' && *p->s != '\t' && *p->s != '\r')
            return;
    }
}

static int parse_value(parser *p, lj_value *v, int depth);

static int fail_key(parser *p, const char *what, const char *key)
{
    snprintf(p->err, p->errlen, "line %d: %s \"%s\"", p->line, what, key);
    return -1;
}

static int parse_string(parser *p, char **out)
{
    size_t cap = 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) return fail(p, "out of memory");
    p->s++; /* opening quote */
    for (;;) {
        char c = *p->s++;
        if (c == '\0' || c == '\n') {
            free(buf);
            p->s--;
            return fail(p, "unterminated string");
        }
        if (c == '"') break;
        if (c == '\\') {
            char e = *p->s++;
            switch (e) {
            case '"':
            case '\\':
            case '/': c = e; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            default: free(buf); return fail(p, "unsupported escape in string");
            }
        }
        if (len + 2 > cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                return fail(p, "out of memory");
            }
            buf = nb;
        }
        buf[len++] = c;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

static int push(parser *p, lj_value *v, char *key, int *cap)
{
    if (v->n == *cap) {
        *cap = *cap ? 2 * *cap : 4;
        lj_value *items = realloc(v->items, sizeof *items * (size_t)*cap);
        if (!items) return fail(p, "out of memory");
        v->items = items;
        if (v->type == LJ_OBJECT) {
            char **keys = realloc(v->keys, sizeof *keys * (size_t)*cap);
            if (!keys) return fail(p, "out of memory");
            v->keys = keys;
        }
    }
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    if (v->type == LJ_OBJECT) v->keys[v->n] = key;
    v->n++;
    return 0;
}

static int parse_container(parser *p, lj_value *v, int depth)
{
    char close = v->type == LJ_OBJECT ? '}' : ']';
    int cap = 0;
    p->s++;
    skip_space(p);
    if (*p->s == close) {
        p->s++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_space(p);
        if (v->type == LJ_OBJECT) {
            if (*p->s != '"') return fail(p, "expected a string key");
            if (parse_string(p, &key)) return -1;
            skip_space(p);
            if (*p->s != ':') {
                free(key);
                return fail(p, "expected ':' after key");
            }
            for (int i = 0; i < v->n; i++)
                if (strcmp(v->keys[i], key) == 0) {
                    int rc = fail_key(p, "duplicate key", key);
                    free(key);
                    return rc;
                }
            p->s++;
        }
        if (push(p, v, key, &cap)) {
            free(key);
            return -1;
        }
        if (parse_value(p, &v->items[v->n - 1], depth + 1)) return -1;
        skip_space(p);
        if (*p->s == ',') {
            p->s++;
            continue;
        }
        if (*p->s == close) {
            p->s++;
            return 0;
        }
        return fail(p,
                    v->type == LJ_OBJECT ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (strtod alone would also
 * take hex, inf and nan). An integer literal is accumulated digit by digit in 64 bits
 * with an overflow check, so 9223372036854775807 is exact and ...808 is flagged. */
static int parse_number(parser *p, lj_value *v)
{
    const char *start = p->s, *q = p->s;
    int negative = *q == '-';
    if (negative) q++;
    if (!is_digit(*q)) return fail(p, "invalid number");
    unsigned long long mag = 0;
    unsigned long long limit = negative ? 9223372036854775808ULL : 9223372036854775807ULL;
    int overflow = 0;
    const char *digits = q;
    while (is_digit(*q)) {
        unsigned d = (unsigned)(*q++ - '0');
        if (mag > (limit - d) / 10)
            overflow = 1;
        else
            mag = mag * 10 + d;
    }
    if (*digits == '0' && q - digits > 1) return fail(p, "invalid number (leading zero)");
    int integer = 1;
    if (*q == '.') {
        integer = 0;
        if (!is_digit(*++q)) return fail(p, "invalid number");
        while (is_digit(*q)) q++;
    }
    if (*q == 'e' || *q == 'E') {
        integer = 0;
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!is_digit(*q)) return fail(p, "invalid number");
        while (is_digit(*q)) q++;
    }
    v->type = LJ_NUMBER;
    v->number = strtod(start, NULL);
    v->integer = !integer ? 0 : overflow ? 2 : 1;
    if (v->integer == 1)
        v->ivalue = negative ? (mag == 9223372036854775808ULL ? (-9223372036854775807LL - 1)
                                                              : -(long long)mag)
                             : (long long)mag;
    p->s = q;
    return 0;
}

static int parse_value(parser *p, lj_value *v, int depth)
{
    if (depth > LJ_MAX_DEPTH) return fail(p, "nesting too deep");
    skip_space(p);
    v->line = p->line;
    char c = *p->s;
    if (c == '{' || c == '[') {
        v->type = c == '{' ? LJ_OBJECT : LJ_ARRAY;
        return parse_container(p, v, depth);
    }
    if (c == '"') {
        v->type = LJ_STRING;
        return parse_string(p, &v->string);
    }
    if (strncmp(p->s, "true", 4) == 0) {
        v->type = LJ_BOOL;
        v->number = 1;
        p->s += 4;
        return 0;
    }
    if (strncmp(p->s, "false", 5) == 0) {
        v->type = LJ_BOOL;
        p->s += 5;
        return 0;
    }
    if (strncmp(p->s, "null", 4) == 0) {
        v->type = LJ_NULL;
        p->s += 4;
        return 0;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, v);
    return fail(p, c ? "unexpected character" : "unexpected end of file");
}

int lj_parse(const char *text, size_t len, lj_value *out, char *err, size_t errlen)
{
    parser p = { text, 1, err, errlen };
    memset(out, 0, sizeof *out);
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        for (const char *q = text; q < nul; q++) p.line += *q == '\n';
        return fail(&p, "NUL byte in the file (not a JSON text)");
    }
    if (parse_value(&p, out, 0)) {
        lj_free(out);
        return -1;
    }
    skip_space(&p);
    if (*p.s) {
        lj_free(out);
        return fail(&p, "trailing characters after the document");
    }
    return 0;
}

void lj_free(lj_value *v)
{
    for (int i = 0; i < v->n; i++) {
        lj_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    memset(v, 0, sizeof *v);
}

const lj_value *lj_get(const lj_value *obj, const char *key)
{
    if (obj->type != LJ_OBJECT) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}
