/* cgr.c -- the configurable gather/reduce unit: every member sends one
 * packet per segment of a collective (its piece of the data, or none),
 * the slot counts members in a bitmap, combines pieces (reduce, or place
 * by offset for gather-type), and when the last member is in, returns to
 * each member the part of the segment it asked for -- one multicast per
 * group of members that asked for the same bytes.
 *
 * Reductions whose result depends on order (floating point) and scans keep
 * each member's piece and fold them in rank order at completion, so the
 * result is bitwise the same on every rank and every run. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sw.h"

static int is_reduction(unsigned kind)
{
    return kind == ACIS_K_REDUCE || kind == ACIS_K_ALLREDUCE ||
           kind == ACIS_K_REDUCE_SCATTER || kind == ACIS_K_SCAN ||
           kind == ACIS_K_EXSCAN;
}

static int is_scan(unsigned kind)
{
    return kind == ACIS_K_SCAN || kind == ACIS_K_EXSCAN;
}

static int rooted(unsigned kind)
{
    return kind == ACIS_K_BCAST || kind == ACIS_K_REDUCE ||
           kind == ACIS_K_GATHER || kind == ACIS_K_SCATTER;
}

/* Segment geometry every host computes the same way: whole elements per
 * packet for reductions, bytes otherwise. */
static uint32_t seg_bytes(const struct acis_sw *sw, unsigned kind, unsigned dt)
{
    uint32_t es = is_reduction(kind) ? (uint32_t)acis_wire_dt_size(dt) : 1;
    return sw->o.payload / es * es;
}

/* Does the piece (seg_offset, payload_len) of member rank fit the
 * collective?  base/len describe the segment, placed what VAR gathers
 * have put in it already. */
static int piece_ok(const struct sw_ct *ct, unsigned kind, unsigned alg, uint32_t rank,
                    const struct acis_hdr *h, uint64_t base, uint32_t len, uint32_t placed)
{
    int whole = h->seg_offset == base && h->payload_len == len;
    if (alg == ACIS_ALG_VAR)          /* inside the segment, never more than fills it */
        return h->payload_len == 0 ||
               (h->seg_offset >= base && h->seg_offset + h->payload_len <= base + len &&
                placed + h->payload_len <= len);
    switch (kind) {
    case ACIS_K_BARRIER:
        return h->total_len == 0 && h->payload_len == 0;
    case ACIS_K_BCAST:
    case ACIS_K_SCATTER:
        return rank == h->root ? whole : h->payload_len == 0;
    case ACIS_K_GATHER:
    case ACIS_K_ALLGATHER: {
        if (h->total_len % ct->size)
            return 0;
        uint64_t n = h->total_len / ct->size;
        uint64_t lo = base > rank * n ? base : rank * n;
        uint64_t hi = base + len < (rank + 1) * n ? base + len : (rank + 1) * n;
        if (lo >= hi)
            return h->payload_len == 0;
        return h->seg_offset == lo && h->payload_len == hi - lo;
    }
    default:
        return whole;
    }
}

static void slot_reset(struct sw_slot *s, uint32_t members)
{
    s->busy = 0;
    s->arrived = 0;
    s->placed = 0;
    s->have_first = 0;
    memset(s->bits, 0, (members + 63) / 64 * sizeof(uint64_t));
}

/* Ordered reductions and scans keep every member's piece. */
static uint8_t *contrib_of(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s,
                           uint32_t rank)
{
    if (!s->contrib) {
        s->contrib = malloc((size_t)ct->size * sw->o.payload);
        if (!s->contrib)
            return NULL;
        SWC(sw, buffer_bytes) += (uint64_t)ct->size * sw->o.payload;
    }
    return s->contrib + (size_t)rank * sw->o.payload;
}

static void result_header(const struct acis_sw *sw, const struct sw_ct *ct,
                          const struct sw_slot *s, uint32_t slot, struct acis_hdr *r)
{
    memset(r, 0, sizeof *r);
    r->magic = ACIS_WIRE_MAGIC;
    r->version = ACIS_WIRE_VERSION;
    r->opcode = ACIS_OPC(s->kind, s->alg);
    r->op = s->op;
    r->dtype = s->dtype;
    r->slot = (uint16_t)slot;
    r->job_key = sw->jobs[ct->job].key;
    r->ctx = sw_ct_ctx(sw, (uint32_t)(ct - sw->cts));
    r->seq = s->seq;
    r->src = ACIS_NO_RANK;
    r->root = s->root;
    r->seg_index = s->seg;
    r->total_len = s->total;
}

/* Send buf[rx] of the segment (or an acknowledgement) to the members in
 * ports[0..n), which all asked for the same range. */
static void emit_range(struct acis_sw *sw, const struct sw_ct *ct, const struct sw_slot *s,
                       uint32_t slot, const uint32_t *ports, uint32_t n,
                       const uint8_t *buf, uint32_t rx_off, uint32_t rx_len)
{
    struct acis_hdr r;
    result_header(sw, ct, s, slot, &r);
    r.flags = ACIS_F_RESULT | (rx_len ? 0 : ACIS_F_ACK);
    r.seg_offset = s->base + rx_off;
    r.rx_off = rx_off;
    r.rx_len = rx_len;
    r.payload_len = rx_len;
    sw_emit(sw, ports, n, &r, buf + rx_off, rx_len);
    if (n > 1)
        SWC(sw, multicasts)++;
}

