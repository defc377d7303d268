/* colls.c -- one plan per collective: how a call's buffers map onto the
 * result space the switch works on (total bytes, the piece this rank sends
 * and where it goes, the range it gets back).  The switch and the engine
 * are the same for every collective; only this mapping differs. */
#include "config.h"

#include <string.h>

#include "offload/offload.h"

/* count elements of type at buf.  MPI_Count: a plan's runs cover every
 * rank's block (count * size of them), which passes INT_MAX while each
 * count the caller passed is an int. */
static struct acis_buf run(const void *buf, MPI_Count count, MPI_Datatype type)
{
    return (struct acis_buf){ (void *)buf, count, type, NULL, NULL, 0 };
}

static uint64_t wire_bytes(const struct acis_call *c, uint64_t count)
{
    return count * c->dt.nprim * acis_wire_dt_size(c->dt.prim);
}

/* Packed bytes of count elements of type t. */
static uint64_t packed(int count, MPI_Datatype t)
{
    struct acis_dtinfo dt;
    return acis_dtype_info(t, &dt) == 0 ? (uint64_t)count * (uint64_t)dt.size : 0;
}

/* Allreduce, scan, exscan: everyone sends the vector and gets a vector. */
static void plan_allreduce(const struct acis_call *c, struct acis_plan *p)
{
    p->wire = 1;
    p->op = (unsigned)c->wop;
    p->dtype = c->dt.prim;
    p->total = wire_bytes(c, (uint64_t)c->scount);
    p->has_src = p->has_dst = 1;
    p->src = run(c->sbuf == MPI_IN_PLACE ? c->rbuf : c->sbuf, c->scount, c->stype);
    p->dst = run(c->rbuf, c->scount, c->stype);
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
    p->total = packed(c->scount, c->stype);
    p->has_src = rank == c->root;
    p->has_dst = rank != c->root;
    p->src = p->dst = run(c->rbuf, c->scount, c->stype);
}

/* Bytes of rank q's block when blocks differ: from the size exchange
 * (blocks, gatherv and scatterv), else allgatherv's counts, which every
 * rank has. */
static uint64_t block_bytes(const struct acis_call *c, const uint64_t *blocks, int q)
{
    return blocks ? blocks[q] : packed(c->rcounts[q], c->rtype);
}

/* Where rank's block starts in the concatenation of size blocks (*off),
 * and the total (returned): arithmetic when every block is the same,
 * else a sum.  Needs no memory: a plan cannot fail on one rank alone. */
static uint64_t block_offset(const struct acis_call *c, const uint64_t *blocks, int rank,
                             int size, uint64_t *off)
{
    if (!blocks && acis_coll_blocking(c->coll) != ACIS_COLL_ALLGATHERV) {
        uint64_t b = c->bytes / (uint64_t)size;
        *off = (uint64_t)rank * b;
        return (uint64_t)size * b;
    }
    uint64_t total = 0;
    *off = 0;
    for (int q = 0; q < size; q++) {
        if (q == rank)
            *off = total;
        total += block_bytes(c, blocks, q);
    }
    return total;
}

/* Gather, allgather and their v-variants: rank q's block goes to its place
 * in the concatenation of all blocks in rank order.  blocks: bytes per
 * rank from the size exchange, or NULL. */
static void plan_gather(const struct acis_call *c, struct acis_plan *p, int rank, int size,
                        int all, const uint64_t *blocks, int v)
{
    int is_root = rank == c->root;
    int in_place = c->sbuf == MPI_IN_PLACE && (all || is_root);
    uint64_t off, total = block_offset(c, blocks, rank, size, &off);
    p->dtype = ACIS_DT_BYTE;
    p->alg = v ? ACIS_ALG_VAR : ACIS_ALG_FLAT;
    p->root = all ? 0 : (uint32_t)c->root;
    p->total = total;
    p->has_src = 1;
    p->src_off = off;
    if (in_place) {
        int count = v ? c->rcounts[rank] : c->rcount;
        MPI_Aint at = v ? c->rdispls[rank] : (MPI_Aint)rank * c->rcount;
        struct acis_dtinfo rdt;
        acis_dtype_info(c->rtype, &rdt);
        p->src = run((const char *)c->rbuf + at * rdt.extent, count, c->rtype);
    } else {
        p->src = run(c->sbuf, c->scount, c->stype);
    }
    p->has_dst = all || is_root;
    p->dst = v ? (struct acis_buf){ c->rbuf, 0, c->rtype, c->rcounts, c->rdispls, size }
               : run(c->rbuf, (MPI_Count)c->rcount * size, c->rtype);
}

/* Scatter and scatterv: the root's blocks; rank r gets its own. */
static void plan_scatter(const struct acis_call *c, struct acis_plan *p, int rank, int size,
                         const uint64_t *blocks, int v)
{
    int is_root = rank == c->root;
    uint64_t off, total = block_offset(c, blocks, rank, size, &off);
    p->dtype = ACIS_DT_BYTE;
    p->root = (uint32_t)c->root;
    p->total = total;
    p->has_src = is_root;
    p->src = v ? (struct acis_buf){ (void *)c->sbuf, 0, c->stype, c->scounts, c->sdispls, size }
               : run(c->sbuf, (MPI_Count)c->scount * size, c->stype);
    p->has_dst = !(is_root && c->rbuf == MPI_IN_PLACE);
    p->dst_off = off;
    p->dst = run(c->rbuf, c->rcount, c->rtype);
}

