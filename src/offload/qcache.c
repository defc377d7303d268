/* qcache.c -- the quick path's cache: blocking broadcasts, scatters and
 * gathers the short path prepared (short.c), kept on their
 * communicator's offload state (acis_coff.quick, freed with it) by the
 * shape of their arguments, so that the next call of that shape needs no
 * selection, plan or packet of its own.
 *
 * The key is everything acis_select() and the plan read of a call but
 * its buffers: entry point, root, counts and datatypes where they are
 * significant on this rank, and which buffers are MPI_IN_PLACE.  Where the
 * buffers are comes in with each call; their layout is the datatypes',
 * so only predefined datatypes are kept: a derived type's handle may be
 * freed and given to another type between two calls, a predefined one
 * never.  What else selection reads is the same for the whole run
 * (CVARs are read once at MPI_Init) or looked at on every call
 * (short.c).  An entry names the row it was made on (ctx): a
 * communicator set up on another row misses it. */
#include "config.h"

#include "offload.h"

int acis_qcache_key(const struct acis_call *c, int rank, struct acis_qkey *k)
{
    int is_root = rank == c->root;
    *k = (struct acis_qkey){ .coll = c->coll, .root = c->root,
                             .stype = MPI_DATATYPE_NULL, .rtype = MPI_DATATYPE_NULL };
    switch (c->coll) {
    case ACIS_COLL_BCAST:
        k->scount = c->scount;
        k->stype = c->stype;
        break;
    case ACIS_COLL_GATHER:
        k->sinplace = c->sbuf == MPI_IN_PLACE;
        if (!k->sinplace) {
            k->scount = c->scount;
            k->stype = c->stype;
        }
        if (is_root) {
            k->rcount = c->rcount;
            k->rtype = c->rtype;
        }
        break;
    case ACIS_COLL_SCATTER:
        k->rinplace = c->rbuf == MPI_IN_PLACE;
        if (is_root) {
            k->scount = c->scount;
            k->stype = c->stype;
        }
        if (!k->rinplace) {
            k->rcount = c->rcount;
            k->rtype = c->rtype;
        }
        break;
    default:
        return -1;
    }
    return 0;
}

static int same(const struct acis_qkey *a, const struct acis_qkey *b)
{
    return a->coll == b->coll && a->root == b->root && a->scount == b->scount &&
           a->stype == b->stype && a->rcount == b->rcount && a->rtype == b->rtype &&
           a->sinplace == b->sinplace && a->rinplace == b->rinplace;
}

struct acis_qentry *acis_qcache_find(struct acis_coff *co, const struct acis_qkey *k,
                                     uint32_t ctx)
{
    struct acis_qentry *e = &co->quick.e[co->quick.last];
    if (e->ctx == ctx && ctx && same(&e->key, k))
        return e;                       /* the shape of the call before */
    for (uint32_t i = 0; i < ACIS_QCACHE; i++) {
        e = &co->quick.e[i];
        if (e->ctx == ctx && ctx && same(&e->key, k)) {
            co->quick.last = i;
            return e;
        }
    }
    return NULL;
}

/* A datatype the key may name: MPI_DATATYPE_NULL (not significant) or a
 * predefined one. */
static int keepable(MPI_Datatype t)
{
    struct acis_dtinfo dt;
    return t == MPI_DATATYPE_NULL || (acis_dtype_info(t, &dt) == 0 && dt.predefined);
}

void acis_qcache_keep(struct acis_coff *co, const struct acis_qkey *k, uint32_t ctx,
                      const struct acis_call *c, const struct acis_short *s)
{
    if (!co || !ctx || !keepable(k->stype) || !keepable(k->rtype))
        return;
    struct acis_qentry *e = acis_qcache_find(co, k, ctx);
    if (!e) {
        e = &co->quick.e[co->quick.next];
        co->quick.next = (co->quick.next + 1) % ACIS_QCACHE;
    }
    e->key = *k;
    e->ctx = ctx;
    e->kind = c->kind;
    e->wop = c->wop;
    e->dtype = c->dtype;
    e->dt = c->dt;
    e->elems = c->elems;
    e->bytes = c->bytes;
    e->s = *s;
}
