#include "transport_mpi.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- allow-list --------------------------------------------------------------------- */

static const char *const exact_names[] = { "pml",
                                           "btl",
                                           "mtl",
                                           "MPIR_CVAR_CH4_NETMOD",
                                           "MPIR_CVAR_CH4_SHM",
                                           "MPIR_CVAR_NEMESIS_NETMOD",
                                           NULL };
static const char *const words[] = { "eager",         "rndv",
                                     "rendezvous",    "single_copy",
                                     "max_send_size", "p2p_threshold",
                                     "cell_size",     NULL };

/* Case-insensitive substring search. */
static int has_word(const char *name, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, word, n) == 0) return 1;
    return 0;
}

int hs_mpit_wanted(const char *name)
{
    for (int i = 0; exact_names[i]; i++)
        if (strcmp(name, exact_names[i]) == 0) return 1;
    if (has_word(name, "ctxid")) return 0;
    for (int i = 0; words[i]; i++)
        if (has_word(name, words[i])) return 1;
    return 0;
}

#ifdef SMPI_SHARED_MALLOC
void hs_mpi_transport_json(hs_json *j, const char *full_version)
{
    (void)full_version;
    hs_json_null(j, "mpi_t");
    hs_json_null(j, "mpi_transport");
}
#else

/* Environment variables of the transport layers below MPI, recorded when set: UCX picks
 * its own rendezvous threshold when UCX_RNDV_THRESH is unset (nothing is recorded then).
 * Here, not above: an SMPI build (the stub above) would fail on an unused variable. */
static const char *const transport_env[] = { "UCX_RNDV_THRESH", "UCX_TLS", "FI_PROVIDER",
                                             NULL };

/* ---- Open MPI components open after MPI_Init ----------------------------------------- */

/* Frameworks whose open components are recorded: the point-to-point stack. */
static const char *const frameworks[] = { "pml", "btl", "mtl", NULL };
#define MAX_COMPONENTS 16
#define NAME_MAX_LEN 64

typedef struct {
    char names[3][MAX_COMPONENTS][NAME_MAX_LEN];
    int count[3];
    int any; /* a "<framework>_<component>_major_version" variable was listed at all */
} components;

/* "btl_vader_major_version" -> framework 1, component "vader". Returns the framework's
 * index, or -1. */
static int version_var(const char *name, char *comp, size_t cap)
{
    static const char suffix[] = "_major_version";
    size_t len = strlen(name), sl = sizeof suffix - 1;
    if (len <= sl || strcmp(name + len - sl, suffix) != 0) return -1;
    for (int f = 0; frameworks[f]; f++) {
        size_t fl = strlen(frameworks[f]);
        if (strncmp(name, frameworks[f], fl) != 0 || name[fl] != '_') continue;
        size_t cl = len - sl - fl - 1;
        if (cl == 0 || cl >= cap) return -1;
        memcpy(comp, name + fl + 1, cl);
        comp[cl] = '\0';
        return f;
    }
    return -1;
}

static int is_open(const components *c, int f, const char *comp)
{
    for (int i = 0; i < c->count[f]; i++)
        if (strcmp(c->names[f][i], comp) == 0) return 1;
    return 0;
}

/* An Open MPI component variable ("btl_vader_eager_limit") is read only while its
 * component is open; other names (MPICH's, the selection lists) always. */
static int readable(const components *c, const char *name)
{
    for (int f = 0; frameworks[f]; f++) {
        size_t fl = strlen(frameworks[f]);
        if (strncmp(name, frameworks[f], fl) != 0 || name[fl] != '_') continue;
        for (int i = 0; i < c->count[f]; i++) {
            size_t cl = strlen(c->names[f][i]);
            if (strncmp(name + fl + 1, c->names[f][i], cl) == 0 && name[fl + 1 + cl] == '_')
                return 1;
        }
        return 0; /* a component that is not open (or not ours to judge) */
    }
    return 1;
}

/* ---- reading one control variable ------------------------------------------------ */