/* Reduce-scatter: everyone sends the whole vector; rank r gets its block. */
static void plan_reduce_scatter(const struct acis_call *c, struct acis_plan *p, int rank,
                                int size)
{
    uint64_t before = 0, all = 0;
    int mine;
    if (c->rcounts) {
        for (int i = 0; i < size; i++) {
            if (i < rank)
                before += (uint64_t)c->rcounts[i];
            all += (uint64_t)c->rcounts[i];
        }
        mine = c->rcounts[rank];
    } else {
        before = (uint64_t)rank * (uint64_t)c->rcount;
        all = (uint64_t)size * (uint64_t)c->rcount;
        mine = c->rcount;
    }
    p->wire = 1;
    p->op = (unsigned)c->wop;
    p->dtype = c->dt.prim;
    p->total = wire_bytes(c, all);
    p->has_src = p->has_dst = 1;
    p->src = run(c->sbuf == MPI_IN_PLACE ? c->rbuf : c->sbuf, (MPI_Count)all, c->stype);
    p->copy_src = c->sbuf == MPI_IN_PLACE && before > 0;
    p->dst_off = wire_bytes(c, before);
    p->dst = run(c->rbuf, mine, c->stype);
}

int acis_plan_needs_sizes(const struct acis_call *c, uint64_t *mine)
{
    acis_coll_t b = acis_coll_blocking(c->coll);
    int is_root = c->cs->rank == c->root;
    if (b == ACIS_COLL_GATHERV)
        *mine = is_root && c->sbuf == MPI_IN_PLACE
                    ? packed(c->rcounts[c->root], c->rtype) : packed(c->scount, c->stype);
    else if (b == ACIS_COLL_SCATTERV)
        *mine = is_root && c->rbuf == MPI_IN_PLACE
                    ? packed(c->scounts[c->root], c->stype) : packed(c->rcount, c->rtype);
    else
        return 0;
    return 1;
}

int acis_plan_sizes_differ(const struct acis_call *c, const uint64_t *blocks)
{
    acis_coll_t b = acis_coll_blocking(c->coll);
    if (!blocks || c->cs->rank != c->root ||
        (b != ACIS_COLL_GATHERV && b != ACIS_COLL_SCATTERV))
        return -1;
    for (int q = 0; q < c->cs->size; q++)
        if (blocks[q] != (b == ACIS_COLL_GATHERV ? packed(c->rcounts[q], c->rtype)
                                                 : packed(c->scounts[q], c->stype)))
            return q;
    return -1;
}

int acis_plan(const struct acis_call *c, const uint64_t *blocks, struct acis_plan *p)
{
    int rank = c->cs->rank, size = c->cs->size, rc = 0;
    memset(p, 0, sizeof *p);
    p->kind = (unsigned)c->kind;
    switch (acis_coll_blocking(c->coll)) {
    case ACIS_COLL_BARRIER:
        p->dtype = ACIS_DT_NONE;
        break;
    case ACIS_COLL_BCAST:
        plan_bcast(c, p, rank);
        break;
    case ACIS_COLL_REDUCE:
        plan_reduce(c, p, rank);
        break;
    case ACIS_COLL_ALLREDUCE:
    case ACIS_COLL_SCAN:
        plan_allreduce(c, p);
        break;
    case ACIS_COLL_EXSCAN:
        plan_allreduce(c, p);
        p->has_dst = rank > 0;                     /* undefined at rank 0 */
        break;
    case ACIS_COLL_GATHER:
    case ACIS_COLL_ALLGATHER:
    case ACIS_COLL_ALLGATHERV:
        plan_gather(c, p, rank, size, c->kind == ACIS_K_ALLGATHER, NULL,
                    c->coll == ACIS_COLL_ALLGATHERV || c->coll == ACIS_COLL_IALLGATHERV);
        break;
    case ACIS_COLL_GATHERV:
        if (!blocks)
            rc = -1;
        else
            plan_gather(c, p, rank, size, 0, blocks, 1);
        break;
    case ACIS_COLL_SCATTER:
        plan_scatter(c, p, rank, size, NULL, 0);
        break;
    case ACIS_COLL_SCATTERV:
        if (!blocks)
            rc = -1;
        else
            plan_scatter(c, p, rank, size, blocks, 1);
        break;
    case ACIS_COLL_REDUCE_SCATTER:
    case ACIS_COLL_REDUCE_SCATTER_BLOCK:
        plan_reduce_scatter(c, p, rank, size);
        break;
    default:
        rc = -1;
    }
    return rc;
}

int acis_has_plan(acis_coll_t coll)
{
    return acis_coll_form(coll) >= 0;   /* every form plans as its blocking one */
}
