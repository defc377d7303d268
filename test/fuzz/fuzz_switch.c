/* fuzz_switch.c -- libFuzzer harness for the switch core: four hosts of
 * one job join and set up a communicator row, and a switch below links to it;
 * then the input is a sequence of datagrams, each arriving on a port (a
 * host's, the link's, or the service address) -- or, flag 64, at a second
 * core from its parent (the uplink of a switch in a fabric, its two hosts
 * waiting for their WELCOME).  A record is: flags (u8), port (u8), length
 * (u16), bytes.  Flag bits repair what a fuzzer would rarely guess --
 * magic and version, payload length, job key, context id, source rank,
 * checksum -- so packets reach the gather/reduce unit and the control
 * plane, not just the decoder.  The cores must not crash, leak
 * (LeakSanitizer) or loop; every packet must be counted in, and after each
 * one the row and hold bookkeeping must add up (check_rows). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "switch/sw.h"
#include "switch/switch.h"

#define HOSTS 4
#define KEY 0x1122334455667788ull
#define PAYLOAD 256

struct io {
    uint32_t ctx;             /* from the CT_REPLY */
    uint32_t opened;
};

static int port_open(void *ctx, uint32_t port, const void *peer)
{
    (void)peer;
    ((struct io *)ctx)->opened = port + 1;
    return 0;
}

static void port_close(void *ctx, uint32_t port)
{
    (void)ctx;
    (void)port;
}

static void sendv(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                  int iovcnt)
{
    struct io *io = ctx;
    const uint8_t *h = iov[0].iov_base;
    (void)ports;
    (void)n;
    if (iovcnt == 2 && ACIS_OPC_KIND(h[5]) == ACIS_K_CT_REPLY && iov[1].iov_len >= 8 &&
        acis_get32(iov[1].iov_base) == ACIS_ST_OK)
        io->ctx = acis_get32((const uint8_t *)iov[1].iov_base + 4);
}

static void reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)ctx;
    (void)peer;
    (void)iov;
    (void)iovcnt;
}

static void control(struct acis_sw *sw, uint32_t port, unsigned kind, uint32_t src,
                    const uint8_t *pl, uint32_t len)
{
    uint8_t pkt[ACIS_HDR_LEN + 64];
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, 0), .payload_len = len, .job_key = KEY,
        .seq = kind == ACIS_K_CT_JOIN ? 1 : src + 1, .src = src,
    };
    acis_hdr_encode(&h, pkt);
    memcpy(pkt + ACIS_HDR_LEN, pl, len);
    acis_hdr_seal(pkt, pl, len);
    int peer = (int)src;
    acis_sw_input(sw, port, &peer, pkt, ACIS_HDR_LEN + len);
}

/* Rows in use, per job and in all, agree with the counters and limits. */
static void check_rows(const struct acis_sw *sw)
{
    uint64_t held = 0, used = 0, taken = 0;
    for (uint32_t i = 0; i < sw->pool.nhold; i++)
        taken += sw->pool.hold[i].use != 0;
    FUZZ_CHECK(taken == sw->c[ACIS_SWC_held]);
    for (uint32_t j = 0; j < sw->size.jobs; j++) {
        FUZZ_CHECK(sw->up || sw->jobs[j].rows <= sw->o.job_rows);  /* a parent installs */
        held += sw->jobs[j].rows;
    }
    for (uint32_t r = 0; r < sw->o.tables; r++)
        used += sw->cts[r].in_use != 0;
    FUZZ_CHECK(held == used && used == sw->c[ACIS_SWC_tables_in_use]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct io io = { 0, 0 };
    struct acis_sw_io sio = { &io, port_open, port_close, sendv, reply };
    struct acis_sw_opts o = { .ports = 8, .tables = 4, .slots = 16, .payload = PAYLOAD,
                              .links = 1 };
    char err[128];
    struct acis_sw *sw = acis_sw_create(&o, &sio, err, sizeof err);
    struct acis_sw *child = acis_sw_create(&o, &sio, err, sizeof err);
    FUZZ_CHECK(sw && child);
    acis_sw_set_parent(child, 1);
    uint8_t pl[4 + 4 * HOSTS];
    for (uint32_t r = 0; r < HOSTS; r++) {
        acis_put32(pl, HOSTS);
        acis_put32(pl + 4, 0);
        control(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, r, pl, ACIS_HELLO_LEN);
        if (r < 2)
            control(child, ACIS_PORT_SERVICE, ACIS_K_HELLO, r, pl, ACIS_HELLO_LEN);
    }
    acis_put32(pl, 0);
    acis_put32(pl + 4, ACIS_HELLO_SWITCH);        /* the link: port HOSTS */
    control(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 77, pl, ACIS_HELLO_LEN);
    for (uint32_t r = 0; r < HOSTS; r++) {      /* every member joins the row */
        acis_put32(pl, HOSTS);
        acis_put32(pl + 4, r);
        control(sw, r, ACIS_K_CT_JOIN, r, pl, ACIS_CT_JOIN_LEN);
    }
    FUZZ_CHECK(io.ctx != 0);

    uint64_t c0[ACIS_SWC_COUNT], c1[ACIS_SWC_COUNT], fed = 0;
    acis_sw_counters(sw, c0);
    uint8_t pkt[ACIS_HDR_LEN + PAYLOAD + 64];
    while (size >= 4) {
        unsigned flags = data[0], port = data[1] % (HOSTS + 2);
        size_t len = acis_get16(data + 2) % (sizeof pkt + 1);
        data += 4;
        size -= 4;
        len = fuzz_take(&data, &size, pkt, len);
        if (len >= ACIS_HDR_LEN) {
            if (flags & 1) {
                acis_put32(pkt, ACIS_WIRE_MAGIC);
                pkt[4] = ACIS_WIRE_VERSION;
            }
            if (flags & 2)
                acis_put32(pkt + 12, (uint32_t)(len - ACIS_HDR_LEN));
            if (flags & 4)
                acis_put64(pkt + 16, KEY);
            if (flags & 8)
                acis_put32(pkt + 24, io.ctx);
            if (flags & 16)
                acis_put32(pkt + 32, port < HOSTS ? port : 0);
            if (flags & 32)
                acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, len - ACIS_HDR_LEN);
        }
        int peer = 100;
        if (flags & 64) {
            acis_sw_input(child, ACIS_PORT_UPLINK, &peer, pkt, len);
            acis_sw_tick(child, fed * 50000000ull);
            check_rows(child);
            continue;
        }
        acis_sw_input(sw, port < HOSTS + 1 ? port : ACIS_PORT_SERVICE, &peer, pkt, len);
        fed++;
        check_rows(sw);
    }
    acis_sw_counters(sw, c1);
    FUZZ_CHECK(c1[ACIS_SWC_packets_in] - c0[ACIS_SWC_packets_in] == fed);
    acis_sw_destroy(sw);
    acis_sw_destroy(child);
    return 0;
}
