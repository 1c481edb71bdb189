/* options.h - command-line options declared once in a table (the fio way).
 *
 * The same table drives parsing (--name=value or --name value), --help, and the echo of
 * every option's effective value into the meta record, so a stored result always says
 * how it was measured. Sizes take binary suffixes: 4K = 4096, 4M = 4194304, 1G.
 *
 *   static int64_t iters; static const char *out;
 *   static const hs_option opts[] = {
 *       {"iterations", HS_OPT_INT, &iters, "1000", "timed iterations per size"},
 *       {"out", HS_OPT_STR, &out, "-", "JSONL output file, - for stdout"},
 *       {0}};
 *   int rc = hs_options_parse(opts, argc, argv, "p2p", "MPI point-to-point ...");
 *   if (rc >= 0) return rc;   // help printed (0) or bad usage (2)
 */
#ifndef HS_OPTIONS_H
#define HS_OPTIONS_H
#include <stdint.h>
#include "jsonl.h"

typedef enum {
    HS_OPT_INT,    /* int64_t */
    HS_OPT_SIZE,   /* int64_t, accepts K/M/G suffixes */
    HS_OPT_DOUBLE, /* double */
    HS_OPT_STR,    /* const char * (points into argv or the default) */
    HS_OPT_FLAG,   /* int, set to 1 when present; default "0" or "1" */
} hs_opt_type;

typedef struct {
    const char *name; /* long name without the dashes; NULL ends the table */
    hs_opt_type type;
    void *target;
    const char *def; /* default, as the user would type it */
    const char *help;
} hs_option;

/* Sets every target to its default, then applies argv. Returns -1 when the program should
 * go on, 0 when --help was printed, 2 on bad usage (message on stderr naming the option). */
int hs_options_parse(const hs_option *table, int argc, char **argv, const char *program,
                     const char *description);

/* The same, with stdout and stderr sent to /dev/null while parsing when `quiet` is set:
 * every MPI rank parses the same argv (no broadcast needed) but only rank 0 speaks. */
int hs_options_parse_quiet(const hs_option *table, int argc, char **argv,
                           const char *program, const char *description, int quiet);

/* Writes "options": {name: value, ...} with the effective values. */
void hs_options_echo(const hs_option *table, hs_json *j);

/* Parses "4096", "4K", "4M", "1G" (binary multiples). Returns 0 or -1. */
int hs_parse_size(const char *text, int64_t *out);

#endif
