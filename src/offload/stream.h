/* stream.h -- the packetizer: one collective as a stream of segments of its
 * result space.  For every segment a member sends exactly one packet (its
 * piece of the data, possibly empty, and the range it wants back) and
 * receives exactly one (that range, or an acknowledgement).  Segment k uses
 * aggregation slot (pos0 + k) mod window of its communicator's row, and may
 * be sent only when that slot is free, i.e. when the member has the answer
 * of the segment that used it before: flow control without credits.
 *
 * No MPI here: the switch unit tests drive simulated hosts with it. */
#ifndef ACIS_STREAM_H
#define ACIS_STREAM_H

#include <stdint.h>

#include "acis/wire.h"

/* The slot window of one communicator row, shared by its collectives.
 * For each slot with a segment out: which collective and segment, when it
 * was last sent and how often, for retransmission. */
struct acis_window {
    uint32_t size;            /* slots of the row */
    uint64_t next_pos;        /* next stream position to hand out */
    uint32_t busy_count;      /* slots with a segment out */
    uint8_t *busy;            /* size flags: segment sent, answer pending */
    struct acis_stream **owner;
    uint32_t *seg;
    uint64_t *sent_ns;
    uint8_t *tries;
};

/* Allocate/free a window of size slots; 0 or -1. */
int acis_window_init(struct acis_window *w, uint32_t size);
void acis_window_free(struct acis_window *w);

struct acis_stream {
    /* what every packet of the collective carries */
    uint8_t kind, alg, op, dtype;
    uint32_t root, ctx, seq, src;
    uint32_t member;          /* this member's rank in the communicator */
    uint64_t job_key;
    uint64_t total;           /* bytes of the result space */
    uint32_t seg_bytes, nseg;
    uint64_t pos0;            /* stream position of segment 0 */
    uint8_t lost;             /* started after this member lost the switch
                                 (ACIS_F_LOST on every packet) */
    uint8_t inplace;          /* answers overwrite the piece (in-place
                                 reduction) */
    uint8_t abstain;          /* this member has no buffers: its packets
                                 carry ACIS_F_ABSTAIN and no data */
    uint8_t refused;          /* an answer said a member abstained: every
                                 member redoes a blocking collective in
                                 MPICH and fails a nonblocking one */
    /* this member's piece and wanted range, in result-space bytes */
    const uint8_t *src_buf;
    uint64_t src_off, src_len;
    uint8_t *dst_buf;
    uint64_t dst_off, dst_len;
    /* the block the root of a gather or scatter copies itself: a segment
     * inside it carries no piece and asks for nothing; an allgather
     * member's (own_sends): such a segment carries the piece (the others
     * need it) and asks for nothing */
    uint64_t own_off, own_len;
    uint8_t own_sends;
    /* progress */
    uint32_t next;            /* next segment to send */
    uint32_t answered;        /* segments answered (which ones: the window
                                 knows, see acis_stream_has) */
};

/* Segment size for a collective kind: whole elements for reductions;
 * for scans on a row whose switch keeps every piece of a segment in one
 * buffer (ACIS_CT_SCAN_SPLIT: split_members is the communicator's size,
 * else 0), acis_scan_seg_bytes. */
uint32_t acis_seg_bytes(uint32_t max_payload, unsigned kind, unsigned dtype,
                        uint32_t split_members);

/* 1 if a result space of total bytes, cut into segments of seg_bytes,
 * fits one stream: segment indexes are 32-bit on the wire, so at most
 * UINT32_MAX segments (256 GiB at the smallest payload, 64 bytes). */
int acis_stream_fits(uint64_t total, uint32_t seg_bytes);

/* Fill s from its identity fields, total, seg_bytes, the piece and wanted
 * range (set by the caller before), and take positions from w.  Needs no
 * memory: a collective of any length (that fits, above), once its
 * communicator has a window, cannot fail to start on one member alone. */
void acis_stream_start(struct acis_stream *s, struct acis_window *w);

/* 1 if segment s->next may be sent now (its slot is free). */
int acis_stream_can_send(const struct acis_stream *s, const struct acis_window *w);

/* Build the packet of segment s->next into hdr (ACIS_HDR_LEN bytes; the
 * device seals it) and point *payload and *len at its data; marks the slot busy
 * (sent at now) and advances s->next. */
void acis_stream_next(struct acis_stream *s, struct acis_window *w, uint8_t *hdr,
                      const uint8_t **payload, uint32_t *len, uint64_t now);

/* The same, the packet as a decoded header: for a channel that takes
 * headers as they are (the short path, short.c). */
void acis_stream_next_hdr(struct acis_stream *s, struct acis_window *w, struct acis_hdr *h,
                          const uint8_t **payload, uint32_t *len, uint64_t now);

/* The packet of segment k as a decoded header, nothing marked (a
 * template for acis_stream_next_like). */
