/* link.c -- a switch's links in a fabric.  Up to the parent go the ranks
 * that join and leave below (LINK_JOIN / LINK_LEAVE, confirmed by the
 * parent and told again until they are, so every switch's forwarding
 * table says which port or link each rank is behind) and the hosts'
 * CT_CREATE / CT_FREE, which only the top of the tree carries out.  Down
 * from it come the rows to hold (CT_INSTALL, with the same context id
 * everywhere, confirmed up the tree before the creator is answered) or
 * drop (CT_FREE), and the answers to requests, routed to the requester by
 * its rank.  The data plane of links is in cgr.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw.h"

static void send_to(struct acis_sw *sw, uint32_t port, struct acis_hdr *h,
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
    r.flags = 0;
    send_to(sw, ACIS_PORT_UPLINK, &r, payload, len);
}

/* A control message of kind for row to each of its links (that has not
 * confirmed the row, if only_unacked); returns how many got it. */
static uint32_t down_each(struct acis_sw *sw, uint32_t row, unsigned kind,
                          const uint8_t *payload, size_t len, int only_unacked)
{
    const struct sw_ct *ct = &sw->cts[row];
    uint32_t n = 0;
    for (uint32_t c = 0; ct->links && c < ct->nchild; c++) {
        if (ct->child_rank[c] != SW_NONE || (only_unacked && ct->acked[c]))
            continue;
        n++;
        struct acis_hdr r = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .job_key = sw->jobs[ct->job].key,
            .ctx = sw_ct_ctx(sw, row), .src = ACIS_NO_RANK,
        };
        send_to(sw, ct->child_port[c], &r, payload, len);
    }
    return n;
}

void sw_link_install(struct acis_sw *sw, uint32_t row, const uint8_t *members, size_t len)
{
    sw->cts[row].waiting = down_each(sw, row, ACIS_K_CT_INSTALL, members, len, 1);
}

void sw_link_free(struct acis_sw *sw, uint32_t row)
{
    down_each(sw, row, ACIS_K_CT_FREE, NULL, 0, 0);
}

/* Tell the parent whether this switch and those below hold row ctx, and
 * how many levels of switches the row has from here down. */
static void confirm_up(struct acis_sw *sw, uint64_t key, uint32_t ctx, uint32_t status,
                       uint32_t levels)
{
    uint8_t p[ACIS_CT_REPLY_LEN] = { 0 };
    struct acis_hdr r = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_CT_REPLY, ACIS_ALG_FLAT), .flags = ACIS_F_RESULT,
        .job_key = key, .ctx = ctx, .src = ACIS_NO_RANK, .root = ACIS_NO_RANK,
    };
    acis_put32(p, status);
    acis_put32(p + 4, ctx);
    acis_put32(p + 8, levels);
    send_to(sw, ACIS_PORT_UPLINK, &r, p, sizeof p);
}

/* CT_REPLY from the link on port: it holds row ctx, with everything below
 * it, or cannot.  The last confirmation answers up the tree. */
static void confirmed(struct acis_sw *sw, uint32_t port, uint32_t j, const struct acis_hdr *h,
                      const uint8_t *payload)
{
    struct sw_ct *ct = sw_ct_lookup(sw, h->ctx);
    uint32_t st = acis_get32(payload);
    if (!ct || ct->job != j || ct->port_child[port] == SW_NONE || !ct->waiting) {
        SWC(sw, drop_stale)++;                 /* a repeat, or a row since dropped */
        return;
    }
    uint32_t c = ct->port_child[port], row = (uint32_t)(ct - sw->cts);
    if (ct->acked[c])
        return;
    ct->acked[c] = 1;
    uint32_t below = acis_get32(payload + 8);
    if (below < 256 && below + 1 > ct->levels)
        ct->levels = below + 1;
    if (st != ACIS_ST_OK)
        ct->waiting = 1;                       /* done: the first refusal decides */
    if (--ct->waiting)
        return;
    if (!sw->up) {
        sw_ct_created(sw, row, st);
        return;
    }
    confirm_up(sw, h->job_key, h->ctx, st, ct->levels);
    if (st != ACIS_ST_OK) {                    /* the top drops it or asks again */
        sw_link_free(sw, row);
        sw_ct_free(sw, row);
    }
}

/* Tell the parent what it owes of rank r: a join or a leave, stamped
 * with the seq its confirmation must echo. */
static void tell(struct acis_sw *sw, const struct sw_job *job, uint32_t r, uint8_t what)
{
    uint8_t p[ACIS_LINK_JOIN_LEN];
    struct acis_hdr h = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .job_key = job->key, .src = r, .seq = job->seqs[r] & 0xffff };
    acis_put32(p, job->size);
    if (what == SW_JOIN)
        sw_link_up(sw, ACIS_K_LINK_JOIN, &h, p, sizeof p);
    else
        sw_link_up(sw, ACIS_K_LINK_LEAVE, &h, NULL, 0);
}

