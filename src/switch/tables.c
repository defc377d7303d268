/* tables.c -- the switch's jobs and communicator table rows.  A job is a
 * key, a world size and bits per port (its hosts here, the links it is
 * below).  A row is what one switch needs to aggregate a communicator: a
 * bit per port (member hosts here, links with members below), the
 * set-up's key, and the window of pool slots its index owns.  Rows are
 * claimed when a communicator is set up, never in the middle of a
 * collective; context ids carry a generation so a stale id never matches
 * a reused row. */
#include "config.h"

#include <string.h>

#include "sw.h"

#define MAX_WORLD (1u << 24)

uint32_t sw_find_job(const struct acis_sw *sw, uint64_t key)
{
    for (uint32_t j = 0; j < sw->size.jobs; j++)
        if (sw->jobs[j].in_use && sw->jobs[j].key == key)
            return j;
    return SW_NONE;
}

uint32_t sw_job_new(struct acis_sw *sw, uint64_t key, uint32_t world)
{
    uint32_t j;
    for (j = 0; j < sw->size.jobs && sw->jobs[j].in_use; j++)
        ;
    if (j == sw->size.jobs || world == 0 || world > MAX_WORLD)
        return SW_NONE;
    struct sw_job *nj = &sw->jobs[j];
    uint64_t *links = nj->links, *unconf = nj->unconfirmed;
    memset(nj, 0, sizeof *nj);
    nj->links = links;
    nj->unconfirmed = unconf;
    memset(links, 0, sw->words * sizeof(uint64_t));
    memset(unconf, 0, sw->words * sizeof(uint64_t));
    nj->in_use = 1;
    nj->key = key;
    nj->size = world;
    nj->told = !sw->up;                  /* the top knows every job it has */
    SWC(sw, jobs)++;
    return j;
}

/* Context id: generation in the high 16 bits, row + 1 in the low 16, so 0
 * is never valid and a stale id of a reused row does not match. */
uint32_t sw_ct_ctx(const struct acis_sw *sw, uint32_t row)
{
    return (uint32_t)sw->cts[row].gen << 16 | (row + 1);
}

uint32_t sw_ct_of_setup(const struct acis_sw *sw, uint32_t job, uint32_t leader, uint32_t id)
{
    for (uint32_t r = 0; r < sw->o.tables; r++) {
        const struct sw_ct *ct = &sw->cts[r];
        if (ct->in_use && ct->job == job && ct->leader == leader && ct->id == id)
            return r;
    }
    return SW_NONE;
}

uint32_t sw_ct_children(const struct acis_sw *sw, const struct sw_ct *ct, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < sw->words; w++)
        for (uint64_t b = ct->ports[w]; b; b &= b - 1)
            out[n++] = w * 64 + (uint32_t)__builtin_ctzll(b);
    return n;
}

uint32_t acis_sw_rows_without(const struct acis_sw *sw, uint32_t port)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < sw->o.tables; r++) {
        const struct sw_ct *ct = &sw->cts[r];
        n += ct->in_use && (port >= sw->o.ports || !sw_bit(ct->ports, port));
    }
    return n;
}

/* Build row r with generation gen from the set-up's ports: its member
 * hosts and the links that counted members below. */
static int row_build(struct acis_sw *sw, uint32_t r, uint16_t gen, const struct sw_setup *su)
{
    struct sw_ct *ct = &sw->cts[r];
    uint64_t *ports = ct->ports;
    sw_kids_forget(sw, r);
    memset(ct, 0, sizeof *ct);
    ct->ports = ports;
    memcpy(ports, su->hosts, sw->words * sizeof(uint64_t));
    for (uint32_t p = 0; p < sw->o.ports; p++)
        if (sw->ports[p].in_use && sw->ports[p].link && su->count[sw->ports[p].lidx]) {
            sw_bit_set(ports, p);
            ct->links = 1;
        }
    for (uint32_t w = 0; w < sw->words; w++)
        ct->nchild += (uint32_t)__builtin_popcountll(ports[w]);
    if (ct->nchild == 0)
        return ACIS_ST_UNKNOWN_RANK;
    ct->gen = gen;
    ct->job = su->job;
    ct->size = su->size;
    ct->leader = su->leader;
    ct->id = su->id;
    ct->levels = 1;                              /* links confirm theirs */
    ct->free_port = SW_NONE;
    sw_pool_bind(sw, ct, r);
    ct->in_use = 1;
    sw->jobs[su->job].rows++;
    SWC(sw, tables_in_use)++;
    SWC(sw, slots_in_use) += sw->window;
    return ACIS_ST_OK;
}

int sw_ct_alloc(struct acis_sw *sw, const struct sw_setup *su, uint32_t *row)
{
    uint32_t r;
    for (r = 0; r < sw->o.tables && sw->cts[r].in_use; r++)
        ;
    if (r == sw->o.tables)
        return ACIS_ST_TABLE_FULL;
    if (sw->jobs[su->job].rows >= sw->o.job_rows)
        return ACIS_ST_JOB_LIMIT;                /* leave rows for other jobs */
    uint16_t gen = sw->cts[r].gen, next = (uint16_t)(gen + 1);
    int st = row_build(sw, r, next ? next : 1, su);   /* 0 names no row */
    if (st == ACIS_ST_OK)
        *row = r;
    else
        sw->cts[r].gen = gen;
    return st;
}

int sw_ct_install(struct acis_sw *sw, const struct sw_setup *su, uint32_t ctx)
{
    uint32_t r = (ctx & 0xffff) - 1;
    if (r >= sw->o.tables || ctx >> 16 == 0)
        return ACIS_ST_BAD_REQUEST;
    if (sw->cts[r].in_use && sw_ct_ctx(sw, r) == ctx)
        return ACIS_ST_OK;                       /* a repeat */
    if ((int16_t)(uint16_t)((ctx >> 16) - sw->cts[r].gen) <= 0)
        return -1;                               /* a late copy for a row since freed
                                                    or replaced (the number keeps its
                                                    generation when free) */
    sw_ct_free(sw, r);                           /* a stale one the parent dropped */
    uint16_t gen = sw->cts[r].gen;
    int st = row_build(sw, r, (uint16_t)(ctx >> 16), su);
    if (st != ACIS_ST_OK)
        sw->cts[r].gen = gen;
    return st;
}

void sw_ct_free(struct acis_sw *sw, uint32_t row)
{
    struct sw_ct *ct = &sw->cts[row];
    if (!ct->in_use)
        return;
    sw_kids_forget(sw, row);
    sw_pool_reset_row(sw, ct);
    SWC(sw, tables_in_use)--;
    SWC(sw, slots_in_use) -= sw->window;
    sw->jobs[ct->job].rows--;
    ct->in_use = 0;
}
