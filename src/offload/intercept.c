/* intercept.c -- the MPI collective entry points of libacis, generated from
 * wrappers.def: each one either passes straight to PMPI (before MPI_Init,
 * or with offload off) or asks acis_select() and then runs the switch
 * driver or MPICH's own algorithm (the PMPI_ call); a small call
 * of a shape the short path saw before takes the quick path instead
 * (short.c), which decides and counts as acis_select() would.  Nothing else lives
 * here: add a collective by adding a row to wrappers.def.  Each row gives
 * the blocking, nonblocking (MPI_I*) and persistent (MPI_*_init) forms;
 * pmpi.c makes the same calls from a struct acis_call. */
#include "config.h"

#include "offload.h"
#include "util/util.h"

/* Argument shapes: parameter list, argument list, and how they fill a
 * struct acis_call. */
#define BARRIER_PARAMS MPI_Comm comm
#define BARRIER_ARGS comm
#define BARRIER_FILL .comm = comm

#define BCAST_PARAMS void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm
#define BCAST_ARGS buffer, count, datatype, root, comm
#define BCAST_FILL .sbuf = buffer, .rbuf = buffer, .scount = count, .stype = datatype, \
                   .root = root, .comm = comm

#define REDUCE_PARAMS const void *sendbuf, void *recvbuf, int count, \
                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define REDUCE_ARGS sendbuf, recvbuf, count, datatype, op, comm
#define REDUCE_FILL .sbuf = sendbuf, .rbuf = recvbuf, .scount = count, .stype = datatype, \
                    .op = op, .comm = comm

#define ROOTED_REDUCE_PARAMS const void *sendbuf, void *recvbuf, int count, \
                             MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm
#define ROOTED_REDUCE_ARGS sendbuf, recvbuf, count, datatype, op, root, comm
#define ROOTED_REDUCE_FILL REDUCE_FILL, .root = root

#define GATHER_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define GATHER_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm
#define GATHER_FILL .sbuf = sendbuf, .scount = sendcount, .stype = sendtype, \
                    .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm

#define ROOTED_GATHER_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, \
                             int root, MPI_Comm comm
#define ROOTED_GATHER_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, \
                           root, comm
#define ROOTED_GATHER_FILL GATHER_FILL, .root = root

#define REDUCE_SCATTER_PARAMS const void *sendbuf, void *recvbuf, const int recvcounts[], \
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define REDUCE_SCATTER_ARGS sendbuf, recvbuf, recvcounts, datatype, op, comm
#define REDUCE_SCATTER_FILL .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts, \
                            .stype = datatype, .op = op, .comm = comm

#define REDUCE_SCATTER_BLOCK_PARAMS const void *sendbuf, void *recvbuf, int recvcount, \
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define REDUCE_SCATTER_BLOCK_ARGS sendbuf, recvbuf, recvcount, datatype, op, comm
#define REDUCE_SCATTER_BLOCK_FILL .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount, \
                                  .stype = datatype, .op = op, .comm = comm

#define GATHERV_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                       void *recvbuf, const int recvcounts[], const int displs[], \
                       MPI_Datatype recvtype, int root, MPI_Comm comm
#define GATHERV_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, \
                     root, comm
#define GATHERV_FILL .sbuf = sendbuf, .scount = sendcount, .stype = sendtype, \
                     .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, \
                     .rtype = recvtype, .root = root, .comm = comm

#define ALLGATHERV_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                          void *recvbuf, const int recvcounts[], const int displs[], \
                          MPI_Datatype recvtype, MPI_Comm comm
#define ALLGATHERV_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, \
                        recvtype, comm
#define ALLGATHERV_FILL .sbuf = sendbuf, .scount = sendcount, .stype = sendtype, \
                        .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, \
                        .rtype = recvtype, .comm = comm

#define SCATTERV_PARAMS const void *sendbuf, const int sendcounts[], const int displs[], \
                        MPI_Datatype sendtype, void *recvbuf, int recvcount, \
                        MPI_Datatype recvtype, int root, MPI_Comm comm
#define SCATTERV_ARGS sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, \
                      root, comm
#define SCATTERV_FILL .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs, \
                      .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount, \
                      .rtype = recvtype, .root = root, .comm = comm

/* Which shapes the quick path serves (short.c: all but the v-forms, whose
 * counts and displacements are arrays), and how their blocking entry
 * point tries it: from the few words of a struct acis_qargs, filled with
 * the shape's own initializers.  The others try nothing. */