void sw_link_rank(struct acis_sw *sw, uint32_t j, uint32_t rank, int join)
{
    struct sw_job *job = &sw->jobs[j];
    uint8_t what = join ? SW_JOIN : SW_LEAVE;
    if (!sw->up || !job->owed)
        return;
    if (!job->owed[rank])
        job->nowed++;
    if (job->owed[rank] != what)               /* a change: a new seq */
        job->seqs[rank] = (job->seqs[rank] & 0xffff0000u) |
                          ((job->seqs[rank] + 1) & 0xffff);
    job->owed[rank] = what;
    tell(sw, job, rank, what);
}

void sw_link_tick(struct acis_sw *sw)
{
    for (uint32_t j = 0; j < sw->njobs; j++) {
        const struct sw_job *job = &sw->jobs[j];
        for (uint32_t r = 0; job->in_use && job->nowed && r < job->size; r++)
            if (job->owed[r])
                tell(sw, job, r, job->owed[r]);
    }
}

/* Confirm to the link on port that the top knows rank r of job (or, with
 * error, that it cannot take the job), echoing the seq heard from it. */
static void confirm_join(struct acis_sw *sw, uint32_t port, const struct sw_job *job,
                         uint32_t r, int error)
{
    uint8_t p[ACIS_LINK_JOIN_LEN];
    struct acis_hdr h = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .opcode = ACIS_OPC(ACIS_K_LINK_JOIN, ACIS_ALG_FLAT),
                          .flags = (uint16_t)(ACIS_F_RESULT | (error ? ACIS_F_ERROR : 0)),
                          .job_key = job->key, .src = r, .seq = job->seqs[r] >> 16 };
    acis_put32(p, job->size);
    send_to(sw, port, &h, p, sizeof p);
}

/* The parent confirms a join or leave of rank h->src: the top knows (or,
 * ERROR, cannot take the job).  A join is confirmed on down to where the
 * rank is: the link it is below, or its host, which gets its WELCOME only
 * now -- or its refusal, and loses its port. */
static void told(struct acis_sw *sw, uint32_t j, const struct acis_hdr *h)
{
    struct sw_job *job = &sw->jobs[j];
    uint8_t what = ACIS_OPC_KIND(h->opcode) == ACIS_K_LINK_JOIN ? SW_JOIN : SW_LEAVE;
    if (!job->owed || h->src >= job->size || job->owed[h->src] != what ||
        h->seq != (job->seqs[h->src] & 0xffff))
        return;                                /* a repeat, or since changed */
    job->owed[h->src] = 0;
    job->nowed--;
    uint32_t at = job->rank_port[h->src];
    int refused = (h->flags & ACIS_F_ERROR) != 0;
    if (what == SW_JOIN && at != SW_NONE && sw->ports[at].link) {
        confirm_join(sw, at, job, h->src, refused);
        if (refused) {
            job->rank_port[h->src] = SW_NONE;
            job->joined--;
        }
    } else if (what == SW_JOIN && at != SW_NONE && sw->ports[at].waiting) {
        if (refused)
            sw_refuse_host(sw, at, ACIS_ST_NO_PORT);
        else
            sw_welcome_host(sw, at);
    }
    sw_job_done(sw, j);
}

/* LINK_JOIN / LINK_LEAVE from the switch on port: rank h->src is now
 * below it, or no longer.  Confirmed to it (repeats too); passed up only
 * if it changed something here. */
static void rank_moved(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                       const uint8_t *payload)
{
    int join = ACIS_OPC_KIND(h->opcode) == ACIS_K_LINK_JOIN;
    uint32_t world = join ? acis_get32(payload) : 0;
    uint32_t j = sw_find_job(sw, h->job_key);
    struct acis_hdr r = *h;
    r.flags = ACIS_F_RESULT;
    if (join && j == SW_NONE && h->src < world)
        j = sw_job_new(sw, h->job_key, world);
    if (j == SW_NONE || h->src >= sw->jobs[j].size || (join && sw->jobs[j].size != world)) {
        SWC(sw, drop_foreign)++;               /* no room, or another size: a join is
                                                  refused, a leave is done anyway */
        r.flags |= join ? ACIS_F_ERROR : 0;
        send_to(sw, port, &r, payload, h->payload_len);
        return;
    }
    struct sw_job *job = &sw->jobs[j];
    if (job->seqs)
        job->seqs[h->src] = (job->seqs[h->src] & 0xffff) | (uint32_t)h->seq << 16;
    uint32_t *at = &job->rank_port[h->src];
    int changed = join ? *at != port : *at == port;
    if (join && *at == SW_NONE)
        job->joined++;                         /* (moved from elsewhere: still one) */
    if (!join && changed)
        job->joined--;
    if (changed)
        *at = join ? port : SW_NONE;
    if (changed || (join && job->owed && job->owed[h->src]))
        sw_link_rank(sw, j, h->src, join);    /* (again: it is not confirmed) */
    if (!join || !job->owed || !job->owed[h->src])   /* confirmed now; a join below
                                                         a parent once the top knows */
        send_to(sw, port, &r, payload, h->payload_len);
    sw_job_done(sw, j);
}

