/* image.c -- a rank's data as the switch sees it: a contiguous run of wire
 * elements (reductions) or of MPI_Pack bytes (collectives that only move
 * data), with the blocks of a v-variant concatenated in rank order.  Dense
 * buffers are used in place; anything else is packed into a temporary and
 * unpacked after.  Pair types with holes (MPI_DOUBLE_INT...) travel in
 * their C struct layout, so their packed form is spread out. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "offload/offload.h"

/* Value bytes and index offset of a pair type with holes, else 0. */
static int holes(unsigned prim, size_t *vsize, size_t *idx_off)
{
    switch (prim) {
    case ACIS_DT_DOUBLE_INT: *vsize = 8; *idx_off = 8; return 1;
    case ACIS_DT_LONG_INT: *vsize = 8; *idx_off = 8; return 1;
    case ACIS_DT_SHORT_INT: *vsize = 2; *idx_off = 4; return 1;
    case ACIS_DT_LONG_DOUBLE_INT: *vsize = 16; *idx_off = 16; return 1;
    default: return 0;
    }
}

/* Packed (value, index) pairs <-> struct layout, n elements. */
static void spread(unsigned prim, uint8_t *wire, uint8_t *packed, uint64_t n, int out)
{
    size_t v = 0, off = 0, ws = acis_wire_dt_size(prim), ps;
    holes(prim, &v, &off);
    ps = v + sizeof(int);
    for (uint64_t i = 0; i < n; i++) {
        uint8_t *w = wire + i * ws, *p = packed + i * ps;
        if (out) {
            memcpy(p, w, v);
            memcpy(p + v, w + off, sizeof(int));
        } else {
            memset(w, 0, ws);
            memcpy(w, p, v);
            memcpy(w + off, p + v, sizeof(int));
        }
    }
}

static uint64_t total_count(const struct acis_buf *b)
{
    if (!b->counts)
        return b->count > 0 ? (uint64_t)b->count : 0;
    uint64_t n = 0;
    for (int q = 0; q < b->nblocks; q++)
        n += b->counts[q] > 0 ? (uint64_t)b->counts[q] : 0;
    return n;
}

/* Where the image starts in the buffer if it can be used in place, else
 * NULL: dense data, and for blocks, blocks that follow one another. */
static uint8_t *in_place(const struct acis_buf *b, const struct acis_dtinfo *dt, int wire)
{
    if (!(wire ? dt->dense : acis_dtype_raw_bytes(dt)))
        return NULL;
    if (!b->counts)
        return (uint8_t *)b->buf + dt->true_lb;
    MPI_Aint start = 0, next = 0;
    for (int q = 0, first = 1; q < b->nblocks; q++) {
        if (b->counts[q] == 0)
            continue;
        if (first)
            start = next = b->displs[q];
        else if (b->displs[q] != next)
            return NULL;
        first = 0;
        next += b->counts[q];
    }
    return (uint8_t *)b->buf + start * dt->extent + dt->true_lb;
}

static int prepare(struct acis_image *im, const struct acis_buf *b, int wire,
                   struct acis_dtinfo *dt)
{
    memset(im, 0, sizeof *im);
    if (acis_dtype_info(b->type, dt) != 0)
        return -1;
    uint64_t n = total_count(b);
    im->len = wire ? n * dt->nprim * acis_wire_dt_size(dt->prim) : n * (uint64_t)dt->size;
    return 0;
}

/* The bytes b packs to (MPICH 4.0.2 has no MPI_Pack_c: packed images stay
 * below INT_MAX): 0, or -1. */
static int pack_size(const struct acis_buf *b, const struct acis_image *im, MPI_Comm comm,
                     int *psize)
{
    uint64_t n = total_count(b);
    return n > INT_MAX || im->len > INT_MAX ||
                   PMPI_Pack_size((int)n, b->type, comm, psize) != MPI_SUCCESS
               ? -1 : 0;
}

/* MPI_Pack b (each block in turn) into buf of psize bytes: 0, or -1. */
static int pack(const struct acis_buf *b, const struct acis_dtinfo *dt, uint8_t *buf,
                int psize, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, pos = 0;
    if (!b->counts)
        rc = PMPI_Pack(b->buf, b->count, b->type, buf, psize, &pos, comm);
    for (int q = 0; b->counts && q < b->nblocks && rc == MPI_SUCCESS; q++)
        rc = PMPI_Pack((char *)b->buf + (MPI_Aint)b->displs[q] * dt->extent, b->counts[q],
                       b->type, buf, psize, &pos, comm);
    return rc == MPI_SUCCESS ? 0 : -1;
}

