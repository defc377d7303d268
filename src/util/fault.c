/* fault.c -- fault injection on the send side of hosts and switches, for
 * tests: each packet may be dropped, sent twice, held back until after the
 * next one (reordered), sent late, or sent with one byte flipped, at given
 * rates and from a given seed, so every recovery path can be exercised and
 * a failing run repeated.  Held packets are copied and released by
 * acis_fault_flush() (called from the sender's progress loop). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint64_t next_random(struct acis_fault *f)
{
    uint64_t x = f->rng;                    /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    f->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* True with probability ppb / 1e9. */
static int chance(struct acis_fault *f, uint64_t ppb)
{
    return ppb && next_random(f) % (uint64_t)ACIS_RATE_ONE < ppb;
}

int acis_fault_pick(uint64_t ppb, uint64_t seed, uint64_t n)
{
    uint64_t z = n + seed * 0x9E3779B97F4A7C15ull;  /* splitmix64 */
    z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ z >> 27) * 0x94D049BB133111EBull;
    return ppb && (z ^ z >> 31) % (uint64_t)ACIS_RATE_ONE < ppb;
}

void acis_fault_init(struct acis_fault *f, const struct acis_fault_rates *r, uint64_t seed)
{
    memset(f, 0, sizeof *f);
    f->r = *r;
    f->rng = seed * 0x9E3779B97F4A7C15ULL + 0x1234567;
    if (!f->rng)
        f->rng = 1;
    f->active = r->drop || r->dup || r->reorder || r->delay || r->corrupt;
}

void acis_fault_free(struct acis_fault *f)
{
    for (size_t i = 0; i < f->nheld; i++)
        free(f->held[i].buf);
    free(f->held);
    f->held = NULL;
    f->nheld = f->cap = 0;
}

static void hold(struct acis_fault *f, uint32_t dest, const uint8_t *buf, size_t len,
                 uint64_t due, int after_next)
{
    if (f->nheld == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 16;
        struct acis_held *h = realloc(f->held, cap * sizeof *h);
        if (!h)
            return;                             /* out of memory: the packet is lost */
        f->held = h;
        f->cap = cap;
    }
    uint8_t *copy = malloc(len);
    if (!copy)
        return;
    memcpy(copy, buf, len);
    f->held[f->nheld++] = (struct acis_held){ due, dest, len, copy, after_next };
}

/* Release held packets: those due by now, and (after_next) the reordered. */
static void release(struct acis_fault *f, acis_fault_sink sink, void *ctx, uint64_t now,
                    int include_after_next)
{
    size_t j = 0;
    for (size_t i = 0; i < f->nheld; i++) {
        struct acis_held *h = &f->held[i];
        int go = h->after_next ? include_after_next || now >= h->due : now >= h->due;
        if (go) {
            sink(ctx, h->dest, h->buf, h->len);
            free(h->buf);
        } else {
            f->held[j++] = *h;
        }
    }
    f->nheld = j;
}

void acis_fault_send(struct acis_fault *f, acis_fault_sink sink, void *ctx, uint32_t dest,
                     const uint8_t *buf, size_t len, uint64_t now)
{
    if (chance(f, f->r.drop)) {
        f->dropped++;
        return;
    }
    uint8_t local[ACIS_FAULT_MAX_PACKET];
    if (chance(f, f->r.corrupt) && len > 0 && len <= sizeof local) {
        memcpy(local, buf, len);
        local[next_random(f) % len] ^= (uint8_t)(1u << (next_random(f) % 8));
        buf = local;
        f->corrupted++;
    }
    if (chance(f, f->r.reorder)) {
        hold(f, dest, buf, len, now + 1000000, 1);   /* after the next one, or 1 ms */
        f->reordered++;
        return;
    }
    if (chance(f, f->r.delay)) {
        hold(f, dest, buf, len, now + f->r.delay_ns, 0);
        f->delayed++;
        return;
    }
    sink(ctx, dest, buf, len);
    if (chance(f, f->r.dup)) {
        sink(ctx, dest, buf, len);
        f->duplicated++;
    }
    release(f, sink, ctx, now, 1);
}

void acis_fault_flush(struct acis_fault *f, acis_fault_sink sink, void *ctx, uint64_t now)
{
    if (f->nheld)
        release(f, sink, ctx, now, 0);
}

int acis_fault_opt(struct acis_fault_rates *r, const char *name, const char *value)
{
    long long v;
    uint64_t *slot = strcmp(name, "drop") == 0      ? &r->drop
                     : strcmp(name, "dup") == 0     ? &r->dup
                     : strcmp(name, "reorder") == 0 ? &r->reorder
                     : strcmp(name, "delay") == 0   ? &r->delay
                     : strcmp(name, "corrupt") == 0 ? &r->corrupt : NULL;
    if (!slot || acis_rate_parse(value, &v) != 0)
        return -1;
    *slot = (uint64_t)v;
    return 0;
}
