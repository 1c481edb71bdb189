/* Which node a process belongs to, when the environment overrides the MPI library's
 * view (tests, simulation). Without an override the caller uses
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
 *
 *   LANECOLL_NODE_SIZE=K        node = world rank / K
 *   LANECOLL_NODE_SIZES=a,b,c   consecutive blocks of world ranks of the given sizes
 *   LANECOLL_NODE_NAME_SEP=c    node = processor name up to the last c
 *
 * Nodes are defined on MPI_COMM_WORLD ranks (they stand for hardware), so a
 * sub-communicator whose ranks are permuted relative to the world gets a
 * non-consecutive layout, exactly as on a real machine. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int fail(const char *var, const char *value, const char *why)
{
    fprintf(stderr, "lanecoll: %s=%s: %s\n", var, value, why);
    return MPI_ERR_ARG;
}

int lc_env_number(const char *s, long long *out)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s)) return 0;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE || v < 1 || v > LC_ENV_MAX) return 0;
    *out = v;
    return 1;
}

_Static_assert(LC_ENV_MAX == 1000000000LL, "the messages below state LC_ENV_MAX");
#define EXPECTED_NUMBER "expected a positive integer up to 1000000000"
#define EXPECTED_NUMBERS \
    "expected positive integers separated by commas, each up to 1000000000"

/* Node of world rank `wrank` from "a,b,c" (wrank < 0: only validate); the sizes must be
 * positive integers separated by single commas (no empty item: "2,,2" is refused) and
 * sum to the world size. Returns NULL, or why the value is invalid (in why[]). */
static const char *parse_sizes(const char *spec, int wrank, int wsize, int *color,
                               char *why, size_t whylen)
{
    long first = 0;
    int node = 0, found = 0;
    for (const char *tok = spec;; node++) {
        size_t len = strcspn(tok, ",");
        char item[32];
        long long sz;
        if (len == 0 || len >= sizeof item) return EXPECTED_NUMBERS;
        memcpy(item, tok, len);
        item[len] = '\0';
        if (!lc_env_number(item, &sz) || first > 2000000000L) return EXPECTED_NUMBERS;
        if (!found && wrank >= first && wrank < first + sz) {
            *color = node;
            found = 1;
        }
        first += sz;
        if (!tok[len]) break;
        tok += len + 1;
    }
    if (first != wsize) {
        snprintf(why, whylen, "sizes sum to %ld but MPI_COMM_WORLD has %d processes", first,
                 wsize);
        return why;
    }
    return NULL;
}

static int color_from_sizes(const char *spec, int wrank, int wsize, int *color)
{
    char why[128];
    const char *bad = parse_sizes(spec, wrank, wsize, color, why, sizeof why);
    return bad ? fail("LANECOLL_NODE_SIZES", spec, bad) : MPI_SUCCESS;
}

/* Validates the node override (at MPI_Init, before any communicator needs it). */
int lc_node_settings_check(int wsize, char *err, size_t errlen)
{
    const char *size_s = getenv("LANECOLL_NODE_SIZE");
    const char *sizes_s = getenv("LANECOLL_NODE_SIZES");
    const char *sep_s = getenv("LANECOLL_NODE_NAME_SEP");
    int nset = (size_s && *size_s) + (sizes_s && *sizes_s) + (sep_s && *sep_s);
    char why[128];
    long long k;
    int color;
    const char *var = NULL, *value = NULL, *bad = NULL;
    if (nset > 1) {
        snprintf(err, errlen,
                 "lanecoll: set at most one of LANECOLL_NODE_SIZE, "
                 "LANECOLL_NODE_SIZES, LANECOLL_NODE_NAME_SEP");
        return -1;
    }
    if (size_s && *size_s && !lc_env_number(size_s, &k))
        var = "LANECOLL_NODE_SIZE", value = size_s, bad = EXPECTED_NUMBER;
    if (sizes_s && *sizes_s &&
        (bad = parse_sizes(sizes_s, -1, wsize, &color, why, sizeof why)) != NULL)
        var = "LANECOLL_NODE_SIZES", value = sizes_s;
    if (sep_s && *sep_s && strlen(sep_s) != 1)
        var = "LANECOLL_NODE_NAME_SEP", value = sep_s,
        bad = "expected exactly one character";
    if (!bad) return 0;
    snprintf(err, errlen, "lanecoll: %s=%s: %s", var, value, bad);
    return -1;
}

