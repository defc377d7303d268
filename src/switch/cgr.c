/* cgr.c -- the configurable gather/reduce unit: every member sends one
 * packet per segment of a collective (its piece of the data, or none),
 * the slot counts children (ports) in a bitmap, combines pieces (reduce,
 * or place by offset for gather-type), and when the last child is in,
 * answers: one multicast of the hull of what members asked back to those
 * that asked (each takes its part), one acknowledgement to the others.
 * Everything lives in the row's slots of the pool; nothing is allocated.
 *
 * Every reduction folds pieces as they arrive.  Where the result depends on
 * the order (floating point) the fold is in a fixed order -- the members'
 * ranks on a single switch (hdr.member), the ports of a switch in a fabric
 * -- so the result is bitwise the same on every rank and every run: the
 * contiguous prefix is folded as it arrives, a piece that comes before its
 * turn waits in one of the pool's hold buffers until the gap closes; when
 * none is free the piece is not taken and its sender, told PENDING, sends
 * it again.  Scans keep every member's piece in the slot's buffer (the
 * hosts cut scan segments small enough, ACIS_CT_SCAN_SPLIT) and fold at
 * completion: member r's answer is the prefix 0..r, and a repeat from r
 * after the slot moved on needs it again.
 *
 * Gather-type pieces are placed by offset, each byte at most once (a bit
 * per byte of the segment); a segment must end up tiled exactly once, or
 * hold no piece at all (inside a root's own block), else every member is
 * refused (as below) -- so nothing is answered that the job did not put
 * there, and no byte of an earlier use (another job's) ever leaves.
 *
 * A member that cannot take part (no memory for its data) sends its packets
 * with ACIS_F_ABSTAIN and no data: the slot still counts every member, but
 * combines nothing, and answers all of them with ERROR | ABSTAIN, so the
 * members redo the collective in MPICH together.
 *
 * Loss: a slot keeps its previous, complete segment (the shadow copy), so
 * a member whose answer was lost repeats its packet and gets the answer
 * again; a duplicate of a packet already counted is dropped; a packet of a
 * segment older than the slot's last two (a delayed stale copy) is dropped
 * and can never leak into a later collective. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sw.h"

enum { TAKEN, NOT_TAKEN, REFUSED, OVERLAP };

/* The piece of a switch below: its children's pieces combined -- the whole
 * segment for a reduction, the root's whole segment or nothing for bcast
 * and scatter, a span of the segment for the gathers. */
static int link_piece_ok(unsigned kind, const struct acis_hdr *h, uint64_t base, uint32_t len)
{
    int whole = h->seg_offset == base && h->payload_len == len;
    if (kind == ACIS_K_BARRIER)
        return h->total_len == 0 && h->payload_len == 0;
    if (sw_is_reduction(kind))
        return whole;
    if (kind == ACIS_K_BCAST || kind == ACIS_K_SCATTER)
        return whole || h->payload_len == 0;
    return h->payload_len == 0 ||
           (h->seg_offset >= base && h->seg_offset + h->payload_len <= base + len);
}

/* The root of a gather or scatter copies its own block itself: for a
 * segment inside that block it may send nothing (nobody wants it). */
static int own_empty(const struct sw_ct *ct, uint32_t rank, const struct acis_hdr *h,
                     uint64_t base, uint32_t len)
{
    if (rank != h->root || h->payload_len != 0 || h->total_len % ct->size)
        return 0;
    uint64_t n = h->total_len / ct->size;
    return base >= rank * n && base + len <= (rank + 1) * n;
}

/* Does the piece (seg_offset, payload_len) of member h->member (or of a
 * link) fit the collective?  base/len describe the segment. */
