/* input.c -- the switch's collective control module: every packet the
 * quick path (quick.c) leaves is validated here (wire checks, then port,
 * job key, source rank, context and membership) and handed on: control
 * packets to the control plane, data packets to the gather/reduce unit of
 * their communicator row -- from a host, a switch below (a link port) or
 * the one above (ACIS_PORT_UPLINK).  A packet that fails any check is
 * counted by reason and dropped.  With workers (o.threads), a control
 * packet, or a data packet of another worker's row, is handled with
 * every worker paused. */
#include "config.h"

#include "sw.h"

/* An answer of the parent switch to a segment this one sent up. */
static void uplink_data(struct acis_sw *sw, const struct acis_hdr *h, const uint8_t *payload)
{
    struct sw_ct *ct = sw->up ? sw_ct_lookup(sw, h->ctx) : NULL;
    if (!ct || !(h->flags & ACIS_F_RESULT) || h->job_key != sw->jobs[ct->job].key) {
        SWC(sw, drop_foreign)++;
        return;
    }
    sw_cgr_down(sw, ct, h, payload);
}

/* Every packet the quick path leaves: decoded, every check made. */
static void full_input(struct acis_sw *sw, uint32_t port, const void *peer, const uint8_t *pkt,
                       const uint8_t *payload, size_t len)
{
    struct acis_hdr h;
    SWC(sw, packets_in)++;
    SWC(sw, bytes_in) += len;
    int memory = port < sw->o.ports && sw->ports[port].in_use && sw->ports[port].memory;
    if (acis_wire_decode_split(pkt, payload, len, sw->o.payload, memory, &h) != ACIS_WERR_OK) {
        SWC(sw, drop_malformed)++;
        return;
    }
    unsigned kind = ACIS_OPC_KIND(h.opcode);
    if (port == ACIS_PORT_UPLINK)
        sw->asked_ns = 0;                       /* the parent is alive */
    if (kind >= ACIS_K_HELLO) {
        sw_control(sw, port, peer, &h, payload);
        return;
    }
    if (port == ACIS_PORT_UPLINK) {
        uplink_data(sw, &h, payload);
        return;
    }
    if (port >= sw->o.ports || !sw->ports[port].in_use || (h.flags & ACIS_F_RESULT)) {
        SWC(sw, drop_foreign)++;
        return;
    }
    const struct sw_port *p = &sw->ports[port];
    uint32_t job = p->link ? sw_find_job(sw, h.job_key) : p->job;
    if (job == SW_NONE || h.job_key != sw->jobs[job].key ||
        (p->link && !sw_bit(sw->jobs[job].links, port))) {
        SWC(sw, drop_foreign)++;
        return;
    }
    if (h.src != (p->link ? ACIS_NO_RANK : p->rank)) {
        SWC(sw, drop_spoofed)++;
        return;
    }
    struct sw_ct *ct = sw_ct_lookup(sw, h.ctx);
    if (!ct || ct->job != job) {
        SWC(sw, drop_foreign)++;
        return;
    }
    if (!sw_bit(ct->ports, port)) {
        SWC(sw, drop_not_member)++;
        return;
    }
    if (memory && (h.flags & ACIS_F_UNSEALED) && !h.checksum)
        SWC(sw, unsealed)++;                    /* else its CRC was checked: 0 */
    sw_cgr_input(sw, ct, port, &h, payload);
}

/* With workers: the view a packet must be handled on with every worker
 * paused -- view 0 for a valid control packet (it may change any table),
 * its row's worker for a data packet of a row not this worker's -- or
 * NULL when this worker handles it alone (its own row's, or one that
 * only counts a drop here: garbage pauses nobody).  Reads tables only
 * the control plane writes, which it cannot while this worker holds its
 * lock. */
static struct acis_sw *paused_on(struct acis_sw *sw, const uint8_t *pkt,
                                 const uint8_t *payload, size_t len)
{
    struct acis_hdr h;
    if (len < ACIS_HDR_LEN)
        return NULL;
    if (ACIS_OPC_KIND(pkt[5]) >= ACIS_K_HELLO)
        return acis_wire_decode_split(pkt, payload, len, sw->o.payload, 0, &h) == ACIS_WERR_OK
                   ? sw->views[0] : NULL;
    struct sw_ct *ct = sw_ct_lookup(sw, acis_get32(pkt + 24));
    return ct && ct->worker != sw->worker ? sw->views[ct->worker] : NULL;
}

void sw_full_input(struct acis_sw *sw, uint32_t port, const void *peer, const uint8_t *pkt,
                   const uint8_t *payload, size_t len)
{
    struct acis_sw *on = sw->nworkers > 1 ? paused_on(sw, pkt, payload, len) : NULL;
    if (!on) {
        full_input(sw, port, peer, pkt, payload, len);
        return;
    }
    uint32_t n = sw->nworkers;       /* every lock, in order: no two wait on each other */
    pthread_mutex_unlock(&sw->locks[sw->worker]);
    for (uint32_t w = 0; w < n; w++)
        pthread_mutex_lock(&sw->locks[w]);
    if (ACIS_OPC_KIND(pkt[5]) < ACIS_K_HELLO)
        SWC(on, crossed)++;
    full_input(on, port, peer, pkt, payload, len);
    for (uint32_t w = n; w-- > 0;)
        pthread_mutex_unlock(&sw->locks[w]);
    pthread_mutex_lock(&sw->locks[sw->worker]);
}