int acis_image_in(struct acis_image *im, const struct acis_buf *b, int wire, int copy,
                  MPI_Comm comm)
{
    struct acis_dtinfo dt;
    if (prepare(im, b, wire, &dt) != 0)
        return -1;
    if ((im->p = in_place(b, &dt, wire))) {
        if (!copy)
            return 0;
        im->tmp = malloc(im->len + 1);
        if (!im->tmp)
            return -1;
        memcpy(im->tmp, im->p, im->len);
        im->p = im->tmp;
        return 0;
    }
    int psize;
    if (pack_size(b, im, comm, &psize) != 0)
        return -1;
    uint8_t *packed = malloc((size_t)psize + 1);
    if (!packed)
        return -1;
    if (pack(b, &dt, packed, psize, comm) != 0) {
        free(packed);
        return -1;
    }
    size_t v, off;
    if (wire && holes(dt.prim, &v, &off)) {
        im->tmp = malloc(im->len + 1);
        if (!im->tmp) {
            free(packed);
            return -1;
        }
        spread(dt.prim, im->tmp, packed, im->len / acis_wire_dt_size(dt.prim), 0);
        free(packed);
    } else {
        im->tmp = packed;
    }
    im->p = im->tmp;
    return 0;
}

int acis_image_lend_in(struct acis_image *im, const struct acis_buf *b, uint8_t *buf,
                       uint64_t cap, MPI_Comm comm)
{
    struct acis_dtinfo dt;
    int psize;
    if (prepare(im, b, 0, &dt) != 0)
        return -1;
    if ((im->p = in_place(b, &dt, 0)))
        return 0;
    if (pack_size(b, im, comm, &psize) != 0 || (uint64_t)psize > cap ||
        pack(b, &dt, buf, psize, comm) != 0)
        return -1;
    im->p = buf;
    return 0;
}

int acis_image_view(struct acis_image *im, const struct acis_buf *b, int wire)
{
    struct acis_dtinfo dt;
    if (prepare(im, b, wire, &dt) != 0)
        return -1;
    im->p = in_place(b, &dt, wire);
    return im->p ? 0 : -1;
}

int acis_image_out(struct acis_image *im, const struct acis_buf *b, int wire)
{
    struct acis_dtinfo dt;
    if (prepare(im, b, wire, &dt) != 0)
        return -1;
    if ((im->p = in_place(b, &dt, wire)))
        return 0;
    im->tmp = malloc(im->len + 1);
    im->p = im->tmp;
    return im->tmp ? 0 : -1;
}

int acis_image_lend(struct acis_image *im, const struct acis_buf *b, uint8_t *buf,
                    uint64_t cap)
{
    struct acis_dtinfo dt;
    if (prepare(im, b, 0, &dt) != 0)
        return -1;
    if ((im->p = in_place(b, &dt, 0)))
        return 0;
    if (im->len > cap)
        return -1;
    im->p = buf;
    im->lent = 1;
    return 0;
}

int acis_image_finish(struct acis_image *im, const struct acis_buf *b, int wire,
                      MPI_Comm comm)
{
    if (!im->tmp && !im->lent)
        return 0;
    struct acis_dtinfo dt;
    if (acis_dtype_info(b->type, &dt) != 0)
        return -1;
    uint8_t *packed = im->p;
    uint64_t plen = im->len;
    size_t v, off;
    int rc = MPI_SUCCESS, pos = 0;
    if (wire && holes(dt.prim, &v, &off)) {
        uint64_t n = im->len / acis_wire_dt_size(dt.prim);
        plen = n * (v + sizeof(int));
        packed = malloc(plen + 1);
        if (!packed)
            return -1;
        spread(dt.prim, im->p, packed, n, 1);
    }
    if (plen > INT_MAX)
        rc = MPI_ERR_COUNT;             /* acis_image_in refused it already */
    else if (!b->counts)
        rc = PMPI_Unpack(packed, (int)plen, &pos, b->buf, b->count, b->type, comm);
    for (int q = 0; b->counts && q < b->nblocks && rc == MPI_SUCCESS; q++)
        rc = PMPI_Unpack(packed, (int)plen, &pos,
                         (char *)b->buf + (MPI_Aint)b->displs[q] * dt.extent, b->counts[q],
                         b->type, comm);
    if (packed != im->p)
        free(packed);
    return rc == MPI_SUCCESS ? 0 : -1;
}

void acis_image_free(struct acis_image *im)
{
    free(im->tmp);
    memset(im, 0, sizeof *im);
}
