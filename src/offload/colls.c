/* colls.c -- one plan per collective: how a call's buffers map onto the
 * result space the switch works on (total bytes, the piece this rank sends
 * and where it goes, the range it gets back).  The switch and the engine
 * are the same for every collective; only this mapping differs. */
#include "config.h"

#include <string.h>

#include "offload/offload.h"

static uint64_t wire_bytes(const struct acis_call *c, int count)
{
    return (uint64_t)count * c->dt.nprim * acis_wire_dt_size(c->dt.prim);
}

/* Allreduce: everyone sends the vector and gets the reduced vector. */
static void plan_allreduce(const struct acis_call *c, struct acis_plan *p)
{
    p->wire = 1;
    p->op = (unsigned)c->wop;
    p->dtype = c->dt.prim;
    p->total = wire_bytes(c, c->scount);
    p->has_src = p->has_dst = 1;
    p->sbuf = c->sbuf == MPI_IN_PLACE ? c->rbuf : c->sbuf;
    p->rbuf = c->rbuf;
    p->scount = p->rcount = c->scount;
    p->stype = p->rtype = c->stype;
}

/* Reduce: the same, but only the root gets the result. */
static void plan_reduce(const struct acis_call *c, struct acis_plan *p, int rank)
{
    plan_allreduce(c, p);
    p->root = (uint32_t)c->root;
    p->has_dst = rank == c->root;
}

/* Bcast: the root's packed bytes, to everyone else. */
static void plan_bcast(const struct acis_call *c, struct acis_plan *p, int rank)
{
    p->dtype = ACIS_DT_BYTE;
    p->root = (uint32_t)c->root;
    p->total = (uint64_t)c->scount * (uint64_t)c->dt.size;
    p->has_src = rank == c->root;
    p->has_dst = rank != c->root;
    p->sbuf = p->rbuf = c->rbuf;
    p->scount = p->rcount = c->scount;
    p->stype = p->rtype = c->stype;
}

int acis_plan(const struct acis_call *c, struct acis_plan *p)
{
    int rank = c->cs->rank;
    memset(p, 0, sizeof *p);
    p->kind = (unsigned)c->kind;
    switch (acis_coll_base(c->coll)) {
    case ACIS_COLL_BARRIER:
        p->dtype = ACIS_DT_NONE;
        return 0;
    case ACIS_COLL_BCAST:
        plan_bcast(c, p, rank);
        return 0;
    case ACIS_COLL_REDUCE:
        plan_reduce(c, p, rank);
        return 0;
    case ACIS_COLL_ALLREDUCE:
        plan_allreduce(c, p);
        return 0;
    default:
        return -1;
    }
}

int acis_has_plan(acis_coll_t coll)
{
    switch (coll) {
    case ACIS_COLL_BARRIER:
    case ACIS_COLL_BCAST:
    case ACIS_COLL_REDUCE:
    case ACIS_COLL_ALLREDUCE:
        return 1;
    default:
        return 0;                                  /* nonblocking forms: not yet */
    }
}