static int piece_ok(const struct acis_sw *sw, const struct sw_ct *ct, unsigned kind,
                    unsigned alg, uint32_t port, const struct acis_hdr *h, uint64_t base,
                    uint32_t len)
{
    if (sw->ports[port].link)
        return link_piece_ok(kind, h, base, len);
    uint32_t rank = h->member;
    int whole = h->seg_offset == base && h->payload_len == len;
    if (alg == ACIS_ALG_VAR)          /* inside the segment; the cover says the rest */
        return h->payload_len == 0 ||
               (h->seg_offset >= base && h->seg_offset + h->payload_len <= base + len);
    switch (kind) {
    case ACIS_K_BARRIER:
        return h->total_len == 0 && h->payload_len == 0;
    case ACIS_K_BCAST:
        return rank == h->root ? whole : h->payload_len == 0;
    case ACIS_K_SCATTER:
        return rank == h->root ? whole || own_empty(ct, rank, h, base, len)
                               : h->payload_len == 0;
    case ACIS_K_GATHER:
    case ACIS_K_ALLGATHER: {
        if (h->total_len % ct->size)
            return 0;
        uint64_t n = h->total_len / ct->size;
        uint64_t lo = base > rank * n ? base : rank * n;
        uint64_t hi = base + len < (rank + 1) * n ? base + len : (rank + 1) * n;
        if (lo >= hi)
            return h->payload_len == 0;
        return (h->seg_offset == lo && h->payload_len == hi - lo) ||
               (kind == ACIS_K_GATHER && own_empty(ct, rank, h, base, len));
    }
    default:
        return whole;
    }
}

static int same_segment(const struct sw_use *u, const struct acis_hdr *h)
{
    return u->seq == h->seq && u->seg == h->seg_index;
}

/* Segments reach a slot in increasing (sequence, segment) order, sequence
 * numbers compared as serial numbers (they wrap). */
static int newer(const struct acis_hdr *h, const struct sw_use *u)
{
    int32_t d = (int32_t)(h->seq - u->seq);
    return d > 0 || (d == 0 && h->seg_index > u->seg);
}

/* A single switch serves scans: every member's piece in the buffer, a
 * stride each, the port it came from in the stride's last word. */
static uint32_t scan_stride(const struct sw_ct *ct, const struct sw_use *u)
{
    size_t es = acis_wire_dt_size(u->dtype);
    uint32_t unit = es > 8 ? (uint32_t)es : 8;
    return acis_scan_seg_bytes(ct->payload, ct->size, es) + unit;
}

static uint32_t *scan_port(const struct sw_ct *ct, struct sw_use *u, uint32_t m)
{
    uint32_t stride = scan_stride(ct, u);
    return (uint32_t *)(u->buf + (size_t)m * stride + stride - 8);
}

/* The kernels read whole elements: hand them a piece at an address
 * aligned for any type, copied to scratch if its packet buffer is not. */
static const uint8_t *aligned_piece(struct acis_sw *sw, const uint8_t *p, size_t len)
{
    if ((uintptr_t)p % _Alignof(max_align_t) == 0)
        return p;
    memcpy(sw->scratch, p, len);
    return sw->scratch;
}

/* Fold piece (the next in the order) into the prefix in buf. */
static void fold_next(struct acis_sw *sw, struct sw_use *u, const uint8_t *piece)
{
    size_t ne = u->len / acis_wire_dt_size(u->dtype);
    if (u->next++ == 0) {
        memcpy(u->buf, piece, u->len);
        return;
    }
    acis_reduce(u->op, u->dtype, u->buf, aligned_piece(sw, piece, u->len), ne);
    SWC(sw, elements_reduced) += ne;
}

/* Ordered reductions: the piece at place key extends the prefix, with
 * every held piece that then follows; or, before its turn, it is held. */
static int fold_ordered(struct acis_sw *sw, struct sw_use *u, uint32_t key,
                        const uint8_t *payload)
{
    if (key < u->next || sw_hold_find(sw, u, key))
        return REFUSED;                          /* that place is taken */
    if (key != u->next) {
        uint8_t *b = sw_hold_take(sw, u, key);
        if (!b)
            return NOT_TAKEN;
        memcpy(b, payload, u->len);
        return TAKEN;
    }
    fold_next(sw, u, payload);
    for (struct sw_hold *h; u->held && (h = sw_hold_find(sw, u, u->next));) {
        fold_next(sw, u, h->buf);
        sw_hold_give(sw, u, h);
    }
    return TAKEN;
}

/* Gather-type: mark bytes [off, off + n) placed; 0 if none was (-1, and
 * nothing marked, if any was).  Word by word: a 65000-byte piece is about
 * a thousand words, looked at once and set once. */
