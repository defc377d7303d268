/* check_quick.c -- the switch's quick path (src/switch/quick.c) against
 * its full checks: two switches, one with the quick path and one without
 * (opts.full_path), get the same packets -- pieces of barriers and
 * reductions, each after mutations of itself (a bit of any byte flipped,
 * resealed or not, from its own port or another), repeats, whole runs with
 * loss and duplicates, hostile first pieces of a slot's next segment --
 * and must answer every host with the same bytes and end with the same
 * counters, while the quick path took most packets. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "simhost.h"

enum { HOSTS = 8 };
static const uint64_t KEY = 0x0123456789abcdefULL;

static struct sim *A, *B;        /* A: quick path; B: full checks only */
static struct sim_comm *ca, *cb;

static void start(void)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = 256;
    o.slots = 128;
    A = calloc(1, sizeof *A);
    B = calloc(1, sizeof *B);
    ck_assert_int_eq(sim_init(A, &o), 0);
    o.full_path = 1;
    ck_assert_int_eq(sim_init(B, &o), 0);
    for (int i = 0; i < HOSTS; i++) {
        uint32_t st;
        ck_assert_int_eq(sim_join(A, KEY, (uint32_t)i, HOSTS, &st), i);
        ck_assert_int_eq(sim_join(B, KEY, (uint32_t)i, HOSTS, &st), i);
    }
    ca = sim_comm_new(HOSTS);
    cb = sim_comm_new(HOSTS);
    for (int i = 0; i < HOSTS; i++)
        ca->host[i] = cb->host[i] = i;
    ck_assert_uint_eq(sim_ct_create(A, ca, 1), ACIS_ST_OK);
    ck_assert_uint_eq(sim_ct_create(B, cb, 1), ACIS_ST_OK);
    ck_assert_uint_eq(ca->ctx, cb->ctx);
    ck_assert_uint_eq(ca->window, cb->window);
}

static void stop(void)
{
    sim_comm_free(ca);
    sim_comm_free(cb);
    sim_fini(A);
    sim_fini(B);
    free(A);
    free(B);
}

/* Every host got the same packets from both switches, and every counter
 * but quick is the same. */
static void same(void)
{
    for (int h = 0; h < HOSTS; h++) {
        struct sim_pkt p, q;
        int ga, gb;
        while ((ga = sim_pop(A, h, &p)) | (gb = sim_pop(B, h, &q))) {
            ck_assert_int_eq(ga, gb);
            ck_assert_uint_eq(p.len, q.len);
            if (p.len >= ACIS_HDR_LEN + 4 + 8 * (ACIS_SWC_quick + 1) &&
                ACIS_OPC_KIND(p.data[5]) == ACIS_K_STATS_REPLY) {
                /* a mutation made a STATS_REQ: the counter quick (and so
                   the checksum) is the one thing that may differ */
                memset(p.data + ACIS_HDR_LEN + 4 + 8 * ACIS_SWC_quick, 0, 8);
                memset(q.data + ACIS_HDR_LEN + 4 + 8 * ACIS_SWC_quick, 0, 8);
                memset(p.data + ACIS_HDR_CHECKSUM, 0, 4);
                memset(q.data + ACIS_HDR_CHECKSUM, 0, 4);
            }
            ck_assert_mem_eq(p.data, q.data, p.len);
            free(p.data);
            free(q.data);
        }
    }
    sim_counters(A);
    sim_counters(B);
    for (int k = 0; k < ACIS_SWC_COUNT; k++)
        if (k != ACIS_SWC_quick)
            ck_assert_msg(A->c[k] == B->c[k], "counter %d: %llu with the quick path, %llu without",
                          k, (unsigned long long)A->c[k], (unsigned long long)B->c[k]);
}

static void both(int h, const uint8_t *pkt, size_t len)
{
    sim_send_raw(A, h, pkt, len);
    sim_send_raw(B, h, pkt, len);
    same();
}

/* Member m's piece of segment k: a barrier, or a reduction of 16 bytes
 * (int32 sum or max: the quick path's; double sum: folded in order, not). */
