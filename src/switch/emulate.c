/* emulate.c -- a private switch core standing in for a failed switch: the
 * members' packets of a segment still open go in, the answers the switch
 * would have sent come out, computed by the same gather/reduce unit (so a
 * recovered result is bitwise what the switch gave, or would have given,
 * every other member).  Used by a rank recovering after a switch failure
 * (src/offload/fix.c); no sockets. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sw.h"

struct acis_swemu {
    struct acis_sw *core;
    uint32_t members, ctx, slots;
    uint32_t *port_of;       /* members entries: member -> its port */
    uint32_t *member_on;     /* members entries: port -> its member */
    acis_swemu_out out;
    void *arg;
};

/* Member *peer joins on port. */
static int emu_open(void *ctx, uint32_t port, const void *peer)
{
    struct acis_swemu *e = ctx;
    uint32_t m = *(const uint32_t *)peer;
    if (port >= e->members || m >= e->members)
        return -1;
    e->port_of[m] = port;
    e->member_on[port] = m;
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
        e->out(e->arg, e->member_on[ports[i]], pkt, len);
}

static void emu_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)ctx;
    (void)peer;
    (void)iov;
    (void)iovcnt;
}

/* A control packet of member i into the core, on port (the service port
 * for HELLO). */
static void control_in(struct acis_swemu *e, uint32_t port, uint32_t i, unsigned kind,
                       uint64_t key, uint32_t src, uint32_t seq, uint32_t root,
                       const uint8_t *pl, size_t len)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, 0), .payload_len = (uint32_t)len,
        .job_key = key, .seq = seq, .src = src, .root = root,
    };
    uint8_t pkt[ACIS_HDR_LEN + 8] = { 0 };
    acis_hdr_encode(&h, pkt);
    memcpy(pkt + ACIS_HDR_LEN, pl, len);
    acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, len);
    acis_sw_input(e->core, port, &i, pkt, ACIS_HDR_LEN + len);
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
    o.pool = 0;                                  /* the window the row had */
    o.hold = n;                                  /* host memory: every piece may wait */
    o.jobs = 1;
    o.setups = 1;
    o.payload = payload;
    struct acis_sw_io io = { e, emu_open, emu_close, emu_send, emu_reply, NULL };
    e->members = n;
    e->slots = slots;
    e->port_of = malloc(sizeof(uint32_t) * n);
    e->member_on = malloc(sizeof(uint32_t) * n);
    if (!e->port_of || !e->member_on)
        goto fail;
    e->core = acis_sw_create(&o, &io, err, sizeof err);
    if (!e->core)
        goto fail;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t pl[ACIS_HELLO_LEN] = { 0 };
        e->port_of[i] = SW_NONE;
        acis_put32(pl, world);
        control_in(e, ACIS_PORT_SERVICE, i, ACIS_K_HELLO, key, granks[i], i + 1, 0, pl,
                   sizeof pl);
        if (e->port_of[i] == SW_NONE)
            goto fail;
    }
    /* The row, set up as the members would: each joins. */
    for (uint32_t i = 0; i < n; i++) {
        uint8_t pl[ACIS_CT_JOIN_LEN];
        acis_put32(pl, n);
        acis_put32(pl + 4, i);
        control_in(e, e->port_of[i], i, ACIS_K_CT_JOIN, key, granks[i], 1, granks[0], pl,
                   sizeof pl);
    }
    uint32_t row = sw_ct_of_setup(e->core, 0, granks[0], 1);
    if (row == SW_NONE)
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
    free(e->port_of);
    free(e->member_on);
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
    acis_sw_input(e->core, e->port_of[member], NULL, copy, len);
    return 0;
}
