/* stream.c -- the packetizer (stream.h): cut a collective's result space
 * into segments, build each segment's packet from this member's piece and
 * wanted range, and place answers. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "stream.h"

static int is_reduction(unsigned kind)
{
    return kind == ACIS_K_REDUCE || kind == ACIS_K_ALLREDUCE ||
           kind == ACIS_K_REDUCE_SCATTER || kind == ACIS_K_SCAN ||
           kind == ACIS_K_EXSCAN;
}

uint32_t acis_seg_bytes(uint32_t max_payload, unsigned kind, unsigned dtype,
                        uint32_t split_members)
{
    if (split_members && (kind == ACIS_K_SCAN || kind == ACIS_K_EXSCAN))
        return acis_scan_seg_bytes(max_payload, split_members, acis_wire_dt_size(dtype));
    uint32_t es = is_reduction(kind) ? (uint32_t)acis_wire_dt_size(dtype) : 1;
    return es ? max_payload / es * es : max_payload;
}

int acis_window_init(struct acis_window *w, uint32_t size)
{
    memset(w, 0, sizeof *w);
    w->size = size;
    w->busy = calloc(size, 1);
    w->owner = calloc(size, sizeof *w->owner);
    w->seg = calloc(size, sizeof *w->seg);
    w->sent_ns = calloc(size, sizeof *w->sent_ns);
    w->tries = calloc(size, 1);
    if (size && w->busy && w->owner && w->seg && w->sent_ns && w->tries)
        return 0;
    acis_window_free(w);
    return -1;
}

void acis_window_free(struct acis_window *w)
{
    free(w->busy);
    free(w->owner);
    free(w->seg);
    free(w->sent_ns);
    free(w->tries);
    memset(w, 0, sizeof *w);
}

int acis_stream_fits(uint64_t total, uint32_t seg_bytes)
{
    return seg_bytes && total / seg_bytes + (total % seg_bytes != 0) <= UINT32_MAX;
}

void acis_stream_start(struct acis_stream *s, struct acis_window *w)
{
    s->nseg = s->total ? (uint32_t)((s->total + s->seg_bytes - 1) / s->seg_bytes) : 1;
    s->next = s->answered = 0;
    s->refused = 0;
    s->pos0 = w->next_pos;
    w->next_pos += s->nseg;
}

static uint32_t slot_of(const struct acis_stream *s, const struct acis_window *w, uint32_t k)
{
    return (uint32_t)((s->pos0 + k) % w->size);
}

/* The slot no longer waits for an answer. */
static void free_slot(struct acis_window *w, uint32_t slot)
{
    w->busy[slot] = 0;
    w->owner[slot] = NULL;
    w->busy_count--;
}

int acis_stream_can_send(const struct acis_stream *s, const struct acis_window *w)
{
    return s->next < s->nseg && !w->busy[slot_of(s, w, s->next)];
}

/* Intersection of [a, a+al) and [b, b+bl); length 0 if none. */
static void overlap(uint64_t a, uint64_t al, uint64_t b, uint64_t bl,
                    uint64_t *lo, uint64_t *len)
{
    uint64_t l = a > b ? a : b, h = a + al < b + bl ? a + al : b + bl;
    *lo = l;
    *len = h > l ? h - l : 0;
}

/* Segment k: where it starts (*base) and its length. */
static uint64_t seg_span(const struct acis_stream *s, uint32_t k, uint64_t *base)
{
    *base = (uint64_t)k * s->seg_bytes;
    if (s->total == 0)
        return 0;
    return s->total - *base < s->seg_bytes ? s->total - *base : s->seg_bytes;
}

/* 1 if segment k of seg_len bytes at base lies in the block a member
 * copies itself: it asks for nothing (and carries no piece unless
 * own_sends). */
static int own(const struct acis_stream *s, uint64_t base, uint64_t seg_len)
{
    return seg_len && base >= s->own_off && base + seg_len <= s->own_off + s->own_len;
}

/* Segment k: where it starts, this member's piece of it and the part it
 * wants back (result-space bytes; lengths 0 if none). */