static size_t piece(uint8_t *buf, uint32_t k, uint32_t window, unsigned what, uint32_t m)
{
    static const unsigned ops[] = { ACIS_OP_NONE, ACIS_OP_SUM, ACIS_OP_MAX, ACIS_OP_SUM };
    static const unsigned dts[] = { ACIS_DT_NONE, ACIS_DT_I32, ACIS_DT_I32, ACIS_DT_F64 };
    uint32_t len = what ? 16 : 0;
    struct acis_hdr hd = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(what ? ACIS_K_ALLREDUCE : ACIS_K_BARRIER, ACIS_ALG_FLAT),
        .op = (uint8_t)ops[what], .dtype = (uint8_t)dts[what],
        .flags = (uint16_t)(k / window % 2 ? ACIS_F_ROUND : 0), .slot = (uint16_t)(k % window),
        .payload_len = len, .job_key = KEY, .ctx = ca->ctx, .seq = k + 1, .src = m,
        .total_len = len, .rx_len = len, .member = m,
    };
    uint8_t data[16];
    for (int i = 0; i < 16; i++)
        data[i] = (uint8_t)(what == 3 ? (i % 8 == 7 ? 0x3f : m + k) : m * 3 + k + i);
    acis_hdr_encode(&hd, buf);
    memcpy(buf + ACIS_HDR_LEN, data, len);
    acis_hdr_seal(buf, data, len);
    return ACIS_HDR_LEN + len;
}

/* Set the 4 bytes at buf + at so that the CRC-32C of buf's len bytes is
 * 0: the CRC is affine in those 32 bits, so solve for them (an XOR basis
 * of each bit's effect, with the bits that make each basis vector). */
static void crc_zero(uint8_t *buf, size_t len, size_t at)
{
    uint32_t basis[32] = { 0 }, made_of[32] = { 0 };
    acis_put32(buf + at, 0);
    uint32_t c0 = acis_crc32c(0, buf, len);
    for (int b = 0; b < 32; b++) {
        acis_put32(buf + at, 1u << b);
        uint32_t v = acis_crc32c(0, buf, len) ^ c0, w = 1u << b;
        for (int i = 31; i >= 0 && v; i--) {
            if (!(v >> i & 1))
                continue;
            if (!basis[i]) {
                basis[i] = v;
                made_of[i] = w;
                break;
            }
            v ^= basis[i];
            w ^= made_of[i];
        }
    }
    uint32_t x = 0, t = c0;
    for (int i = 31; i >= 0; i--)
        if (t >> i & 1) {
            ck_assert(basis[i]);
            t ^= basis[i];
            x ^= made_of[i];
        }
    acis_put32(buf + at, x);
    ck_assert_uint_eq(acis_crc32c(0, buf, len), 0);
}

/* Pieces that say they come unsealed (ACIS_F_UNSEALED, checksum 0) from
 * ports that never offered it, their payloads forged so that the CRC is
 * 0 indeed: both paths take them, as sealed, and neither counts them
 * unsealed (the full path did, the quick one did not). */
START_TEST(unsealed_forged)
{
    start();
    uint8_t pkt[ACIS_HDR_LEN + 16];
    for (uint32_t k = 0; k < 4; k++)
        for (uint32_t m = 0; m < HOSTS; m++) {
            size_t len = piece(pkt, k, ca->window, 1, m);
            acis_put16(pkt + 8, (uint16_t)(acis_get16(pkt + 8) | ACIS_F_UNSEALED));
            acis_put32(pkt + ACIS_HDR_CHECKSUM, 0);
            crc_zero(pkt, len, len - 4);
            both((int)m, pkt, len);
        }
    sim_counters(A);
    ck_assert_uint_gt(A->c[ACIS_SWC_quick], 0);
    ck_assert_uint_eq(A->c[ACIS_SWC_unsealed], 0);
    ck_assert_uint_eq(A->c[ACIS_SWC_segments], 4);
    stop();
}
END_TEST

