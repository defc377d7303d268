/* control.c -- the switch's control plane: hosts join (HELLO: a port of
 * their job), communicator members set rows up (CT_JOIN, setup.c) and the
 * communicator's rank 0 frees them (CT_FREE, idempotent so a repeated
 * request gets the same answer), anyone may read the counters
 * (STATS_REQ), and hosts leave (BYE; the job's rows go with its last
 * port).  In a fabric, a job's presence and set-ups are told to the
 * parent and rows are claimed at the top of the tree (link.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sw.h"

#define MAX_WORLD (1u << 24)

/* Whether job j (SW_NONE: a new one) may take port p: a port a host left
 * stays its job's while that job lives (sw_port.held). */
static int port_free(const struct acis_sw *sw, uint32_t p, uint32_t j)
{
    const struct sw_port *sp = &sw->ports[p];
    return !sp->in_use && (!sp->held || sp->job == j);
}

/* A switch below asks for a link port (a retry gets the same one); only
 * as many as --links allows, and only to a switch whose packets and table
 * rows, if it tells them (world_size, the flags' high half), are this
 * one's: a fabric's rows must fit every switch of theirs alike.  A refusal
 * (JOB_MISMATCH) takes no port. */
static void link_hello(struct acis_sw *sw, const void *peer, const struct acis_hdr *h,
                       const uint8_t *payload)
{
    uint32_t p, pl = acis_get32(payload), rows = acis_get32(payload + 4) >> 16;
    if ((pl && pl != sw->o.payload) || (rows && rows != sw->o.tables)) {
        sw_welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_JOB_MISMATCH);
        return;
    }
    for (p = 0; p < sw->o.ports; p++)
        if (sw->ports[p].in_use && sw->ports[p].link && sw->ports[p].rank == h->src) {
            sw_welcome(sw, p, peer, h, ACIS_ST_OK);
            return;
        }
    for (p = 0; p < sw->o.ports && !port_free(sw, p, SW_NONE); p++)
        ;
    if (p == sw->o.ports || sw->nlinks >= sw->o.links ||
        sw->io.port_open(sw->io.ctx, p, peer) != 0) {
        sw_welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_NO_PORT);
        return;
    }
    sw->ports[p] = (struct sw_port){ .in_use = 1, .link = 1, .rank = h->src,
                                     .lidx = sw->nlinks++ };
    if (sw->o.verbose)
        fprintf(stderr, "acis-switch: switch %08x linked on port %u\n", h->src, p);
    sw_welcome(sw, p, peer, h, ACIS_ST_OK);
}

/* The port rank of job j has here already (a retry), SW_NONE if none.
 * The scan stops once it has passed all of the job's ports (jobs[j].hosts
 * of them): a job alone has ports 0 .. hosts-1, so a job's set-up is not
 * hosts times the switch's ports. */
static uint32_t port_of(const struct acis_sw *sw, uint32_t j, uint32_t rank)
{
    uint32_t left = sw->jobs[j].hosts;
    for (uint32_t p = 0; left && p < sw->o.ports; p++) {
        const struct sw_port *sp = &sw->ports[p];
        if (sp->in_use && !sp->link && sp->job == j) {
            if (sp->rank == rank)
                return p;
            left--;
        }
    }
    return SW_NONE;
}

/* A free host port for rank of job j: rank's own number when it is free
 * (a job alone on a fresh switch gets ports in rank order), else the
 * first free one. */
static uint32_t free_port(const struct acis_sw *sw, uint32_t rank, uint32_t j)
{
    if (port_free(sw, rank % sw->o.ports, j))
        return rank % sw->o.ports;
    for (uint32_t p = 0; p < sw->o.ports; p++)
        if (port_free(sw, p, j))
            return p;
    return SW_NONE;
}

