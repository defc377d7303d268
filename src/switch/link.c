/* link.c -- a switch's links in a fabric.  Up to the parent go whether a
 * job has ranks here or below (LINK_JOIN / LINK_LEAVE, one message per
 * job, confirmed by the parent and told again until it is: the top of the
 * tree must know a job before its hosts are welcomed), set-up counts
 * (setup.c) and CT_FREE.  Down from the parent come the confirmations,
 * rows to hold (CT_INSTALL) or drop (CT_FREE) and the answers to
 * set-ups (CT_REPLY).  No switch learns where any rank is: it knows which
 * of its ports a job is on, and a set-up's counts per port.  The data
 * plane of links is in cgr.c. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sw.h"

/* A CT_JOIN from the link on port for a job this switch does not know
 * (its table was full when the job's ranks joined): refused, so its
 * members do not wait for an answer that never comes. */
static void unknown_job(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h)
{
    uint8_t p[ACIS_CT_REPLY_LEN] = { 0 };
    struct acis_hdr r;
    sw_reply_header(h, ACIS_K_CT_REPLY, &r);
    r.root = h->root;
    acis_put32(p, ACIS_ST_UNKNOWN_RANK);
    acis_put32(p + 12, sw->o.payload);
    sw_link_send(sw, port, &r, p, sizeof p);
    SWC(sw, tables_refused)++;
}

void sw_link_control(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                     const uint8_t *payload)
{
    unsigned kind = ACIS_OPC_KIND(h->opcode);
    SWC(sw, link_control)++;
    if ((kind == ACIS_K_LINK_JOIN || kind == ACIS_K_LINK_LEAVE) && !(h->flags & ACIS_F_RESULT)) {
        sw_job_moved(sw, port, h, payload);
        return;
    }
    uint32_t j = sw_find_job(sw, h->job_key);
    if (j != SW_NONE && !sw_bit(sw->jobs[j].links, port))
        j = SW_NONE;                             /* not a job of that link */
    if (kind == ACIS_K_CT_REPLY && j != SW_NONE && (h->flags & ACIS_F_RESULT)) {
        sw_setup_confirmed(sw, port, j, h, payload);
    } else if (kind == ACIS_K_CT_JOIN && j != SW_NONE) {
        sw_setup_join(sw, port, j, h, payload);
    } else if (kind == ACIS_K_CT_JOIN) {
        unknown_job(sw, port, h);
    } else if (kind == ACIS_K_CT_FREE && j != SW_NONE) {
        sw_ct_free_request(sw, port, j, h);
    } else {
        SWC(sw, drop_foreign)++;
    }
}

void sw_uplink_control(struct acis_sw *sw, const struct acis_hdr *h, const uint8_t *payload)
{
    unsigned kind = ACIS_OPC_KIND(h->opcode);
    uint32_t j = sw->up ? sw_find_job(sw, h->job_key) : SW_NONE;
    if (j == SW_NONE || !(h->flags & ACIS_F_RESULT || kind == ACIS_K_CT_INSTALL ||
                          kind == ACIS_K_CT_FREE)) {
        SWC(sw, drop_foreign)++;
        return;
    }
    SWC(sw, link_control)++;
    if (kind == ACIS_K_LINK_JOIN || kind == ACIS_K_LINK_LEAVE)
        sw_job_told(sw, h);
    else if (kind == ACIS_K_CT_INSTALL)
        sw_setup_install(sw, j, h, payload);
    else if (kind == ACIS_K_CT_FREE)
        sw_ct_free_request(sw, ACIS_PORT_UPLINK, j, h);
    else if (kind == ACIS_K_CT_REPLY)
        sw_setup_reply_down(sw, j, h, payload);
    else
        SWC(sw, drop_foreign)++;
}
