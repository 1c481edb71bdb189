/* jsonl.h - build one JSON object per line and write it flushed (record contract, docs/records.md).
 *
 * A record is built in a growable buffer and written with one fwrite + fflush, so a crash
 * loses at most the record being built. Commas are tracked per nesting level, so callers
 * only say what comes next. Strings are escaped (quotes, backslash, control characters);
 * non-finite doubles are written as null because JSON has no NaN/Inf.
 *
 *   hs_json j; hs_json_begin(&j, "sample");
 *   hs_json_str(&j, "metric", "latency");
 *   hs_json_open_array(&j, "values"); hs_json_double(&j, NULL, 0.27); hs_json_close(&j);
 *   hs_json_emit(&j, stdout);            // writes {"type":"sample",...}\n and frees
 */
#ifndef HS_JSONL_H
#define HS_JSONL_H
#include <stdio.h>
#include <stdint.h>

#define HS_JSON_MAX_DEPTH 16

typedef struct {
    char *buf;
    size_t len, cap;
    int depth;
    int need_comma[HS_JSON_MAX_DEPTH];
    char closer[HS_JSON_MAX_DEPTH]; /* '}' or ']' that ends each open level */
} hs_json;

/* Starts an object {"type": type ... }. */
void hs_json_begin(hs_json *j, const char *type);
/* Members. key is NULL inside an array. */
void hs_json_str(hs_json *j, const char *key, const char *value);
void hs_json_int(hs_json *j, const char *key, int64_t value);
void hs_json_double(hs_json *j, const char *key, double value);
void hs_json_bool(hs_json *j, const char *key, int value);
void hs_json_null(hs_json *j, const char *key);
/* Nested containers; close with hs_json_close. */
void hs_json_open_object(hs_json *j, const char *key);
void hs_json_open_array(hs_json *j, const char *key);
void hs_json_close(hs_json *j);
/* Arrays of numbers in one call. */
void hs_json_double_array(hs_json *j, const char *key, const double *v, size_t n);
void hs_json_int_array(hs_json *j, const char *key, const int *v, size_t n);
/* Closes the top object, writes it with a newline, flushes, frees the buffer.
 * Returns 0, or -1 when the write failed. */
int hs_json_emit(hs_json *j, FILE *out);
/* Starts dst as a record of `type` holding src's members after its "type" (src is not
 * changed and may still be open; dst's open levels are src's): a summary repeating a
 * sample's metric, unit and params. */
void hs_json_copy(hs_json *dst, const hs_json *src, const char *type);
/* Frees without writing (error paths). */
void hs_json_discard(hs_json *j);

/* One-call error record: {"type":"error","message":...}. */
void hs_json_error(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
