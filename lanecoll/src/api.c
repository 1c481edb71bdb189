/* The public LC_<Coll>_<variant> functions, one per line of lanecoll_algorithms.def:
 * check the arguments and the algorithm's restrictions (prepare.c), run the body, or
 * the native collective (PMPI_) with the reason recorded (LC_Fallback_reason). */
#include "calls.h"

#define LC_ALGORITHM(coll, variant, flags, restrictions, cost)                 \
    int LC_PUBLIC_FN(coll, variant)(LC_PARAMS(coll), MPI_Comm comm)            \
    {                                                                          \
        lc_call call = LC_CALL_##coll;                                         \
        const char *why;                                                       \
        const lc_decomp *d = lc_prepare(&call, LC_A_##coll##_##variant, &why); \
        if (!d) return LC_FN(PMPI_, coll, )(LC_ARGS(coll), comm);              \
        return lc_##coll##_##variant(LC_ARGS(coll), d);                        \
    }
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM
