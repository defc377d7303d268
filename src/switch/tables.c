/* tables.c -- communicator table rows: claim a free row for a new
 * communicator with its share of aggregation slots (resources are taken
 * when the communicator is set up, never mid-collective), look rows up by
 * context id, and give them back. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sw.h"

/* Context id: generation in the high 16 bits, row + 1 in the low 16, so 0
 * is never valid and a stale id of a reused row does not match. */
uint32_t sw_ct_ctx(const struct acis_sw *sw, uint32_t row)
{
    return (uint32_t)sw->cts[row].gen << 16 | (row + 1);
}

struct sw_ct *sw_ct_lookup(struct acis_sw *sw, uint32_t ctx)
{
    uint32_t row = (ctx & 0xffff) - 1;
    if (row >= sw->o.tables)
        return NULL;
    struct sw_ct *ct = &sw->cts[row];
    if (!ct->in_use || ct->gen != ctx >> 16)
        return NULL;
    return ct;
}

static void slot_free_mem(struct sw_slot *s, uint32_t members)
{
    for (int k = 0; k < 2; k++) {
        struct sw_use *u = &s->u[k];
        for (uint32_t r = 0; u->held && r < members; r++)
            free(u->held[r]);
        free(u->held);
        free(u->bits);
        free(u->rx_off);
        free(u->rx_len);
        free(u->buf);
        free(u->contrib);
    }
    memset(s, 0, sizeof *s);
}

uint32_t acis_sw_rows_without(const struct acis_sw *sw, uint32_t port)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < sw->o.tables; r++) {
        const struct sw_ct *ct = &sw->cts[r];
        n += ct->in_use && (port >= sw->o.ports || ct->port_child[port] == SW_NONE);
    }
    return n;
}

/* Bytes of aggregation buffers a row holds (counted in buffer_bytes). */
static uint64_t row_bytes(const struct acis_sw *sw, const struct sw_ct *ct)
{
    uint64_t b = 2 * (uint64_t)ct->window * sw->o.payload;
    for (uint32_t i = 0; i < ct->window; i++) {
        for (int k = 0; k < 2; k++) {
            const struct sw_use *u = &ct->slots[i].u[k];
            if (u->contrib)
                b += (uint64_t)ct->nchild * sw_round(sw->o.payload);
            for (uint32_t r = 0; u->held && r < ct->nchild; r++)
                b += u->held[r] ? sw_round(sw->o.payload) : 0;
        }
    }
    return b;
}

void acis_sw_row_size(const struct acis_sw_opts *o, uint32_t children,
                      struct acis_sw_row_size *out)
{
    uint64_t n = children, window = o->tables ? o->slots / o->tables : 0;
    uint64_t per_use = (n + 63) / 64 * sizeof(uint64_t)    /* bits */
                       + 2 * n * sizeof(uint32_t);          /* rx_off, rx_len */
    out->window = (uint32_t)window;
    out->state = sizeof(struct sw_ct) + o->ports * sizeof(uint32_t) +
                 2 * n * sizeof(uint32_t) + window * (sizeof(struct sw_slot) + 2 * per_use);
    out->buffers = 2 * window * sw_round(o->payload);
    /* a scan keeps every member's piece; an ordered fold holds at most
     * the children before the last, in an array of n pointers per use */
    out->buffers_worst = out->buffers + 2 * window * n * (sw_round(o->payload) + sizeof(void *));
}

static void row_clear(struct sw_ct *ct)
{
    if (ct->slots)
        for (uint32_t i = 0; i < ct->window; i++)
            slot_free_mem(&ct->slots[i], ct->nchild);
    free(ct->slots);
    free(ct->port_child);
    free(ct->child_port);
    free(ct->child_rank);
    free(ct->acked);
    ct->slots = NULL;
    ct->acked = NULL;
    ct->port_child = ct->child_port = ct->child_rank = NULL;
}

/* The children of a row for the members (global ranks, in communicator
 * order) of job: each member's port (a host, or the link it is below),
 * once, in order of first appearance.  A member not here or below is an
 * error at the top of the tree (partial 0) and skipped in an install. */
static int row_children(struct acis_sw *sw, struct sw_ct *ct, const struct sw_job *j,
                        const uint32_t *ranks, int partial)
{
    ct->port_child = malloc(sizeof(uint32_t) * sw->o.ports);
    if (!ct->port_child)
        return ACIS_ST_NO_SLOTS;
    memset(ct->port_child, 0xff, sizeof(uint32_t) * sw->o.ports);
    /* at the top, a rank twice is refused even below one link */
    uint64_t *seen = partial ? NULL : calloc((j->size + 63) / 64, sizeof(uint64_t));
    if (!partial && !seen)
        return ACIS_ST_NO_SLOTS;
    uint32_t n = 0;
    int st = ACIS_ST_OK;
    for (uint32_t i = 0; i < ct->size && st == ACIS_ST_OK; i++) {
        uint32_t g = ranks[i], port = g < j->size ? j->rank_port[g] : SW_NONE;
        if (port == SW_NONE && partial)
            continue;
        if (port == SW_NONE)
            st = ACIS_ST_UNKNOWN_RANK;
        else if (seen && (seen[g / 64] >> (g % 64) & 1))
            st = ACIS_ST_BAD_REQUEST;
        else if (ct->port_child[port] == SW_NONE)
            ct->port_child[port] = n++;
        else if (!sw->ports[port].link)
            st = ACIS_ST_BAD_REQUEST;             /* a host twice */
        if (seen && port != SW_NONE)
            seen[g / 64] |= 1ull << (g % 64);
    }
    free(seen);
    if (st != ACIS_ST_OK)
        return st;
    if (n == 0)
        return ACIS_ST_UNKNOWN_RANK;
    ct->nchild = n;
    ct->child_port = malloc(sizeof(uint32_t) * n);
    ct->child_rank = malloc(sizeof(uint32_t) * n);
    ct->acked = calloc(n, 1);
    if (!ct->child_port || !ct->child_rank || !ct->acked)
        return ACIS_ST_NO_SLOTS;
    for (uint32_t i = 0; i < ct->size; i++) {
        uint32_t port = ranks[i] < j->size ? j->rank_port[ranks[i]] : SW_NONE;
        if (port == SW_NONE)
            continue;
        uint32_t c = ct->port_child[port];
        ct->child_port[c] = port;
        ct->child_rank[c] = sw->ports[port].link ? SW_NONE : i;
        ct->links |= sw->ports[port].link;
    }
    return ACIS_ST_OK;
}

