/* layout.c -- the switch's memory: every table and the aggregation pool,
 * carved out of one allocation made when the switch is created, so what
 * acis-info reports (acis_sw_size) is what the switch holds, and nothing
 * is allocated afterwards.  The same walk sizes (base NULL) and carves. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sw.h"

#define DEFAULT_SETUPS 16

struct carver {
    uint8_t *base;
    size_t off;
};

/* n bytes at the next multiple of align: their address (NULL when only
 * sizing). */
static void *take(struct carver *c, size_t n, size_t align)
{
    c->off = (c->off + align - 1) / align * align;
    void *p = c->base ? c->base + c->off : NULL;
    c->off += n;
    return p;
}

/* Bytes of a use's own bookkeeping beside its buffer. */
static size_t use_extra(uint32_t words, uint32_t payload)
{
    return 2 * words * sizeof(uint64_t) + (sw_round(payload) / 64) * sizeof(uint64_t);
}

/* How many slots each row gets and hold buffers there are, for o. */
static int plan(const struct acis_sw_opts *o, uint32_t words, struct acis_sw_size *z,
                char *err, size_t errlen)
{
    uint64_t buf = sw_round(o->payload);
    uint64_t use = buf + use_extra(words, o->payload) + sizeof(struct sw_use);
    uint64_t slot = 2 * use + sizeof(struct sw_slot) - 2 * sizeof(struct sw_use);
    uint64_t hold = buf + sizeof(struct sw_hold);
    uint64_t most = o->slots / o->tables;
    /* with workers, each that owns rows gets a share of the hold buffers
     * (pool.c): at least one each */
    uint32_t owners = o->threads > 1 ? (o->threads < o->tables ? o->threads : o->tables) : 1;
    if (o->hold && o->hold < owners) {
        snprintf(err, errlen, "%u hold buffers leave some of the %u workers that serve rows "
                 "none: give --hold at least %u", o->hold, owners, owners);
        return -1;
    }
    if (o->pool == 0) {                 /* as slots ask */
        z->window = (uint32_t)most;
        z->hold = o->hold ? o->hold : (uint32_t)(most * o->tables / 8 > 4 ? most * o->tables / 8 : 4);
        if (z->hold < owners)
            z->hold = owners;
        return 0;
    }
    z->hold = o->hold ? o->hold : (uint32_t)(o->pool / 8 / hold > 4 ? o->pool / 8 / hold : 4);
    if (z->hold < owners)
        z->hold = owners;
    uint64_t left = (uint64_t)z->hold * hold < o->pool ? o->pool - (uint64_t)z->hold * hold : 0;
    uint64_t w = left / ((uint64_t)o->tables * slot);
    z->window = (uint32_t)(w < most ? w : most);
    if (z->window == 0) {
        snprintf(err, errlen, "a pool of %u bytes holds no slot for each of %u table rows of "
                 "%u-byte packets (and %u hold buffers): raise --pool or lower --tables, "
                 "--payload or --hold", o->pool, o->tables, o->payload, z->hold);
        return -1;
    }
    return 0;
}

int sw_layout(struct acis_sw *sw, const struct acis_sw_opts *o, void *base,
              struct acis_sw_size *z, char *err, size_t errlen)
{
    struct carver c = { base, 0 };
    uint32_t words = (o->ports + 63) / 64;
    uint32_t links = o->links;
    memset(z, 0, sizeof *z);
    if (plan(o, words, z, err, errlen) != 0)
        return -1;
    z->jobs = o->jobs ? o->jobs : o->ports > 256 ? o->ports : 256;
    z->setups = o->setups ? o->setups : DEFAULT_SETUPS;
    size_t wb = words * sizeof(uint64_t), at;

    /* the switch's tables (state) */
    at = c.off;
    struct sw_port *ports = take(&c, sizeof *ports * o->ports, 8);
    z->ports_bytes = c.off - at;
    z->port = sizeof *ports;
    at = c.off;
    struct sw_job *jobs = take(&c, sizeof *jobs * z->jobs, 8);
    uint8_t *jbits = take(&c, 2 * wb * z->jobs, 8);
    z->jobs_bytes = c.off - at;
    z->job = sizeof *jobs + 2 * wb;
    at = c.off;
    struct sw_ct *cts = take(&c, sizeof *cts * o->tables, 8);
    uint8_t *cbits = take(&c, wb * o->tables, 8);
    z->rows = c.off - at;
    z->row = sizeof *cts + wb;
    at = c.off;
    /* a set-up's bitmaps and link counts, whole words each (the next
     * set-up's bitmaps are read as 64-bit words) */
    size_t su_extra = (2 * wb + links * sizeof(uint32_t) + 7) / 8 * 8;
    struct sw_setup *sus = take(&c, sizeof *sus * z->setups, 8);
    uint8_t *sbits = take(&c, su_extra * z->setups, 8);
    z->setups_bytes = c.off - at;
    z->setup = sizeof *sus + su_extra;
    at = c.off;
    uint32_t nw = o->threads > 1 ? o->threads : 1;
    uint8_t *scratch = take(&c, sw_round(o->payload) * nw, SW_ALIGN);
    uint32_t *group = take(&c, 3 * sizeof(uint32_t) * o->ports * nw, 8);
    /* the workers but the first (the switch itself): views, locks */
    struct acis_sw *views = take(&c, sizeof *views * (nw - 1), _Alignof(struct acis_sw));
    struct acis_sw **vp = take(&c, sizeof *vp * nw, 8);
    pthread_mutex_t *locks = take(&c, sizeof *locks * nw, _Alignof(pthread_mutex_t));
    z->other = c.off - at + sizeof(struct acis_sw);

