/* setup.c -- a row's life on a network switch: set up without a member
 * list anywhere, and freed.  Every member sends CT_JOIN (repeated until answered);
 * each switch counts members per port in a set-up entry (a bit per host
 * port, a count per link) and tells its parent how many it has; the top
 * of the tree, once its count is the communicator's size, claims a row,
 * installs it down every link with members (CT_INSTALL, the same context
 * id everywhere), and once every link confirmed, answers every member
 * (CT_REPLY, down the same links).  The set-up table has a fixed number of
 * entries; one job may hold at most half of them, and an entry idle for
 * two seconds (members repeat every 100 ms) is taken back.  CT_FREE goes
 * up to the top, which drops the row and sends CT_FREE down its links;
 * the switch a host asked at answers it once the row is gone there. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sw.h"

#define IDLE_NS 2000000000ull

static struct sw_setup *find(struct acis_sw *sw, uint32_t job, uint32_t leader, uint32_t id)
{
    for (uint32_t i = 0; i < sw->size.setups; i++) {
        struct sw_setup *su = &sw->setups[i];
        if (su->in_use && su->job == job && su->leader == leader && su->id == id)
            return su;
    }
    return NULL;
}

static void drop(struct acis_sw *sw, struct sw_setup *su)
{
    if (!su->in_use)
        return;
    su->in_use = 0;
    sw->jobs[su->job].setups--;
}

/* An idle entry is taken back; its row, if it had one, goes too. */
static void reclaim(struct acis_sw *sw, struct sw_setup *su)
{
    if (su->installed && sw->cts[su->row].in_use && sw->cts[su->row].id == su->id &&
        sw->cts[su->row].leader == su->leader && sw->cts[su->row].job == su->job) {
        sw_link_free(sw, su->row);
        sw_ct_free(sw, su->row);
    }
    drop(sw, su);
}

static struct sw_setup *claim(struct acis_sw *sw, uint32_t job, const struct acis_hdr *h,
                              uint32_t size, uint32_t *status)
{
    uint32_t most = sw->size.setups / 2 ? sw->size.setups / 2 : 1;
    uint64_t now = acis_now_ns();
    struct sw_setup *free_one = NULL, *idle = NULL;
    for (uint32_t i = 0; i < sw->size.setups; i++) {
        struct sw_setup *su = &sw->setups[i];
        if (!su->in_use && !free_one)
            free_one = su;
        else if (su->in_use && now - su->last_ns > IDLE_NS && !idle)
            idle = su;
    }
    if (!free_one && idle) {
        reclaim(sw, idle);
        free_one = idle;
    }
    if (!free_one) {
        *status = ACIS_ST_TABLE_FULL;
        return NULL;
    }
    if (sw->jobs[job].setups >= most) {
        *status = ACIS_ST_JOB_LIMIT;             /* leave entries to other jobs */
        return NULL;
    }
    struct sw_setup *su = free_one;
    uint64_t *hosts = su->hosts, *acked = su->acked;
    uint32_t *count = su->count;
    memset(su, 0, sizeof *su);
    su->hosts = hosts;
    su->acked = acked;
    su->count = count;
    memset(hosts, 0, sw->words * sizeof(uint64_t));
    memset(acked, 0, sw->words * sizeof(uint64_t));
    memset(count, 0, sw->o.links * sizeof(uint32_t));
    su->in_use = 1;
    su->job = job;
    su->leader = h->root;
    su->id = h->seq;
    su->size = size;
    su->levels = 1;
    su->window = sw->window;
    su->payload = sw->o.payload;
    su->last_ns = now;
    sw->jobs[job].setups++;
    if (sw->o.verbose)
        fprintf(stderr, "acis-switch: set-up %u of rank %u for %u members of job %016llx\n",
                su->id, su->leader, size, (unsigned long long)sw->jobs[job].key);
    return su;
}