void acis_stream_packet_hdr(const struct acis_stream *s, const struct acis_window *w, uint32_t k,
                            struct acis_hdr *h, const uint8_t **payload, uint32_t *len);

/* acis_stream_start and acis_stream_next_hdr at once, for a stream of
 * one segment (total at most seg_bytes) that differs from the one h was
 * built for (acis_stream_packet_hdr, segment 0) only in its sequence
 * number and position: h gets s's sequence number, slot and round, and
 * the slot is marked busy as there.  The payload is the caller's to
 * find.  Inline, with the marking: the short path's every call. */
static inline void acis_window_mark_sent(struct acis_window *w, struct acis_stream *s,
                                         uint32_t k, uint32_t slot, uint64_t now)
{
    w->busy[slot] = 1;
    w->owner[slot] = s;
    w->seg[slot] = k;
    w->sent_ns[slot] = now;
    w->tries[slot] = 0;
    w->busy_count++;
}
static inline void acis_stream_start_like(struct acis_stream *s, struct acis_window *w,
                                          struct acis_hdr *h, uint64_t now)
{
    uint64_t pos = w->next_pos++;
    uint32_t slot = (uint32_t)(pos % w->size);
    s->nseg = 1;
    s->pos0 = pos;
    s->next = 1;
    s->answered = 0;
    s->refused = 0;
    h->seq = s->seq;
    h->slot = (uint16_t)slot;
    h->flags = (uint16_t)((h->flags & ~ACIS_F_ROUND) | ((pos / w->size) & 1 ? ACIS_F_ROUND : 0));
    acis_window_mark_sent(w, s, 0, slot, now);
}

/* Build the packet of segment k (any k < nseg) without marking anything
 * and without its checksum (0; seal it before sending): for copies kept
 * for recovery, and for other members recovering. */
void acis_stream_packet(const struct acis_stream *s, const struct acis_window *w, uint32_t k,
                        uint8_t *hdr, const uint8_t **payload, uint32_t *len);

/* 1 if segment k has its answer: it was sent and its slot no longer waits
 * for it.  Only segments [next - size, next) can be unanswered (segment k
 * is sent once k - size, on the same slot, is answered), so the window's
 * slots are the answered flags. */
static inline int acis_stream_has(const struct acis_stream *s, const struct acis_window *w,
                                  uint32_t k)
{
    uint32_t slot = (uint32_t)((s->pos0 + k) % w->size);
    return k < s->next && !(w->busy[slot] && w->owner[slot] == s && w->seg[slot] == k);
}

/* If the segment out on slot has waited rto_ns << tries (tries capped at
 * 6) since it was last sent, build it again as above, note the new send
 * and return 1; else 0. */
int acis_window_resend(struct acis_window *w, uint32_t slot, uint64_t now, uint64_t rto_ns,
                       uint8_t *hdr, const uint8_t **payload, uint32_t *len);

/* Take an answer for this stream (decoded, same ctx and seq).  Copies the
 * data to its place (the answer may cover more of the segment than this
 * member asked: a switch multicasts one range to every member that asked
 * for bytes) and frees the slot.  Returns 0, 1 for a "pending"
 * notice (the switch is alive, the segment waits), -2 if the switch
 * answered the waiting segment ERROR without ABSTAIN (it cannot serve it:
 * the members' packets of it disagree; the slot is kept), or -1 if the
 * packet does not fit what was asked (a duplicate, wrong range...). */
int acis_stream_answer(struct acis_stream *s, struct acis_window *w,
                       const struct acis_hdr *h, const uint8_t *payload);

/* The same for a stream started with acis_stream_start_like, whose one
 * packet went to a switch that answers it in place (acis_dev_post): how
 * says what the answer is -- ACIS_TAKE_DATA, len bytes of the result
 * space from byte off; ACIS_TAKE_FAILED, the switch could not serve it;
 * ACIS_TAKE_ABSTAINED, a member abstained (s->refused is set, nothing is
 * written).  The answer is that packet's own, read where the switch
 * published it for this post, so none of acis_stream_answer()'s checks
 * that it belongs here is needed but that the slot still waits for it;
 * what it brings must lie in what s asked for.  0, or -1 (the slot is
 * kept then). */
enum { ACIS_TAKE_DATA, ACIS_TAKE_FAILED, ACIS_TAKE_ABSTAINED };
int acis_stream_take(struct acis_stream *s, struct acis_window *w, int how,
                     const uint8_t *data, uint64_t off, uint32_t len);

/* Give back segment k's slot if it still waits for k's answer (the
 * answer will not come: the switch refused the packet). */
void acis_stream_release(const struct acis_stream *s, struct acis_window *w, uint32_t k);

static inline int acis_stream_finished(const struct acis_stream *s)
{
    return s->answered == s->nseg;
}

#endif
