/* control.c -- the switch's control plane: hosts join (HELLO: a port and a
 * forwarding-table entry), communicator leaders create and free table rows
 * (CT_CREATE / CT_FREE, idempotent so a repeated request gets the same
 * answer), anyone may read the counters (STATS_REQ), and hosts leave
 * (BYE; the job's rows go with its last port).  In a fabric, joins and
 * leaves are told to the parent and requests are carried out at the top
 * of the tree (link.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw.h"

#define MAX_WORLD (1u << 24)

static void reply_header(const struct acis_hdr *req, unsigned kind, struct acis_hdr *r)
{
    memset(r, 0, sizeof *r);
    r->magic = ACIS_WIRE_MAGIC;
    r->version = ACIS_WIRE_VERSION;
    r->opcode = ACIS_OPC(kind, ACIS_ALG_FLAT);
    r->flags = ACIS_F_RESULT;
    r->job_key = req->job_key;
    r->ctx = req->ctx;
    r->seq = req->seq;
    r->src = ACIS_NO_RANK;
}

/* Answer on the host's port, or to the peer on the service port. */
static void answer(struct acis_sw *sw, uint32_t port, const void *peer,
                   struct acis_hdr *r, const uint8_t *payload, size_t len)
{
    if (port != ACIS_PORT_SERVICE) {
        sw_emit(sw, &port, 1, r, payload, len);
        return;
    }
    uint8_t hdr[ACIS_HDR_LEN];
    r->payload_len = (uint32_t)len;
    acis_hdr_encode(r, hdr);
    acis_hdr_seal(hdr, payload, len);
    struct iovec iov[2] = { { hdr, ACIS_HDR_LEN }, { (void *)payload, len } };
    sw->io.reply(sw->io.ctx, peer, iov, len ? 2 : 1);
    SWC(sw, packets_out)++;
    SWC(sw, bytes_out) += ACIS_HDR_LEN + len;
}

static void welcome(struct acis_sw *sw, uint32_t port, const void *peer,
                    const struct acis_hdr *h, uint32_t status)
{
    uint8_t p[ACIS_WELCOME_LEN];
    struct acis_hdr r;
    reply_header(h, ACIS_K_WELCOME, &r);
    acis_put32(p, status);
    acis_put32(p + 4, port == ACIS_PORT_SERVICE ? 0 : port);
    acis_put32(p + 8, sw->o.payload);
    acis_put32(p + 12, sw->window);
    acis_put32(p + 16, sw->o.tables);
    acis_put32(p + 20, sw->o.ports);
    acis_put32(p + 24, sw->o.credits);
    acis_put32(p + 28, sw->boot);
    answer(sw, port, peer, &r, p, sizeof p);
}

uint32_t sw_find_job(const struct acis_sw *sw, uint64_t key)
{
    for (uint32_t j = 0; j < sw->njobs; j++)
        if (sw->jobs[j].in_use && sw->jobs[j].key == key)
            return j;
    return SW_NONE;
}

uint32_t sw_job_new(struct acis_sw *sw, uint64_t key, uint32_t world)
{
    uint32_t j;
    for (j = 0; j < sw->njobs && sw->jobs[j].in_use; j++)
        ;
    if (j == sw->njobs || world == 0 || world > MAX_WORLD)
        return SW_NONE;
    struct sw_job *nj = &sw->jobs[j];
    nj->rank_port = malloc(sizeof(uint32_t) * world);
    nj->owed = sw->up ? calloc(world, 1) : NULL;
    nj->seqs = sw->up ? calloc(world, sizeof *nj->seqs) : NULL;
    if (!nj->rank_port || (sw->up && (!nj->owed || !nj->seqs))) {
        free(nj->rank_port);
        free(nj->owed);
        free(nj->seqs);
        memset(nj, 0, sizeof *nj);
        return SW_NONE;
    }
    memset(nj->rank_port, 0xff, sizeof(uint32_t) * world);
    nj->in_use = 1;
    nj->key = key;
    nj->size = world;
    SWC(sw, jobs)++;
    return j;
}

