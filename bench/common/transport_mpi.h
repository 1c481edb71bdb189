/* transport_mpi.h - the MPI transport as the library chose it at run time, read from
 * inside the program (docs/records.md, meta fields "mpi_t" and "mpi_transport").
 *
 * A p2p curve's steps are the library's protocol switches (eager to rendezvous, a
 * single-copy mechanism, a fragment size); the analysis may name one only when the
 * threshold was recorded. This writes, into the meta record being built:
 *
 *   "mpi_t":         {name: value}: an allow-list of control variables read through the
 *                    MPI tool interface (MPI_T_cvar_*), the values in effect in this
 *                    process (rank 0); strings (at most HS_MPIT_TEXT_MAX characters),
 *                    integers, and enumerations as their item's name
 *   "mpi_transport": {"device", "components_open", "env", "mpi_t_more", "mpi_t_error"}:
 *                    the facts that do not come from a control variable, each named for
 *                    its source (docs/records.md)
 *
 * The allow-list: the selection lists (Open MPI's pml, btl, mtl; MPICH's
 * MPIR_CVAR_CH4_NETMOD, MPIR_CVAR_CH4_SHM, MPIR_CVAR_NEMESIS_NETMOD) and the names holding
 * eager, rndv, rendezvous, single_copy, max_send_size, p2p_threshold, cell_size (not
 * ctxid: MPICH's context-id cache). Open MPI component variables (btl_X_..., pml_X_...,
 * mtl_X_...) are read only while component X is open (its X_major_version variable is
 * listed): Open MPI 4.1.4 segfaults reading variables of common code whose component it
 * closed (opal_common_ucx_verbose after pml ucx was excluded), and a closed component's
 * threshold is not the transport's. MPI_T_init_thread, called after MPI_Init, registers
 * again the variables of every framework that was closed then (Open MPI 4.1.4: all mtl
 * components read as open under ob1), so "components_open" keeps the btl list only under
 * the ob1 PML and the mtl list only under cm. At most HS_MPIT_MAX entries; the count of
 * further matches is "mpi_t_more".
 *
 * Cost, rank 0 only, local: MPI_T_init_thread and two passes of MPI_T_cvar_get_info over
 * every control variable (1282 in Open MPI 4.1.4, 344 in MPICH 4.0.2), a handle per
 * variable read, MPI_T_finalize. MPICH 4.0.2: 0.3 ms. Open MPI 4.1.4: about 0.2 s on the
 * loaded 2-core test machine, nearly all in MPI_T_init_thread, which loads and registers
 * the components of every framework not open (MPI_T_finalize unloads them again: 282
 * memory mappings before, 610 during, 284 after); the other ranks wait for it in the meta
 * record's closing broadcast, before any measurement. Once per process: a second call
 * writes "mpi_t": null with "mpi_t_error" (MPICH 4.0.2 segfaults in MPI_T_cvar_get_num
 * after MPI_T_finalize and a second MPI_T_init_thread). SimGrid SMPI builds write null
 * for both (a simulated transport has no library thresholds). */
#ifndef HS_TRANSPORT_MPI_H
#define HS_TRANSPORT_MPI_H
#include "binding_mpi.h"
#include "jsonl.h"

#define HS_MPIT_MAX 64       /* entries of "mpi_t" */
#define HS_MPIT_TEXT_MAX 200 /* characters of one string value */

/* Whether a control variable's name is on the allow-list (the component-open condition
 * for Open MPI names is checked separately). Exposed for tests. */
int hs_mpit_wanted(const char *name);

/* Writes "mpi_t" and "mpi_transport" into j (an open meta object). full_version is the
 * whole MPI_Get_library_version text (MPICH's "Device:" line is on its fourth line). */
void hs_mpi_transport_json(hs_json *j, const char *full_version);

#endif