/* Node name: the processor name cut at the last `sep`, zero-padded. */
static int node_name(char sep, char name[MPI_MAX_PROCESSOR_NAME])
{
    int len;
    memset(name, 0, MPI_MAX_PROCESSOR_NAME);
    LC_TRY(PMPI_Get_processor_name(name, &len));
    char *cut = strrchr(name, sep);
    if (cut) memset(cut, 0, (size_t)(name + MPI_MAX_PROCESSOR_NAME - cut));
    return MPI_SUCCESS;
}

/* Colour = lowest comm rank whose node name equals ours, by exchanging every name:
 * O(p) names on every process. The fallback of color_from_names. */
static int color_from_all_names(MPI_Comm comm, const char *name, int *color)
{
    int size;
    LC_TRY(PMPI_Comm_size(comm, &size));
    char *all = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    if (!all) return MPI_ERR_NO_MEM;
    int err = PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all,
                             MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
    if (err == MPI_SUCCESS) {
        for (int r = 0; r < size; r++)
            if (memcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, name,
                       MPI_MAX_PROCESSOR_NAME) == 0) {
                *color = r;
                break;
            }
    }
    free(all);
    return err;
}

/* Colour = lowest comm rank whose node name (processor name cut at the last `sep`)
 * equals ours. Processes first split by a 31-bit FNV-1a hash of the name; each group
 * checks that its names really are equal (one broadcast of the leader's name and one
 * MPI_Allreduce of a flag over comm), and only a hash collision falls back to exchanging
 * every name (color_from_all_names: an allgather of p names, which a ring algorithm
 * turns into O(p^2) messages: 34 s of CPU per call at 1152 ranks under SimGrid). */
static int color_from_names(MPI_Comm comm, char sep, int *color)
{
    char name[MPI_MAX_PROCESSOR_NAME], lead[MPI_MAX_PROCESSOR_NAME + sizeof(int)];
    LC_TRY(node_name(sep, name));
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < sizeof name && name[i]; i++)
        hash = (hash ^ (unsigned char)name[i]) * 16777619u;
    int rank, same, all_same;
    MPI_Comm group;
    LC_TRY(PMPI_Comm_rank(comm, &rank));
    LC_TRY(PMPI_Comm_split(comm, (int)(hash & 0x7fffffffu), rank, &group));
    memcpy(lead, name, MPI_MAX_PROCESSOR_NAME);
    memcpy(lead + MPI_MAX_PROCESSOR_NAME, &rank, sizeof rank); /* key = rank: the lowest */
    int err = PMPI_Bcast(lead, (int)sizeof lead, MPI_BYTE, 0, group);
    PMPI_Comm_free(&group);
    if (err != MPI_SUCCESS) return err;
    same = memcmp(lead, name, MPI_MAX_PROCESSOR_NAME) == 0;
    LC_TRY(PMPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, comm));
    if (!all_same) return color_from_all_names(comm, name, color);
    memcpy(color, lead + MPI_MAX_PROCESSOR_NAME, sizeof *color);
    return MPI_SUCCESS;
}

int lc_node_color(MPI_Comm comm, int *color, int *use_split_type)
{
    const char *size_s = getenv("LANECOLL_NODE_SIZE");
    const char *sizes_s = getenv("LANECOLL_NODE_SIZES");
    const char *sep_s = getenv("LANECOLL_NODE_NAME_SEP");
    int nset = (size_s && *size_s) + (sizes_s && *sizes_s) + (sep_s && *sep_s);
    *use_split_type = 0;
    if (nset > 1) {
        fprintf(stderr, "lanecoll: set at most one of LANECOLL_NODE_SIZE, "
                        "LANECOLL_NODE_SIZES, LANECOLL_NODE_NAME_SEP\n");
        return MPI_ERR_ARG;
    }
    if (nset == 0) {
        *use_split_type = 1;
        return MPI_SUCCESS;
    }

    int wrank, wsize;
    LC_TRY(PMPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    LC_TRY(PMPI_Comm_size(MPI_COMM_WORLD, &wsize));
    if (size_s && *size_s) {
        long long k;
        if (!lc_env_number(size_s, &k))
            return fail("LANECOLL_NODE_SIZE", size_s, EXPECTED_NUMBER);
        *color = (int)(wrank / k);
        return MPI_SUCCESS;
    }
    if (sizes_s && *sizes_s) return color_from_sizes(sizes_s, wrank, wsize, color);
    if (strlen(sep_s) != 1)
        return fail("LANECOLL_NODE_NAME_SEP", sep_s, "expected exactly one character");
    return color_from_names(comm, sep_s[0], color);
}
