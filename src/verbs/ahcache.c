/* ahcache.c -- a small fixed cache of address handles, for answers to
 * senders that have no port (the verbs switch's service endpoint: HELLO,
 * STATS, refusals).  An address handle may be destroyed only once no send
 * that uses it is in flight; sends on one queue pair complete in the
 * order they were posted, so an entry remembers the number of the last
 * send that used it and is reused only when that many sends completed.
 * Nothing waits: when every entry is still in use, there is no handle
 * and the answer is not sent (a lost datagram: hosts ask again).  Makes
 * and drops handles through functions it is given, so unit tests check
 * it without a device. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "verbs.h"

struct ah_entry {
    struct acis_ib_addr at;        /* the port's address (a handle is per
                                      port, whatever queue pair on it) */
    struct ibv_ah *ah;             /* NULL: free */
    uint64_t busy_until;           /* the last send using it, by number */
    uint64_t used;                 /* when last asked for (tick) */
};

struct acis_ahcache {
    uint32_t n;
    struct ah_entry *e;
    int32_t last;                  /* entry acis_ahcache_get returned */
    uint64_t tick;
    acis_ah_make_fn make;
    acis_ah_drop_fn drop;
    void *arg;
    struct acis_ahcache_stats st;
};

struct acis_ahcache *acis_ahcache_new(uint32_t entries, acis_ah_make_fn make,
                                      acis_ah_drop_fn drop, void *arg)
{
    struct acis_ahcache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->e = calloc(entries ? entries : 1, sizeof *c->e);
    if (!c->e) {
        free(c);
        return NULL;
    }
    c->n = entries ? entries : 1;
    c->last = -1;
    c->make = make;
    c->drop = drop;
    c->arg = arg;
    return c;
}

void acis_ahcache_free(struct acis_ahcache *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->e[i].ah)
            c->drop(c->arg, c->e[i].ah);
    free(c->e);
    free(c);
}

/* A free entry, else the least recently asked for that no send in
 * flight uses (done sends completed); -1 if none. */
static int32_t victim(const struct acis_ahcache *c, uint64_t done)
{
    int32_t v = -1;
    for (uint32_t i = 0; i < c->n; i++) {
        const struct ah_entry *e = &c->e[i];
        if (!e->ah)
            return (int32_t)i;
        if (e->busy_until <= done && (v < 0 || e->used < c->e[v].used))
            v = (int32_t)i;
    }
    return v;
}

struct ibv_ah *acis_ahcache_get(struct acis_ahcache *c, const struct acis_ib_addr *at,
                                const void *src, uint64_t done)
{
    c->last = -1;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->e[i].ah && acis_ud_same_port(&c->e[i].at, at)) {
            c->st.hits++;
            c->e[i].used = ++c->tick;
            c->last = (int32_t)i;
            return c->e[i].ah;
        }
    int32_t v = victim(c, done);
    if (v < 0) {
        c->st.full++;
        return NULL;
    }
    struct ibv_ah *ah = c->make(c->arg, src);
    if (!ah) {
        c->st.failed++;
        return NULL;
    }
    struct ah_entry *e = &c->e[v];
    if (e->ah) {
        c->drop(c->arg, e->ah);
        c->st.evicted++;
    }
    c->st.made++;
    *e = (struct ah_entry){ .at = *at, .ah = ah, .busy_until = 0, .used = ++c->tick };
    e->at.qpn = 0;
    c->last = v;
    return ah;
}

void acis_ahcache_used(struct acis_ahcache *c, uint64_t seq)
{
    if (c->last >= 0 && seq > c->e[c->last].busy_until)
        c->e[c->last].busy_until = seq;
}

void acis_ahcache_stats(const struct acis_ahcache *c, struct acis_ahcache_stats *s)
{
    *s = c->st;
}
