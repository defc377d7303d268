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
        n += ct->in_use && (port >= sw->o.ports || ct->port_rank[port] == SW_NONE);
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
                b += (uint64_t)ct->size * sw_round(sw->o.payload);
            for (uint32_t r = 0; u->held && r < ct->size; r++)
                b += u->held[r] ? sw_round(sw->o.payload) : 0;
        }
    }
    return b;
}

void acis_sw_row_size(const struct acis_sw_opts *o, uint32_t members,
                      struct acis_sw_row_size *out)
{
    uint64_t n = members, window = o->tables ? o->slots / o->tables : 0;
    uint64_t per_use = (n + 63) / 64 * sizeof(uint64_t)    /* bits */
                       + 2 * n * sizeof(uint32_t)           /* rx_off, rx_len */
                       + n * sizeof(uint8_t *);             /* held */
    out->window = (uint32_t)window;
    out->state = sizeof(struct sw_ct) + o->ports * sizeof(uint32_t) + n * sizeof(uint32_t) +
                 window * (sizeof(struct sw_slot) + 2 * per_use);
    out->buffers = 2 * window * sw_round(o->payload);
    /* a scan keeps every member's piece; an ordered fold holds at most
     * the members before the last */
    out->buffers_worst = out->buffers + 2 * window * n * sw_round(o->payload);
}

static void row_clear(struct sw_ct *ct)
{
    if (ct->slots)
        for (uint32_t i = 0; i < ct->window; i++)
            slot_free_mem(&ct->slots[i], ct->size);
    free(ct->slots);
    free(ct->port_rank);
    free(ct->rank_port);
    ct->slots = NULL;
    ct->port_rank = ct->rank_port = NULL;
}

/* Reserve a row for the members (global ranks, in communicator order) of
 * job.  Returns an acis_status; *row on success. */
int sw_ct_alloc(struct acis_sw *sw, uint32_t job, const uint32_t *ranks,
                uint32_t n, uint32_t *row)
{
    struct sw_job *j = &sw->jobs[job];
    uint32_t r;
    for (r = 0; r < sw->o.tables && sw->cts[r].in_use; r++)
        ;
    if (r == sw->o.tables)
        return ACIS_ST_TABLE_FULL;
    if (j->rows >= sw->o.job_rows)
        return ACIS_ST_JOB_LIMIT;                /* leave rows for other jobs */
    if (sw->window == 0)
        return ACIS_ST_NO_SLOTS;
    if (n < 1 || n > sw->o.ports)
        return ACIS_ST_BAD_REQUEST;
    struct sw_ct *ct = &sw->cts[r];
    uint16_t gen = (uint16_t)(ct->gen + 1 ? ct->gen + 1 : 1);
    memset(ct, 0, sizeof *ct);
    ct->gen = gen;
    ct->job = job;
    ct->size = n;
    ct->window = sw->window;
    ct->port_rank = malloc(sizeof(uint32_t) * sw->o.ports);
    ct->rank_port = malloc(sizeof(uint32_t) * n);
    ct->slots = calloc(ct->window, sizeof *ct->slots);
    if (!ct->port_rank || !ct->rank_port || !ct->slots)
        goto nomem;
    memset(ct->port_rank, 0xff, sizeof(uint32_t) * sw->o.ports);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t port = ranks[i] < j->size ? j->rank_port[ranks[i]] : SW_NONE;
        if (port == SW_NONE || ct->port_rank[port] != SW_NONE) {
            row_clear(ct);
            return ranks[i] < j->size && port != SW_NONE ? ACIS_ST_BAD_REQUEST
                                                          : ACIS_ST_UNKNOWN_RANK;
        }
        ct->port_rank[port] = i;
        ct->rank_port[i] = port;
    }
    size_t words = (n + 63) / 64;
    for (uint32_t i = 0; i < ct->window; i++) {
        for (int k = 0; k < 2; k++) {
            struct sw_use *u = &ct->slots[i].u[k];
            u->bits = calloc(words, sizeof(uint64_t));
            u->rx_off = malloc(sizeof(uint32_t) * n);
            u->rx_len = malloc(sizeof(uint32_t) * n);
            u->buf = sw_alloc(sw->o.payload);
            u->held = calloc(n, sizeof *u->held);
            if (!u->bits || !u->rx_off || !u->rx_len || !u->buf || !u->held)
                goto nomem;
        }
    }
    ct->in_use = 1;
    j->rows++;
    SWC(sw, buffer_bytes) += 2 * (uint64_t)ct->window * sw->o.payload;
    SWC(sw, tables_in_use)++;
    SWC(sw, slots_in_use) += ct->window;
    *row = r;
    return ACIS_ST_OK;
nomem:
    row_clear(ct);
    return ACIS_ST_NO_SLOTS;
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
    memset(&sw->jobs[job], 0, sizeof sw->jobs[job]);
    SWC(sw, jobs)--;
}