void sw_welcome_host(struct acis_sw *sw, uint32_t port)
{
    struct sw_port *sp = &sw->ports[port];
    struct acis_hdr h = { .job_key = sw->jobs[sp->job].key, .seq = sp->hello_seq,
                          .src = sp->rank };
    sp->waiting = 0;
    welcome(sw, port, NULL, &h, ACIS_ST_OK);
}

void sw_refuse_host(struct acis_sw *sw, uint32_t port, uint32_t status)
{
    struct sw_port *sp = &sw->ports[port];
    struct sw_job *j = &sw->jobs[sp->job];
    struct acis_hdr h = { .job_key = j->key, .seq = sp->hello_seq, .src = sp->rank };
    welcome(sw, port, NULL, &h, status);
    if (j->rank_port[sp->rank] == port) {
        j->rank_port[sp->rank] = SW_NONE;
        j->joined--;
    }
    j->hosts--;
    sp->in_use = 0;
    SWC(sw, ports_in_use)--;
    sw->io.port_close(sw->io.ctx, port);
}

void sw_job_done(struct acis_sw *sw, uint32_t j)
{
    if (sw->jobs[j].in_use && sw->jobs[j].joined == 0 && sw->jobs[j].nowed == 0)
        sw_job_release(sw, j);
}

/* A switch below asks for a link port (a retry gets the same one); only
 * as many as --links allows. */
static void link_hello(struct acis_sw *sw, const void *peer, const struct acis_hdr *h)
{
    uint32_t p;
    for (p = 0; p < sw->o.ports; p++)
        if (sw->ports[p].in_use && sw->ports[p].link && sw->ports[p].rank == h->src) {
            welcome(sw, p, peer, h, ACIS_ST_OK);
            return;
        }
    for (p = 0; p < sw->o.ports && sw->ports[p].in_use; p++)
        ;
    if (p == sw->o.ports || sw->nlinks >= sw->o.links ||
        sw->io.port_open(sw->io.ctx, p, peer) != 0) {
        welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_NO_PORT);
        return;
    }
    sw->ports[p] = (struct sw_port){ .in_use = 1, .link = 1, .rank = h->src };
    sw->nlinks++;
    if (sw->o.verbose)
        fprintf(stderr, "acis-switch: switch %08x linked on port %u\n", h->src, p);
    welcome(sw, p, peer, h, ACIS_ST_OK);
}

static void hello(struct acis_sw *sw, uint32_t port, const void *peer,
                  const struct acis_hdr *h, const uint8_t *payload)
{
    uint32_t world = acis_get32(payload);
    if (port == ACIS_PORT_SERVICE && (acis_get32(payload + 4) & ACIS_HELLO_SWITCH)) {
        link_hello(sw, peer, h);
        return;
    }
    if (port != ACIS_PORT_SERVICE || world == 0 || world > MAX_WORLD || h->src >= world) {
        welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_BAD_REQUEST);
        return;
    }
    uint32_t j = sw_find_job(sw, h->job_key);
    if (j != SW_NONE && sw->jobs[j].size != world) {
        welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_JOB_MISMATCH);
        return;
    }
    if (j != SW_NONE && sw->jobs[j].rank_port[h->src] != SW_NONE &&
        !sw->ports[sw->jobs[j].rank_port[h->src]].link) {            /* a retry */
        uint32_t p = sw->jobs[j].rank_port[h->src];
        if (sw->ports[p].waiting)
            sw_link_rank(sw, j, h->src, 1);      /* not confirmed yet: tell again */
        else
            welcome(sw, p, peer, h, ACIS_ST_OK);
        return;
    }
    if (j != SW_NONE && sw->jobs[j].hosts >= sw->o.job_ports) {
        welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_JOB_LIMIT);
        return;
    }
    uint32_t p;
    for (p = 0; p < sw->o.ports && sw->ports[p].in_use; p++)
        ;
    if (p == sw->o.ports) {
        welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_NO_PORT);
        return;
    }
    if (j == SW_NONE && (j = sw_job_new(sw, h->job_key, world)) == SW_NONE) {
        welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_NO_PORT);
        return;
    }
    if (sw->io.port_open(sw->io.ctx, p, peer) != 0) {
        sw_job_done(sw, j);
        welcome(sw, ACIS_PORT_SERVICE, peer, h, ACIS_ST_NO_PORT);
        return;
    }
    sw->ports[p] = (struct sw_port){ .in_use = 1, .job = j, .rank = h->src,
                                     .waiting = sw->up, .hello_seq = h->seq };
    if (sw->jobs[j].rank_port[h->src] == SW_NONE)   /* else it was below a link */
        sw->jobs[j].joined++;
    sw->jobs[j].hosts++;
    sw->jobs[j].rank_port[h->src] = p;
    SWC(sw, ports_in_use)++;
    sw_link_rank(sw, j, h->src, 1);
    if (sw->o.verbose)
        fprintf(stderr, "acis-switch: job %016llx rank %u joined on port %u\n",
                (unsigned long long)h->job_key, h->src, p);
    if (!sw->up)
        welcome(sw, p, peer, h, ACIS_ST_OK);     /* else once the top confirms */
}