static int cover(uint64_t *c, uint32_t off, uint32_t n)
{
    if (!n)
        return 0;
    uint32_t last = off + n - 1, w0 = off / 64, w1 = last / 64;
    uint64_t m0 = ~0ull << (off % 64), m1 = ~0ull >> (63 - last % 64);
    if (w0 == w1)
        m0 = m1 = m0 & m1;
    uint64_t taken = (c[w0] & m0) | (c[w1] & m1);
    for (uint32_t w = w0 + 1; w < w1; w++)
        taken |= c[w];
    if (taken)
        return -1;
    c[w0] |= m0;
    c[w1] |= m1;
    for (uint32_t w = w0 + 1; w < w1; w++)
        c[w] = ~0ull;
    return 0;
}

static void result_header(const struct acis_sw *sw, const struct sw_ct *ct,
                          const struct sw_use *u, uint32_t slot, struct acis_hdr *r)
{
    memset(r, 0, sizeof *r);
    r->magic = ACIS_WIRE_MAGIC;
    r->version = ACIS_WIRE_VERSION;
    r->opcode = ACIS_OPC(u->kind, u->alg);
    r->op = u->op;
    r->dtype = u->dtype;
    r->flags = u->round ? ACIS_F_ROUND : 0;
    r->slot = (uint16_t)slot;
    r->job_key = sw->jobs[ct->job].key;
    r->ctx = sw_ct_ctx(sw, (uint32_t)(ct - sw->cts));
    r->seq = u->seq;
    r->src = ACIS_NO_RANK;
    r->root = u->root;
    r->seg_index = u->seg;
    r->total_len = u->total;
}

/* Send buf[rx] of the segment (or an acknowledgement) to ports[0..n);
 * flags adds to the answer's. */
static void emit_range(struct acis_sw *sw, const struct sw_ct *ct, const struct sw_use *u,
                       uint32_t slot, const uint32_t *ports, uint32_t n,
                       const uint8_t *buf, uint32_t rx_off, uint32_t rx_len, uint16_t flags)
{
    struct acis_hdr r;
    if (!n)
        return;
    result_header(sw, ct, u, slot, &r);
    r.flags |= ACIS_F_RESULT | (rx_len ? 0 : ACIS_F_ACK) | flags;
    r.seg_offset = u->base + rx_off;
    r.rx_off = rx_off;
    r.rx_len = rx_len;
    sw_emit(sw, ports, n, &r, buf + rx_off, rx_len);
    if (n > 1)
        SWC(sw, multicasts)++;
}

/* A member abstained (or the pieces did not tile): everyone (or the one
 * port given) hears so, without data; or the parent said the members
 * disagree: ERROR alone. */
static void emit_abstained(struct acis_sw *sw, const struct sw_ct *ct, const struct sw_use *u,
                           uint32_t slot, const uint32_t *ports, uint32_t n)
{
    emit_range(sw, ct, u, slot, ports, n, u->buf, 0, 0,
               ACIS_F_ERROR | (u->disagreed ? 0 : ACIS_F_ABSTAIN));
}

/* Did every child of ct ask for bytes back? */
static int all_want(const struct acis_sw *sw, const struct sw_ct *ct, const struct sw_use *u)
{
    uint64_t left = 0;
    for (uint32_t w = 0; w < sw->words; w++)
        left |= ct->ports[w] & ~u->want[w];
    return left == 0;
}

/* The hull of what was asked back, to those who asked; an
 * acknowledgement to the rest.  When all of them are answered alike
 * (a barrier; a reduction every member wants back) the row's children
 * are listed once and kept (sw.kids) until another row's are, or the row
 * is built or dropped again (sw_kids_forget). */
static void emit_all(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u, uint32_t slot)
{
    if (!u->want_any || all_want(sw, ct, u)) {
        uint32_t row = (uint32_t)(ct - sw->cts);
        if (sw->kids_row != row) {
            sw->kids_n = sw_ct_children(sw, ct, sw->kids);
            sw->kids_row = row;
        }
        uint32_t lo = u->want_any ? u->want_lo : 0, hi = u->want_any ? u->want_hi : 0;
        emit_range(sw, ct, u, slot, sw->kids, sw->kids_n, u->buf, lo, hi - lo, 0);
        return;
    }
    uint32_t nw = 0, na = 0;
    for (uint32_t w = 0; w < sw->words; w++) {
        for (uint64_t b = ct->ports[w] & u->want[w]; b; b &= b - 1)
            sw->group[nw++] = w * 64 + (uint32_t)__builtin_ctzll(b);
        for (uint64_t b = ct->ports[w] & ~u->want[w]; b; b &= b - 1)
            sw->group2[na++] = w * 64 + (uint32_t)__builtin_ctzll(b);
    }
    if (u->want_any)
        emit_range(sw, ct, u, slot, sw->group, nw, u->buf, u->want_lo,
                   u->want_hi - u->want_lo, 0);
    emit_range(sw, ct, u, slot, sw->group2, na, u->buf, 0, 0, 0);
}