/* A CT_CREATE from the link on port of a job this switch has never heard
 * of (its table was full when the job's ranks joined): refused, so the
 * creator does not wait for an answer that never comes. */
static void unknown_job(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h)
{
    if (ACIS_OPC_KIND(h->opcode) == ACIS_K_CT_CREATE)
        sw_ct_refuse(sw, port, h, ACIS_ST_UNKNOWN_RANK);
    else
        SWC(sw, drop_foreign)++;
}

void sw_link_control(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                     const uint8_t *payload)
{
    unsigned kind = ACIS_OPC_KIND(h->opcode);
    SWC(sw, link_control)++;
    if (kind == ACIS_K_LINK_JOIN || kind == ACIS_K_LINK_LEAVE) {
        rank_moved(sw, port, h, payload);
        return;
    }
    uint32_t j = sw_find_job(sw, h->job_key);
    if (kind == ACIS_K_CT_REPLY && j != SW_NONE && (h->flags & ACIS_F_RESULT)) {
        confirmed(sw, port, j, h, payload);
        return;
    }
    if (kind != ACIS_K_CT_CREATE && kind != ACIS_K_CT_FREE) {
        SWC(sw, drop_foreign)++;
        return;
    }
    if (j == SW_NONE) {
        unknown_job(sw, port, h);
        return;
    }
    if (h->src >= sw->jobs[j].size || sw->jobs[j].rank_port[h->src] != port) {
        SWC(sw, drop_spoofed)++;               /* the requester is not below */
        return;
    }
    sw_ct_request(sw, port, j, h, payload);
}

/* CT_INSTALL from the parent: hold the row for the members below. */
static void install(struct acis_sw *sw, uint32_t j, const struct acis_hdr *h,
                    const uint8_t *payload)
{
    uint32_t n = acis_get32(payload);
    uint32_t *ranks = malloc(sizeof(uint32_t) * n);
    int st = ranks ? ACIS_ST_OK : ACIS_ST_NO_SLOTS;
    for (uint32_t i = 0; ranks && i < n; i++)
        ranks[i] = acis_get32(payload + 4 + 4 * i);
    struct sw_ct *ct = sw_ct_lookup(sw, h->ctx);
    int fresh = !ct;
    if (ct && ct->job != j)
        st = ACIS_ST_BAD_REQUEST;
    else if (st == ACIS_ST_OK && fresh)
        st = sw_ct_install(sw, j, h->ctx, ranks, n);
    free(ranks);
    if (st == -1) {
        SWC(sw, drop_stale)++;                 /* a late copy for an older row */
        return;
    }
    if (st != ACIS_ST_OK) {
        SWC(sw, tables_refused)++;
        if (sw->o.verbose)
            fprintf(stderr, "acis-switch: cannot hold ctx %#x its parent installed (status %d)\n",
                    h->ctx, st);
        confirm_up(sw, h->job_key, h->ctx, (uint32_t)st, 0);
        return;
    }
    uint32_t row = (h->ctx & 0xffff) - 1;
    if (fresh)
        SWC(sw, tables_created)++;
    else if (!sw->cts[row].waiting) {
        confirm_up(sw, h->job_key, h->ctx, ACIS_ST_OK,      /* the parent asks again */
                   sw->cts[row].levels);
        return;
    }
    sw_link_install(sw, row, payload, h->payload_len);
    if (!sw->cts[row].waiting)
        confirm_up(sw, h->job_key, h->ctx, ACIS_ST_OK, sw->cts[row].levels);
}

void sw_uplink_control(struct acis_sw *sw, const struct acis_hdr *h, const uint8_t *payload)
{
    unsigned kind = ACIS_OPC_KIND(h->opcode);
    uint32_t j = sw->up ? sw_find_job(sw, h->job_key) : SW_NONE;
    if (j == SW_NONE) {
        SWC(sw, drop_foreign)++;
        return;
    }
    SWC(sw, link_control)++;
    if ((kind == ACIS_K_LINK_JOIN || kind == ACIS_K_LINK_LEAVE) && (h->flags & ACIS_F_RESULT)) {
        told(sw, j, h);
    } else if (kind == ACIS_K_CT_INSTALL) {
        install(sw, j, h, payload);
    } else if (kind == ACIS_K_CT_FREE) {
        struct sw_ct *ct = sw_ct_lookup(sw, h->ctx);
        if (ct && ct->job == j) {
            sw_link_free(sw, (uint32_t)(ct - sw->cts));
            sw_ct_free(sw, (uint32_t)(ct - sw->cts));
        }
    } else if ((kind == ACIS_K_CT_REPLY || kind == ACIS_K_CT_FREED) &&
               h->root < sw->jobs[j].size && sw->jobs[j].rank_port[h->root] != SW_NONE) {
        struct acis_hdr r = *h;                /* on towards the requester */
        uint32_t port = sw->jobs[j].rank_port[h->root];
        sw_emit(sw, &port, 1, &r, payload, h->payload_len);
        if (sw->ports[port].link)
            SWC(sw, link_control)++;
    } else {
        SWC(sw, drop_foreign)++;
    }
}