/* Writes the enumeration item's name for value, or the number when no item has it. */
static void write_enum(hs_json *j, const char *name, MPI_T_enum e, long long value)
{
    int items = 0;
    char ename[NAME_MAX_LEN];
    int elen = (int)sizeof ename;
    if (MPI_T_enum_get_info(e, &items, ename, &elen) == MPI_SUCCESS)
        for (int k = 0; k < items; k++) {
            int v = 0;
            char item[NAME_MAX_LEN];
            int ilen = (int)sizeof item;
            if (MPI_T_enum_get_item(e, k, &v, item, &ilen) == MPI_SUCCESS && v == value) {
                hs_json_str(j, name, item);
                return;
            }
        }
    hs_json_int(j, name, value);
}

/* Reads variable i and writes it under its name; 1 when written, 0 when its type or
 * binding is not one this records (then nothing is written). */
static int write_cvar(hs_json *j, int i, const char *name, MPI_Datatype dt, MPI_T_enum e,
                      int bind)
{
    if (bind != MPI_T_BIND_NO_OBJECT) return 0;
    MPI_T_cvar_handle h;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS) return 0;
    int written = 0;
    if (dt == MPI_CHAR && count > 0) {
        char *text = calloc((size_t)count + 1, 1);
        if (text && MPI_T_cvar_read(h, text) == MPI_SUCCESS) {
            text[count] = '\0';
            if (strlen(text) > HS_MPIT_TEXT_MAX) text[HS_MPIT_TEXT_MAX] = '\0';
            hs_json_str(j, name, text);
            written = 1;
        }
        free(text);
    } else if (count == 1) {
        /* Integers of every width the standard allows for control variables. */
        union {
            int i;
            unsigned u;
            long l;
            unsigned long ul;
            long long ll;
            unsigned long long ull;
            MPI_Count c;
            char pad[32];
        } v;
        memset(&v, 0, sizeof v);
        int is_signed = 1, ok = 1;
        long long s = 0;
        unsigned long long u = 0;
        if (MPI_T_cvar_read(h, &v) != MPI_SUCCESS)
            ok = 0;
        else if (dt == MPI_INT)
            s = v.i;
        else if (dt == MPI_LONG)
            s = v.l;
        else if (dt == MPI_LONG_LONG)
            s = v.ll;
        else if (dt == MPI_COUNT)
            s = (long long)v.c;
        else if (dt == MPI_UNSIGNED)
            is_signed = 0, u = v.u;
        else if (dt == MPI_UNSIGNED_LONG)
            is_signed = 0, u = v.ul;
        else if (dt == MPI_UNSIGNED_LONG_LONG)
            is_signed = 0, u = v.ull;
        else
            ok = 0; /* doubles, booleans: not on the list's purpose */
        if (ok) {
            if (!is_signed && u > (unsigned long long)INT64_MAX) {
                /* "no limit" values (SIZE_MAX) exceed a JSON integer's safe range */
                char text[32];
                snprintf(text, sizeof text, "%llu", u);
                hs_json_str(j, name, text);
            } else {
                long long value = is_signed ? s : (long long)u;
                if (e != MPI_T_ENUM_NULL)
                    write_enum(j, name, e, value);
                else
                    hs_json_int(j, name, value);
            }
            written = 1;
        }
    }
    MPI_T_cvar_handle_free(&h);
    return written;
}

/* ---- the two meta fields ------------------------------------------------------------- */

/* MPICH's "MPICH Device:\tch4:ucx" line (any line "...Device:" of the version text). */
static void device_of(const char *full, char *out, size_t cap)
{
    out[0] = '\0';
    const char *hit = strstr(full, "Device:");
    if (!hit) return;
    hit += strlen("Device:");
    while (*hit == ' ' || *hit == '\t') hit++;
    size_t n = strcspn(hit, "\r\n");
    while (n > 0 && isspace((unsigned char)hit[n - 1])) n--;
    if (n >= cap) n = cap - 1;
    memcpy(out, hit, n);
    out[n] = '\0';
}

