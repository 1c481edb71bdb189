#include "jsonl.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void put(hs_json *j, const char *s, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap) cap *= 2;
        char *b = realloc(j->buf, cap);
        if (!b) {
            fputs("hpcscope: out of memory building a record\n", stderr);
            abort();
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(hs_json *j, const char *s) { put(j, s, strlen(s)); }

static void put_escaped(hs_json *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else {
                put(j, (const char *)p, 1);
            }
        }
    }
    put(j, "\"", 1);
}

/* Comma (if needed) and "key": prefix for the next member. */
static void member(hs_json *j, const char *key)
{
    if (j->need_comma[j->depth]) put(j, ",", 1);
    j->need_comma[j->depth] = 1;
    if (key) {
        put_escaped(j, key);
        put(j, ":", 1);
    }
}

void hs_json_begin(hs_json *j, const char *type)
{
    memset(j, 0, sizeof *j);
    put(j, "{", 1);
    hs_json_str(j, "type", type);
}

void hs_json_str(hs_json *j, const char *key, const char *value)
{
    member(j, key);
    if (value)
        put_escaped(j, value);
    else
        puts_(j, "null");
}

void hs_json_int(hs_json *j, const char *key, int64_t value)
{
    char tmp[32];
    member(j, key);
    snprintf(tmp, sizeof tmp, "%lld", (long long)value);
    puts_(j, tmp);
}

void hs_json_double(hs_json *j, const char *key, double value)
{
    char tmp[40];
    member(j, key);
    if (!isfinite(value)) {
        puts_(j, "null");
        return;
    }
    snprintf(tmp, sizeof tmp, "%.9g",
             value); /* 9 digits: sub-ns resolution for us values */
    puts_(j, tmp);
}

void hs_json_bool(hs_json *j, const char *key, int value)
{
    member(j, key);
    puts_(j, value ? "true" : "false");
}

void hs_json_null(hs_json *j, const char *key)
{
    member(j, key);
    puts_(j, "null");
}

static void open_(hs_json *j, const char *key, char opener, char closer)
{
    member(j, key);
    put(j, &opener, 1);
    if (j->depth + 1 >= HS_JSON_MAX_DEPTH) {
        fputs("hpcscope: record nested too deep\n", stderr);
        abort();
    }
    j->depth++;
    j->need_comma[j->depth] = 0;
    j->closer[j->depth] = closer;
}

void hs_json_open_object(hs_json *j, const char *key) { open_(j, key, '{', '}'); }
void hs_json_open_array(hs_json *j, const char *key) { open_(j, key, '[', ']'); }

void hs_json_close(hs_json *j)
{
    if (j->depth == 0) return;
    put(j, &j->closer[j->depth], 1);
    j->depth--;
}

void hs_json_double_array(hs_json *j, const char *key, const double *v, size_t n)
{
    hs_json_open_array(j, key);
    for (size_t i = 0; i < n; i++) hs_json_double(j, NULL, v[i]);
    hs_json_close(j);
}

void hs_json_int_array(hs_json *j, const char *key, const int *v, size_t n)
{
    hs_json_open_array(j, key);
    for (size_t i = 0; i < n; i++) hs_json_int(j, NULL, v[i]);
    hs_json_close(j);
}

int hs_json_emit(hs_json *j, FILE *out)
{
    while (j->depth > 0) hs_json_close(j);
    put(j, "}\n", 2);
    size_t w = fwrite(j->buf, 1, j->len, out);
    int rc = (w == j->len && fflush(out) == 0) ? 0 : -1;
    hs_json_discard(j);
    return rc;
}

void hs_json_copy(hs_json *dst, const hs_json *src, const char *type)
{
    hs_json_begin(dst, type);
    /* src starts {"type":"<word>", and no record type holds a comma */
    const char *rest = src->buf ? strchr(src->buf, ',') : NULL;
    if (!rest) return;
    put(dst, rest, src->len - (size_t)(rest - src->buf));
    dst->depth = src->depth;
    memcpy(dst->need_comma, src->need_comma, sizeof dst->need_comma);
    memcpy(dst->closer, src->closer, sizeof dst->closer);
}

void hs_json_discard(hs_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

void hs_json_error(FILE *out, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hs_json j;
    hs_json_begin(&j, "error");
    hs_json_str(&j, "message", msg);
    hs_json_emit(&j, out);
}
