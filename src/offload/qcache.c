/* qcache.c -- the quick path's cache: blocking broadcasts, scatters and
 * gathers the short path prepared (short.c), kept on their
 * communicator's offload state (acis_coff.quick, freed with it) by the
 * arguments that shaped them, so that the next call of that shape needs
 * no selection, plan or packet of its own.
 *
 * The key is every argument but the buffers and the communicator: entry
 * point, root, counts, datatypes, and which buffers are MPI_IN_PLACE --
 * all of them, those MPI ignores on this rank too (a call that passes
 * others there just misses).  Where the buffers are comes with each call;
 * how the data lies in them is the datatypes', so a shape is kept only if
 * every datatype that counts on this rank is predefined: a derived type's
 * handle may be freed and given to another type between two calls, a
 * predefined one never.  What else selection reads is the same for the
 * whole run (CVARs are read once, at MPI_Init) or looked at on every
 * call (short.c).  An entry names the row it was made on (ctx): a
 * communicator set up on another row misses it. */
#include "config.h"

#include "offload.h"

static struct acis_qkey key_of(const struct acis_call *c)
{
    return (struct acis_qkey){ .coll = c->coll, .root = c->root, .scount = c->scount,
                               .rcount = c->rcount, .stype = c->stype, .rtype = c->rtype,
                               .sinplace = c->sbuf == MPI_IN_PLACE,
                               .rinplace = c->rbuf == MPI_IN_PLACE };
}

/* e was kept for a call shaped as c on the row ctx. */
static inline int same(const struct acis_qentry *e, const struct acis_call *c, uint32_t ctx)
{
    const struct acis_qkey *k = &e->key;
    return e->ctx == ctx && k->coll == c->coll && k->root == c->root &&
           k->scount == c->scount && k->stype == c->stype && k->rcount == c->rcount &&
           k->rtype == c->rtype && k->sinplace == (c->sbuf == MPI_IN_PLACE) &&
           k->rinplace == (c->rbuf == MPI_IN_PLACE);
}

struct acis_qentry *acis_qcache_find(struct acis_coff *co, const struct acis_call *c,
                                     uint32_t ctx)
{
    struct acis_qentry *e = &co->quick.e[co->quick.last];
    if (!ctx || same(e, c, ctx))
        return ctx ? e : NULL;          /* the shape of the call before */
    for (uint32_t i = 0; i < ACIS_QCACHE; i++) {
        e = &co->quick.e[i];
        if (same(e, c, ctx)) {
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

/* The datatypes that count on this rank are predefined. */
static int keepable(const struct acis_call *c, int rank)
{
    int is_root = rank == c->root;
    switch (c->coll) {
    case ACIS_COLL_BCAST:
        return c->dt.predefined;        /* c->stype's, as acis_select() found */
    case ACIS_COLL_GATHER:
        return (c->sbuf == MPI_IN_PLACE || predefined(c->stype)) &&
               (!is_root || predefined(c->rtype));
    case ACIS_COLL_SCATTER:
        return (!is_root || predefined(c->stype)) &&
               (c->rbuf == MPI_IN_PLACE || predefined(c->rtype));
    default:
        return 0;
    }
}

void acis_qcache_keep(struct acis_coff *co, const struct acis_call *c, int rank, uint32_t ctx,
                      const struct acis_short *s)
{
    if (!co || !ctx || c->inner || !keepable(c, rank))
        return;
    struct acis_qentry *e = acis_qcache_find(co, c, ctx);
    if (!e) {
        e = &co->quick.e[co->quick.next];
        co->quick.last = co->quick.next;
        co->quick.next = (co->quick.next + 1) % ACIS_QCACHE;
    }
    e->key = key_of(c);
    e->ctx = ctx;
    e->bytes = c->bytes;
    e->s = *s;
}