static int cvar_info(int i, char *name, int cap, MPI_Datatype *dt, MPI_T_enum *e, int *bind)
{
    int len = cap, verbosity, scope;
    int dlen = 0; /* no description wanted */
    return MPI_T_cvar_get_info(i, name, &len, &verbosity, dt, e, NULL, &dlen, bind, &scope);
}

void hs_mpi_transport_json(hs_json *j, const char *full_version)
{
    /* Once per process: MPICH 4.0.2 segfaults in MPI_T_cvar_get_num after MPI_T_finalize
     * and a second MPI_T_init_thread. */
    static int calls = 0;
    int provided, n = 0, more = 0, inited = 0;
    const char *error = NULL;
    components comps;
    memset(&comps, 0, sizeof comps);
    if (calls++ > 0)
        error = "read once per process (MPI_T is finalized after it)";
    else if (!(inited = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS))
        error = "MPI_T_init_thread failed";
    else if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        error = "MPI_T_cvar_get_num failed";

    /* Pass 1: which Open MPI components are open (their version variables are listed;
     * Open MPI deregisters the variables of a component it closes). */
    char name[256];
    MPI_Datatype dt;
    MPI_T_enum e;
    int bind;
    for (int i = 0; !error && i < n; i++) {
        if (cvar_info(i, name, (int)sizeof name, &dt, &e, &bind) != MPI_SUCCESS) continue;
        char comp[NAME_MAX_LEN];
        int f = version_var(name, comp, sizeof comp);
        if (f < 0) continue;
        comps.any = 1;
        if (comps.count[f] < MAX_COMPONENTS && !is_open(&comps, f, comp))
            snprintf(comps.names[f][comps.count[f]++], NAME_MAX_LEN, "%s", comp);
    }

    /* MPI_T_init_thread (Open MPI 4.1.4, after MPI_Init) registers the variables of every
     * framework that was not open then: the mtl's components all read as open under ob1,
     * which closed that framework. A framework's list is kept only where the PML in use
     * needs it (btl under ob1, mtl under cm); the pml framework is open until finalize. */
    if (!is_open(&comps, 0, "ob1")) comps.count[1] = 0;
    if (!is_open(&comps, 0, "cm")) comps.count[2] = 0;

    /* Pass 2: the allow-listed variables. */
    if (error)
        hs_json_null(j, "mpi_t");
    else
        hs_json_open_object(j, "mpi_t");
    int written = 0;
    for (int i = 0; !error && i < n; i++) {
        if (cvar_info(i, name, (int)sizeof name, &dt, &e, &bind) != MPI_SUCCESS) continue;
        if (!hs_mpit_wanted(name) || !readable(&comps, name)) continue;
        if (written >= HS_MPIT_MAX) {
            more++;
            continue;
        }
        written += write_cvar(j, i, name, dt, e, bind);
    }
    if (!error) hs_json_close(j);
    if (inited) MPI_T_finalize();

    hs_json_open_object(j, "mpi_transport");
    char device[128];
    device_of(full_version, device, sizeof device);
    if (device[0])
        hs_json_str(j, "device", device);
    else
        hs_json_null(j, "device");
    if (comps.any) {
        hs_json_open_object(j, "components_open");
        for (int f = 0; frameworks[f]; f++) {
            hs_json_open_array(j, frameworks[f]);
            for (int k = 0; k < comps.count[f]; k++)
                hs_json_str(j, NULL, comps.names[f][k]);
            hs_json_close(j);
        }
        hs_json_close(j);
    } else {
        hs_json_null(j, "components_open");
    }
    hs_json_open_object(j, "env");
    for (int k = 0; transport_env[k]; k++) {
        const char *v = getenv(transport_env[k]);
        if (!v) continue;
        char text[HS_MPIT_TEXT_MAX + 1];
        snprintf(text, sizeof text, "%s", v);
        hs_json_str(j, transport_env[k], text);
    }
    hs_json_close(j);
    hs_json_int(j, "mpi_t_more", more);
    if (error) hs_json_str(j, "mpi_t_error", error);
    hs_json_close(j);
}
#endif