START_TEST(mutations)
{
    start();
    srand(20261128);
    uint8_t pkt[ACIS_HDR_LEN + 16], bad[ACIS_HDR_LEN + 16];
    for (uint32_t k = 0; k < 400; k++) {
        unsigned what = (unsigned)rand() % 4;
        uint32_t order[HOSTS];
        for (uint32_t i = 0; i < HOSTS; i++)
            order[i] = i;
        for (int i = HOSTS - 1; i > 0; i--) {
            int j = rand() % (i + 1);
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < HOSTS; i++) {
            uint32_t m = order[i];
            size_t len = piece(pkt, k, ca->window, what, m);
            if (rand() % 3 == 0) {          /* a bit of one byte flipped */
                memcpy(bad, pkt, len);
                size_t at = (size_t)rand() % len;
                bad[at] ^= (uint8_t)(1u << (rand() % 8));
                if (rand() % 2 && (at < ACIS_HDR_CHECKSUM || at >= ACIS_HDR_CHECKSUM + 4))
                    acis_hdr_seal(bad, bad + ACIS_HDR_LEN, len - ACIS_HDR_LEN);
                both(rand() % 8 ? (int)m : rand() % HOSTS, bad, len);
            }
            both((int)m, pkt, len);
            if (rand() % 6 == 0)
                both((int)m, pkt, len);      /* a repeat */
        }
    }
    sim_counters(A);
    sim_counters(B);
    ck_assert_uint_eq(B->c[ACIS_SWC_quick], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_segments], 200);
    ck_assert_uint_gt(A->c[ACIS_SWC_quick], A->c[ACIS_SWC_packets_in] / 5);
    ck_assert_uint_gt(A->c[ACIS_SWC_drop_malformed], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_drop_duplicate], 0);
    stop();
}
END_TEST

/* Whole collectives by the hosts' own packetizer, with loss and
 * duplicates both ways: the same answers, results and counters. */
START_TEST(runs)
{
    start();
    A->loss = B->loss = 5;
    A->dup = B->dup = 5;
    static int32_t in[HOSTS][300], outa[HOSTS][300], outb[HOSTS][300];
    struct sim_member ma[HOSTS], mb[HOSTS];
    for (unsigned round = 0; round < 12; round++) {
        unsigned kind = round % 3 == 0 ? ACIS_K_BARRIER : ACIS_K_ALLREDUCE;
        unsigned op = round % 3 == 1 ? ACIS_OP_SUM : round % 3 == 2 ? ACIS_OP_MIN : ACIS_OP_NONE;
        unsigned dt = kind == ACIS_K_BARRIER ? ACIS_DT_NONE : ACIS_DT_I32;
        uint64_t total = kind == ACIS_K_BARRIER ? 0 : sizeof in[0];
        for (int r = 0; r < HOSTS; r++) {
            for (int i = 0; i < 300; i++)
                in[r][i] = (int32_t)(r * 7919 + i * 31 + round) % 1000 - 500;
            ma[r] = (struct sim_member){ in[r], 0, total, outa[r], 0, total };
            mb[r] = (struct sim_member){ in[r], 0, total, outb[r], 0, total };
        }
        ck_assert_int_eq(sim_collective(A, ca, kind, op, dt, 0, total, ma, round), 0);
        ck_assert_int_eq(sim_collective(B, cb, kind, op, dt, 0, total, mb, round), 0);
        ck_assert_mem_eq(outa, outb, sizeof outa);
        same();
    }
    for (int i = 0; i < 300; i++) {
        int32_t want = in[0][i];
        for (int r = 1; r < HOSTS; r++)
            want = in[r][i] < want ? in[r][i] : want;
        ck_assert_int_eq(outa[HOSTS - 1][i], want);
    }
    ck_assert_uint_gt(A->c[ACIS_SWC_quick], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_repeats], 0);
    stop();
}
END_TEST

/* Member m's piece of segment k of a reduction (kind, op, dt, ne
 * elements: odd sizes and more than 64 bytes take the inline checksum's
 * tail) or a barrier (ne 0, op NONE); rx asked back as given. */