static void ranges(const struct acis_stream *s, uint32_t k, uint64_t *base, uint64_t *plo,
                   uint64_t *plen, uint64_t *rlo, uint64_t *rlen)
{
    uint64_t seg_len = seg_span(s, k, base);
    overlap(s->src_off, s->src_len, *base, seg_len, plo, plen);
    overlap(s->dst_off, s->dst_len, *base, seg_len, rlo, rlen);
    if (s->abstain)
        *plen = 0;
    if (own(s, *base, seg_len)) {
        *rlen = 0;
        if (!s->own_sends)
            *plen = 0;
    }
}

/* The part of segment k it wants back alone (taking an answer). */
static void wanted(const struct acis_stream *s, uint32_t k, uint64_t *base, uint64_t *rlo,
                   uint64_t *rlen)
{
    uint64_t seg_len = seg_span(s, k, base);
    overlap(s->dst_off, s->dst_len, *base, seg_len, rlo, rlen);
    if (own(s, *base, seg_len))
        *rlen = 0;
}

/* The packet of segment k (its slot is the segment's position modulo the
 * window; the round bit alternates between the slot's uses), decoded. */
static void fill(const struct acis_stream *s, const struct acis_window *w, uint32_t k,
                 struct acis_hdr *h, const uint8_t **payload, uint32_t *len)
{
    uint64_t base, plo, plen, rlo, rlen, pos = s->pos0 + k;
    ranges(s, k, &base, &plo, &plen, &rlo, &rlen);
    *h = (struct acis_hdr){
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(s->kind, s->alg), .op = s->op, .dtype = s->dtype,
        .flags = (uint16_t)(((pos / w->size) & 1 ? ACIS_F_ROUND : 0) |
                            (s->lost ? ACIS_F_LOST : 0) | (s->abstain ? ACIS_F_ABSTAIN : 0)),
        .slot = (uint16_t)slot_of(s, w, k), .payload_len = (uint32_t)plen,
        .job_key = s->job_key, .ctx = s->ctx, .seq = s->seq, .src = s->src,
        .root = s->root, .seg_index = k, .seg_offset = plen ? plo : base,
        .total_len = s->total, .rx_off = rlen ? (uint32_t)(rlo - base) : 0,
        .rx_len = (uint32_t)rlen, .member = s->member,
    };
    *payload = plen ? s->src_buf + (plo - s->src_off) : NULL;
    *len = (uint32_t)plen;
}

/* The same, encoded into hdr (ACIS_HDR_LEN bytes). */
static void build(const struct acis_stream *s, const struct acis_window *w, uint32_t k,
                  uint8_t *hdr, const uint8_t **payload, uint32_t *len)
{
    struct acis_hdr h;
    fill(s, w, k, &h, payload, len);
    acis_hdr_encode(&h, hdr);
}

void acis_stream_packet(const struct acis_stream *s, const struct acis_window *w, uint32_t k,
                        uint8_t *hdr, const uint8_t **payload, uint32_t *len)
{
    build(s, w, k, hdr, payload, len);
}

void acis_stream_next_hdr(struct acis_stream *s, struct acis_window *w, struct acis_hdr *h,
                          const uint8_t **payload, uint32_t *len, uint64_t now)
{
    uint32_t k = s->next++, slot = slot_of(s, w, k);
    fill(s, w, k, h, payload, len);
    acis_window_mark_sent(w, s, k, slot, now);
}

void acis_stream_packet_hdr(const struct acis_stream *s, const struct acis_window *w, uint32_t k,
                            struct acis_hdr *h, const uint8_t **payload, uint32_t *len)
{
    fill(s, w, k, h, payload, len);
}

void acis_stream_next(struct acis_stream *s, struct acis_window *w, uint8_t *hdr,
                      const uint8_t **payload, uint32_t *len, uint64_t now)
{
    struct acis_hdr h;
    acis_stream_next_hdr(s, w, &h, payload, len, now);
    acis_hdr_encode(&h, hdr);
}