/* The answer every member gets (CT_REPLY), for the set-up named in h. */
static void reply_packet(struct acis_sw *sw, uint32_t job, uint32_t leader, uint32_t id,
                         uint32_t status, uint32_t ctx, struct acis_hdr *r, uint8_t *p)
{
    memset(r, 0, sizeof *r);
    r->magic = ACIS_WIRE_MAGIC;
    r->version = ACIS_WIRE_VERSION;
    r->opcode = ACIS_OPC(ACIS_K_CT_REPLY, ACIS_ALG_FLAT);
    r->flags = ACIS_F_RESULT;
    r->job_key = sw->jobs[job].key;
    r->ctx = status == ACIS_ST_OK ? ctx : 0;
    r->seq = id;
    r->root = leader;
    r->src = ACIS_NO_RANK;
    const struct sw_ct *ct = status == ACIS_ST_OK ? sw_ct_lookup(sw, ctx) : NULL;
    acis_put32(p, status);
    acis_put32(p + 4, r->ctx);
    acis_put32(p + 8, ct ? ct->window : 0);
    acis_put32(p + 12, ct ? ct->payload : sw->o.payload);
    acis_put32(p + 16, ct ? ct->flags : 0);
}

/* Send a CT_REPLY (as built, or as it came from the parent) to the
 * set-up's member hosts here (one multicast) and down each link that
 * counted members. */
static void forward(struct acis_sw *sw, const struct sw_setup *su, struct acis_hdr *r,
                    const uint8_t *p, size_t len)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < sw->words; w++)
        for (uint64_t b = su->hosts[w]; b; b &= b - 1)
            sw->group[n++] = w * 64 + (uint32_t)__builtin_ctzll(b);
    if (n)
        sw_emit(sw, sw->group, n, r, p, len);
    for (uint32_t q = 0; q < sw->o.ports; q++)
        if (sw->ports[q].in_use && sw->ports[q].link && su->count[sw->ports[q].lidx])
            sw_link_send(sw, q, r, p, len);
}

/* Answer one sender (a host, or a link for its members) alone. */
static void answer_one(struct acis_sw *sw, uint32_t port, uint32_t job, const struct acis_hdr *h,
                       uint32_t status, uint32_t ctx)
{
    struct acis_hdr r;
    uint8_t p[ACIS_CT_REPLY_LEN];
    reply_packet(sw, job, h->root, h->seq, status, ctx, &r, p);
    if (sw->ports[port].link)
        sw_link_send(sw, port, &r, p, sizeof p);
    else
        sw_emit(sw, &port, 1, &r, p, sizeof p);
    if (status != ACIS_ST_OK)
        SWC(sw, tables_refused)++;
}

/* The top decides: every member hears status (the row, if any, goes). */
static void conclude(struct acis_sw *sw, struct sw_setup *su, uint32_t status)
{
    struct acis_hdr r;
    uint8_t p[ACIS_CT_REPLY_LEN];
    uint32_t ctx = su->installed ? sw_ct_ctx(sw, su->row) : 0;
    if (status == ACIS_ST_OK) {
        struct sw_ct *ct = &sw->cts[su->row];
        ct->levels = (uint8_t)su->levels;
        ct->window = su->window;
        ct->payload = su->payload;
        ct->flags = (uint8_t)((ct->links ? ACIS_CT_SPANS : ACIS_CT_SCAN_SPLIT) |
                              ACIS_CT_OWN_BLOCK);
    }
    reply_packet(sw, su->job, su->leader, su->id, status, ctx, &r, p);
    forward(sw, su, &r, p, sizeof p);
    if (status != ACIS_ST_OK) {
        SWC(sw, tables_refused)++;
        if (su->installed)
            sw_ct_free(sw, su->row);             /* the refusal frees it below */
    } else if (sw->o.verbose) {
        fprintf(stderr, "acis-switch: row %u (ctx %#x) for %u members of job %016llx\n",
                su->row, ctx, su->size, (unsigned long long)sw->jobs[su->job].key);
    }
    drop(sw, su);
}