static size_t piece_of(uint8_t *buf, uint32_t k, unsigned kind, unsigned op, unsigned dt,
                       uint32_t ne, uint32_t m, uint32_t rx_off, uint32_t rx_len)
{
    uint32_t len = kind == ACIS_K_BARRIER ? 0 : ne * (uint32_t)acis_wire_dt_size(dt);
    struct acis_hdr hd = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .op = (uint8_t)op, .dtype = (uint8_t)dt,
        .flags = (uint16_t)(k / ca->window % 2 ? ACIS_F_ROUND : 0),
        .slot = (uint16_t)(k % ca->window), .payload_len = len, .job_key = KEY,
        .ctx = ca->ctx, .seq = k + 1, .src = m, .root = k % HOSTS, .total_len = len,
        .rx_off = rx_off, .rx_len = rx_len, .member = m,
    };
    acis_hdr_encode(&hd, buf);
    for (uint32_t i = 0; i < len; i++)
        buf[ACIS_HDR_LEN + i] = (uint8_t)(rand() % 3 ? rand() % 5 : rand());
    acis_hdr_seal(buf, buf + ACIS_HDR_LEN, len);
    return ACIS_HDR_LEN + len;
}

/* A random valid op and type for a reduction kind (NONE, NONE for a
 * barrier); with served, one the quick path folds (in any order, by a
 * kernel of the switch's). */
static void random_op(unsigned kind, int served, unsigned *op, unsigned *dt)
{
    *op = ACIS_OP_NONE;
    *dt = ACIS_DT_NONE;
    while (kind != ACIS_K_BARRIER &&
           (!acis_wire_op_valid(*op, *dt) ||
            (served && (acis_wire_order_sensitive(*op, *dt) ||
                        (*dt > ACIS_DT_F64 && *dt != ACIS_DT_BYTE))))) {
        *op = 1 + (unsigned)rand() % (ACIS_OP_COUNT - 1);
        *dt = 1 + (unsigned)rand() % (ACIS_DT_COUNT - 1);
    }
}

/* Both switches get pkt at address offset al of a 64-aligned buffer. */
static void both_at(int h, const uint8_t *pkt, size_t len, unsigned al)
{
    static uint8_t at[64 + ACIS_HDR_LEN + 1024] __attribute__((aligned(64)));
    memcpy(at + al, pkt, len);
    sim_send_raw(A, h, at + al, len);
    memcpy(at + al, pkt, len);
    sim_send_raw(B, h, at + al, len);
    same();
}

/* Hostile variants of every member's piece but the first's: the header
 * equal to the segment's first one but in the fields the quick path
 * checks one by one (source rank, member, what it asks back, checksum),
 * several fields at once, lengths that do not match, buffers at every
 * alignment; every reduction kind, op and type the quick path serves and
 * some it does not; the row freed and made again, and old packets after
 * it.  The same answers and counters with the quick path as without. */
