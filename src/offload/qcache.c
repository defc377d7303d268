/* qcache.c -- the quick path's cache: barriers, broadcasts, scatters,
 * gathers, allgathers and reductions (reduce, allreduce, reduce_scatter
 * on communicators of up to ACIS_QCOUNTS members, reduce_scatter_block,
 * scan, exscan), blocking or not, the short path prepared (short.c),
 * kept on their communicator's offload state (acis_coff.quick, freed
 * with it) by the arguments that shaped them, so that the next call of
 * that shape needs no selection, plan or packet of its own.
 *
 * The key is every argument but the buffers and the communicator: entry
 * point, root, counts (MPI_Reduce_scatter's array beside it), datatypes,
 * op, and which buffers are MPI_IN_PLACE -- all of them, those MPI
 * ignores on this rank too (a call that passes others there just
 * misses).  Where the buffers are comes with each call; how the data
 * lies in them is the datatypes', so a shape is kept only if every
 * datatype that counts on this rank is predefined, and a reduction's op
 * too: a derived type's or user op's handle may be freed and given to
 * another between two calls, a predefined one never (an offloaded
 * reduction's op is one of MPI's: acis_op_wire()).  What else selection
 * reads is the same for the whole run (CVARs are read once, at MPI_Init)
 * or looked at on every call (short.c).  An entry names the row it was
 * made on (acis_qrow: the context id in its switch's epoch): a
 * communicator set up on another row, or again after the switch was
 * lost, misses it. */
#include "config.h"

#include <string.h>

#include "offload.h"

/* The entry on co of key k on row, the one found last aside
 * (acis_qcache_find looked at it), or NULL. */
struct acis_qentry *acis_qcache_search(struct acis_coff *co, const struct acis_qkey *k,
                                       uint64_t row, const int *rcounts)
{
    if (!row)
        return NULL;
    for (uint32_t i = 0; i < ACIS_QCACHE; i++) {
        struct acis_qentry *e = &co->quick.e[i];
        if (acis_qentry_is(e, k, row, rcounts)) {
            co->quick.last = i;
            return e;
        }
    }
    return NULL;
}

/* A datatype that counts: a predefined one may be kept. */
static int predefined(MPI_Datatype t)
{
    struct acis_dtinfo dt;
    return acis_dtype_info(t, &dt) == 0 && dt.predefined;
}

/* The datatypes that count on this rank are predefined (and the op). */
static int keepable(const struct acis_call *c, int rank)
{
    int is_root = rank == c->root;
    switch (acis_coll_blocking(c->coll)) {
    case ACIS_COLL_BARRIER:
        return 1;                       /* no data, no datatype */
    case ACIS_COLL_BCAST:
        return c->dt.predefined;        /* c->stype's, as acis_select() found */
    case ACIS_COLL_GATHER:
        return (c->sbuf == MPI_IN_PLACE || predefined(c->stype)) &&
               (!is_root || predefined(c->rtype));
    case ACIS_COLL_SCATTER:
        return (!is_root || predefined(c->stype)) &&
               (c->rbuf == MPI_IN_PLACE || predefined(c->rtype));
    case ACIS_COLL_ALLGATHER:
        return (c->sbuf == MPI_IN_PLACE || predefined(c->stype)) && predefined(c->rtype);
    case ACIS_COLL_REDUCE_SCATTER:
        if (!c->rcounts || c->cs->size > ACIS_QCOUNTS)
            return 0;
        /* fall through */
    case ACIS_COLL_REDUCE:
    case ACIS_COLL_ALLREDUCE:
    case ACIS_COLL_REDUCE_SCATTER_BLOCK:
    case ACIS_COLL_SCAN:
    case ACIS_COLL_EXSCAN:
        return c->dt.predefined && c->wop != ACIS_OP_NONE;  /* c->stype's, c->op's */
    default:
        return 0;
    }
}

void acis_qcache_keep(struct acis_coff *co, const struct acis_call *c, int rank, uint64_t row,
                      const struct acis_short *s)
{
    if (!co || !row || c->inner || !keepable(c, rank))
        return;
    struct acis_qargs a = acis_qargs_of(c);
    struct acis_qkey k = acis_qkey_of(c->coll, &a);
    uint32_t n = acis_coll_blocking(c->coll) == ACIS_COLL_REDUCE_SCATTER
                     ? (uint32_t)c->cs->size : 0;
    struct acis_qentry *e = acis_qcache_find(co, &k, row, n ? c->rcounts : NULL);
    if (!e) {
        e = &co->quick.e[co->quick.next];
        co->quick.last = co->quick.next;
        co->quick.next = (co->quick.next + 1) % ACIS_QCACHE;
    }
    e->key = k;
    e->nrcounts = n;
    if (n)
        memcpy(e->rcounts, c->rcounts, n * sizeof(int));
    e->row = row;
    e->bytes = c->bytes;
    e->s = *s;
}