/* CT_INSTALL down every link that counted members (only those that have
 * not confirmed, when repeating); how many got it. */
static uint32_t install_down(struct acis_sw *sw, const struct sw_setup *su, int only_unacked)
{
    uint8_t p[ACIS_CT_INSTALL_LEN];
    uint32_t n = 0;
    acis_put32(p, su->size);
    for (uint32_t q = 0; q < sw->o.ports; q++) {
        if (!sw->ports[q].in_use || !sw->ports[q].link || !su->count[sw->ports[q].lidx] ||
            (only_unacked && sw_bit(su->acked, q)))
            continue;
        struct acis_hdr r = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_CT_INSTALL, ACIS_ALG_FLAT),
            .job_key = sw->jobs[su->job].key, .ctx = sw_ct_ctx(sw, su->row),
            .seq = su->id, .root = su->leader, .src = ACIS_NO_RANK,
        };
        sw_link_send(sw, q, &r, p, sizeof p);
        n++;
    }
    return n;
}

/* Tell the parent this switch holds the row (or cannot): the status, the
 * context, the levels of switches from here down, and the window and
 * payload every switch below can serve. */
static void confirm_up(struct acis_sw *sw, const struct sw_setup *su, uint32_t ctx,
                       uint32_t status)
{
    uint8_t p[ACIS_CT_REPLY_LEN];
    struct acis_hdr r = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_CT_REPLY, ACIS_ALG_FLAT), .flags = ACIS_F_RESULT,
        .job_key = sw->jobs[su->job].key, .ctx = ctx, .seq = su->id, .root = su->leader,
        .src = ACIS_NO_RANK,
    };
    acis_put32(p, status);
    acis_put32(p + 4, ctx);
    acis_put32(p + 8, su->levels);
    acis_put32(p + 12, su->window);
    acis_put32(p + 16, su->payload);
    sw_link_up(sw, ACIS_K_CT_REPLY, &r, p, sizeof p);
}

/* Every member is counted at the top: claim the row and install it. */
static void complete(struct acis_sw *sw, struct sw_setup *su)
{
    if (su->here > su->size) {
        conclude(sw, su, ACIS_ST_BAD_REQUEST);   /* a member counted twice */
        return;
    }
    uint32_t row, st = (uint32_t)sw_ct_alloc(sw, su, &row);
    if (st != ACIS_ST_OK) {
        conclude(sw, su, st);
        return;
    }
    su->installed = 1;
    su->row = row;
    SWC(sw, tables_created)++;
    su->waiting = install_down(sw, su, 0);
    if (!su->waiting)
        conclude(sw, su, ACIS_ST_OK);
}

void sw_setup_join(struct acis_sw *sw, uint32_t port, uint32_t job, const struct acis_hdr *h,
                   const uint8_t *payload)
{
    uint32_t n = acis_get32(payload), x = acis_get32(payload + 4);
    int link = sw->ports[port].link;
    if (!link && x >= n) {
        answer_one(sw, port, job, h, ACIS_ST_BAD_REQUEST, 0);
        return;
    }
    struct sw_setup *su = find(sw, job, h->root, h->seq);
    uint32_t row = su ? SW_NONE : sw_ct_of_setup(sw, job, h->root, h->seq);
    if (row != SW_NONE) {                        /* set up already: a repeat */
        answer_one(sw, port, job, h, ACIS_ST_OK, sw_ct_ctx(sw, row));
        return;
    }
    uint32_t st = ACIS_ST_OK;
    if (!su && !(su = claim(sw, job, h, n, &st))) {
        answer_one(sw, port, job, h, st, 0);
        return;
    }
    if (su->size != n) {
        answer_one(sw, port, job, h, ACIS_ST_BAD_REQUEST, 0);
        return;
    }
    su->last_ns = acis_now_ns();
    if (!link && !sw_bit(su->hosts, port)) {
        sw_bit_set(su->hosts, port);
        su->here++;
    } else if (link && x > su->count[sw->ports[port].lidx]) {
        su->here += x - su->count[sw->ports[port].lidx];
        su->count[sw->ports[port].lidx] = x;
    }
    if (sw->up) {                                /* (repeats too: the top repeats
                                                    installs not confirmed) */
        uint8_t p[ACIS_CT_JOIN_LEN];
        struct acis_hdr r = *h;
        r.src = ACIS_NO_RANK;
        acis_put32(p, su->size);
        acis_put32(p + 4, su->here);
        sw_link_up(sw, ACIS_K_CT_JOIN, &r, p, sizeof p);
        return;
    }
    if (su->installed)                           /* members repeat while links confirm */
        install_down(sw, su, 1);
    else if (su->here >= su->size)
        complete(sw, su);
}