/* The fold of members 0..upto of a scan into out. */
static void scan_prefix(const struct sw_ct *ct, struct sw_use *u, uint32_t upto, uint8_t *out)
{
    size_t ne = u->len / acis_wire_dt_size(u->dtype);
    uint32_t stride = scan_stride(ct, u);
    memcpy(out, u->buf, u->len);
    for (uint32_t r = 1; r <= upto; r++)
        acis_reduce(u->op, u->dtype, out, u->buf + (size_t)r * stride, ne);
}

/* Scans: member r gets the fold of members 0..r (SCAN) or 0..r-1 (EXSCAN;
 * member 0 only an acknowledgement).  One running fold serves them all. */
static void emit_scan(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u, uint32_t slot)
{
    size_t ne = u->len / acis_wire_dt_size(u->dtype);
    uint32_t stride = scan_stride(ct, u);
    int ex = u->kind == ACIS_K_EXSCAN;
    memcpy(sw->scratch, u->buf, u->len);
    for (uint32_t r = 0; r < ct->size; r++) {
        if (r > 0 && !ex) {
            acis_reduce(u->op, u->dtype, sw->scratch, u->buf + (size_t)r * stride, ne);
            SWC(sw, elements_reduced) += ne;
        }
        uint32_t port = *scan_port(ct, u, r);
        uint32_t len = (ex && r == 0) || !sw_bit(u->want, port) ? 0 : u->len;
        emit_range(sw, ct, u, slot, &port, 1, sw->scratch, 0, len, 0);
        if (r > 0 && ex) {
            acis_reduce(u->op, u->dtype, sw->scratch, u->buf + (size_t)r * stride, ne);
            SWC(sw, elements_reduced) += ne;
        }
    }
}

/* A repeat from the member on port whose answer was lost: send it again. */
static void answer_again(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u,
                         uint32_t slot, uint32_t port, uint32_t member)
{
    SWC(sw, repeats)++;
    if (u->abstained) {
        emit_abstained(sw, ct, u, slot, &port, 1);
        return;
    }
    if (!sw_bit(u->want, port)) {
        emit_range(sw, ct, u, slot, &port, 1, u->buf, 0, 0, 0);
        return;
    }
    if (!sw_is_scan(u->kind)) {
        emit_range(sw, ct, u, slot, &port, 1, u->buf, u->want_lo, u->want_hi - u->want_lo, 0);
        return;
    }
    if (member >= ct->size || *scan_port(ct, u, member) != port)
        return;                                  /* not that member's slot */
    int ex = u->kind == ACIS_K_EXSCAN;
    if (ex && member == 0) {
        emit_range(sw, ct, u, slot, &port, 1, u->buf, 0, 0, 0);
        return;
    }
    scan_prefix(ct, u, ex ? member - 1 : member, sw->scratch);
    emit_range(sw, ct, u, slot, &port, 1, sw->scratch, 0, u->len, 0);
}

/* What the segment would take in a fabric of real links and switches,
 * from the last host's packet leaving to the answer arriving: each way
 * levels links and switches, the bytes serialized once (switches cut
 * through; seed 000 eq. 3.3). */
static uint64_t model_ns(const struct acis_sw *sw, const struct sw_ct *ct,
                         const struct sw_use *u)
{
    uint64_t bits = 8 * ((uint64_t)u->len + ACIS_HDR_LEN);
    uint64_t ser = sw->o.link_mbps ? bits * 1000 / sw->o.link_mbps : 0;
    return 2 * ((uint64_t)ct->levels * (sw->o.link_ns + sw->o.hop_ns) + ser);
}

/* Gather-type pieces on a single switch tile the segment or are absent;
 * bytes nobody placed are never sent. */