/* Answer a CT_CREATE of h (or, sent to a parent, confirm a CT_INSTALL). */
static void ct_reply(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                     uint32_t status, uint32_t ctx)
{
    uint8_t p[ACIS_CT_REPLY_LEN];
    struct acis_hdr r;
    reply_header(h, ACIS_K_CT_REPLY, &r);
    acis_put32(p, status);
    acis_put32(p + 4, ctx);
    acis_put32(p + 8, status == ACIS_ST_OK ? sw->window : 0);
    acis_put32(p + 12, sw->o.payload);
    const struct sw_ct *ct = status == ACIS_ST_OK ? sw_ct_lookup(sw, ctx) : NULL;
    acis_put32(p + 16, ct ? (ct->links ? ACIS_CT_SPANS : 0) | ACIS_CT_OWN_BLOCK : 0);
    r.root = h->src;                             /* a fabric routes it by this */
    sw_emit(sw, &port, 1, &r, p, sizeof p);
}

void sw_ct_refuse(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h, uint32_t status)
{
    SWC(sw, tables_refused)++;
    ct_reply(sw, port, h, status, 0);
}

/* CT_CREATE from rank h->src of job, on port (its own, or the link it is
 * below): a row for the members, held by every switch they are below. */
static void ct_create(struct acis_sw *sw, uint32_t port, uint32_t job,
                      const struct acis_hdr *h, const uint8_t *payload)
{
    uint32_t n = acis_get32(payload);
    size_t len = 4 + 4 * (size_t)n;
    for (uint32_t r = 0; r < sw->o.tables; r++) {
        struct sw_ct *ct = &sw->cts[r];
        if (ct->in_use && ct->job == job && ct->creator_rank == h->src &&
            ct->creator_req == h->seq) {                          /* a retry */
            ct->creator_port = port;
            sw_link_install(sw, r, payload, len);
            if (!ct->waiting)
                ct_reply(sw, port, h, ACIS_ST_OK, sw_ct_ctx(sw, r));
            return;
        }
    }
    uint32_t *ranks = malloc(sizeof(uint32_t) * n), row = 0;
    int st = ranks ? ACIS_ST_OK : ACIS_ST_NO_SLOTS;
    for (uint32_t i = 0; ranks && i < n; i++)
        ranks[i] = acis_get32(payload + 4 + 4 * i);
    if (st == ACIS_ST_OK)
        st = sw_ct_alloc(sw, job, ranks, n, &row);
    free(ranks);
    if (st != ACIS_ST_OK) {
        sw_ct_refuse(sw, port, h, (uint32_t)st);
        return;
    }
    sw->cts[row].creator_rank = h->src;
    sw->cts[row].creator_req = h->seq;
    sw->cts[row].creator_port = port;
    SWC(sw, tables_created)++;
    if (sw->o.verbose)
        fprintf(stderr, "acis-switch: row %u (ctx %#x) for %u members of job %016llx\n",
                row, sw_ct_ctx(sw, row), n, (unsigned long long)h->job_key);
    sw_link_install(sw, row, payload, len);
    if (!sw->cts[row].waiting)                   /* else once the links hold it */
        ct_reply(sw, port, h, ACIS_ST_OK, sw_ct_ctx(sw, row));
}

