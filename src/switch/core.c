/* core.c -- the switch core: build a switch (all its memory at once,
 * layout.c), take its packets in (acis_sw_input: the quick path of
 * quick.c, which hands all else to input.c's full checks), its clock,
 * its counters. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sw.h"
#include "util/util.h"

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
        range("links", o->links, 0, o->ports, err, errlen))
        return NULL;
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
    sw->up = 1;
    sw->boot = boot;
}

uint32_t acis_sw_boot(const struct acis_sw *sw)
{
    return sw->boot;
}

void acis_sw_counters(const struct acis_sw *sw, uint64_t *out)
{
    memcpy(out, sw->c, sizeof sw->c);
}

void acis_sw_input(struct acis_sw *sw, uint32_t port, const void *peer,
                   const uint8_t *pkt, size_t len)
{
    sw->quick(sw, port, peer, pkt, len);        /* quick.c, or sw_full_input */
}