static void check_tiling(struct acis_sw *sw, const struct sw_ct *ct, struct sw_use *u)
{
    if (u->abstained || sw_is_reduction(u->kind) || u->kind == ACIS_K_BARRIER ||
        sw_fabric_row(sw, ct) || u->placed == u->len)
        return;
    if (u->placed != 0) {
        u->abstained = 1;                        /* refused: every member redoes it */
        SWC(sw, untiled)++;
    } else if (u->want_any) {
        memset(u->buf + u->want_lo, 0, u->want_hi - u->want_lo);
    }
}

/* The segment's result is in buf (or it was refused): answer every
 * child, keep the use for repeats and move on. */
static void finish(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot)
{
    struct sw_use *u = &s->u[s->cur];
    if (!sw->up)
        SWC(sw, model_ns) += model_ns(sw, ct, u);   /* the top: the whole trip */
    check_tiling(sw, ct, u);
    if (u->abstained) {
        uint32_t n = sw_ct_children(sw, ct, sw->group);
        emit_abstained(sw, ct, u, slot, sw->group, n);
        SWC(sw, abstained)++;
    } else if (sw_is_scan(u->kind)) {
        emit_scan(sw, ct, u, slot);
    } else {
        emit_all(sw, ct, u, slot);
    }
    SWC(sw, segments)++;
    sw->c[ACIS_SWC_seg_barrier + u->kind - ACIS_K_BARRIER]++;
    u->done = 1;                                   /* kept for repeats */
    s->cur ^= 1;                                   /* every member has the older one */
    sw_use_reset(sw, &s->u[s->cur]);
}

/* Send what this switch combined of a segment to its parent, asking back
 * the hull of what its children asked for. */
static void send_up(struct acis_sw *sw, const struct sw_ct *ct, struct sw_use *u,
                    uint32_t slot)
{
    u->up_off = u->want_any ? u->want_lo : 0;
    u->up_len = u->want_any ? u->want_hi - u->want_lo : 0;
    struct acis_hdr r;
    result_header(sw, ct, u, slot, &r);
    r.rx_off = u->up_off;
    r.rx_len = u->up_len;
    r.seg_offset = u->base;
    const uint8_t *p = NULL;
    size_t len = 0;
    if (u->abstained) {
        r.flags |= ACIS_F_ABSTAIN;
    } else if (sw_is_reduction(u->kind)) {
        p = u->buf;
        len = u->len;
    } else if (u->kind != ACIS_K_BARRIER && u->hi > u->lo) {
        r.seg_offset = u->base + u->lo;
        p = u->buf + u->lo;
        len = u->hi - u->lo;
    }
    uint32_t port = ACIS_PORT_UPLINK;
    sw_emit(sw, &port, 1, &r, p, len);
    if (!sw->asked_ns)
        sw->asked_ns = acis_now_ns();           /* silence counts from here */
}

/* Below the top of a tree: tell the parent the segment's members here
 * disagree (ERROR, no data), so that it answers every other child ERROR
 * too (sw_cgr_input) -- this segment never goes up complete.  Sent again
 * with every refusal here, as the members repeat, so one lost is not the
 * last. */
static void disagree_up(struct acis_sw *sw, const struct sw_ct *ct, const struct sw_use *u,
                        uint32_t slot)
{
    if (!sw->up)
        return;
    struct acis_hdr r;
    result_header(sw, ct, u, slot, &r);
    r.flags |= ACIS_F_ERROR;
    r.seg_offset = u->base;
    uint32_t port = ACIS_PORT_UPLINK;
    sw_emit(sw, &port, 1, &r, NULL, 0);
}

/* Every child is in: answer them, or (below the top of the tree) send the
 * combined segment up and answer when the parent does. */
void sw_cgr_complete(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot)
{
    struct sw_use *u = &s->u[s->cur];
    if (!sw->up) {
        finish(sw, ct, s, slot);
        return;
    }
    u->up = 1;
    send_up(sw, ct, u, slot);
    SWC(sw, link_up)++;
}

