/* regcache.c -- memory registrations kept across calls, so a buffer sent
 * again is not registered again.  A small array of page-aligned regions,
 * searched from the most recently used; when it holds too many regions or
 * bytes, the least recently used are deregistered.  A request overlapping
 * a region that does not cover it replaces that region with one covering
 * both.  Registering and deregistering are callbacks, so unit tests run it
 * without a device.  Stale regions (memory freed and mapped again) are the
 * caller's problem: the verbs channel uses the cache only with on-demand
 * paging, where a registration follows the page tables. */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "verbs.h"

struct region {
    uintptr_t lo, hi;        /* [lo, hi), whole pages */
    void *handle;
    uint32_t lkey;
    uint64_t used;           /* tick of the last use */
};

struct acis_regcache {
    struct region *r;
    uint32_t n, max;
    uint64_t max_bytes, tick;
    acis_reg_fn reg;
    acis_dereg_fn dereg;
    void *arg;
    uintptr_t page;
    struct acis_regcache_stats st;
};

struct acis_regcache *acis_regcache_new(uint32_t max_entries, uint64_t max_bytes,
                                        acis_reg_fn reg, acis_dereg_fn dereg, void *arg)
{
    struct acis_regcache *rc = calloc(1, sizeof *rc);
    if (!rc || !(rc->r = calloc(max_entries ? max_entries : 1, sizeof *rc->r))) {
        free(rc);
        return NULL;
    }
    long pg = sysconf(_SC_PAGESIZE);
    rc->page = pg > 0 ? (uintptr_t)pg : 4096;
    rc->max = max_entries ? max_entries : 1;
    rc->max_bytes = max_bytes;
    rc->reg = reg;
    rc->dereg = dereg;
    rc->arg = arg;
    return rc;
}

/* Deregister region i and close the gap. */
static void drop(struct acis_regcache *rc, uint32_t i)
{
    rc->dereg(rc->arg, rc->r[i].handle);
    rc->st.bytes -= rc->r[i].hi - rc->r[i].lo;
    rc->r[i] = rc->r[--rc->n];
}

void acis_regcache_free(struct acis_regcache *rc)
{
    if (!rc)
        return;
    while (rc->n)
        drop(rc, rc->n - 1);
    free(rc->r);
    free(rc);
}

/* Drop the least recently used region. */
static void evict(struct acis_regcache *rc)
{
    uint32_t old = 0;
    for (uint32_t i = 1; i < rc->n; i++)
        if (rc->r[i].used < rc->r[old].used)
            old = i;
    drop(rc, old);
    rc->st.evictions++;
}

int acis_regcache_get(struct acis_regcache *rc, const void *addr, size_t len, uint32_t *lkey)
{
    uintptr_t a = (uintptr_t)addr, lo = a & ~(rc->page - 1);
    uintptr_t hi = (a + (len ? len : 1) + rc->page - 1) & ~(rc->page - 1);
    rc->tick++;
    for (uint32_t i = 0; i < rc->n; i++) {
        struct region *r = &rc->r[i];
        if (r->lo <= a && a + len <= r->hi) {
            r->used = rc->tick;
            rc->st.hits++;
            *lkey = r->lkey;
            return 0;
        }
    }
    rc->st.misses++;
    for (int grew = 1; grew;) {                 /* overlapping: cover them too */
        grew = 0;
        for (uint32_t i = 0; i < rc->n; i++)
            if (rc->r[i].lo < hi && lo < rc->r[i].hi &&
                (rc->r[i].lo < lo || rc->r[i].hi > hi)) {
                lo = rc->r[i].lo < lo ? rc->r[i].lo : lo;
                hi = rc->r[i].hi > hi ? rc->r[i].hi : hi;
                grew = 1;
            }
    }
    if (rc->max_bytes && hi - lo > rc->max_bytes) {
        rc->st.failures++;
        return -1;
    }
    acis_regcache_invalidate(rc, (void *)lo, hi - lo);
    while (rc->n && (rc->n >= rc->max ||
                     (rc->max_bytes && rc->st.bytes + (hi - lo) > rc->max_bytes)))
        evict(rc);
    struct region *r = &rc->r[rc->n];
    r->handle = rc->reg(rc->arg, (void *)lo, hi - lo, &r->lkey);
    if (!r->handle) {
        rc->st.failures++;
        return -1;
    }
    r->lo = lo;
    r->hi = hi;
    r->used = rc->tick;
    rc->n++;
    rc->st.bytes += hi - lo;
    *lkey = r->lkey;
    return 0;
}

void acis_regcache_invalidate(struct acis_regcache *rc, const void *addr, size_t len)
{
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    for (uint32_t i = 0; i < rc->n;)
        if (rc->r[i].lo < hi && lo < rc->r[i].hi)
            drop(rc, i);
        else
            i++;
}

void acis_regcache_stats(const struct acis_regcache *rc, struct acis_regcache_stats *s)
{
    *s = rc->st;
    s->entries = rc->n;
}
