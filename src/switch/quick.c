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
 * counts and drops what it must.  check_switch's quick_same_as_full feeds
 * mutated packets to a switch with this path and one without and
 * requires the same answers and counters. */
#include "config.h"

#include <stdint.h>

#include "sw.h"

int sw_quick_input(struct acis_sw *sw, uint32_t port, const uint8_t *pkt, size_t len)
{
    if (len < ACIS_HDR_LEN || port >= sw->o.ports)
        return 0;
    const struct sw_port *p = &sw->ports[port];
    if (!p->in_use || p->link)
        return 0;
    struct sw_ct *ct = sw_ct_lookup(sw, acis_get32(pkt + 24));
    uint32_t slot = acis_get16(pkt + 10);
    if (!ct || ct->job != p->job || slot >= ct->window)
        return 0;
    struct sw_use *u = &ct->slots[slot].u[ct->slots[slot].cur];
    uint32_t flags = acis_get16(pkt + 8);
    uint32_t rx_off = acis_get32(pkt + 64), rx_len = acis_get32(pkt + 68);
    if (!u->quick || u->abstained || acis_get32(pkt) != ACIS_WIRE_MAGIC ||
        pkt[4] != ACIS_WIRE_VERSION || pkt[5] != ACIS_OPC(u->kind, ACIS_ALG_FLAT) ||
        pkt[6] != u->op || pkt[7] != u->dtype || (flags & ~ACIS_F_KNOWN) ||
        (flags & (ACIS_F_RESULT | ACIS_F_ABSTAIN | ACIS_F_ROUND)) !=
            (u->round ? ACIS_F_ROUND : 0u) ||
        acis_get32(pkt + 12) != len - ACIS_HDR_LEN || len - ACIS_HDR_LEN != u->len ||
        acis_get64(pkt + 16) != sw->jobs[p->job].key || acis_get32(pkt + 28) != u->seq ||
        acis_get32(pkt + 32) != p->rank ||
        (sw_rooted(u->kind) && acis_get32(pkt + 36) != u->root) ||
        acis_get32(pkt + 40) != u->seg || acis_get64(pkt + 48) != u->base ||
        acis_get64(pkt + 56) != u->total || (uint64_t)rx_off + rx_len > u->len ||
        acis_get32(pkt + 72) >= ct->size || acis_get32(pkt + 76) != 0 ||
        !sw_bit(ct->ports, port) || sw_bit(u->bits, port) ||
        acis_crc32c_hole(0, pkt, len, ACIS_HDR_CHECKSUM) != acis_get32(pkt + ACIS_HDR_CHECKSUM))
        return 0;
    SWC(sw, packets_in)++;
    SWC(sw, bytes_in) += len;
    SWC(sw, quick)++;
    sw_cgr_take(sw, ct, slot, port, rx_off, rx_len, pkt + ACIS_HDR_LEN);
    return 1;
}