void sw_cgr_down(struct acis_sw *sw, struct sw_ct *ct, const struct acis_hdr *h,
                 const uint8_t *payload)
{
    if (h->slot >= ct->window) {
        SWC(sw, drop_slot)++;
        return;
    }
    struct sw_slot *s = &ct->slots[h->slot];
    struct sw_use *u = &s->u[s->cur];
    if (!u->up || !same_segment(u, h)) {
        if (!(h->flags & ACIS_F_PENDING))
            SWC(sw, drop_stale)++;               /* an answer sent again */
        return;
    }
    if (h->flags & ACIS_F_PENDING)
        return;                                  /* the parent is alive */
    if (h->flags & ACIS_F_ERROR) {
        u->abstained = 1;
        u->disagreed |= !(h->flags & ACIS_F_ABSTAIN);  /* the parent's disagree() */
        sw_hold_drop(sw, u);
    } else if (h->rx_off > u->up_off || h->rx_off + h->rx_len < u->up_off + u->up_len ||
               h->payload_len != h->rx_len || (uint64_t)h->rx_off + h->rx_len > u->len) {
        SWC(sw, drop_range)++;                   /* not what was asked */
        return;
    } else if (h->payload_len) {
        memcpy(u->buf + h->rx_off, payload, h->payload_len);
    }
    SWC(sw, link_down)++;
    finish(sw, ct, s, h->slot);
}

/* Fold or place a piece into the current use: TAKEN, NOT_TAKEN (no hold
 * buffer: sent again later), REFUSED (its place is taken) or OVERLAP (its
 * bytes are placed already). */
static int combine(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u, uint32_t port,
                   const struct acis_hdr *h, const uint8_t *payload)
{
    if (sw_is_scan(u->kind)) {
        uint32_t *at = scan_port(ct, u, h->member);
        if (*at != SW_NONE)
            return REFUSED;
        memcpy(u->buf + (size_t)h->member * scan_stride(ct, u), payload, u->len);
        *at = port;
    } else if (sw_is_reduction(u->kind) && acis_wire_order_sensitive(h->op, h->dtype)) {
        uint32_t key = sw_fabric_row(sw, ct) ? sw_bit_rank(ct->ports, port) : h->member;
        return fold_ordered(sw, u, key, payload);
    } else if (sw_is_reduction(u->kind)) {
        if (!u->have_first) {
            memcpy(u->buf, payload, u->len);
            u->have_first = 1;
        } else {
            size_t ne = u->len / acis_wire_dt_size(h->dtype);
            acis_reduce(h->op, h->dtype, u->buf, aligned_piece(sw, payload, u->len), ne);
            SWC(sw, elements_reduced) += ne;
        }
    } else if (h->payload_len) {
        uint32_t off = (uint32_t)(h->seg_offset - u->base);
        if (sw->ports[port].link && u->kind != ACIS_K_BCAST && u->kind != ACIS_K_SCATTER) {
            acis_reduce(ACIS_OP_BOR, ACIS_DT_U8, u->buf + off, payload, h->payload_len);
        } else {
            if (cover(u->cover, off, h->payload_len) != 0)
                return OVERLAP;                  /* bytes placed already */
            memcpy(u->buf + off, payload, h->payload_len);
            u->placed += h->payload_len;
        }
        u->lo = off < u->lo ? off : u->lo;
        u->hi = off + h->payload_len > u->hi ? off + h->payload_len : u->hi;
    }
    return TAKEN;
}

/* Claim the current use of slot s for the segment of h. */
static void start_use(struct acis_sw *sw, const struct sw_ct *ct, struct sw_slot *s,
                      const struct acis_hdr *h, uint64_t base, uint32_t len)
{
    struct sw_use *u = &s->u[s->cur];
    unsigned kind = ACIS_OPC_KIND(h->opcode);
    u->busy = 1;
    u->kind = (uint8_t)kind;
    u->alg = (uint8_t)ACIS_OPC_ALG(h->opcode);
    u->op = h->op;
    u->dtype = h->dtype;
    u->round = (h->flags & ACIS_F_ROUND) != 0;
    u->seq = h->seq;
    u->seg = h->seg_index;
    u->root = sw_rooted(kind) ? h->root : 0;
    u->total = h->total_len;
    u->base = base;
    u->len = len;
    u->ne = sw_is_reduction(kind) ? len / (uint32_t)acis_wire_dt_size(h->dtype) : 0;
    if (sw_fabric_row(sw, ct) && !sw_is_reduction(kind))
        memset(u->buf, 0, len);                  /* spans are or-ed together */
    if (!sw_is_reduction(kind) && kind != ACIS_K_BARRIER)
        memset(u->cover, 0, (len + 63) / 64 * sizeof(uint64_t));
    u->quick = u->alg == ACIS_ALG_FLAT && !sw->o.full_path &&
               h->seg_offset == base && h->payload_len == len &&
               (kind == ACIS_K_BARRIER ||
                (sw_is_reduction(kind) && !sw_is_scan(kind) &&
                 !acis_wire_order_sensitive(h->op, h->dtype) && sw->kern[h->dtype]));
    if (u->quick)
        acis_hdr_encode(h, (uint8_t *)s->tmpl);  /* the next ones must match it */
    if (sw_is_scan(kind) && sw_fabric_row(sw, ct))
        u->abstained = 1;                        /* no prefixes across switches */
    else if (sw_is_scan(kind))
        for (uint32_t m = 0; m < ct->size; m++)
            *scan_port(ct, u, m) = SW_NONE;
}

