/* image.c -- a rank's data as the switch sees it: a contiguous run of wire
 * elements (reductions) or of MPI_Pack bytes (collectives that only move
 * data).  Dense buffers are used in place; anything else is packed into a
 * temporary and unpacked after.  Pair types with holes (MPI_DOUBLE_INT...)
 * travel in their C struct layout, so their packed form is spread out. */
#include "config.h"

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
static void spread(unsigned prim, uint8_t *wire, const uint8_t *packed, uint64_t n, int out)
{
    size_t v = 0, off = 0, ws = acis_wire_dt_size(prim), ps;
    holes(prim, &v, &off);
    ps = v + sizeof(int);
    for (uint64_t i = 0; i < n; i++) {
        uint8_t *w = wire + i * ws;
        const uint8_t *p = packed + i * ps;
        if (out) {
            memcpy((uint8_t *)p, w, v);
            memcpy((uint8_t *)p + v, w + off, sizeof(int));
        } else {
            memset(w, 0, ws);
            memcpy(w, p, v);
            memcpy(w + off, p + v, sizeof(int));
        }
    }
}

static int in_place(const struct acis_dtinfo *dt, int wire)
{
    return wire ? dt->dense : acis_dtype_raw_bytes(dt);
}

int acis_image_in(struct acis_image *im, const void *buf, int count, MPI_Datatype t,
                  const struct acis_dtinfo *dt, int wire, MPI_Comm comm)
{
    memset(im, 0, sizeof *im);
    im->len = wire ? (uint64_t)count * dt->nprim * acis_wire_dt_size(dt->prim)
                   : (uint64_t)count * (uint64_t)dt->size;
    if (in_place(dt, wire)) {
        im->p = (uint8_t *)buf + dt->true_lb;
        return 0;
    }
    int psize, pos = 0;
    PMPI_Pack_size(count, t, comm, &psize);
    uint8_t *packed = malloc((size_t)psize + 1);
    if (!packed || PMPI_Pack(buf, count, t, packed, psize, &pos, comm) != MPI_SUCCESS) {
        free(packed);
        return -1;
    }
    size_t v, off;
    if (wire && holes(dt->prim, &v, &off)) {
        im->tmp = malloc(im->len + 1);
        if (!im->tmp) {
            free(packed);
            return -1;
        }
        spread(dt->prim, im->tmp, packed, im->len / acis_wire_dt_size(dt->prim), 0);
        free(packed);
    } else {
        im->tmp = packed;
    }
    im->p = im->tmp;
    return 0;
}

int acis_image_out(struct acis_image *im, void *buf, int count, const struct acis_dtinfo *dt,
                   int wire)
{
    memset(im, 0, sizeof *im);
    im->len = wire ? (uint64_t)count * dt->nprim * acis_wire_dt_size(dt->prim)
                   : (uint64_t)count * (uint64_t)dt->size;
    if (in_place(dt, wire)) {
        im->p = (uint8_t *)buf + dt->true_lb;
        return 0;
    }
    im->tmp = malloc(im->len + 1);
    im->p = im->tmp;
    return im->tmp ? 0 : -1;
}

int acis_image_finish(struct acis_image *im, void *buf, int count, MPI_Datatype t,
                      const struct acis_dtinfo *dt, int wire, MPI_Comm comm)
{
    if (!im->tmp)
        return 0;
    uint8_t *packed = im->tmp;
    uint64_t plen = im->len;
    size_t v, off;
    int rc = 0, pos = 0;
    if (wire && holes(dt->prim, &v, &off)) {
        uint64_t n = im->len / acis_wire_dt_size(dt->prim);
        plen = n * (v + sizeof(int));
        packed = malloc(plen + 1);
        if (!packed)
            return -1;
        spread(dt->prim, im->tmp, packed, n, 1);
    }
    if (PMPI_Unpack(packed, (int)plen, &pos, buf, count, t, comm) != MPI_SUCCESS)
        rc = -1;
    if (packed != im->tmp)
        free(packed);
    return rc;
}

void acis_image_free(struct acis_image *im)
{
    free(im->tmp);
    memset(im, 0, sizeof *im);
}
