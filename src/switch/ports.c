/* ports.c -- a host's port: its WELCOME (status, the switch's sizes and
 * boot id), now or once its job is known at the top of the tree, or its
 * refusal; and giving a port back. */
#include "config.h"

#include "sw.h"

void sw_welcome(struct acis_sw *sw, uint32_t port, const void *peer,
                    const struct acis_hdr *h, uint32_t status)
{
    uint8_t p[ACIS_WELCOME_LEN];
    struct acis_hdr r;
    sw_reply_header(h, ACIS_K_WELCOME, &r);
    acis_put32(p, status);
    acis_put32(p + 4, port == ACIS_PORT_SERVICE ? 0 : port);
    acis_put32(p + 8, sw->o.payload);
    acis_put32(p + 12, sw->window);
    acis_put32(p + 16, sw->o.tables);
    acis_put32(p + 20, sw->o.ports);
    acis_put32(p + 24, sw->o.credits);
    acis_put32(p + 28, sw->boot);
    sw_answer(sw, port, peer, &r, p, sizeof p);
}

void sw_welcome_host(struct acis_sw *sw, uint32_t port)
{
    struct sw_port *sp = &sw->ports[port];
    struct acis_hdr h = { .job_key = sw->jobs[sp->job].key, .seq = sp->hello_seq,
                          .src = sp->rank };
    sp->waiting = 0;
    sw_welcome(sw, port, NULL, &h, ACIS_ST_OK);
}

void sw_port_gone(struct acis_sw *sw, uint32_t port)
{
    struct sw_port *sp = &sw->ports[port];
    sp->in_use = 0;
    sp->held = 1;                        /* until sw_job_release */
    SWC(sw, ports_in_use)--;
    sw->io.port_close(sw->io.ctx, port);
    sw->jobs[sp->job].hosts--;
}

void sw_refuse_host(struct acis_sw *sw, uint32_t port, uint32_t status)
{
    struct sw_port *sp = &sw->ports[port];
    struct acis_hdr h = { .job_key = sw->jobs[sp->job].key, .seq = sp->hello_seq,
                          .src = sp->rank };
    sw_welcome(sw, port, NULL, &h, status);
    sw_port_gone(sw, port);
}