struct sw_use *sw_cgr_renew(struct sw_slot *s, const uint8_t *hdr, const uint8_t *payload)
{
    struct sw_use *u = &s->u[s->cur];
    const struct sw_use *prev = &s->u[s->cur ^ 1];
    u->busy = 1;
    u->kind = prev->kind;
    u->alg = prev->alg;
    u->op = prev->op;
    u->dtype = prev->dtype;
    u->round = !prev->round;
    u->seq = acis_get32(hdr + 28);
    u->seg = prev->seg;
    u->root = prev->root;
    u->total = prev->total;
    u->base = prev->base;
    u->len = prev->len;
    u->ne = prev->ne;
    u->quick = 1;
    memcpy(s->tmpl, hdr, sizeof s->tmpl);
    if (u->len) {                               /* combine()'s first piece */
        memcpy(u->buf, payload, u->len);
        u->have_first = 1;
    }
    return u;
}

/* The segment bytes of a collective kind on this row. */
static uint32_t seg_bytes(const struct acis_sw *sw, const struct sw_ct *ct, unsigned kind,
                          unsigned dt)
{
    if (sw_is_scan(kind) && !sw_fabric_row(sw, ct))
        return acis_scan_seg_bytes(ct->payload, ct->size, acis_wire_dt_size(dt));
    return sw_seg_bytes(ct->payload, kind, dt);
}

/* Tell the member on port its packet is counted and the segment waits, or
 * (PENDING without the count) that it must send it again. */
static void pending(struct acis_sw *sw, const struct sw_ct *ct, const struct sw_use *u,
                    const struct acis_hdr *h, uint32_t port)
{
    struct acis_hdr r;
    result_header(sw, ct, u, h->slot, &r);
    r.opcode = h->opcode;
    r.seq = h->seq;
    r.seg_index = h->seg_index;
    r.flags = (uint16_t)((h->flags & ACIS_F_ROUND) | ACIS_F_RESULT | ACIS_F_ACK | ACIS_F_PENDING);
    r.seg_offset = u->base;
    sw_emit(sw, &port, 1, &r, NULL, 0);
    SWC(sw, pending)++;
}

/* Tell the child on port (a host, or a switch below) its packet (h)
 * disagrees with the others of its segment u: an erroneous program
 * (different collectives, or counts that do not match).  The answer
 * echoes h, so the child takes it as its segment's whichever packet came
 * first -- a host breaks the communicator, a switch below answers every
 * child of its own so (sw_cgr_down); without it the members would be
 * told "pending" forever.  u is marked, and the parent told. */
static void disagree(struct acis_sw *sw, const struct sw_ct *ct, struct sw_use *u,
                     const struct acis_hdr *h, uint32_t port)
{
    u->disagreed = 1;
    disagree_up(sw, ct, u, h->slot);
    struct acis_hdr r = *h;
    r.flags = (uint16_t)((h->flags & ACIS_F_ROUND) | ACIS_F_RESULT | ACIS_F_ACK | ACIS_F_ERROR);
    r.job_key = sw->jobs[ct->job].key;
    r.src = ACIS_NO_RANK;
    r.member = 0;
    r.rx_off = r.rx_len = r.payload_len = 0;
    r.checksum = 0;
    sw_emit(sw, &port, 1, &r, NULL, 0);
}

