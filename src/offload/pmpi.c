/* pmpi.c -- what acis hands back to MPICH: a call made with the caller's
 * arguments from its struct acis_call (the same rows of wrappers.def as
 * intercept.c's entry points), and an error acis gives a call, through
 * the communicator's error handler as MPICH's own errors go.  The lowest
 * file of src/offload: every stage may call it. */
#include "config.h"

#include "offload.h"

/* The same calls again, from a struct acis_call (acis_call_pmpi). */
#define BARRIER_CALL c->comm
#define BCAST_CALL c->rbuf, c->scount, c->stype, c->root, c->comm
#define REDUCE_CALL c->sbuf, c->rbuf, c->scount, c->stype, c->op, c->comm
#define ROOTED_REDUCE_CALL c->sbuf, c->rbuf, c->scount, c->stype, c->op, c->root, c->comm
#define GATHER_CALL c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype, c->comm
#define ROOTED_GATHER_CALL c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype, \
                           c->root, c->comm
#define GATHERV_CALL c->sbuf, c->scount, c->stype, c->rbuf, c->rcounts, c->rdispls, \
                     c->rtype, c->root, c->comm
#define ALLGATHERV_CALL c->sbuf, c->scount, c->stype, c->rbuf, c->rcounts, c->rdispls, \
                        c->rtype, c->comm
#define SCATTERV_CALL c->sbuf, c->scounts, c->sdispls, c->stype, c->rbuf, c->rcount, \
                      c->rtype, c->root, c->comm
#define REDUCE_SCATTER_CALL c->sbuf, c->rbuf, c->rcounts, c->stype, c->op, c->comm
#define REDUCE_SCATTER_BLOCK_CALL c->sbuf, c->rbuf, c->rcount, c->stype, c->op, c->comm

int acis_raise(MPI_Comm comm, int code)
{
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

#define ACIS_ENTRY(ID, Name, IName, SHAPE)                                    \
    case ACIS_COLL_##ID:                                                      \
        return PMPI_##Name(SHAPE##_CALL);                                     \
    case ACIS_COLL_I##ID:                                                     \
        return PMPI_##IName(SHAPE##_CALL, c->req);                            \
    case ACIS_COLL_##ID##_INIT:                                               \
        return PMPI_##Name##_init(SHAPE##_CALL, c->info, c->req);

int acis_call_pmpi(const struct acis_call *c)
{
    switch (c->coll) {
#include "wrappers.def"
    default:
        return MPI_ERR_INTERN;
    }
}