#define ACIS_QUICK(ID, FILL)                                                  \
    {                                                                         \
        struct acis_qargs q_ = { FILL };                                      \
        int qrc_;                                                             \
        if (acis_short_quick(ACIS_COLL_##ID, &q_, &qrc_))                     \
            return qrc_;                                                      \
    }
#define BCAST_QUICK(ID) ACIS_QUICK(ID, BCAST_FILL)
#define ROOTED_GATHER_QUICK(ID) ACIS_QUICK(ID, ROOTED_GATHER_FILL)
#define GATHER_QUICK(ID) ACIS_QUICK(ID, GATHER_FILL)
#define BARRIER_QUICK(ID) ACIS_QUICK(ID, BARRIER_FILL)
/* ... and their nonblocking forms (nbc.c makes the request). */
#define ACIS_NB_QUICK(ID, FILL)                                               \
    {                                                                         \
        struct acis_qargs q_ = { FILL };                                      \
        int qrc_;                                                             \
        if (acis_nb_quick(ACIS_COLL_##ID, &q_, request, &qrc_))               \
            return qrc_;                                                      \
    }
#define BCAST_NB_QUICK(ID) ACIS_NB_QUICK(ID, BCAST_FILL)
#define ROOTED_GATHER_NB_QUICK(ID) ACIS_NB_QUICK(ID, ROOTED_GATHER_FILL)
#define GATHER_NB_QUICK(ID) ACIS_NB_QUICK(ID, GATHER_FILL)
#define BARRIER_NB_QUICK(ID) ACIS_NB_QUICK(ID, BARRIER_FILL)
#define REDUCE_NB_QUICK(ID) ACIS_NB_QUICK(ID, REDUCE_FILL)
#define ROOTED_REDUCE_NB_QUICK(ID) ACIS_NB_QUICK(ID, ROOTED_REDUCE_FILL)
#define REDUCE_SCATTER_BLOCK_NB_QUICK(ID) ACIS_NB_QUICK(ID, REDUCE_SCATTER_BLOCK_FILL)
#define REDUCE_SCATTER_NB_QUICK(ID) ACIS_NB_QUICK(ID, REDUCE_SCATTER_FILL)
#define GATHERV_NB_QUICK(ID)
#define ALLGATHERV_NB_QUICK(ID)
#define SCATTERV_NB_QUICK(ID)
#define REDUCE_QUICK(ID) ACIS_QUICK(ID, REDUCE_FILL)
#define ROOTED_REDUCE_QUICK(ID) ACIS_QUICK(ID, ROOTED_REDUCE_FILL)
#define REDUCE_SCATTER_BLOCK_QUICK(ID) ACIS_QUICK(ID, REDUCE_SCATTER_BLOCK_FILL)
#define REDUCE_SCATTER_QUICK(ID) ACIS_QUICK(ID, REDUCE_SCATTER_FILL)
#define GATHERV_QUICK(ID)
#define ALLGATHERV_QUICK(ID)
#define SCATTERV_QUICK(ID)

/* The body every wrapper shares; QUICK is the shape's *_QUICK or
 * nothing. */
#define ACIS_BODY(ID, QUICK, CALL, ...)                                       \
    {                                                                         \
        int mode_ = acis_oc.mode;                                             \
        if (mode_ != ACIS_MODE_ACTIVE) {                                      \
            if (mode_ == ACIS_MODE_OFF)                                       \
                acis_count_call(&acis_util.coll[ACIS_COLL_##ID],              \
                                ACIS_REASON_DISABLED, 0);                     \
            return CALL;                                                      \
        }                                                                     \
        QUICK                               /* short.c: a shape seen before */ \
        struct acis_call c_ = { .coll = ACIS_COLL_##ID, __VA_ARGS__ };        \
        acis_reason_t r_ = acis_select(&c_);                                  \
        if (r_ == ACIS_REASON_NONE || c_.failed_over)                         \
            return acis_offload_run(&c_);                                     \
        if (r_ == ACIS_REASON_BROKEN)       /* fix.c: fails everywhere */ \
            return acis_call_broken(&c_);                                     \
        if (atomic_load(&acis_oc.redo_pending))                               \
            acis_redo_before(c_.comm);      /* after a switch failure */      \
        return CALL;                                                          \
    }

#define ACIS_ENTRY(ID, Name, IName, SHAPE)                                    \
    ACIS_API int MPI_##Name(SHAPE##_PARAMS)                                   \
    ACIS_BODY(ID, SHAPE##_QUICK(ID), PMPI_##Name(SHAPE##_ARGS), SHAPE##_FILL) \
    ACIS_API int MPI_##IName(SHAPE##_PARAMS, MPI_Request *request)            \
    ACIS_BODY(I##ID, SHAPE##_NB_QUICK(I##ID), PMPI_##IName(SHAPE##_ARGS, request), \
              SHAPE##_FILL,                                                   \
              .req = request)                                                 \
    ACIS_API int MPI_##Name##_init(SHAPE##_PARAMS, MPI_Info info,             \
                                   MPI_Request *request)                      \
    ACIS_BODY(ID##_INIT, , PMPI_##Name##_init(SHAPE##_ARGS, info, request),   \
              SHAPE##_FILL, .req = request, .info = info)

#include "wrappers.def"