static void hello(struct acis_sw *sw, uint32_t port, const void *peer,
                  const struct acis_hdr *h, const uint8_t *payload)
{
    uint32_t world = acis_get32(payload);
    if (port == ACIS_PORT_SERVICE && (acis_get32(payload + 4) & ACIS_HELLO_SWITCH)) {
        link_hello(sw, peer, h, payload);
        return;
    }
    if (port != ACIS_PORT_SERVICE || world == 0 || world > MAX_WORLD || h->src >= world) {
        sw_welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_BAD_REQUEST);
        return;
    }
    uint32_t j = sw_find_job(sw, h->job_key);
    if (j != SW_NONE && sw->jobs[j].size != world) {
        sw_welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_JOB_MISMATCH);
        return;
    }
    uint32_t p = j == SW_NONE ? SW_NONE : port_of(sw, j, h->src);
    if (p != SW_NONE) {                          /* a retry */
        if (sw->ports[p].waiting)
            sw_link_job(sw, j);                  /* not confirmed yet: tell again */
        else
            sw_welcome(sw, p, peer, h, ACIS_ST_OK);
        return;
    }
    if (j != SW_NONE && sw->jobs[j].hosts >= sw->o.job_ports) {
        sw_welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_JOB_LIMIT);
        return;
    }
    if ((p = free_port(sw, h->src, j)) == SW_NONE ||
        (j == SW_NONE && (j = sw_job_new(sw, h->job_key, world)) == SW_NONE)) {
        sw_welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_NO_PORT);
        return;
    }
    if (sw->io.port_open(sw->io.ctx, p, peer) != 0) {
        sw_job_done(sw, j);
        sw_welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_NO_PORT);
        return;
    }
    struct sw_job *job = &sw->jobs[j];
    int was = sw_job_present(job);
    int memory = (acis_get32(payload + 4) & ACIS_HELLO_UNSEALED) && sw->io.memory &&
                 sw->io.memory(sw->io.ctx, peer);
    sw->ports[p] = (struct sw_port){ .in_use = 1, .memory = (uint8_t)memory, .job = j,
                                     .rank = h->src, .waiting = !job->told,
                                     .hello_seq = h->seq };
    job->hosts++;
    SWC(sw, ports_in_use)++;
    if (sw->o.verbose)
        fprintf(stderr, "acis-switch: job %016llx rank %u joined on port %u\n",
                (unsigned long long)h->job_key, h->src, p);
    if (job->told)
        sw_welcome(sw, p, peer, h, ACIS_ST_OK);
    else if (!was)
        sw_link_job(sw, j);                      /* welcomed once the top knows the job */
}

static void stats(struct acis_sw *sw, uint32_t port, const void *peer,
                  const struct acis_hdr *h)
{
    uint8_t p[4 + 8 * ACIS_SWC_COUNT];
    uint64_t c[ACIS_SWC_COUNT];
    struct acis_hdr r;
    sw_reply_header(h, ACIS_K_STATS_REPLY, &r);
    sw_counters(sw, c);                          /* every worker paused */
    acis_put32(p, ACIS_SWC_COUNT);
    for (int i = 0; i < ACIS_SWC_COUNT; i++)
        acis_put64(p + 4 + 8 * i, c[i]);
    sw_answer(sw, port, peer, &r, p, sizeof p);
}

static void bye(struct acis_sw *sw, uint32_t port)
{
    uint32_t j = sw->ports[port].job;
    sw_port_gone(sw, port);
    sw_job_done(sw, j);
}

void sw_control(struct acis_sw *sw, uint32_t port, const void *peer,
                const struct acis_hdr *h, const uint8_t *payload)
{
    unsigned kind = ACIS_OPC_KIND(h->opcode);
    if (kind == ACIS_K_HELLO) {
        hello(sw, port, peer, h, payload);
        return;
    }
    if (kind == ACIS_K_STATS_REQ) {
        stats(sw, port, peer, h);
        return;
    }
    if (port == ACIS_PORT_UPLINK) {
        sw_uplink_control(sw, h, payload);
        return;
    }
    if (port < sw->o.ports && sw->ports[port].in_use && sw->ports[port].link) {
        sw_link_control(sw, port, h, payload);
        return;
    }
    /* Everything else comes from a joined host on its own port. */
    if (port >= sw->o.ports || !sw->ports[port].in_use ||
        h->job_key != sw->jobs[sw->ports[port].job].key) {
        SWC(sw, drop_foreign)++;
        return;
    }
    if (h->src != sw->ports[port].rank) {
        SWC(sw, drop_spoofed)++;
        return;
    }
    uint32_t j = sw->ports[port].job;
    switch (kind) {
    case ACIS_K_CT_JOIN:   sw_setup_join(sw, port, j, h, payload); break;
    case ACIS_K_CT_FREE:   sw_ct_free_request(sw, port, j, h); break;
    case ACIS_K_BYE:       bye(sw, port); break;
    default:               SWC(sw, drop_foreign)++; break;
    }
}