/* Build row r with generation gen for the members of job. */
static int row_build(struct acis_sw *sw, uint32_t r, uint16_t gen, uint32_t job,
                     const uint32_t *ranks, uint32_t n, int partial)
{
    struct sw_ct *ct = &sw->cts[r];
    memset(ct, 0, sizeof *ct);
    ct->gen = gen;
    ct->job = job;
    ct->size = n;
    ct->window = sw->window;
    ct->levels = 1;                              /* links confirm theirs */
    int st = row_children(sw, ct, &sw->jobs[job], ranks, partial);
    if (st != ACIS_ST_OK)
        goto fail;
    st = ACIS_ST_NO_SLOTS;
    ct->slots = calloc(ct->window, sizeof *ct->slots);
    if (!ct->slots)
        goto fail;
    size_t words = (ct->nchild + 63) / 64;
    for (uint32_t i = 0; i < ct->window; i++) {
        for (int k = 0; k < 2; k++) {
            struct sw_use *u = &ct->slots[i].u[k];
            u->bits = calloc(words, sizeof(uint64_t));
            u->rx_off = malloc(sizeof(uint32_t) * ct->nchild);
            u->rx_len = malloc(sizeof(uint32_t) * ct->nchild);
            u->buf = sw_alloc(sw->o.payload);
            if (!u->bits || !u->rx_off || !u->rx_len || !u->buf)
                goto fail;
        }
    }
    ct->in_use = 1;
    sw->jobs[job].rows++;
    SWC(sw, buffer_bytes) += 2 * (uint64_t)ct->window * sw->o.payload;
    SWC(sw, tables_in_use)++;
    SWC(sw, slots_in_use) += ct->window;
    return ACIS_ST_OK;
fail:
    row_clear(ct);
    return st;
}

/* Reserve a row for the members (global ranks, in communicator order) of
 * job.  Returns an acis_status; *row on success. */
int sw_ct_alloc(struct acis_sw *sw, uint32_t job, const uint32_t *ranks,
                uint32_t n, uint32_t *row)
{
    uint32_t r;
    for (r = 0; r < sw->o.tables && sw->cts[r].in_use; r++)
        ;
    if (r == sw->o.tables)
        return ACIS_ST_TABLE_FULL;
    if (sw->jobs[job].rows >= sw->o.job_rows)
        return ACIS_ST_JOB_LIMIT;                /* leave rows for other jobs */
    if (sw->window == 0)
        return ACIS_ST_NO_SLOTS;
    if (n < 1)
        return ACIS_ST_BAD_REQUEST;
    uint16_t gen = sw->cts[r].gen, next = (uint16_t)(gen + 1);
    int st = row_build(sw, r, next ? next : 1, job, ranks, n, 0);   /* 0 names no row */
    if (st == ACIS_ST_OK)
        *row = r;
    else
        sw->cts[r].gen = gen;
    return st;
}

int sw_ct_install(struct acis_sw *sw, uint32_t job, uint32_t ctx, const uint32_t *ranks,
                  uint32_t n)
{
    uint32_t r = (ctx & 0xffff) - 1;
    if (r >= sw->o.tables || ctx >> 16 == 0 || n < 1)
        return ACIS_ST_BAD_REQUEST;
    if (sw->cts[r].in_use && sw_ct_ctx(sw, r) == ctx)
        return ACIS_ST_OK;                       /* a repeat */
    if ((int16_t)(uint16_t)((ctx >> 16) - sw->cts[r].gen) <= 0)
        return -1;                               /* a late copy for a row since freed
                                                    or replaced (the number keeps its
                                                    generation when free) */
    sw_ct_free(sw, r);                           /* a stale one the parent dropped */
    return row_build(sw, r, (uint16_t)(ctx >> 16), job, ranks, n, 1);
}

void sw_ct_free(struct acis_sw *sw, uint32_t row)
{
    struct sw_ct *ct = &sw->cts[row];
    if (!ct->in_use)
        return;
    SWC(sw, buffer_bytes) -= row_bytes(sw, ct);
    row_clear(ct);
    SWC(sw, tables_in_use)--;
    SWC(sw, slots_in_use) -= ct->window;
    sw->jobs[ct->job].rows--;
    ct->in_use = 0;
}

/* The last port of a job left: drop its rows and forwarding table. */
void sw_job_release(struct acis_sw *sw, uint32_t job)
{
    for (uint32_t r = 0; r < sw->o.tables; r++)
        if (sw->cts[r].in_use && sw->cts[r].job == job)
            sw_ct_free(sw, r);
    free(sw->jobs[job].rank_port);
    free(sw->jobs[job].owed);
    free(sw->jobs[job].seqs);
    memset(&sw->jobs[job], 0, sizeof sw->jobs[job]);
    SWC(sw, jobs)--;
}
