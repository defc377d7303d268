/* emulate.c -- a private switch core standing in for a failed switch: the
 * members' packets of a segment still open go in, the answers the switch
 * would have sent come out, computed by the same gather/reduce unit (so a
 * recovered result is bitwise what the switch gave, or would have given,
 * every other member).  Used by a rank recovering after a switch failure
 * (src/offload/recover.c); no sockets. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sw.h"

struct acis_swemu {
    struct acis_sw *core;
    uint32_t members, ctx, slots;
    acis_swemu_out out;
    void *arg;
};

static int emu_open(void *ctx, uint32_t port, const void *peer)
{
    (void)ctx;
    (void)port;
    (void)peer;
    return 0;
}

static void emu_close(void *ctx, uint32_t port)
{
    (void)ctx;
    (void)port;
}

/* Answers to members: hand them out as they are. */
static void emu_send(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                     int iovcnt)
{
    struct acis_swemu *e = ctx;
    uint8_t pkt[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    size_t len = 0;
    for (int k = 0; k < iovcnt && len + iov[k].iov_len <= sizeof pkt; k++) {
        memcpy(pkt + len, iov[k].iov_base, iov[k].iov_len);
        len += iov[k].iov_len;
    }
    if (len < ACIS_HDR_LEN || !e->out)
        return;
    for (uint32_t i = 0; i < n; i++)
        e->out(e->arg, ports[i], pkt, len);     /* port i is member i */
}

static void emu_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)ctx;
    (void)peer;
    (void)iov;
    (void)iovcnt;
}

struct acis_swemu *acis_swemu_create(uint64_t key, const uint32_t *granks, uint32_t n,
                                     uint32_t world, uint32_t slots, uint32_t payload)
{
    struct acis_swemu *e = calloc(1, sizeof *e);
    char err[128];
    if (!e)
        return NULL;
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.ports = n;
    o.tables = 1;
    o.slots = slots;
    o.payload = payload;
    struct acis_sw_io io = { e, emu_open, emu_close, emu_send, emu_reply };
    e->core = acis_sw_create(&o, &io, err, sizeof err);
    e->members = n;
    e->slots = slots;
    if (!e->core)
        goto fail;
    /* Member i joins on port i (ports are handed out in order). */
    for (uint32_t i = 0; i < n; i++) {
        struct acis_hdr h = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_HELLO, 0), .payload_len = ACIS_HELLO_LEN,
            .job_key = key, .seq = i + 1, .src = granks[i],
        };
        uint8_t pkt[ACIS_HDR_LEN + ACIS_HELLO_LEN] = { 0 };
        acis_hdr_encode(&h, pkt);
        acis_put32(pkt + ACIS_HDR_LEN, world);
        acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, ACIS_HELLO_LEN);
        acis_sw_input(e->core, ACIS_PORT_SERVICE, &i, pkt, sizeof pkt);
    }
    uint32_t row;
    if (sw_ct_alloc(e->core, 0, granks, n, &row) != ACIS_ST_OK)
        goto fail;
    e->ctx = sw_ct_ctx(e->core, row);
    return e;
fail:
    acis_swemu_destroy(e);
    return NULL;
}

void acis_swemu_destroy(struct acis_swemu *e)
{
    if (!e)
        return;
    acis_sw_destroy(e->core);
    free(e);
}

void acis_swemu_counters(const struct acis_swemu *e, uint64_t *out)
{
    acis_sw_counters(e->core, out);
}

int acis_swemu_input(struct acis_swemu *e, uint32_t member, uint32_t slot, int round,
                     const uint8_t *pkt, size_t len, acis_swemu_out out, void *arg)
{
    /* The header ends on an SW_ALIGN boundary so the payload is aligned
     * for the kernels. */
    _Alignas(SW_ALIGN) uint8_t room[SW_ALIGN + ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    uint8_t *copy = room + (SW_ALIGN - ACIS_HDR_LEN % SW_ALIGN);
    if (member >= e->members || slot >= e->slots || len < ACIS_HDR_LEN ||
        len > ACIS_HDR_LEN + ACIS_MAX_PAYLOAD)
        return -1;
    memcpy(copy, pkt, len);
    /* This private core's row, slot and round; the rest as sent. */
    uint16_t flags = (uint16_t)(acis_get16(copy + 8) & ~ACIS_F_ROUND);
    acis_put16(copy + 8, round ? flags | ACIS_F_ROUND : flags);
    acis_put16(copy + 10, (uint16_t)slot);
    acis_put32(copy + 24, e->ctx);
    acis_hdr_seal(copy, copy + ACIS_HDR_LEN, len - ACIS_HDR_LEN);
    e->out = out;
    e->arg = arg;
    acis_sw_input(e->core, member, NULL, copy, len);
    return 0;
}