void sw_cgr_input(struct acis_sw *sw, struct sw_ct *ct, uint32_t port,
                  const struct acis_hdr *h, const uint8_t *payload)
{
    unsigned kind = ACIS_OPC_KIND(h->opcode), alg = ACIS_OPC_ALG(h->opcode);
    uint8_t round = (h->flags & ACIS_F_ROUND) != 0;
    int host = !sw->ports[port].link;
    if (h->slot >= ct->window) {
        SWC(sw, drop_slot)++;
        return;
    }
    if (host && h->member >= ct->size) {
        SWC(sw, drop_not_member)++;
        return;
    }
    struct sw_slot *s = &ct->slots[h->slot];
    struct sw_use *u = &s->u[s->cur], *prev = &s->u[s->cur ^ 1];

    if (prev->done && same_segment(prev, h)) {       /* a repeat of the last one */
        if (sw_bit(prev->bits, port))
            answer_again(sw, ct, prev, h->slot, port, h->member);
        else
            SWC(sw, drop_stale)++;
        return;
    }
    if (u->busy && !same_segment(u, h)) {
        SWC(sw, drop_slot)++;                        /* the slot is in other use */
        return;
    }
    if (!u->busy && prev->done && (prev->round == round || !newer(h, prev))) {
        SWC(sw, drop_stale)++;                       /* older than the last use: stale */
        return;
    }
    uint32_t sb = seg_bytes(sw, ct, kind, h->dtype);
    uint64_t base = (uint64_t)h->seg_index * sb;
    if (!sb || !(base < h->total_len || (h->total_len == 0 && h->seg_index == 0)) ||
        (sw_rooted(kind) && h->root >= ct->size)) {
        SWC(sw, drop_range)++;
        return;
    }
    uint32_t len = (uint32_t)(h->total_len - base < sb ? h->total_len - base : sb);
    if (u->busy && (u->kind != kind || u->alg != alg || u->op != h->op || u->dtype != h->dtype ||
                    u->total != h->total_len || u->round != round ||
                    (sw_rooted(kind) && u->root != h->root))) {
        SWC(sw, drop_mismatch)++;
        disagree(sw, ct, u, h, port);
        return;
    }
    if (!host && (h->flags & (ACIS_F_ERROR | ACIS_F_ABSTAIN)) == ACIS_F_ERROR) {
        if (!u->busy)                            /* a switch below: its members */
            start_use(sw, ct, s, h, base, len);  /* disagree (disagree_up) */
        u->disagreed = 1;
        disagree_up(sw, ct, u, h->slot);
        return;
    }
    if (u->busy && sw_bit(u->bits, port)) {
        SWC(sw, drop_duplicate)++;              /* say we are alive and waiting */
        if (u->disagreed) {
            disagree(sw, ct, u, h, port);
            return;
        }
        if (u->up && u->dups++ % ct->nchild == 0)
            send_up(sw, ct, u, h->slot);        /* the parent's answer may be lost:
                                                   once per round of repeats */
        if (u->up && sw_parent_silent(sw))
            return;     /* not alive for them: the members time out and recover */
        pending(sw, ct, u, h, port);
        return;
    }
    int abstain = (h->flags & ACIS_F_ABSTAIN) != 0;
    if ((abstain ? h->payload_len != 0 : !piece_ok(sw, ct, kind, alg, port, h, base, len)) ||
        (uint64_t)h->rx_off + h->rx_len > len) {
        SWC(sw, drop_range)++;
        return;
    }
    if (!u->busy)
        start_use(sw, ct, s, h, base, len);
    if (abstain && !u->abstained) {
        u->abstained = 1;
        sw_hold_drop(sw, u);
    }
    if (!u->abstained) {
        int taken = combine(sw, ct, u, port, h, payload);
        if (taken == NOT_TAKEN) {
            SWC(sw, hold_full)++;
            pending(sw, ct, u, h, port);         /* not counted: sent again */
            return;
        }
        if (taken == REFUSED || taken == OVERLAP) {
            if (taken == OVERLAP)
                SWC(sw, drop_range)++;
            else
                SWC(sw, drop_duplicate)++;
            return;
        }
    }
    sw_cgr_want(u, port, h->rx_off, h->rx_len);
    sw_cgr_arrive(sw, ct, s, u, h->slot, port);
}
