/* quick.c -- the switch's quick path, read straight from a packet's bytes:
 * a host's next piece of the segment its slot is building already, for a
 * barrier or a reduction that folds in any order (start_use in cgr.c marks
 * such a use quick), and the first piece of the slot's next segment when
 * it has the last one's shape.  These are the commonest packets there
 * are: every member's of a repeated small collective.
 *
 * Why its few checks are the full path's (input.c, wire.c, cgr.c): the
 * use's first packet passed every one of them, and start_use kept its
 * header, as sent, in the slot (sw_slot.tmpl) when it was whole.  A packet
 * whose header equals that one in every byte but its own fields (source
 * rank, checksum, what it asks back, member number) has the same magic,
 * version, opcode, op, type, flags, lengths, offsets, job key, context,
 * sequence, segment, round, root and reserved word, so passes the full
 * path's checks on them alike: the opcode and op are valid for the type,
 * the lengths and offsets in range and aligned, the context is the row's,
 * the job key its job's.  What is left is checked here: the packet's
 * length, its checksum, its source rank being its port's, its member
 * number, what it asks back, and not being a duplicate.  The next
 * segment's first piece may differ from the kept header in its sequence
 * number and round bit too: the full path takes it as a new segment when
 * the round bit is flipped, the number newer, the abstain bit clear and
 * the use idle after a done quick one (sw_cgr_renew then starts the use
 * as start_use would).  Anything else -- another first piece, a repeat,
 * an error, a link, a control packet, anything malformed -- goes
 * untouched to the full path (input.c, sw_full_input), which counts and
 * drops what it must.  test/unit/check_quick.c feeds mutated and forged
 * packets to a switch with this path and one without and requires the
 * same answers and counters.
 *
 * With SSE4.2 the header's CRC-32C runs in line; sw_quick_best picks that
 * build when the CPU has it, as crc32c.c does for its own. */
#include "config.h"

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sw.h"

#define WORDS (ACIS_HDR_LEN / 8)

/* The header bytes a packet shares with the use's first: all but the
 * sender's own fields, which are checked one by one below.  The first
 * packet of the slot's next segment of the same shape (renewed) differs
 * from the last segment's first in its sequence number and round bit
 * too. */
#define FF4 0xff, 0xff, 0xff, 0xff
#define ZERO4 0, 0, 0, 0
union hdr_mask {
    uint8_t b[ACIS_HDR_LEN];
    uint64_t w[WORDS];
    _Alignas(16) uint8_t align;
};
static const union hdr_mask shared = { .b = {
    FF4, FF4, FF4, FF4, FF4, FF4, FF4, FF4,     /*  0: magic .. sequence */
    ZERO4, FF4,                                 /* 32: source rank; root */
    FF4, ZERO4,                                 /* 40: segment; checksum */
    FF4, FF4, FF4, FF4,                         /* 48: offset, total length */
    ZERO4, ZERO4,                               /* 64: what it asks back */
    ZERO4, FF4,                                 /* 72: member; reserved */
} };
static const union hdr_mask renewed = { .b = {
    FF4, FF4,                                   /*  0: magic .. dtype */
    0xff & ~ACIS_F_ROUND, 0xff, 0xff, 0xff,     /*  8: flags but round; slot */
    FF4, FF4, FF4, FF4,                         /* 12: payload length, job key, context */
    ZERO4,                                      /* 28: sequence */
    ZERO4, FF4,                                 /* 32: source rank; root */
    FF4, ZERO4,                                 /* 40: segment; checksum */
    FF4, FF4, FF4, FF4,                         /* 48: offset, total length */
    ZERO4, ZERO4,                               /* 64: what it asks back */
    ZERO4, FF4,                                 /* 72: member; reserved */
} };
_Static_assert(ACIS_F_ROUND < 0x100 && ACIS_F_ABSTAIN < 0x100 && ACIS_F_UNSEALED < 0x100,
               "the round, abstain and unsealed bits are in the flags' first byte");

/* Does the header at pkt differ from t in the bytes of mask m? */
static SW_ALWAYS_INLINE int differs(const uint8_t *pkt, const uint64_t *t,
                                    const union hdr_mask *m)
{
#if defined(__SSE2__)
    __m128i d = _mm_setzero_si128();
#pragma GCC unroll 5
    for (int i = 0; i < ACIS_HDR_LEN; i += 16) {
        const void *a = pkt + i, *b = (const uint8_t *)t + i, *k = m->b + i;
        __m128i x = _mm_xor_si128(_mm_loadu_si128(a), _mm_loadu_si128(b));
        d = _mm_or_si128(d, _mm_and_si128(x, _mm_load_si128(k)));
    }
    return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) != 0xffff;
#else
    uint64_t d = 0;
    for (int i = 0; i < WORDS; i++) {
        uint64_t w;
        memcpy(&w, pkt + 8 * i, sizeof w);
        d |= (w ^ t[i]) & m->w[i];
    }
    return d != 0;
#endif
}

/* A packet's checksum (len bytes in all: the header at pkt, the rest at
 * payload), to compare with the one it carries. */
typedef uint32_t quick_crc(const uint8_t *pkt, const uint8_t *payload, size_t len);

