/* core.c -- the switch core and its collective control module: build a
 * switch (all its memory at once, layout.c), validate every packet (wire
 * checks, then port, job key, source rank, context and membership), hand
 * control packets to the control plane and data packets to the
 * gather/reduce unit of their communicator row -- from a host, a switch
 * below (a link port) or the one above (ACIS_PORT_UPLINK).  A packet that
 * fails any check is counted by reason and dropped. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sw.h"
#include "util/util.h"

static int range(const char *name, uint64_t v, uint64_t lo, uint64_t hi,
                 char *err, size_t errlen)
{
    if (v >= lo && v <= hi)
        return 0;
    snprintf(err, errlen, "%s must be in %llu..%llu, not %llu", name,
             (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)v);
    return -1;
}

struct acis_sw *acis_sw_create(const struct acis_sw_opts *o,
                               const struct acis_sw_io *io,
                               char *err, size_t errlen)
{
    if (range("ports", o->ports, 1, 65535, err, errlen) ||
        range("tables", o->tables, 1, 65535, err, errlen) ||
        range("payload", o->payload, ACIS_MIN_PAYLOAD, ACIS_MAX_PAYLOAD, err, errlen) ||
        range("slots", o->slots, o->tables, (uint64_t)o->tables * 65535, err, errlen) ||
        range("links", o->links, 0, o->ports, err, errlen))
        return NULL;
    struct acis_sw *sw = calloc(1, sizeof *sw);
    if (!sw)
        goto nomem;
    sw->o = *o;
    sw->io = *io;
    sw->kern = sw_kernels_best();
    sw->quick = sw_quick_best();
    if (sw_layout(NULL, o, NULL, &sw->size, err, errlen) != 0)
        goto fail;
    size_t bytes = sw->size.total - sizeof *sw;
    sw->mem = aligned_alloc(SW_ALIGN, sw_round(bytes));
    if (!sw->mem)
        goto nomem;
    memset(sw->mem, 0, bytes);
    sw_layout(sw, o, sw->mem, &sw->size, err, errlen);
    if (!sw->o.job_rows)              /* a second job always finds a row */
        sw->o.job_rows = o->tables > 1 ? o->tables - (o->tables / 4 ? o->tables / 4 : 1) : 1;
    if (!sw->o.job_ports || sw->o.job_ports > o->ports)
        sw->o.job_ports = o->ports;
    if (getrandom(&sw->boot, sizeof sw->boot, 0) != sizeof sw->boot)
        sw->boot = (uint32_t)acis_now_ns();
    SWC(sw, tables_capacity) = o->tables;
    SWC(sw, slots_capacity) = (uint64_t)sw->window * o->tables;
    SWC(sw, buffer_bytes) = sw->size.pool;
    SWC(sw, state_bytes) = sw->size.total - sw->size.pool;
    return sw;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    acis_sw_destroy(sw);
    return NULL;
}

void acis_sw_destroy(struct acis_sw *sw)
{
    if (!sw)
        return;
    free(sw->mem);
    free(sw);
}

void acis_sw_tick(struct acis_sw *sw, uint64_t now_ns)
{
    if (!sw->up || now_ns - sw->last_tick < 100000000ull)
        return;
    sw->last_tick = now_ns;
    sw_link_tick(sw);
}

void acis_sw_set_parent(struct acis_sw *sw, uint32_t boot)
{
    sw->up = 1;
    sw->boot = boot;
}

uint32_t acis_sw_boot(const struct acis_sw *sw)
{
    return sw->boot;
}

void acis_sw_counters(const struct acis_sw *sw, uint64_t *out)
{
    memcpy(out, sw->c, sizeof sw->c);
}

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
void sw_full_input(struct acis_sw *sw, uint32_t port, const void *peer, const uint8_t *pkt,
                   size_t len)
{
    struct acis_hdr h;
    SWC(sw, packets_in)++;
    SWC(sw, bytes_in) += len;
    if (acis_wire_decode(pkt, len, sw->o.payload, &h) != ACIS_WERR_OK) {
        SWC(sw, drop_malformed)++;
        return;
    }
    unsigned kind = ACIS_OPC_KIND(h.opcode);
    const uint8_t *payload = pkt + ACIS_HDR_LEN;
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
    sw_cgr_input(sw, ct, port, &h, payload);
}

void acis_sw_input(struct acis_sw *sw, uint32_t port, const void *peer,
                   const uint8_t *pkt, size_t len)
{
    sw->quick(sw, port, peer, pkt, len);        /* quick.c, or sw_full_input */
}
