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

void sw_link_send(struct acis_sw *sw, uint32_t port, struct acis_hdr *h,
                  const uint8_t *payload, size_t len)
{
    sw_emit(sw, &port, 1, h, payload, len);
    SWC(sw, link_control)++;
}

void sw_link_up(struct acis_sw *sw, unsigned kind, const struct acis_hdr *h,
                const uint8_t *payload, size_t len)
{
    struct acis_hdr r = *h;
    r.opcode = ACIS_OPC(kind, ACIS_ALG_FLAT);
    if (kind != ACIS_K_CT_REPLY)
        r.flags = 0;
    sw_link_send(sw, ACIS_PORT_UPLINK, &r, payload, len);
}

void sw_link_free(struct acis_sw *sw, uint32_t row)
{
    const struct sw_ct *ct = &sw->cts[row];
    for (uint32_t q = 0; ct->links && q < sw->o.ports; q++) {
        if (!sw_bit(ct->ports, q) || !sw->ports[q].link)
            continue;
        struct acis_hdr r = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_CT_FREE, ACIS_ALG_FLAT),
            .job_key = sw->jobs[ct->job].key, .ctx = sw_ct_ctx(sw, row), .src = ACIS_NO_RANK,
        };
        sw_link_send(sw, q, &r, NULL, 0);
    }
}

/* Tell the parent whether job j is here or below (repeated by the tick
 * until the parent's confirmation matches). */
void sw_link_job(struct acis_sw *sw, uint32_t j)
{
    struct sw_job *job = &sw->jobs[j];
    if (!sw->up)
        return;
    uint8_t p[ACIS_LINK_JOIN_LEN];
    struct acis_hdr h = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .job_key = job->key, .src = ACIS_NO_RANK };
    acis_put32(p, job->size);
    job->asked |= (uint8_t)sw_job_present(job);
    if (sw_job_present(job))
        sw_link_up(sw, ACIS_K_LINK_JOIN, &h, p, sizeof p);
    else
        sw_link_up(sw, ACIS_K_LINK_LEAVE, &h, NULL, 0);
}

/* Jobs whose presence the parent has not confirmed are told again: one
 * message per job, never per rank. */
void sw_link_tick(struct acis_sw *sw)
{
    for (uint32_t j = 0; j < sw->size.jobs; j++) {
        const struct sw_job *job = &sw->jobs[j];
        int here = sw_job_present(job);
        if (job->in_use && ((here && !job->told) || (!here && job->asked)))
            sw_link_job(sw, j);
    }
}

/* Confirm to the link on port the job's presence (kind), or refuse it. */
static void confirm(struct acis_sw *sw, uint32_t port, unsigned kind, uint64_t key,
                    uint32_t world, int error)
{
    uint8_t p[ACIS_LINK_JOIN_LEN];
    struct acis_hdr h = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT),
                          .flags = (uint16_t)(ACIS_F_RESULT | (error ? ACIS_F_ERROR : 0)),
                          .job_key = key, .src = ACIS_NO_RANK };
    acis_put32(p, world);
    sw_link_send(sw, port, &h, p, kind == ACIS_K_LINK_JOIN ? sizeof p : 0);
}

/* The top knows job j (or refused it): the hosts and links that waited
 * for that hear it. */
static void settle(struct acis_sw *sw, uint32_t j, int refused)
{
    struct sw_job *job = &sw->jobs[j];
    for (uint32_t q = 0; q < sw->o.ports; q++) {
        const struct sw_port *sp = &sw->ports[q];
        if (sp->in_use && !sp->link && sp->waiting && sp->job == j) {
            if (refused)
                sw_refuse_host(sw, q, ACIS_ST_NO_PORT);
            else
                sw_welcome_host(sw, q);
        } else if (sp->in_use && sp->link && sw_bit(job->unconfirmed, q)) {
            sw_bit_clear(job->unconfirmed, q);
            confirm(sw, q, ACIS_K_LINK_JOIN, job->key, job->size, refused);
        }
    }
    if (refused) {                               /* the links below drop it too */
        memset(job->links, 0, sw->words * sizeof(uint64_t));
        job->nlinks = 0;
    }
}

/* LINK_JOIN / LINK_LEAVE from the switch on port: job h->job_key has
 * ranks below it, or no longer. */
static void job_moved(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                      const uint8_t *payload)
{
    int join = ACIS_OPC_KIND(h->opcode) == ACIS_K_LINK_JOIN;
    uint32_t world = join ? acis_get32(payload) : 0;
    uint32_t j = sw_find_job(sw, h->job_key);
    if (!join) {
        if (j != SW_NONE && sw_bit(sw->jobs[j].links, port)) {
            sw_bit_clear(sw->jobs[j].links, port);
            sw_bit_clear(sw->jobs[j].unconfirmed, port);
            sw->jobs[j].nlinks--;
        }
        confirm(sw, port, ACIS_K_LINK_LEAVE, h->job_key, 0, 0);
        if (j != SW_NONE)
            sw_job_done(sw, j);
        return;
    }
    if (j == SW_NONE)
        j = sw_job_new(sw, h->job_key, world);
    if (j == SW_NONE || sw->jobs[j].size != world) {
        SWC(sw, drop_foreign)++;                 /* no room, or another size */
        confirm(sw, port, ACIS_K_LINK_JOIN, h->job_key, world, 1);
        if (j != SW_NONE)
            sw_job_done(sw, j);
        return;
    }
    struct sw_job *job = &sw->jobs[j];
    int was = sw_job_present(job);
    if (!sw_bit(job->links, port)) {
        sw_bit_set(job->links, port);
        job->nlinks++;
    }
    if (job->told) {
        confirm(sw, port, ACIS_K_LINK_JOIN, job->key, job->size, 0);
        return;
    }
    sw_bit_set(job->unconfirmed, port);
    if (!was)
        sw_link_job(sw, j);                      /* (else the tick tells again) */
}

/* The parent confirms (or refuses) what this switch told of a job. */
static void told(struct acis_sw *sw, const struct acis_hdr *h)
{
    uint32_t j = sw_find_job(sw, h->job_key);
    if (j == SW_NONE)
        return;
    struct sw_job *job = &sw->jobs[j];
    int join = ACIS_OPC_KIND(h->opcode) == ACIS_K_LINK_JOIN;
    if (join != sw_job_present(job))
        return;                                  /* since changed: told again */
    if (join && (h->flags & ACIS_F_ERROR)) {
        job->told = 0;
        settle(sw, j, 1);
    } else if (join) {
        job->told = 1;
        settle(sw, j, 0);
    } else {
        job->told = job->asked = 0;
    }
    sw_job_done(sw, j);
}

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
        job_moved(sw, port, h, payload);
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
        told(sw, h);
    else if (kind == ACIS_K_CT_INSTALL)
        sw_setup_install(sw, j, h, payload);
    else if (kind == ACIS_K_CT_FREE)
        sw_ct_free_request(sw, ACIS_PORT_UPLINK, j, h);
    else if (kind == ACIS_K_CT_REPLY)
        sw_setup_reply_down(sw, j, h, payload);
    else
        SWC(sw, drop_foreign)++;
}