static uint32_t crc_any(const uint8_t *pkt, const uint8_t *payload, size_t len)
{
    return acis_crc32c_hole2(0, pkt, ACIS_HDR_LEN, ACIS_HDR_CHECKSUM, payload,
                             len - ACIS_HDR_LEN);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same in line: the header's words, the checksum's bytes read as
 * zero, then a payload of up to 15 whole words (any other goes to
 * crc32c.c). */
__attribute__((target("sse4.2")))
static inline uint32_t crc_hw(const uint8_t *pkt, const uint8_t *payload, size_t len)
{
    uint64_t c = 0xffffffffu, v;
#pragma GCC unroll 10
    for (int i = 0; i < WORDS; i++) {
        memcpy(&v, pkt + 8 * i, sizeof v);
        if (i == ACIS_HDR_CHECKSUM / 8)
            v &= ~(0xffffffffull << 8 * (ACIS_HDR_CHECKSUM % 8));
        c = __builtin_ia32_crc32di(c, v);
    }
    const uint8_t *p = payload;
    size_t n = len - ACIS_HDR_LEN;
    if (n & ~(size_t)0x78)              /* not whole words, or over 15 of them */
        return acis_crc32c(~(uint32_t)c, p, n);
    for (const uint8_t *end = p + n; p != end; p += 8) {
        memcpy(&v, p, sizeof v);
        c = __builtin_ia32_crc32di(c, v);
    }
    return ~(uint32_t)c;
}
#endif

static SW_ALWAYS_INLINE void quick(struct acis_sw *sw, uint32_t port, const void *peer,
                                  const uint8_t *pkt, const uint8_t *payload, size_t len,
                                  quick_crc *crc)
{
    if (len < ACIS_HDR_LEN || port >= sw->o.ports)
        goto full;
    const struct sw_port *p = &sw->ports[port];
    struct sw_ct *ct = sw_ct_lookup(sw, acis_get32(pkt + 24));
    uint32_t slot = acis_get16(pkt + 10);
    if (!p->in_use || p->link || !ct || ct->job != p->job || slot >= ct->window ||
        ct->worker != sw->worker)         /* another worker's row: input.c pauses it */
        goto full;
    struct sw_slot *s = &ct->slots[slot];
    struct sw_use *u = &s->u[s->cur], *prev = &s->u[s->cur ^ 1];
    int first = !u->quick;
    if (first) {                /* the slot's next segment, shaped as its last? */
        if (u->busy || !prev->done || !prev->quick || sw_fabric_row(sw, ct) ||
            len != ACIS_HDR_LEN + (size_t)prev->len || differs(pkt, s->tmpl, &renewed) ||
            !((pkt[8] ^ ((const uint8_t *)s->tmpl)[8]) & ACIS_F_ROUND) ||
            (pkt[8] & ACIS_F_ABSTAIN) ||     /* the last one's first may have */
            (int32_t)(acis_get32(pkt + 28) - prev->seq) <= 0)
            goto full;
        u = prev;               /* its length and elements, until it starts */
    } else if (u->abstained || sw_bit(u->bits, port) || len != ACIS_HDR_LEN + (size_t)u->len ||
               differs(pkt, s->tmpl, &shared)) {
        goto full;
    }
    uint32_t rx_off = acis_get32(pkt + 64), rx_len = acis_get32(pkt + 68);
    if (!sw_bit(ct->ports, port) || (u->ne && (uintptr_t)payload % _Alignof(max_align_t)) ||
        acis_get64(pkt + 16) != sw->jobs[p->job].key || acis_get32(pkt + 32) != p->rank ||
        (uint64_t)rx_off + rx_len > u->len || acis_get32(pkt + 72) >= ct->size)
        goto full;
    uint32_t sum = acis_get32(pkt + ACIS_HDR_CHECKSUM);
    if (sum || !p->memory || !(pkt[8] & ACIS_F_UNSEALED)) {     /* sealed: a sum first */
        if (crc(pkt, payload, len) != sum)
            goto full;
    } else {
        SWC(sw, unsealed)++;                    /* loopback, offered: memory, not a wire */
    }
    SWC(sw, packets_in)++;
    SWC(sw, bytes_in) += len;
    SWC(sw, quick)++;
    if (first) {
        u = sw_cgr_renew(s, pkt, payload);
        sw_cgr_want(u, port, rx_off, rx_len);
    } else {
        sw_cgr_want(u, port, rx_off, rx_len);  /* before the fold: fewer live */
        if (u->ne) {
            sw->kern[u->dtype](u->op, u->buf, payload, u->ne);
            SWC(sw, elements_reduced) += u->ne;
        }
    }
    sw_cgr_arrive(sw, ct, s, u, slot, port);
    return;
full:
    sw_full_input(sw, port, peer, pkt, payload, len);
}

static void quick_any(struct acis_sw *sw, uint32_t port, const void *peer, const uint8_t *pkt,
                      const uint8_t *payload, size_t len)
{
    quick(sw, port, peer, pkt, payload, len, crc_any);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2")))
static void quick_hw(struct acis_sw *sw, uint32_t port, const void *peer, const uint8_t *pkt,
                     const uint8_t *payload, size_t len)
{
    quick(sw, port, peer, pkt, payload, len, crc_hw);
}
#endif

sw_quick_fn *sw_quick_best(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        return quick_hw;
#endif
    return quick_any;
}