START_TEST(forgeries)
{
    start();
    srand(20260301);
    static const unsigned kinds[] = { ACIS_K_BARRIER, ACIS_K_ALLREDUCE, ACIS_K_REDUCE,
                                      ACIS_K_REDUCE_SCATTER };
    static const uint8_t fields[] = { 32, 44, 64, 68, 72 };      /* the sender's own */
    uint8_t pkt[ACIS_HDR_LEN + 1024], bad[ACIS_HDR_LEN + 1024], old[ACIS_HDR_LEN + 1024];
    size_t oldlen = 0;
    int oldh = 0;
    uint32_t k = 0;
    for (int n = 0; n < 600; n++, k++) {
        if (n == 300) {                    /* the row freed and made again */
            ck_assert_uint_eq(sim_ct_free(A, ca), sim_ct_free(B, cb));
            same();
            ck_assert_uint_eq(sim_ct_create(A, ca, 2), ACIS_ST_OK);
            ck_assert_uint_eq(sim_ct_create(B, cb, 2), ACIS_ST_OK);
            ck_assert_uint_eq(ca->ctx, cb->ctx);
            same();
            both_at(oldh, old, oldlen, 0); /* a packet of the old row */
            k = 0;
        }
        unsigned kind = kinds[rand() % 4], op, dt;
        random_op(kind, 0, &op, &dt);
        uint32_t es = dt == ACIS_DT_NONE ? 1 : (uint32_t)acis_wire_dt_size(dt);
        uint32_t ne = 1 + (uint32_t)rand() % (ca->payload / es);
        if (rand() % 4 == 0)
            ne = 1 + (uint32_t)rand() % 9;
        for (uint32_t m = 0; m < HOSTS; m++) {
            uint32_t len0 = kind == ACIS_K_BARRIER ? 0 : ne * es;
            uint32_t rxl = rand() % 3 ? len0 : (uint32_t)rand() % (len0 + 1);
            size_t len = piece_of(pkt, k, kind, op, dt, ne, m, len0 - rxl, rxl);
            for (int t = m ? rand() % 4 : 0; t > 0; t--) {
                memcpy(bad, pkt, len);
                size_t blen = len;
                int what = rand() % 4;
                if (what == 0) {           /* one own field wrong, resealed */
                    unsigned f = fields[rand() % 5];
                    uint32_t v = acis_get32(bad + f);
                    acis_put32(bad + f, rand() % 2 ? v + 1 + (uint32_t)rand() % 9 : ~v);
                    if (f != ACIS_HDR_CHECKSUM)
                        acis_hdr_seal(bad, bad + ACIS_HDR_LEN, blen - ACIS_HDR_LEN);
                } else if (what == 1) {    /* several bytes anywhere */
                    for (int i = 1 + rand() % 4; i > 0; i--)
                        bad[rand() % blen] ^= (uint8_t)(1 + rand() % 255);
                    if (rand() % 4)
                        acis_hdr_seal(bad, bad + ACIS_HDR_LEN, blen - ACIS_HDR_LEN);
                } else if (what == 2) {    /* a length that is not the segment's */
                    if (rand() % 2 && len > ACIS_HDR_LEN)
                        blen = len - 1 - (size_t)rand() % (len - ACIS_HDR_LEN);
                    else
                        blen = len + 1 + (size_t)rand() % 8;
                    if (blen > sizeof bad)
                        blen = sizeof bad;
                    if (rand() % 2)
                        acis_put32(bad + 12, (uint32_t)(blen - ACIS_HDR_LEN));
                    acis_hdr_seal(bad, bad + ACIS_HDR_LEN, blen - ACIS_HDR_LEN);
                } else {                   /* short of a header */
                    blen = (size_t)rand() % ACIS_HDR_LEN;
                }
                both_at(rand() % 6 ? (int)m : rand() % HOSTS, bad, blen, (unsigned)rand() % 64);
            }
            both_at((int)m, pkt, len, (unsigned)rand() % 64);
            if (rand() % 8 == 0)
                both_at((int)m, pkt, len, 0);        /* a repeat */
            if (rand() % 50 == 0) {
                memcpy(old, pkt, len);
                oldlen = len;
                oldh = (int)m;
            }
        }
    }
    sim_counters(A);
    ck_assert_uint_eq(B->c[ACIS_SWC_quick], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_quick], 600);
    ck_assert_uint_gt(A->c[ACIS_SWC_drop_spoofed], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_drop_range], 0);
    stop();
}
END_TEST

/* Hostile first pieces of a slot's next segment shaped as its last (the
 * quick path takes such a piece against the last segment's first, kept
 * in the slot): its round bit not flipped, its sequence number the last
 * one's or older, the abstain bit set, a byte of the shared header
 * changed, the sender's own fields wrong -- each resealed -- for every
 * kind, op and type the quick path serves.  The same answers and
 * counters with the quick path as without; the first pieces that are
 * right take the quick path. */
