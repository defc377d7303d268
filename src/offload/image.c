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

/* MPI_Pack and MPI_Unpack take int counts, sizes and positions, and
 * acis calls the MPI 3 forms, which every MPICH-family library has (the
 * MPI 4 large-count MPI_Pack_c is not in all of them): a run of count
 * elements is moved in pieces of at most PIECE bytes, each at its own
 * place in the packed image, so an image may pass INT_MAX bytes. */
#define PIECE ((MPI_Count)1 << 30)

/* Pack (out) or unpack count elements of b->type at buf from or to
 * *packed, of which *left bytes remain; both advance.  0, or -1. */
static int move_run(const struct acis_buf *b, const struct acis_dtinfo *dt, char *buf,
                    MPI_Count count, uint8_t **packed, uint64_t *left, int out, MPI_Comm comm)
{
    if (dt->size > INT_MAX && count > 0)
        return -1;                      /* one element past an int's reach */
    MPI_Count step = dt->size > PIECE ? 1 : dt->size > 0 ? PIECE / dt->size : PIECE;
    for (MPI_Count done = 0; done < count; done += step) {
        int n = (int)(count - done < step ? count - done : step), pos = 0;
        int room = (int)(*left < (uint64_t)INT_MAX ? *left : (uint64_t)INT_MAX);
        char *at = buf + done * dt->extent;
        int rc = out ? PMPI_Pack(at, n, b->type, *packed, room, &pos, comm)
                     : PMPI_Unpack(*packed, room, &pos, at, n, b->type, comm);
        if (rc != MPI_SUCCESS)
            return -1;
        *packed += pos;
        *left -= (uint64_t)pos;
    }
    return 0;
}

/* Pack b (each block in turn) into buf, or unpack it from there: len
 * bytes, exactly what b packs to.  0, or -1. */
static int move(const struct acis_buf *b, uint8_t *buf, uint64_t len, int out, MPI_Comm comm)
{
    struct acis_dtinfo dt;
    uint64_t left = len;
    if (acis_dtype_info(b->type, &dt) != 0)
        return -1;
    if (!b->counts && move_run(b, &dt, b->buf, b->count, &buf, &left, out, comm) != 0)
        return -1;
    for (int q = 0; b->counts && q < b->nblocks; q++)
        if (move_run(b, &dt, (char *)b->buf + (MPI_Aint)b->displs[q] * dt.extent,
                     b->counts[q], &buf, &left, out, comm) != 0)
            return -1;
    return left == 0 ? 0 : -1;
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
    uint64_t plen = total_count(b) * (uint64_t)dt.size;   /* im->len, unless wire */
    uint8_t *packed = malloc(plen + 1);
    if (!packed)
        return -1;
    if (move(b, packed, plen, 1, comm) != 0) {
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
    if (prepare(im, b, 0, &dt) != 0)
        return -1;
    if ((im->p = in_place(b, &dt, 0)))
        return 0;
    if (im->len > cap || move(b, buf, im->len, 1, comm) != 0)
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
    if (wire && holes(dt.prim, &v, &off)) {
        uint64_t n = im->len / acis_wire_dt_size(dt.prim);
        plen = n * (v + sizeof(int));
        packed = malloc(plen + 1);
        if (!packed)
            return -1;
        spread(dt.prim, im->p, packed, n, 1);
    }
    int rc = move(b, packed, plen, 0, comm);
    if (packed != im->p)
        free(packed);
    return rc;
}

void acis_image_free(struct acis_image *im)
{
    free(im->tmp);
    memset(im, 0, sizeof *im);
}