/* Everyone gets their range of buf, grouped by range. */
static void emit_all(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot)
{
    uint32_t n = ct->size, *ports = malloc(sizeof(uint32_t) * n);
    uint8_t *done = calloc(n, 1);
    if (!ports || !done)
        goto out;
    for (uint32_t r = 0; r < n; r++) {
        if (done[r])
            continue;
        uint32_t k = 0;
        for (uint32_t q = r; q < n; q++) {
            if (!done[q] && s->rx_off[q] == s->rx_off[r] && s->rx_len[q] == s->rx_len[r]) {
                ports[k++] = ct->rank_port[q];
                done[q] = 1;
            }
        }
        emit_range(sw, ct, s, slot, ports, k, s->buf, s->rx_off[r], s->rx_len[r]);
    }
out:
    free(ports);
    free(done);
}

/* Scans: member r gets the fold of members 0..r (SCAN) or 0..r-1 (EXSCAN;
 * member 0 only an acknowledgement). */
static void emit_scan(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot)
{
    size_t es = acis_wire_dt_size(s->dtype), ne = s->len / es;
    int ex = s->kind == ACIS_K_EXSCAN;
    memcpy(s->buf, s->contrib, s->len);
    for (uint32_t r = 0; r < ct->size; r++) {
        if (r > 0 && !ex) {
            acis_reduce(s->op, s->dtype, s->buf, s->contrib + (size_t)r * sw->o.payload, ne);
            SWC(sw, elements_reduced) += ne;
        }
        uint32_t len = ex && r == 0 ? 0 : s->rx_len[r];
        emit_range(sw, ct, s, slot, &ct->rank_port[r], 1, s->buf, s->rx_off[r], len);
        if (r > 0 && ex) {
            acis_reduce(s->op, s->dtype, s->buf, s->contrib + (size_t)r * sw->o.payload, ne);
            SWC(sw, elements_reduced) += ne;
        }
    }
}

static void complete(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot)
{
    size_t es = acis_wire_dt_size(s->dtype);
    if (is_scan(s->kind)) {
        emit_scan(sw, ct, s, slot);
    } else {
        if (is_reduction(s->kind) && acis_wire_order_sensitive(s->op, s->dtype)) {
            memcpy(s->buf, s->contrib, s->len);
            for (uint32_t r = 1; r < ct->size; r++)
                acis_reduce(s->op, s->dtype, s->buf,
                            s->contrib + (size_t)r * sw->o.payload, s->len / es);
            SWC(sw, elements_reduced) += (uint64_t)(ct->size - 1) * (s->len / es);
        }
        emit_all(sw, ct, s, slot);
    }
    SWC(sw, segments)++;
    sw->c[ACIS_SWC_seg_barrier + s->kind - ACIS_K_BARRIER]++;
    slot_reset(s, ct->size);
}

void sw_cgr_input(struct acis_sw *sw, struct sw_ct *ct, uint32_t rank,
                  const struct acis_hdr *h, const uint8_t *payload)
{
    unsigned kind = ACIS_OPC_KIND(h->opcode), alg = ACIS_OPC_ALG(h->opcode);
    if (h->slot >= ct->window) {
        SWC(sw, drop_slot)++;
        return;
    }
    struct sw_slot *s = &ct->slots[h->slot];
    uint32_t sb = seg_bytes(sw, kind, h->dtype);
    uint64_t base = (uint64_t)h->seg_index * sb;
    if (!(base < h->total_len || (h->total_len == 0 && h->seg_index == 0)) ||
        (rooted(kind) && h->root >= ct->size)) {
        SWC(sw, drop_range)++;
        return;
    }
    uint32_t len = (uint32_t)(h->total_len - base < sb ? h->total_len - base : sb);
    if (s->busy && (s->seq != h->seq || s->seg != h->seg_index)) {
        SWC(sw, drop_slot)++;                  /* an earlier segment holds it */
        return;
    }
    if (s->busy && (s->kind != kind || s->alg != alg || s->op != h->op || s->dtype != h->dtype ||
                    s->total != h->total_len || (rooted(kind) && s->root != h->root))) {
        SWC(sw, drop_mismatch)++;
        return;
    }
    if (s->busy && (s->bits[rank / 64] >> (rank % 64) & 1)) {
        SWC(sw, drop_duplicate)++;
        return;
    }
    if (!piece_ok(ct, kind, alg, rank, h, base, len, s->busy ? s->placed : 0) ||
        (uint64_t)h->rx_off + h->rx_len > len) {
        SWC(sw, drop_range)++;
        return;
    }
    if (!s->busy) {
        s->busy = 1;
        s->kind = (uint8_t)kind;
        s->alg = (uint8_t)alg;
        s->op = h->op;
        s->dtype = h->dtype;
        s->seq = h->seq;
        s->seg = h->seg_index;
        s->root = rooted(kind) ? h->root : 0;
        s->total = h->total_len;
        s->base = base;
        s->len = len;
    }

    /* Combine the piece. */
    if (is_reduction(kind)) {
        if (is_scan(kind) || acis_wire_order_sensitive(h->op, h->dtype)) {
            uint8_t *c = contrib_of(sw, ct, s, rank);
            if (!c) {
                SWC(sw, drop_slot)++;          /* out of memory: host will time out */
                return;
            }
            memcpy(c, payload, len);
        } else if (!s->have_first) {
            memcpy(s->buf, payload, len);
            s->have_first = 1;
        } else {
            size_t ne = len / acis_wire_dt_size(h->dtype);
            acis_reduce(h->op, h->dtype, s->buf, payload, ne);
            SWC(sw, elements_reduced) += ne;
        }
    } else if (h->payload_len) {
        memcpy(s->buf + (h->seg_offset - base), payload, h->payload_len);
        s->placed += h->payload_len;
    }
    s->rx_off[rank] = h->rx_off;
    s->rx_len[rank] = h->rx_len;
    s->bits[rank / 64] |= 1ull << (rank % 64);
    if (++s->arrived == ct->size)
        complete(sw, ct, s, h->slot);
}
