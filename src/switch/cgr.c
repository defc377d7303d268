/* cgr.c -- the configurable gather/reduce unit: every member sends one
 * packet per segment of a collective (its piece of the data, or none),
 * the slot counts members in a bitmap, combines pieces (reduce, or place
 * by offset for gather-type), and when the last member is in, returns to
 * each member the part of the segment it asked for -- one multicast per
 * group of members that asked for the same bytes.
 *
 * Every reduction folds pieces as they arrive.  Where the result depends on
 * the order (floating point) the fold is still in rank order, so the result
 * is bitwise the same on every rank and every run: the contiguous prefix of
 * members is folded as it arrives, a piece that comes before its turn is
 * held (memory allocated then, freed as soon as the gap closes), so a slot
 * holds only out-of-order pieces, not one per member.  Scans keep every
 * member's piece and fold at completion: member r's answer is the prefix
 * 0..r, and a repeat from r after the slot moved on needs it again.
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
#include <stdlib.h>
#include <string.h>

#include "sw.h"

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

/* Does the piece (seg_offset, payload_len) of child fit the collective?
 * base/len describe the segment, placed what VAR gathers have put in it
 * already. */
static int piece_ok(const struct sw_ct *ct, unsigned kind, unsigned alg, uint32_t child,
                    const struct acis_hdr *h, uint64_t base, uint32_t len, uint32_t placed)
{
    uint32_t rank = ct->child_rank[child];
    if (rank == SW_NONE)
        return link_piece_ok(kind, h, base, len);
    int whole = h->seg_offset == base && h->payload_len == len;
    if (alg == ACIS_ALG_VAR)          /* inside the segment, never more than fills it */
        return h->payload_len == 0 ||
               (h->seg_offset >= base && h->seg_offset + h->payload_len <= base + len &&
                placed + h->payload_len <= len);
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

static void use_reset(struct sw_use *u, uint32_t children)
{
    u->busy = u->done = u->up = 0;
    u->dups = 0;
    u->arrived = 0;
    u->placed = 0;
    u->lo = UINT32_MAX;
    u->hi = 0;
    u->have_first = 0;
    u->abstained = 0;
    u->next = 0;
    memset(u->bits, 0, (children + 63) / 64 * sizeof(uint64_t));
}

/* Bytes of one member's piece in contrib or held: aligned for the kernels. */
static size_t stride(const struct acis_sw *sw)
{
    return sw_round(sw->o.payload);
}

/* Scans keep every member's piece (only on a single switch, where child
 * i is member i). */
static uint8_t *contrib_of(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u,
                           uint32_t rank)
{
    if (!u->contrib) {
        u->contrib = sw_alloc((size_t)ct->nchild * stride(sw));
        if (!u->contrib)
            return NULL;
        SWC(sw, buffer_bytes) += (uint64_t)ct->nchild * stride(sw);
    }
    return u->contrib + (size_t)rank * stride(sw);
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

/* Fold piece (child u->next's) into the prefix in buf. */
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

/* Ordered reductions: child's piece extends the prefix, with every held
 * piece that then follows; or, before its turn, it is held. */
static int fold_ordered(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u, uint32_t child,
                        const uint8_t *payload)
{
    if (child != u->next) {
        if (!u->held && !(u->held = calloc(ct->nchild, sizeof *u->held)))
            return -1;                          /* kept with the row from now on */
        uint8_t *p = sw_alloc(stride(sw));
        if (!p)
            return -1;
        memcpy(p, payload, u->len);
        u->held[child] = p;
        SWC(sw, buffer_bytes) += stride(sw);
        return 0;
    }
    fold_next(sw, u, payload);
    while (u->held && u->next < ct->nchild && u->held[u->next]) {
        uint8_t *p = u->held[u->next];
        u->held[u->next] = NULL;
        fold_next(sw, u, p);
        free(p);
        SWC(sw, buffer_bytes) -= stride(sw);
    }
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

/* Send buf[rx] of the segment (or an acknowledgement) to the members in
 * ports[0..n), which all asked for the same range; flags adds to the
 * answer's. */
static void emit_range(struct acis_sw *sw, const struct sw_ct *ct, const struct sw_use *u,
                       uint32_t slot, const uint32_t *ports, uint32_t n,
                       const uint8_t *buf, uint32_t rx_off, uint32_t rx_len, uint16_t flags)
{
    struct acis_hdr r;
    result_header(sw, ct, u, slot, &r);
    r.flags |= ACIS_F_RESULT | (rx_len ? 0 : ACIS_F_ACK) | flags;
    r.seg_offset = u->base + rx_off;
    r.rx_off = rx_off;
    r.rx_len = rx_len;
    sw_emit(sw, ports, n, &r, buf + rx_off, rx_len);
    if (n > 1)
        SWC(sw, multicasts)++;
}

/* A member abstained: everyone (or the one port given) hears so, without
 * data. */
static void emit_abstained(struct acis_sw *sw, const struct sw_ct *ct, const struct sw_use *u,
                           uint32_t slot, const uint32_t *ports, uint32_t n)
{
    emit_range(sw, ct, u, slot, ports, n, u->buf, 0, 0, ACIS_F_ERROR | ACIS_F_ABSTAIN);
}

/* Pieces held for their turn, when the fold will not happen. */
static void drop_held(struct acis_sw *sw, const struct sw_ct *ct, struct sw_use *u)
{
    for (uint32_t r = 0; u->held && r < ct->nchild; r++)
        if (u->held[r]) {
            free(u->held[r]);
            u->held[r] = NULL;
            SWC(sw, buffer_bytes) -= stride(sw);
        }
}

/* Every child gets its range of buf, grouped by range. */
static void emit_all(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u, uint32_t slot)
{
    uint32_t n = ct->nchild, *ports = sw->group;
    uint8_t *done = sw->grouped;
    memset(done, 0, n);
    for (uint32_t r = 0; r < n; r++) {
        if (done[r])
            continue;
        uint32_t k = 0;
        for (uint32_t q = r; q < n; q++) {
            if (!done[q] && u->rx_off[q] == u->rx_off[r] && u->rx_len[q] == u->rx_len[r]) {
                ports[k++] = ct->child_port[q];
                done[q] = 1;
            }
        }
        emit_range(sw, ct, u, slot, ports, k, u->buf, u->rx_off[r], u->rx_len[r], 0);
    }
}

/* The fold of members 0..upto of a scan into out (upto < 0: nothing). */
static void scan_prefix(const struct acis_sw *sw, const struct sw_use *u, int upto, uint8_t *out)
{
    size_t ne = u->len / acis_wire_dt_size(u->dtype);
    memcpy(out, u->contrib, u->len);
    for (int r = 1; r <= upto; r++)
        acis_reduce(u->op, u->dtype, out, u->contrib + (size_t)r * stride(sw), ne);
}

/* Scans: member r gets the fold of members 0..r (SCAN) or 0..r-1 (EXSCAN;
 * member 0 only an acknowledgement).  One running fold serves them all. */
static void emit_scan(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u, uint32_t slot)
{
    size_t es = acis_wire_dt_size(u->dtype), ne = u->len / es;
    int ex = u->kind == ACIS_K_EXSCAN;
    memcpy(u->buf, u->contrib, u->len);
    for (uint32_t r = 0; r < ct->nchild; r++) {
        if (r > 0 && !ex) {
            acis_reduce(u->op, u->dtype, u->buf, u->contrib + (size_t)r * stride(sw), ne);
            SWC(sw, elements_reduced) += ne;
        }
        uint32_t len = ex && r == 0 ? 0 : u->rx_len[r];
        emit_range(sw, ct, u, slot, &ct->child_port[r], 1, u->buf, u->rx_off[r], len, 0);
        if (r > 0 && ex) {
            acis_reduce(u->op, u->dtype, u->buf, u->contrib + (size_t)r * stride(sw), ne);
            SWC(sw, elements_reduced) += ne;
        }
    }
}

/* A repeat from a child whose answer was lost: send it again. */
static void answer_again(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u,
                         uint32_t slot, uint32_t rank)
{
    uint32_t port = ct->child_port[rank], len = u->rx_len[rank];
    SWC(sw, repeats)++;
    if (u->abstained) {
        emit_abstained(sw, ct, u, slot, &port, 1);
        return;
    }
    if (!sw_is_scan(u->kind)) {
        emit_range(sw, ct, u, slot, &port, 1, u->buf, u->rx_off[rank], len, 0);
        return;
    }
    int upto = u->kind == ACIS_K_EXSCAN ? (int)rank - 1 : (int)rank;
    uint8_t *tmp = upto >= 0 ? malloc(u->len + 1) : NULL;
    if (upto >= 0 && !tmp)
        return;                                  /* the member will ask again */
    if (tmp)
        scan_prefix(sw, u, upto, tmp);
    emit_range(sw, ct, u, slot, &port, 1, tmp, u->rx_off[rank], upto >= 0 ? len : 0, 0);
    free(tmp);
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

/* The segment's result is in buf (or it was abstained): answer every
 * child, keep the use for repeats and move on. */
static void finish(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot)
{
    struct sw_use *u = &s->u[s->cur];
    if (!sw->up)
        SWC(sw, model_ns) += model_ns(sw, ct, u);   /* the top: the whole trip */
    if (u->abstained) {
        emit_abstained(sw, ct, u, slot, ct->child_port, ct->nchild);
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
    use_reset(&s->u[s->cur], ct->nchild);
}

/* Send what this switch combined of a segment to its parent, asking back
 * the hull of what its children asked for. */
static void send_up(struct acis_sw *sw, const struct sw_ct *ct, struct sw_use *u,
                    uint32_t slot)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t c = 0; c < ct->nchild; c++)
        if (u->rx_len[c]) {
            lo = u->rx_off[c] < lo ? u->rx_off[c] : lo;
            hi = u->rx_off[c] + u->rx_len[c] > hi ? u->rx_off[c] + u->rx_len[c] : hi;
        }
    u->up_off = hi ? lo : 0;
    u->up_len = hi ? hi - lo : 0;
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

/* Every child is in: answer them, or (below the top of the tree) send the
 * combined segment up and answer when the parent does. */
static void complete(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot)
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
        drop_held(sw, ct, u);
    } else if (h->rx_off != u->up_off || h->rx_len != u->up_len ||
               h->payload_len != u->up_len) {
        SWC(sw, drop_range)++;
        return;
    } else if (h->payload_len) {
        memcpy(u->buf + h->rx_off, payload, h->payload_len);
    }
    SWC(sw, link_down)++;
    finish(sw, ct, s, h->slot);
}

/* Fold or place a child's piece into the current use.  A switch below
 * sends a span with zeros where its members placed nothing: or-ed in. */
static int combine(struct acis_sw *sw, struct sw_ct *ct, struct sw_use *u, uint32_t rank,
                   const struct acis_hdr *h, const uint8_t *payload)
{
    if (sw_is_reduction(u->kind)) {
        if (sw_is_scan(u->kind)) {
            uint8_t *c = contrib_of(sw, ct, u, rank);
            if (!c)
                return -1;
            memcpy(c, payload, u->len);
        } else if (acis_wire_order_sensitive(h->op, h->dtype)) {
            return fold_ordered(sw, ct, u, rank, payload);
        } else if (!u->have_first) {
            memcpy(u->buf, payload, u->len);
            u->have_first = 1;
        } else {
            size_t ne = u->len / acis_wire_dt_size(h->dtype);
            acis_reduce(h->op, h->dtype, u->buf, aligned_piece(sw, payload, u->len), ne);
            SWC(sw, elements_reduced) += ne;
        }
    } else if (h->payload_len) {
        uint32_t off = (uint32_t)(h->seg_offset - u->base);
        if (ct->child_rank[rank] == SW_NONE && u->kind != ACIS_K_BCAST &&
            u->kind != ACIS_K_SCATTER) {
            acis_reduce(ACIS_OP_BOR, ACIS_DT_U8, u->buf + off, payload, h->payload_len);
        } else {
            memcpy(u->buf + off, payload, h->payload_len);
            u->placed += h->payload_len;
        }
        u->lo = off < u->lo ? off : u->lo;
        u->hi = off + h->payload_len > u->hi ? off + h->payload_len : u->hi;
    }
    return 0;
}

void sw_cgr_input(struct acis_sw *sw, struct sw_ct *ct, uint32_t rank,
                  const struct acis_hdr *h, const uint8_t *payload)
{
    /* rank: the child index (on a single switch, the member's rank) */
    unsigned kind = ACIS_OPC_KIND(h->opcode), alg = ACIS_OPC_ALG(h->opcode);
    uint8_t round = (h->flags & ACIS_F_ROUND) != 0;
    if (h->slot >= ct->window) {
        SWC(sw, drop_slot)++;
        return;
    }
    struct sw_slot *s = &ct->slots[h->slot];
    struct sw_use *u = &s->u[s->cur], *prev = &s->u[s->cur ^ 1];

    if (prev->done && same_segment(prev, h)) {       /* a repeat of the last one */
        if (prev->bits[rank / 64] >> (rank % 64) & 1)
            answer_again(sw, ct, prev, h->slot, rank);
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
    uint32_t sb = sw_seg_bytes(sw->o.payload, kind, h->dtype);
    uint64_t base = (uint64_t)h->seg_index * sb;
    if (!(base < h->total_len || (h->total_len == 0 && h->seg_index == 0)) ||
        (sw_rooted(kind) && h->root >= ct->size)) {
        SWC(sw, drop_range)++;
        return;
    }
    uint32_t len = (uint32_t)(h->total_len - base < sb ? h->total_len - base : sb);
    if (u->busy && (u->kind != kind || u->alg != alg || u->op != h->op || u->dtype != h->dtype ||
                    u->total != h->total_len || u->round != round ||
                    (sw_rooted(kind) && u->root != h->root))) {
        SWC(sw, drop_mismatch)++;
        return;
    }
    if (u->busy && (u->bits[rank / 64] >> (rank % 64) & 1)) {
        SWC(sw, drop_duplicate)++;              /* say we are alive and waiting */
        if (u->up && u->dups++ % ct->nchild == 0)
            send_up(sw, ct, u, h->slot);        /* the parent's answer may be lost:
                                                   once per round of repeats */
        if (u->up && sw_parent_silent(sw))
            return;     /* not alive for them: the members time out and recover */
        struct acis_hdr r;
        uint32_t port = ct->child_port[rank];
        result_header(sw, ct, u, h->slot, &r);
        r.flags |= ACIS_F_RESULT | ACIS_F_ACK | ACIS_F_PENDING;
        r.seg_offset = u->base;
        sw_emit(sw, &port, 1, &r, NULL, 0);
        SWC(sw, pending)++;
        return;
    }
    int abstain = (h->flags & ACIS_F_ABSTAIN) != 0;
    if ((abstain ? h->payload_len != 0
                 : !piece_ok(ct, kind, alg, rank, h, base, len, u->busy ? u->placed : 0)) ||
        (uint64_t)h->rx_off + h->rx_len > len) {
        SWC(sw, drop_range)++;
        return;
    }
    if (!u->busy) {
        u->busy = 1;
        u->kind = (uint8_t)kind;
        u->alg = (uint8_t)alg;
        u->op = h->op;
        u->dtype = h->dtype;
        u->round = round;
        u->seq = h->seq;
        u->seg = h->seg_index;
        u->root = sw_rooted(kind) ? h->root : 0;
        u->total = h->total_len;
        u->base = base;
        u->len = len;
        if (sw_fabric_row(sw, ct) && !sw_is_reduction(kind))
            memset(u->buf, 0, len);              /* spans are or-ed together */
        if (sw_fabric_row(sw, ct) && sw_is_scan(kind))
            u->abstained = 1;                    /* no prefixes across switches */
    }
    if (abstain && !u->abstained) {
        u->abstained = 1;
        drop_held(sw, ct, u);
    }
    if (!u->abstained && combine(sw, ct, u, rank, h, payload) != 0) {
        SWC(sw, drop_slot)++;                        /* out of memory: it will be repeated */
        return;
    }
    u->rx_off[rank] = h->rx_off;
    u->rx_len[rank] = h->rx_len;
    u->bits[rank / 64] |= 1ull << (rank % 64);
    if (++u->arrived == ct->nchild)
        complete(sw, ct, s, h->slot);
}