void sw_setup_install(struct acis_sw *sw, uint32_t job, const struct acis_hdr *h,
                      const uint8_t *payload)
{
    struct sw_setup *su = find(sw, job, h->root, h->seq);
    if (!su || su->size != acis_get32(payload)) {
        struct sw_setup none = { .job = job, .leader = h->root, .id = h->seq };
        SWC(sw, tables_refused)++;               /* its members here are gone */
        confirm_up(sw, &none, h->ctx, ACIS_ST_UNKNOWN_RANK);
        return;
    }
    su->last_ns = acis_now_ns();
    if (su->installed && sw_ct_ctx(sw, su->row) != h->ctx) {
        SWC(sw, drop_stale)++;                   /* a late copy for another row */
        return;
    }
    if (su->installed) {
        if (su->waiting)
            install_down(sw, su, 1);
        else
            confirm_up(sw, su, h->ctx, ACIS_ST_OK);        /* the parent asks again */
        return;
    }
    int st = sw_ct_install(sw, su, h->ctx);
    if (st == -1) {
        SWC(sw, drop_stale)++;                   /* a late copy for an older row */
        return;
    }
    if (st != ACIS_ST_OK) {
        SWC(sw, tables_refused)++;
        if (sw->o.verbose)
            fprintf(stderr, "acis-switch: cannot hold ctx %#x its parent installed (status %d)\n",
                    h->ctx, st);
        confirm_up(sw, su, h->ctx, (uint32_t)st);
        return;
    }
    su->installed = 1;
    su->row = (h->ctx & 0xffff) - 1;
    SWC(sw, tables_created)++;
    su->waiting = install_down(sw, su, 0);
    if (!su->waiting)
        confirm_up(sw, su, h->ctx, ACIS_ST_OK);
}

void sw_setup_confirmed(struct acis_sw *sw, uint32_t port, uint32_t job,
                        const struct acis_hdr *h, const uint8_t *payload)
{
    struct sw_setup *su = find(sw, job, h->root, h->seq);
    if (!su || !su->installed || sw_ct_ctx(sw, su->row) != h->ctx || !su->waiting ||
        !su->count[sw->ports[port].lidx]) {
        SWC(sw, drop_stale)++;                   /* a repeat, or a set-up since gone */
        return;
    }
    if (sw_bit(su->acked, port))
        return;
    sw_bit_set(su->acked, port);
    su->last_ns = acis_now_ns();
    uint32_t st = acis_get32(payload), below = acis_get32(payload + 8);
    uint32_t win = acis_get32(payload + 12);
    uint32_t pl = h->payload_len >= 20 ? acis_get32(payload + 16) : su->payload;
    if (below < 255 && below + 1 > su->levels)
        su->levels = below + 1;
    if (win < su->window)
        su->window = win;
    if (pl < su->payload)
        su->payload = pl;
    if (st == ACIS_ST_OK && (su->window == 0 || su->payload < ACIS_MIN_PAYLOAD))
        st = ACIS_ST_NO_SLOTS;
    if (st != ACIS_ST_OK)
        su->waiting = 1;                         /* done: the first refusal decides */
    if (--su->waiting)
        return;
    if (!sw->up) {
        conclude(sw, su, st);
        return;
    }
    confirm_up(sw, su, h->ctx, st);
}

