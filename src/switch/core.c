/* core.c -- the switch core: build a switch (all its memory at once,
 * layout.c) and its workers' views, take its packets in (acis_sw_input:
 * the quick path of quick.c, which hands all else to input.c's full
 * checks), its clock, its counters. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sw.h"
#include "util/util.h"

_Static_assert(ACIS_SW_MAX_THREADS <= 256, "sw_ct.worker is a byte");

static int range(const char *name, uint64_t v, uint64_t lo, uint64_t hi,
                 char *err, size_t errlen)
{
    if (v >= lo && v <= hi)
        return 0;
    snprintf(err, errlen, "%s must be in %llu..%llu, not %llu", name,
             (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)v);
    return -1;
}

struct acis_sw *acis_sw_create(const struct acis_sw_opts *o,
                               const struct acis_sw_io *io,
                               char *err, size_t errlen)
{
    if (range("ports", o->ports, 1, 65535, err, errlen) ||
        range("tables", o->tables, 1, 65535, err, errlen) ||
        range("payload", o->payload, ACIS_MIN_PAYLOAD, ACIS_MAX_PAYLOAD, err, errlen) ||
        range("slots", o->slots, o->tables, (uint64_t)o->tables * 65535, err, errlen) ||
        range("links", o->links, 0, o->ports, err, errlen) ||
        range("threads", o->threads, 0, ACIS_SW_MAX_THREADS, err, errlen))
        return NULL;
    if (o->threads > 1 && o->links) {
        snprintf(err, errlen, "a switch with %u threads takes no links: a fabric's switches "
                 "serve with one", o->threads);
        return NULL;
    }
    struct acis_sw *sw = calloc(1, sizeof *sw);
    if (!sw)
        goto nomem;
    sw->o = *o;
    sw->io = *io;
    sw->kern = sw_kernels_best();
    sw->quick = sw_quick_best();
    if (sw_layout(NULL, o, NULL, &sw->size, err, errlen) != 0)
        goto fail;
    size_t bytes = sw->size.total - sizeof *sw;
    sw->mem = aligned_alloc(SW_ALIGN, sw_round(bytes));
    if (!sw->mem)
        goto nomem;
    memset(sw->mem, 0, bytes);
    sw_layout(sw, o, sw->mem, &sw->size, err, errlen);
    if (!sw->o.job_rows)              /* a second job always finds a row */
        sw->o.job_rows = o->tables > 1 ? o->tables - (o->tables / 4 ? o->tables / 4 : 1) : 1;
    if (!sw->o.job_ports || sw->o.job_ports > o->ports)
        sw->o.job_ports = o->ports;
    if (getrandom(&sw->boot, sizeof sw->boot, 0) != sizeof sw->boot)
        sw->boot = (uint32_t)acis_now_ns();
    SWC(sw, tables_capacity) = o->tables;
    SWC(sw, slots_capacity) = (uint64_t)sw->window * o->tables;
    SWC(sw, buffer_bytes) = sw->size.pool;
    SWC(sw, state_bytes) = sw->size.total - sw->size.pool;
    for (uint32_t w = 0; w < sw->nworkers; w++) {
        if (pthread_mutex_init(&sw->locks[w], NULL) != 0) {
            snprintf(err, errlen, "cannot make the workers' locks");
            sw->nworkers = w;                  /* the ones to destroy */
            goto fail;
        }
        if (w == 0)
            continue;
        struct acis_sw *v = sw->views[w];
        uint8_t *scratch = v->scratch;
        uint32_t *group = v->group, *group2 = v->group2, *kids = v->kids;
        *v = *sw;                              /* every table and the pool */
        v->worker = w;
        v->scratch = scratch;
        v->group = group;
        v->group2 = group2;
        v->kids = kids;
        memset(v->c, 0, sizeof v->c);
    }
    return sw;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    acis_sw_destroy(sw);
    return NULL;
}

void acis_sw_destroy(struct acis_sw *sw)
{
    if (!sw)
        return;
    for (uint32_t w = 0; sw->locks && w < sw->nworkers; w++)
        pthread_mutex_destroy(&sw->locks[w]);
    free(sw->mem);
    free(sw);
}

void acis_sw_tick(struct acis_sw *sw, uint64_t now_ns)
{
    if (!sw->up || now_ns - sw->last_tick < 100000000ull)
        return;
    sw->last_tick = now_ns;
    sw_link_tick(sw);
}

void acis_sw_set_parent(struct acis_sw *sw, uint32_t boot)
{
    for (uint32_t w = 0; w < sw->nworkers; w++) {   /* transports link one worker */
        sw->views[w]->up = 1;
        sw->views[w]->boot = boot;
    }
}

uint32_t acis_sw_boot(const struct acis_sw *sw)
{
    return sw->boot;
}

void acis_sw_counters(const struct acis_sw *sw, uint64_t *out)
{
    sw_counters(sw, out);
}

struct acis_sw *acis_sw_worker(struct acis_sw *sw, uint32_t w)
{
    return w < sw->nworkers ? sw->views[w] : NULL;
}

void acis_sw_worker_io(struct acis_sw *worker, const struct acis_sw_io *io)
{
    worker->io = *io;
}

uint32_t acis_sw_workers(const struct acis_sw *sw)
{
    return sw->nworkers;
}

uint32_t acis_sw_row_worker(const struct acis_sw *sw, uint32_t ctx)
{
    return (((ctx & 0xffff) - 1) & 0xffff) % sw->nworkers;
}

void acis_sw_enter(struct acis_sw *worker)
{
    if (worker->nworkers > 1)
        pthread_mutex_lock(&worker->locks[worker->worker]);
}

void acis_sw_leave(struct acis_sw *worker)
{
    if (worker->nworkers > 1)
        pthread_mutex_unlock(&worker->locks[worker->worker]);
}

void acis_sw_input(struct acis_sw *sw, uint32_t port, const void *peer,
                   const uint8_t *pkt, size_t len)
{
    /* quick.c, or sw_full_input */
    sw->quick(sw, port, peer, pkt, len >= ACIS_HDR_LEN ? pkt + ACIS_HDR_LEN : NULL, len);
}

void acis_sw_input_split(struct acis_sw *sw, uint32_t port, const void *peer,
                         const uint8_t *hdr, const uint8_t *payload, size_t len)
{
    static const uint8_t none[1];
    if (len >= ACIS_HDR_LEN)      /* no payload may come as NULL: the core
                                     copies its 0 bytes, memcpy wants an address */
        sw->quick(sw, port, peer, hdr, payload ? payload : none, len);
}
