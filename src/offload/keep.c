/* keep.c -- what a member keeps for recovery after a switch failure
 * (fix.c): a copy of each of the last window's packets of finished
 * collectives, and of a piece an in-place answer is about to overwrite.
 * A member can only be asked for a segment less than one window older
 * than the newest it has itself, so one window of copies suffices. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpid/device.h"
#include "offload.h"

void acis_keep(struct acis_coff *co, const struct acis_stream *st, uint32_t k)
{
    uint32_t w = co->win.size, len;
    uint64_t pos = st->pos0 + k;
    if (!co->kept && !(co->kept = calloc(w, sizeof *co->kept)))
        return;                         /* a member recovering would break the
                                           communicator (fix.c) */
    struct acis_kept *e = &co->kept[pos % w];
    if (e->pkt && e->pos > pos)
        return;                         /* holds a later segment: this one is answered
                                           everywhere (see fix.c) */
    uint8_t hdr[ACIS_HDR_LEN];
    const uint8_t *pl;
    acis_stream_packet(st, &co->win, k, hdr, &pl, &len);
    if (e->cap < ACIS_HDR_LEN + len || e->cap > 4 * (ACIS_HDR_LEN + len) + 4096) {
        uint8_t *q = realloc(e->pkt, ACIS_HDR_LEN + len);
        if (!q)
            return;
        e->pkt = q;
        e->cap = ACIS_HDR_LEN + len;
    }
    memcpy(e->pkt, hdr, ACIS_HDR_LEN);
    if (len)
        memcpy(e->pkt + ACIS_HDR_LEN, pl, len);
    e->len = ACIS_HDR_LEN + len;
    e->pos = pos;
    e->seq = st->seq;
    e->seg = k;
}

int acis_take_answer(struct acis_coff *co, struct acis_op *op, const struct acis_hdr *h,
                       const uint8_t *payload)
{
    uint32_t k = h->seg_index;
    if (op->st.inplace && !(h->flags & ACIS_F_PENDING) && k < op->st.nseg &&
        !acis_stream_has(&op->st, &co->win, k) && !acis_dev_reliable())
        acis_keep(co, &op->st, k);      /* the answer overwrites the piece */
    return acis_stream_answer(&op->st, &co->win, h, payload);
}