void sw_ct_created(struct acis_sw *sw, uint32_t row, uint32_t status)
{
    struct sw_ct *ct = &sw->cts[row];
    struct acis_hdr h = { .job_key = sw->jobs[ct->job].key, .seq = ct->creator_req,
                          .src = ct->creator_rank };
    if (status == ACIS_ST_OK) {
        ct_reply(sw, ct->creator_port, &h, status, sw_ct_ctx(sw, row));
        return;
    }
    uint32_t port = ct->creator_port;
    sw_link_free(sw, row);
    sw_ct_free(sw, row);
    sw_ct_refuse(sw, port, &h, status);
}

static void ct_free(struct acis_sw *sw, uint32_t port, uint32_t job, const struct acis_hdr *h)
{
    struct sw_ct *ct = sw_ct_lookup(sw, h->ctx);
    uint8_t p[ACIS_STATUS_LEN];
    struct acis_hdr r;
    uint32_t st = ACIS_ST_NO_CTX;
    if (ct && ct->job == job) {
        sw_link_free(sw, (uint32_t)(ct - sw->cts));
        sw_ct_free(sw, (uint32_t)(ct - sw->cts));
        st = ACIS_ST_OK;
    } else if (ct) {
        SWC(sw, drop_foreign)++;                 /* another job's row: refused */
    }
    reply_header(h, ACIS_K_CT_FREED, &r);
    r.root = h->src;
    acis_put32(p, st);
    sw_emit(sw, &port, 1, &r, p, sizeof p);
}

void sw_ct_request(struct acis_sw *sw, uint32_t port, uint32_t job, const struct acis_hdr *h,
                   const uint8_t *payload)
{
    if (sw->up)                                  /* the top of the tree decides */
        sw_link_up(sw, ACIS_OPC_KIND(h->opcode), h, payload, h->payload_len);
    else if (ACIS_OPC_KIND(h->opcode) == ACIS_K_CT_CREATE)
        ct_create(sw, port, job, h, payload);
    else
        ct_free(sw, port, job, h);
}

static void stats(struct acis_sw *sw, uint32_t port, const void *peer,
                  const struct acis_hdr *h)
{
    uint8_t p[4 + 8 * ACIS_SWC_COUNT];
    struct acis_hdr r;
    reply_header(h, ACIS_K_STATS_REPLY, &r);
    acis_put32(p, ACIS_SWC_COUNT);
    for (int i = 0; i < ACIS_SWC_COUNT; i++)
        acis_put64(p + 4 + 8 * i, sw->c[i]);
    answer(sw, port, peer, &r, p, sizeof p);
}

static void bye(struct acis_sw *sw, uint32_t port)
{
    struct sw_port *sp = &sw->ports[port];
    struct sw_job *j = &sw->jobs[sp->job];
    sp->in_use = 0;
    SWC(sw, ports_in_use)--;
    sw->io.port_close(sw->io.ctx, port);
    j->hosts--;
    if (j->rank_port[sp->rank] == port) {      /* else it has joined below a link since */
        j->rank_port[sp->rank] = SW_NONE;
        j->joined--;
        sw_link_rank(sw, sp->job, sp->rank, 0);
    }
    sw_job_done(sw, sp->job);
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
    switch (kind) {
    case ACIS_K_CT_CREATE:
    case ACIS_K_CT_FREE:   sw_ct_request(sw, port, sw->ports[port].job, h, payload); break;
    case ACIS_K_BYE:       bye(sw, port); break;
    default:               SWC(sw, drop_foreign)++; break;
    }
}
