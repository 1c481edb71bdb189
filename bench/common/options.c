#include "options.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hs_parse_size(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || v < 0) return -1;
    double mult = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mult = 1024.0;
        end++;
        break;
    case 'm':
    case 'M':
        mult = 1024.0 * 1024;
        end++;
        break;
    case 'g':
    case 'G':
        mult = 1024.0 * 1024 * 1024;
        end++;
        break;
    }
    if (mult > 1 && *end == 'i') end++; /* KiB, MiB, GiB */
    if (*end == 'B') end++;             /* KB, KiB, B */
    if (*end != '\0') return -1;
    *out = (int64_t)(v * mult);
    return 0;
}

static int set_value(const hs_option *o, const char *text)
{
    char *end;
    switch (o->type) {
    case HS_OPT_INT:
        errno = 0;
        *(int64_t *)o->target = strtoll(text, &end, 10);
        return (end == text || *end || errno) ? -1 : 0;
    case HS_OPT_SIZE: return hs_parse_size(text, (int64_t *)o->target);
    case HS_OPT_DOUBLE:
        errno = 0;
        *(double *)o->target = strtod(text, &end);
        return (end == text || *end || errno) ? -1 : 0;
    case HS_OPT_STR: *(const char **)o->target = text; return 0;
    case HS_OPT_FLAG:
        if (!strcmp(text, "1") || !strcmp(text, "true"))
            *(int *)o->target = 1;
        else if (!strcmp(text, "0") || !strcmp(text, "false"))
            *(int *)o->target = 0;
        else
            return -1;
        return 0;
    }
    return -1;
}

static const char *type_hint(hs_opt_type t)
{
    switch (t) {
    case HS_OPT_INT: return "N";
    case HS_OPT_SIZE: return "SIZE";
    case HS_OPT_DOUBLE: return "X";
    case HS_OPT_STR: return "TEXT";
    default: return "";
    }
}

static void print_help(const hs_option *table, const char *program, const char *description)
{
    printf("usage: %s [options]\n\n%s\n\noptions:\n", program, description);
    for (const hs_option *o = table; o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->type == HS_OPT_FLAG ? "" : "=",
                 type_hint(o->type));
        printf("  %-26s %s (default: %s)\n", left, o->help, o->def);
    }
    printf("  %-26s %s\n", "--help", "this text");
}

int hs_options_parse(const hs_option *table, int argc, char **argv, const char *program,
                     const char *description)
{
    for (const hs_option *o = table; o->name; o++) {
        if (set_value(o, o->def) != 0) {
            fprintf(stderr, "%s: bad default for --%s (a bug)\n", program, o->name);
            return 2;
        }
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            print_help(table, program, description);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr,
                    "%s: unexpected argument '%s'; options start with -- (see --help)\n",
                    program, arg);
            return 2;
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const hs_option *o = table;
        while (o->name && !(strlen(o->name) == nlen && !strncmp(o->name, name, nlen))) o++;
        if (!o->name) {
            fprintf(stderr, "%s: unknown option '--%.*s' (see --help)\n", program,
                    (int)nlen, name);
            return 2;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (!value && o->type == HS_OPT_FLAG) value = "1";
        if (!value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: --%s needs a value (%s)\n", program, o->name, o->help);
                return 2;
            }
            value = argv[++i];
        }
        if (set_value(o, value) != 0) {
            fprintf(stderr, "%s: --%s: '%s' is not a valid %s (%s)\n", program, o->name,
                    value, type_hint(o->type)[0] ? type_hint(o->type) : "flag", o->help);
            return 2;
        }
    }
    return -1;
}

/* Record keys are snake_case (docs/records.md) while option names use dashes. */
static void snake_case(const char *name, char *out, size_t size)
{
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++) out[i] = name[i] == '-' ? '_' : name[i];
    out[i] = '\0';
}

int hs_options_parse_quiet(const hs_option *table, int argc, char **argv,
                           const char *program, const char *description, int quiet)
{
    int saved[2] = { -1, -1 }, devnull = -1;
    if (quiet) {
        fflush(stdout);
        fflush(stderr);
        devnull = open("/dev/null", O_WRONLY);
        for (int fd = 1; fd <= 2 && devnull >= 0; fd++) {
            saved[fd - 1] = dup(fd);
            dup2(devnull, fd);
        }
    }
    int rc = hs_options_parse(table, argc, argv, program, description);
    if (quiet) {
        fflush(stdout);
        fflush(stderr);
        for (int fd = 1; fd <= 2; fd++)
            if (saved[fd - 1] >= 0) {
                dup2(saved[fd - 1], fd);
                close(saved[fd - 1]);
            }
        if (devnull >= 0) close(devnull);
    }
    return rc;
}

void hs_options_echo(const hs_option *table, hs_json *j)
{
    hs_json_open_object(j, "options");
    for (const hs_option *o = table; o->name; o++) {
        char key[64];
        snake_case(o->name, key, sizeof key);
        switch (o->type) {
        case HS_OPT_INT:
        case HS_OPT_SIZE: hs_json_int(j, key, *(int64_t *)o->target); break;
        case HS_OPT_DOUBLE: hs_json_double(j, key, *(double *)o->target); break;
        case HS_OPT_STR: hs_json_str(j, key, *(const char **)o->target); break;
        case HS_OPT_FLAG: hs_json_bool(j, key, *(int *)o->target); break;
        }
    }
    hs_json_close(j);
}
