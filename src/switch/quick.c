/* quick.c -- the switch's quick path, read straight from a packet's bytes:
 * a host's next piece of the segment its slot is building already, for a
 * barrier or a reduction that folds in any order (start_use in cgr.c marks
 * such a use quick).  This is the commonest packet there is: all members
 * but the first of every segment send one.
 *
 * Why its few checks are the full path's (core.c, wire.c, cgr.c): the
 * use's first packet passed every one of them.  A packet whose magic,
 * version, opcode, op, type, total length, sequence, segment, round and
 * root equal that packet's (the use keeps them), whose offset and length
 * are the use's segment, and whose context, job key and source rank are
 * its sender's row, job and rank, passes the full path's checks on those
 * fields alike: the opcode and op are valid for the type, the lengths and
 * offsets in range and aligned, the context is the row's.  What is left
 * is the packet's own: its length field, checksum, flags, reserved word,
 * member number, what it asks back, and not being a duplicate.  Anything
 * else -- a first piece, a repeat, an error, a link, a control packet,
 * anything malformed -- returns 0 untouched and takes the full path, which
 * counts and drops what it must.  test/unit/check_quick.c feeds mutated
 * packets to a switch with this path and one without and requires the
 * same answers and counters. */
#include "config.h"

#include <stdint.h>

#include "sw.h"

int sw_quick_input(struct acis_sw *sw, uint32_t port, const uint8_t *pkt, size_t len)
{
    if (len < ACIS_HDR_LEN || port >= sw->o.ports)
        return 0;
    const struct sw_port *p = &sw->ports[port];
    struct sw_ct *ct = sw_ct_lookup(sw, acis_get32(pkt + 24));
    uint32_t slot = acis_get16(pkt + 10);
    if (!p->in_use || p->link || !ct || ct->job != p->job || slot >= ct->window)
        return 0;
    struct sw_slot *s = &ct->slots[slot];
    struct sw_use *u = &s->u[s->cur];
    if (!u->quick || u->abstained || sw_bit(u->bits, port) || !sw_bit(ct->ports, port))
        return 0;
    uint64_t ident = ACIS_WIRE_MAGIC | (uint64_t)ACIS_WIRE_VERSION << 32 |
                     (uint64_t)ACIS_OPC(u->kind, ACIS_ALG_FLAT) << 40 | (uint64_t)u->op << 48 |
                     (uint64_t)u->dtype << 56;
    uint32_t flags = acis_get16(pkt + 8), payload_len = acis_get32(pkt + 12);
    if (acis_get64(pkt) != ident || (flags & ~ACIS_F_KNOWN) ||
        (flags & (ACIS_F_RESULT | ACIS_F_ABSTAIN | ACIS_F_ROUND)) != u->round * ACIS_F_ROUND ||
        payload_len != len - ACIS_HDR_LEN || payload_len != u->len)
        return 0;
    if (acis_get64(pkt + 16) != sw->jobs[p->job].key ||
        acis_get64(pkt + 28) != (u->seq | (uint64_t)p->rank << 32) ||
        (sw_rooted(u->kind) && acis_get32(pkt + 36) != u->root) ||
        acis_get32(pkt + 40) != u->seg || acis_get64(pkt + 48) != u->base ||
        acis_get64(pkt + 56) != u->total)
        return 0;
    uint32_t rx_off = acis_get32(pkt + 64), rx_len = acis_get32(pkt + 68);
    if ((uint64_t)rx_off + rx_len > u->len || acis_get32(pkt + 72) >= ct->size ||
        acis_get32(pkt + 76) != 0 ||
        acis_crc32c_hole(0, pkt, len, ACIS_HDR_CHECKSUM) != acis_get32(pkt + ACIS_HDR_CHECKSUM))
        return 0;
    SWC(sw, packets_in)++;
    SWC(sw, bytes_in) += len;
    SWC(sw, quick)++;
    sw_cgr_take(sw, ct, s, u, slot, port, rx_off, rx_len, pkt + ACIS_HDR_LEN);
    return 1;
}