START_TEST(renewed)
{
    start();
    srand(20261129);
    static const unsigned kinds[] = { ACIS_K_BARRIER, ACIS_K_ALLREDUCE, ACIS_K_REDUCE,
                                      ACIS_K_REDUCE_SCATTER };
    /* bytes of the shared header whose change the full path drops or
       serves within the segment (a changed kind, op, type, slot or
       sequence number, or a reduce's root, would start another use,
       which the members' pieces never complete: a slot stuck for the
       rest of the test) */
    static const uint8_t shared_at[] = { 4, 8, 9, 12, 16, 24, 40, 48, 56, 76 };
    uint8_t pkt[ACIS_HDR_LEN + 1024], bad[ACIS_HDR_LEN + 1024];
    uint32_t k = 0, sent = 0;
    unsigned pkind = 0, pop = 0, pdt = 0;
    uint32_t pne = 0;
    for (int shape = 0; shape < 30; shape++) {
        /* every kind in turn */
        unsigned kind = kinds[shape % 4], op, dt;
        int other = shape % 5 == 4;            /* now and then one it does not serve */
        random_op(kind, !other, &op, &dt);
        uint32_t es = dt == ACIS_DT_NONE ? 1 : (uint32_t)acis_wire_dt_size(dt);
        uint32_t ne = 1 + (uint32_t)rand() % 9, len0 = kind == ACIS_K_BARRIER ? 0 : ne * es;
        for (uint32_t rep = 0; rep < 3 * ca->window; rep++, k++) {
            for (uint32_t i = 0; i < HOSTS; i++) {
                uint32_t m = (i + k) % HOSTS;
                size_t len = piece_of(pkt, k, kind, op, dt, ne, m, 0, len0);
                acis_put32(pkt + 36, (uint32_t)shape % HOSTS);     /* one root a shape */
                acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, len - ACIS_HDR_LEN);
                for (int t = i ? 0 : rand() % 3; t > 0; t--) {
                    memcpy(bad, pkt, len);
                    switch (rand() % 7) {
                    case 0: bad[8] ^= ACIS_F_ROUND; break;      /* the last one's round */
                    case 1:                  /* the last one's, or older (once there is one) */
                        if (k >= 2 * ca->window)
                            acis_put32(bad + 28, k + 1 - ca->window * (1 + (uint32_t)rand() % 2));
                        break;
                    case 2: bad[8] |= ACIS_F_ABSTAIN; break;
                    case 3: bad[shared_at[rand() % 10]] ^= (uint8_t)(1u << rand() % 8); break;
                    case 4: acis_put32(bad + 32, (m + 1) % HOSTS); break;
                    case 5: acis_put32(bad + 72, HOSTS + (uint32_t)rand() % 3); break;
                    default: acis_put32(bad + 68, len0 + 1 + (uint32_t)rand() % 8); break;
                    }
                    acis_hdr_seal(bad, bad + ACIS_HDR_LEN, len - ACIS_HDR_LEN);
                    both_at(rand() % 5 ? (int)m : rand() % HOSTS, bad, len, (unsigned)rand() % 64);
                }
                both_at((int)m, pkt, len, 0);
                sent += !other;
                if (i == 0 && pkind && rep < ca->window && rand() % 2) {
                    /* a piece shaped as the slot's last segment, newer,
                       while the slot serves another shape */
                    size_t blen = piece_of(bad, k, pkind, pop, pdt, pne, (m + 1) % HOSTS, 0, 0);
                    acis_put32(bad + 36, (uint32_t)(shape - 1) % HOSTS);
                    acis_put32(bad + 68, acis_get32(bad + 12));     /* all of it back */
                    acis_hdr_seal(bad, bad + ACIS_HDR_LEN, blen - ACIS_HDR_LEN);
                    both_at((int)(m + 1) % HOSTS, bad, blen, 0);
                }
            }
        }
        pkind = kind, pop = op, pdt = dt, pne = ne;
    }
    sim_counters(A);
    ck_assert_uint_eq(B->c[ACIS_SWC_quick], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_quick], sent - sent / 6);  /* most first pieces too */
    ck_assert_uint_gt(A->c[ACIS_SWC_drop_stale], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_abstained], 0);
    ck_assert_uint_gt(A->c[ACIS_SWC_drop_spoofed], 0);
    stop();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("quick");
    TCase *tc = tcase_create("quick");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, mutations);
    tcase_add_test(tc, runs);
    tcase_add_test(tc, forgeries);
    tcase_add_test(tc, renewed);
    tcase_add_test(tc, unsealed_forged);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
