/* comm_life.c -- the communicator calls acis takes part in.  Constructors,
 * so that with MPIR_CVAR_OFFLOAD_COMM_SETUP=eager a new communicator gets
 * its switch table row as it is created (every member is in the call, so
 * the collective set-up is safe there; in the default lazy mode they pass
 * straight to MPICH after one branch).  Not MPI_Comm_idup: the set-up
 * would wait for the members inside a nonblocking call; such a
 * communicator is set up at its first blocking collective.  MPI_Comm_free:
 * no barrier; the communicator's state outlives the handle until every
 * member is done with its row (src/commtable/comm.c), which this call
 * moves along.  MPI_Comm_set_errhandler: the communicator's private dup
 * gets the same.  MPI_Comm_set_info and the constructors that take info:
 * whether the communicator asserts that its persistent collectives start
 * in order (mpi_assert_strict_persistent_collective_ordering, MPI 4.1). */
#include "config.h"

#include <strings.h>

#include "offload/offload.h"

#define STRICT_KEY "mpi_assert_strict_persistent_collective_ordering"

/* What info says of STRICT_KEY: 1 true, 0 false, -1 nothing. */
static int asserts(MPI_Info info)
{
    char v[16];
    int len = (int)sizeof v, flag = 0;
    if (info == MPI_INFO_NULL ||
        PMPI_Info_get_string(info, STRICT_KEY, &len, v, &flag) != MPI_SUCCESS || !flag)
        return -1;
    return strcasecmp(v, "true") == 0;
}

/* comm's persistent collectives start in order on every rank, as its info
 * (or its parent's, for MPI_Comm_dup) asserts (select.c reads it); says
 * -1: nothing asserted, nothing done. */
static void strict_order(MPI_Comm comm, int says)
{
    struct acis_comm *cs;
    if (says >= 0 && comm != MPI_COMM_NULL && acis_oc.mode == ACIS_MODE_ACTIVE &&
        (cs = acis_comm_get(comm)))
        cs->strict_order = says;
}

static void eager(MPI_Comm newcomm)
{
    if (newcomm == MPI_COMM_NULL || !acis_fb.device_ok)
        return;
    struct acis_comm *cs = acis_comm_get(newcomm);
    if (cs && !cs->inter && cs->size > 1)
        acis_comm_ready(cs);
}

#define ACIS_CTOR_ORDER(Name, PARAMS, ARGS, NEWCOMM, ORDER)                  \
    ACIS_API int MPI_##Name PARAMS                                            \
    {                                                                         \
        int rc = PMPI_##Name ARGS;                                            \
        if (rc == MPI_SUCCESS)                                                \
            strict_order(*(NEWCOMM), (ORDER));                                \
        if (rc == MPI_SUCCESS && acis_oc.eager)                               \
            eager(*(NEWCOMM));                                                \
        return rc;                                                            \
    }
#define ACIS_CTOR(Name, PARAMS, ARGS, NEWCOMM) ACIS_CTOR_ORDER(Name, PARAMS, ARGS, NEWCOMM, -1)

/* The parent's assertion, for MPI_Comm_dup (which keeps the info hints). */
static int parent_order(MPI_Comm comm)
{
    struct acis_comm *cs;
    if (acis_oc.mode != ACIS_MODE_ACTIVE || !(cs = acis_comm_get(comm)))
        return -1;
    return cs->strict_order ? 1 : -1;
}

ACIS_CTOR_ORDER(Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm), newcomm,
                parent_order(comm))
ACIS_CTOR_ORDER(Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm),
                (comm, info, newcomm), newcomm, asserts(info))
ACIS_CTOR(Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm),
          (comm, color, key, newcomm), newcomm)
ACIS_CTOR_ORDER(Comm_split_type,
                (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm),
                (comm, split_type, key, info, newcomm), newcomm, asserts(info))
ACIS_CTOR(Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm),
          (comm, group, newcomm), newcomm)
ACIS_CTOR(Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm),
          (comm, group, tag, newcomm), newcomm)
ACIS_CTOR(Cart_create,
          (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
           MPI_Comm *comm_cart),
          (comm_old, ndims, dims, periods, reorder, comm_cart), comm_cart)
ACIS_CTOR(Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm),
          (comm, remain_dims, newcomm), newcomm)
ACIS_CTOR(Graph_create,
          (MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder,
           MPI_Comm *comm_graph),
          (comm_old, nnodes, indx, edges, reorder, comm_graph), comm_graph)
ACIS_CTOR(Dist_graph_create,
          (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
           const int destinations[], const int weights[], MPI_Info info, int reorder,
           MPI_Comm *comm_dist_graph),
          (comm_old, n, sources, degrees, destinations, weights, info, reorder,
           comm_dist_graph), comm_dist_graph)
ACIS_CTOR(Dist_graph_create_adjacent,
          (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
           int outdegree, const int destinations[], const int destweights[], MPI_Info info,
           int reorder, MPI_Comm *comm_dist_graph),
          (comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights,
           info, reorder, comm_dist_graph), comm_dist_graph)
ACIS_CTOR_ORDER(Comm_create_from_group,
                (MPI_Group group, const char *stringtag, MPI_Info info,
                 MPI_Errhandler errhandler, MPI_Comm *newcomm),
                (group, stringtag, info, errhandler, newcomm), newcomm, asserts(info))
ACIS_CTOR(Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm),
          (intercomm, high, newintracomm), newintracomm)

/* Calls acis runs in MPICH on the communicator's private dup (after a
 * switch failure, redo.c) take the user's error handler. */
ACIS_API int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int rc = PMPI_Comm_set_errhandler(comm, errhandler);
    if (rc == MPI_SUCCESS && acis_oc.mode == ACIS_MODE_ACTIVE)
        acis_comm_errhandler(comm, errhandler);
    return rc;
}

ACIS_API int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    int rc = PMPI_Comm_set_info(comm, info);
    if (rc == MPI_SUCCESS)
        strict_order(comm, asserts(info));
    return rc;
}

ACIS_API int MPI_Comm_free(MPI_Comm *comm)
{
    int rc = PMPI_Comm_free(comm);
    if (acis_oc.mode == ACIS_MODE_ACTIVE) {
        acis_pers_tidy();               /* requests freed running hold their rows */
        acis_comm_reap(0);
    }
    return rc;
}
