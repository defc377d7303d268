/* pool.c -- the aggregation pool: each table row owns a fixed window of
 * slots (two uses each, with their buffers and bitmaps), and the rows
 * share a few hold buffers for floating-point pieces that arrive before
 * their turn (with workers, a worker's rows an equal share of them).  All
 * of it was carved when the switch was created (layout.c); nothing here
 * allocates.  A full hold is not an error: the piece is not taken, its
 * sender hears PENDING and sends it again. */
#include "config.h"

#include <string.h>

#include "sw.h"

void sw_use_reset(struct acis_sw *sw, struct sw_use *u)
{
    if (u->held)
        sw_hold_drop(sw, u);
    u->busy = u->done = u->up = 0;
    u->dups = 0;
    u->arrived = 0;
    u->placed = 0;
    u->lo = UINT32_MAX;
    u->hi = 0;
    u->want_lo = UINT32_MAX;
    u->want_hi = 0;
    u->want_any = 0;
    u->quick = 0;
    u->have_first = 0;
    u->abstained = 0;
    u->disagreed = 0;
    u->next = 0;
    memset(u->bits, 0, sw->words * sizeof(uint64_t));
    memset(u->want, 0, sw->words * sizeof(uint64_t));
}

/* Row `row` gets its window of the pool, every use reset. */
void sw_pool_bind(struct acis_sw *sw, struct sw_ct *ct, uint32_t row)
{
    ct->worker = (uint8_t)(row % sw->nworkers);
    ct->slots = &sw->pool.slots[(size_t)row * sw->window];
    for (uint32_t i = 0; i < sw->window; i++) {
        ct->slots[i].cur = 0;
        for (int k = 0; k < 2; k++) {
            struct sw_use *u = &ct->slots[i].u[k];
            u->held = 0;
            sw_use_reset(sw, u);
            u->seq = u->seg = 0;
        }
    }
}

/* A row is dropped: its held pieces go back. */
void sw_pool_reset_row(struct acis_sw *sw, struct sw_ct *ct)
{
    for (uint32_t i = 0; ct->slots && i < sw->window; i++)
        for (int k = 0; k < 2; k++)
            if (ct->slots[i].u[k].held)
                sw_hold_drop(sw, &ct->slots[i].u[k]);
    ct->slots = NULL;
}

/* A use's tag in the hold table: its index in the pool, + 1. */
static uint32_t tag_of(const struct acis_sw *sw, const struct sw_use *u)
{
    const struct sw_slot *s0 = sw->pool.slots;
    size_t bytes = (size_t)((const uint8_t *)u - (const uint8_t *)s0);
    size_t slot = bytes / sizeof *s0, k = u == &s0[slot].u[1];
    return (uint32_t)(2 * slot + k + 1);
}

/* The hold buffers of the worker whose row tag's use is in: [*lo, *hi).
 * Shared among the workers that own rows (fewer than all when there are
 * more workers than rows), each at least one (layout.c). */
static void share(const struct acis_sw *sw, uint32_t tag, uint32_t *lo, uint32_t *hi)
{
    uint32_t n = sw->nworkers < sw->o.tables ? sw->nworkers : sw->o.tables;
    uint32_t w = (tag - 1) / 2 / sw->window % sw->nworkers;
    *lo = (uint32_t)((uint64_t)sw->pool.nhold * w / n);
    *hi = (uint32_t)((uint64_t)sw->pool.nhold * (w + 1) / n);
}

struct sw_hold *sw_hold_find(struct acis_sw *sw, const struct sw_use *u, uint32_t key)
{
    uint32_t tag = tag_of(sw, u), lo, hi;
    share(sw, tag, &lo, &hi);
    for (uint32_t i = lo; u->held && i < hi; i++)
        if (sw->pool.hold[i].use == tag && sw->pool.hold[i].key == key)
            return &sw->pool.hold[i];
    return NULL;
}

uint8_t *sw_hold_take(struct acis_sw *sw, struct sw_use *u, uint32_t key)
{
    uint32_t tag = tag_of(sw, u), lo, hi;
    share(sw, tag, &lo, &hi);
    for (uint32_t i = lo; i < hi; i++) {
        struct sw_hold *h = &sw->pool.hold[i];
        if (h->use)
            continue;
        h->use = tag;
        h->key = key;
        SWC(sw, held)++;             /* per view: the sum is the switch's */
        u->held++;
        return h->buf;
    }
    return NULL;
}

void sw_hold_give(struct acis_sw *sw, struct sw_use *u, struct sw_hold *h)
{
    h->use = 0;
    SWC(sw, held)--;
    u->held--;
}

void sw_hold_drop(struct acis_sw *sw, struct sw_use *u)
{
    uint32_t tag = tag_of(sw, u), lo, hi;
    share(sw, tag, &lo, &hi);
    for (uint32_t i = lo; u->held && i < hi; i++)
        if (sw->pool.hold[i].use == tag)
            sw_hold_give(sw, u, &sw->pool.hold[i]);
}