void sw_setup_reply_down(struct acis_sw *sw, uint32_t job, const struct acis_hdr *h,
                         const uint8_t *payload)
{
    struct sw_setup *su = find(sw, job, h->root, h->seq);
    if (!su) {
        SWC(sw, drop_stale)++;                   /* a repeat: its members have it */
        return;
    }
    uint32_t st = acis_get32(payload);
    int mine = su->installed && sw_ct_ctx(sw, su->row) == h->ctx;
    if (st == ACIS_ST_OK && !mine) {
        SWC(sw, drop_stale)++;
        return;
    }
    uint8_t p[64];                               /* control_len_ok: at most 64 */
    memcpy(p, payload, h->payload_len);
    uint32_t win = acis_get32(p + 8), pl = acis_get32(p + 12);
    if (st == ACIS_ST_OK && (win == 0 || win > sw->window || pl < ACIS_MIN_PAYLOAD ||
                             pl > sw->o.payload)) {
        /* more than this switch told the parent it serves: its slots
         * belong to other rows, its buffers are o.payload long */
        SWC(sw, drop_malformed)++;
        acis_put32(p, st = ACIS_ST_NO_SLOTS);
    }
    if (st == ACIS_ST_OK) {
        struct sw_ct *ct = &sw->cts[su->row];
        ct->levels = (uint8_t)su->levels;
        ct->window = win;
        ct->payload = pl;
        ct->flags = h->payload_len >= 20 ? (uint8_t)acis_get32(p + 16) : 0;
                                                 /* the top's: a repeat here gets them */
    } else if (mine) {
        sw_ct_free(sw, su->row);
    }
    struct acis_hdr r = *h;
    forward(sw, su, &r, p, h->payload_len);
    drop(sw, su);
}

void sw_setup_drop_job(struct acis_sw *sw, uint32_t job)
{
    for (uint32_t i = 0; i < sw->size.setups; i++)
        if (sw->setups[i].in_use && sw->setups[i].job == job)
            drop(sw, &sw->setups[i]);
}

static void freed(struct acis_sw *sw, uint32_t port, uint64_t key, uint32_t ctx, uint32_t seq,
                  uint32_t src, uint32_t status)
{
    uint8_t p[ACIS_STATUS_LEN];
    struct acis_hdr q = { .job_key = key, .ctx = ctx, .seq = seq, .src = src }, r;
    sw_reply_header(&q, ACIS_K_CT_FREED, &r);
    acis_put32(p, status);
    sw_emit(sw, &port, 1, &r, p, sizeof p);
}

void sw_ct_free_request(struct acis_sw *sw, uint32_t port, uint32_t job,
                        const struct acis_hdr *h)
{
    struct sw_ct *ct = sw_ct_lookup(sw, h->ctx);
    int host = port != ACIS_PORT_UPLINK && !sw->ports[port].link;
    if (ct && ct->job != job) {
        SWC(sw, drop_foreign)++;                 /* another job's row: refused */
        ct = NULL;
    }
    if (!ct) {
        if (host)
            freed(sw, port, h->job_key, h->ctx, h->seq, h->src, ACIS_ST_NO_CTX);
        return;
    }
    uint32_t row = (uint32_t)(ct - sw->cts);
    if (port != ACIS_PORT_UPLINK && sw->up) {    /* the top decides */
        if (host) {
            ct->free_port = port;
            ct->free_seq = h->seq;
            ct->free_src = h->src;
        }
        sw_link_up(sw, ACIS_K_CT_FREE, h, NULL, 0);
        return;
    }
    if (host)
        freed(sw, port, h->job_key, h->ctx, h->seq, h->src, ACIS_ST_OK);
    else if (ct->free_port != SW_NONE)           /* the top freed it: answer here */
        freed(sw, ct->free_port, h->job_key, h->ctx, ct->free_seq, ct->free_src, ACIS_ST_OK);
    sw_link_free(sw, row);
    sw_ct_free(sw, row);
}