int acis_window_resend(struct acis_window *w, uint32_t slot, uint64_t now, uint64_t rto_ns,
                       uint8_t *hdr, const uint8_t **payload, uint32_t *len)
{
    if (!w->busy[slot])
        return 0;
    unsigned t = w->tries[slot] < 6 ? w->tries[slot] : 6;
    if (now - w->sent_ns[slot] < rto_ns << t)
        return 0;
    build(w->owner[slot], w, w->seg[slot], hdr, payload, len);
    w->sent_ns[slot] = now;
    if (w->tries[slot] < 255)
        w->tries[slot]++;
    return 1;
}

int acis_stream_answer(struct acis_stream *s, struct acis_window *w,
                       const struct acis_hdr *h, const uint8_t *payload)
{
    uint32_t k = h->seg_index, slot;
    if (h->flags & ACIS_F_PENDING)
        return 1;                          /* alive, still waiting: nothing to do */
    /* sent (k < next), still waiting on its slot (not acis_stream_has), and
     * the answer is that slot's */
    if (k >= s->next || h->slot != (slot = slot_of(s, w, k)) || !w->busy[slot] ||
        w->owner[slot] != s || w->seg[slot] != k ||
        ACIS_OPC_KIND(h->opcode) != s->kind || h->total_len != s->total)
        return -1;
    /* A member abstained: the segment is answered, with nothing in it, and
     * so is every other (the abstainer sends no data for any), here and at
     * every member -- nothing from the switch is written anywhere. */
    int abstained = (h->flags & (ACIS_F_ERROR | ACIS_F_ABSTAIN)) ==
                    (ACIS_F_ERROR | ACIS_F_ABSTAIN);
    if (abstained) {
        s->refused = 1;
        goto answered;
    }
    if (h->flags & ACIS_F_ERROR)
        return -2;                         /* the switch could not serve it */
    if (s->abstain)
        return -1;
    if (!s->dst_len) {                     /* asked nothing (ranges(): rlen 0) */
        if (h->payload_len)
            return -1;
        goto answered;
    }
    uint64_t base, rlo, rlen;
    wanted(s, k, &base, &rlo, &rlen);
    /* What we asked for, or more of the segment around it: an empty
     * answer only when we asked nothing from this segment, or from exscan,
     * which has nothing for its member 0; a segment that owes us bytes
     * must bring them. */
    int may_be_empty = !rlen || (s->kind == ACIS_K_EXSCAN && s->member == 0);
    if (h->payload_len) {
        if (!rlen || h->seg_offset > rlo || h->seg_offset + h->payload_len < rlo + rlen)
            return -1;
        memcpy(s->dst_buf + (rlo - s->dst_off), payload + (rlo - h->seg_offset), rlen);
    } else if (!may_be_empty) {
        return -1;
    }
answered:
    s->answered++;
    free_slot(w, slot);
    return 0;
}

int acis_stream_take(struct acis_stream *s, struct acis_window *w, int how,
                     const uint8_t *data, uint64_t off, uint32_t len)
{
    uint32_t slot = slot_of(s, w, 0);
    if (!w->busy[slot] || w->owner[slot] != s || w->seg[slot] != 0)
        return -1;
    if (how == ACIS_TAKE_ABSTAINED) {
        s->refused = 1;                    /* as acis_stream_answer() does */
    } else if (how != ACIS_TAKE_DATA || s->abstain) {
        return -1;
    } else if (len) {
        if (off < s->dst_off || off + len > s->dst_off + s->dst_len)
            return -1;
        uint8_t *d = s->dst_buf + (off - s->dst_off);
        if (len == 8)                      /* the commonest small answer, without a call */
            memcpy(d, data, 8);
        else
            memcpy(d, data, len);
    }
    s->answered++;
    free_slot(w, slot);
    return 0;
}

void acis_stream_release(const struct acis_stream *s, struct acis_window *w, uint32_t k)
{
    uint32_t slot = slot_of(s, w, k);
    if (w->busy[slot] && w->owner[slot] == s && w->seg[slot] == k)
        free_slot(w, slot);
}