    /* the pool: every row's slots, their bookkeeping and buffers, and the
     * hold buffers */
    at = c.off;
    uint32_t nslots = o->tables * z->window;
    struct sw_slot *slots = take(&c, sizeof *slots * nslots, 8);
    uint8_t *ubits = take(&c, 2 * (size_t)nslots * use_extra(words, o->payload), 8);
    uint8_t *ubufs = take(&c, 2 * (size_t)nslots * sw_round(o->payload), SW_ALIGN);
    struct sw_hold *hold = take(&c, sizeof *hold * z->hold, 8);
    uint8_t *hbufs = take(&c, (size_t)z->hold * sw_round(o->payload), SW_ALIGN);
    z->pool = c.off - at;
    z->total = c.off + sizeof(struct acis_sw);
    if (!base || !sw)
        return 0;

    sw->ports = ports;
    sw->jobs = jobs;
    sw->cts = cts;
    sw->setups = sus;
    sw->scratch = scratch;
    sw->group = group;
    sw->group2 = group + o->ports;
    sw->kids = group + 2 * (size_t)o->ports;
    sw->kids_row = SW_NONE;
    sw->words = words;
    sw->window = z->window;
    for (uint32_t j = 0; j < z->jobs; j++) {
        jobs[j].links = (uint64_t *)(jbits + 2 * wb * j);
        jobs[j].unconfirmed = (uint64_t *)(jbits + 2 * wb * j + wb);
    }
    for (uint32_t r = 0; r < o->tables; r++)
        cts[r].ports = (uint64_t *)(cbits + wb * r);
    for (uint32_t s = 0; s < z->setups; s++) {
        uint8_t *b = sbits + su_extra * s;
        sus[s].hosts = (uint64_t *)b;
        sus[s].acked = (uint64_t *)(b + wb);
        sus[s].count = (uint32_t *)(b + 2 * wb);
    }
    size_t extra = use_extra(words, o->payload);
    for (uint32_t s = 0; s < nslots; s++)
        for (int k = 0; k < 2; k++) {
            struct sw_use *u = &slots[s].u[k];
            uint8_t *b = ubits + (2 * (size_t)s + (size_t)k) * extra;
            u->bits = (uint64_t *)b;
            u->want = (uint64_t *)(b + wb);
            u->cover = (uint64_t *)(b + 2 * wb);
            u->buf = ubufs + (2 * (size_t)s + (size_t)k) * sw_round(o->payload);
        }
    for (uint32_t h = 0; h < z->hold; h++)
        hold[h].buf = hbufs + (size_t)h * sw_round(o->payload);
    sw->pool = (struct sw_pool){ .slots = slots, .hold = hold, .nhold = z->hold };
    sw->nworkers = nw;
    sw->views = vp;
    sw->locks = locks;
    vp[0] = sw;
    for (uint32_t w = 1; w < nw; w++) {
        vp[w] = &views[w - 1];
        vp[w]->scratch = scratch + sw_round(o->payload) * w;
        vp[w]->group = group + 3 * (size_t)o->ports * w;
        vp[w]->group2 = vp[w]->group + o->ports;
        vp[w]->kids = vp[w]->group + 2 * (size_t)o->ports;
    }
    return 0;
}

void acis_sw_size(const struct acis_sw_opts *o, struct acis_sw_size *out, char *err,
                  size_t errlen)
{
    if (o->tables == 0 || o->ports == 0 || o->slots < o->tables ||
        sw_layout(NULL, o, NULL, out, err, errlen) != 0) {
        if (o->tables == 0 || o->ports == 0 || o->slots < o->tables)
            snprintf(err, errlen, "ports and tables must be at least 1, slots at least tables");
        memset(out, 0, sizeof *out);
    }
}
