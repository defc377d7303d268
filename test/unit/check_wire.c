/* check_wire.c -- unit tests of the wire codec: round trips of every
 * field, every rejection reason of acis_wire_decode(), the rules of
 * unsealed packets, CRC-32C against its standard check value, element
 * sizes against the C layouts, and a packet decoded from two pieces as
 * from one. */
#include "config.h"

#include <check.h>
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "acis/wire.h"

static uint8_t pkt[ACIS_HDR_LEN + 256];

/* A valid allreduce packet of 64 bytes of int32. */
static struct acis_hdr base(void)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_ALLREDUCE, ACIS_ALG_FLAT), .op = ACIS_OP_SUM,
        .dtype = ACIS_DT_I32, .flags = 0, .slot = 7, .payload_len = 64,
        .job_key = 0x0123456789abcdefULL, .ctx = 0x10002, .seq = 42, .src = 3,
        .root = 0, .seg_index = 1, .seg_offset = 64, .total_len = 256,
        .rx_off = 0, .rx_len = 64,
    };
    return h;
}

/* Encode h with a payload of h.payload_len bytes and seal it. */
static size_t build(const struct acis_hdr *h)
{
    acis_hdr_encode(h, pkt);
    for (uint32_t i = 0; i < h->payload_len && i < 256; i++)
        pkt[ACIS_HDR_LEN + i] = (uint8_t)(i * 7);
    acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, h->payload_len);
    return ACIS_HDR_LEN + h->payload_len;
}

START_TEST(round_trip)
{
    struct acis_hdr h = base(), d;
    size_t len = build(&h);
    ck_assert_int_eq(acis_wire_decode(pkt, len, 8192, &d), ACIS_WERR_OK);
    h.checksum = d.checksum;
    ck_assert_mem_eq(&h, &d, sizeof h);
    ck_assert_uint_eq(acis_get32(pkt), 0x53494341u);
    ck_assert_int_eq(memcmp(pkt, "ACIS", 4), 0);       /* little-endian magic */
}
END_TEST

/* A packet whose header and payload lie apart decodes as the same bytes
 * in one piece: its checksum over both, a garbled payload byte caught,
 * a control packet's payload read where it is, the length checked. */
START_TEST(split)
{
    static uint8_t apart[256];
    struct acis_hdr h = base(), d, e;
    size_t len = build(&h);
    memcpy(apart, pkt + ACIS_HDR_LEN, h.payload_len);
    ck_assert_int_eq(acis_wire_decode_split(pkt, apart, len, 8192, 0, &d), ACIS_WERR_OK);
    ck_assert_int_eq(acis_wire_decode(pkt, len, 8192, &e), ACIS_WERR_OK);
    ck_assert_mem_eq(&d, &e, sizeof d);
    apart[10] ^= 1;
    ck_assert_int_eq(acis_wire_decode_split(pkt, apart, len, 8192, 0, &d), ACIS_WERR_CHECKSUM);
    ck_assert_int_eq(acis_wire_decode_split(pkt, apart, len - 1, 8192, 0, &d),
                     ACIS_WERR_LENGTH);
    struct acis_hdr c = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .opcode = ACIS_OPC(ACIS_K_STATS_REPLY, ACIS_ALG_FLAT),
                          .payload_len = 12, .src = ACIS_NO_RANK };
    len = build(&c);
    memcpy(apart, pkt + ACIS_HDR_LEN, 12);
    memset(pkt + ACIS_HDR_LEN, 0, 12);       /* only the piece apart is read */
    acis_put32(apart, 1);                    /* one counter of 8 bytes */
    acis_hdr_seal(pkt, apart, 12);
    ck_assert_int_eq(acis_wire_decode_split(pkt, apart, len, 8192, 0, &d), ACIS_WERR_OK);
    acis_put32(apart, 2);
    acis_hdr_seal(pkt, apart, 12);
    ck_assert_int_eq(acis_wire_decode_split(pkt, apart, len, 8192, 0, &d), ACIS_WERR_LENGTH);
}
END_TEST

START_TEST(crc_vector)
{
    ck_assert_uint_eq(acis_crc32c(0, "123456789", 9), 0xE3069283u);
    uint32_t a = acis_crc32c(0, "12345", 5);
    ck_assert_uint_eq(acis_crc32c(a, "6789", 4), 0xE3069283u);
    static char big[1000];
    memset(big, 'x', sizeof big);
    uint32_t whole = acis_crc32c(0, big, sizeof big);
    ck_assert_uint_eq(acis_crc32c(acis_crc32c(0, big, 333), big + 333, 667), whole);
    /* the fast paths (three streams over long buffers) against bit by bit */
    static unsigned char rnd[20000];
    srand(7);
    for (size_t i = 0; i < sizeof rnd; i++)
        rnd[i] = (unsigned char)rand();
    for (int k = 0; k < 300; k++) {
        size_t off = (size_t)rand() % 64, len = (size_t)rand() % (sizeof rnd - 64);
        uint32_t r = 0xffffffffu;
        for (size_t i = 0; i < len; i++) {
            r ^= rnd[off + i];
            for (int j = 0; j < 8; j++)
                r = (r >> 1) ^ (0x82f63b78u & (0u - (r & 1)));
        }
        ck_assert_uint_eq(acis_crc32c(0, rnd + off, len), ~r);
    }
    /* a blank field anywhere, at any length and alignment, continuing
     * from any state: the same as over a copy with the field zeroed */
    static unsigned char copy[600];
    for (int k = 0; k < 300; k++) {
        size_t off = (size_t)rand() % 64, len = 4 + (size_t)rand() % (sizeof copy - 4);
        size_t hole = (size_t)rand() % (len - 3);
        uint32_t from = k % 2 ? (uint32_t)rand() : 0;
        memcpy(copy, rnd + off, len);
        memset(copy + hole, 0, 4);
        ck_assert_uint_eq(acis_crc32c_hole(from, rnd + off, len, hole),
                          acis_crc32c(from, copy, len));
    }
    /* and a second piece after it, of any length (past the three-stream
     * blocks too): the same as over the two pieces joined */
    static unsigned char joined[sizeof copy + sizeof rnd];
    for (int k = 0; k < 300; k++) {
        size_t len = 4 + (size_t)rand() % (sizeof copy - 4);
        size_t hole = (size_t)rand() % (len - 3);
        size_t l2 = k % 3 ? (size_t)rand() % 130 : (size_t)rand() % (sizeof rnd - 64);
        const unsigned char *p2 = rnd + (size_t)rand() % 64;
        uint32_t from = k % 2 ? (uint32_t)rand() : 0;
        memcpy(joined, rnd + 64, len);
        memset(joined + hole, 0, 4);
        memcpy(joined + len, p2, l2);
        ck_assert_uint_eq(acis_crc32c_hole2(from, rnd + 64, len, hole, l2 ? p2 : NULL, l2),
                          acis_crc32c(from, joined, len + l2));
    }
}
END_TEST

/* Each mutation of a valid packet and the reason it must be refused. */
static void expect(void (*mutate)(struct acis_hdr *), int reseal, enum acis_wire_err want)
{
    struct acis_hdr h = base(), d;
    mutate(&h);
    size_t len;
    if (reseal) {
        len = build(&h);
    } else {
        struct acis_hdr ok = base();
        len = build(&ok);
        acis_hdr_encode(&h, pkt);                      /* keep the old checksum */
    }
    ck_assert_int_eq(acis_wire_decode(pkt, len, 8192, &d), want);
}

static void m_magic(struct acis_hdr *h) { h->magic ^= 1; }
static void m_version(struct acis_hdr *h) { h->version = ACIS_WIRE_VERSION + 1; }
static void m_reserved(struct acis_hdr *h) { h->reserved = 1; }
static void m_opcode(struct acis_hdr *h) { h->opcode = 12; }
static void m_alg(struct acis_hdr *h) { h->opcode = ACIS_OPC(ACIS_K_ALLREDUCE, 3); }
static void m_op(struct acis_hdr *h) { h->op = ACIS_OP_COUNT; }
static void m_dtype(struct acis_hdr *h) { h->dtype = ACIS_DT_COUNT; }
static void m_flags(struct acis_hdr *h) { h->flags = 0x100; }
static void m_opdt(struct acis_hdr *h) { h->op = ACIS_OP_MINLOC; }
static void m_bcast_op(struct acis_hdr *h)
{
    h->opcode = ACIS_OPC(ACIS_K_BCAST, 0);
    h->op = ACIS_OP_SUM;
}
static void m_bcast_none(struct acis_hdr *h)
{
    h->opcode = ACIS_OPC(ACIS_K_BCAST, 0);
    h->op = ACIS_OP_NONE;
    h->dtype = ACIS_DT_NONE;
}
static void m_range(struct acis_hdr *h) { h->seg_offset = 200; }
static void m_rx(struct acis_hdr *h) { h->rx_off = 8190; }
static void m_align(struct acis_hdr *h) { h->seg_offset = 66; }
static void m_align_total(struct acis_hdr *h) { h->total_len = 258; }
static void m_none(struct acis_hdr *h) { (void)h; }
static void m_field(struct acis_hdr *h) { h->seq ^= 0x100; }

START_TEST(rejections)
{
    expect(m_magic, 1, ACIS_WERR_MAGIC);
    expect(m_version, 1, ACIS_WERR_VERSION);
    expect(m_opcode, 1, ACIS_WERR_OPCODE);
    expect(m_alg, 1, ACIS_WERR_OPCODE);
    expect(m_op, 1, ACIS_WERR_OP);
    expect(m_dtype, 1, ACIS_WERR_DTYPE);
    expect(m_flags, 1, ACIS_WERR_FLAGS);
    expect(m_reserved, 1, ACIS_WERR_RESERVED);
    expect(m_opdt, 1, ACIS_WERR_OP_DTYPE);
    expect(m_bcast_op, 1, ACIS_WERR_OP_DTYPE);
    expect(m_bcast_none, 1, ACIS_WERR_DTYPE);
    expect(m_range, 1, ACIS_WERR_RANGE);
    expect(m_rx, 1, ACIS_WERR_RANGE);
    expect(m_align, 1, ACIS_WERR_ALIGN);
    expect(m_align_total, 1, ACIS_WERR_ALIGN);
    expect(m_field, 0, ACIS_WERR_CHECKSUM);           /* header changed after sealing */
    expect(m_none, 1, ACIS_WERR_OK);
}
END_TEST

START_TEST(lengths)
{
    struct acis_hdr h = base(), d;
    size_t len = build(&h);
    ck_assert_int_eq(acis_wire_decode(pkt, ACIS_HDR_LEN - 1, 8192, &d), ACIS_WERR_SHORT);
    ck_assert_int_eq(acis_wire_decode(pkt, len - 1, 8192, &d), ACIS_WERR_LENGTH);
    ck_assert_int_eq(acis_wire_decode(pkt, len, 32, &d), ACIS_WERR_TOO_BIG);
    pkt[ACIS_HDR_LEN + 5] ^= 0x40;                     /* payload bit flip */
    ck_assert_int_eq(acis_wire_decode(pkt, len, 8192, &d), ACIS_WERR_CHECKSUM);
}
END_TEST

/* Unsealed packets (ACIS_F_UNSEALED, checksum 0) pass without their CRC
 * only where the receiver is on loopback (memory 1), only for a
 * collective, and no single flipped byte of a sealed packet makes one. */
START_TEST(unsealed)
{
    struct acis_hdr h = base(), d;
    size_t len = build(&h);
    acis_hdr_unsealed(pkt);
    ck_assert_uint_eq(acis_get32(pkt + ACIS_HDR_CHECKSUM), 0);
    ck_assert_int_eq(acis_wire_decode_from(pkt, len, 8192, 1, &d), ACIS_WERR_OK);
    ck_assert_uint_eq(d.flags, ACIS_F_UNSEALED);
    ck_assert_int_eq(acis_wire_decode_from(pkt, len, 8192, 0, &d), ACIS_WERR_CHECKSUM);
    ck_assert_int_eq(acis_wire_decode(pkt, len, 8192, &d), ACIS_WERR_CHECKSUM);
    pkt[ACIS_HDR_LEN + 5] ^= 0x40;                  /* taken as it is: memory */
    ck_assert_int_eq(acis_wire_decode_from(pkt, len, 8192, 1, &d), ACIS_WERR_OK);
    acis_put32(pkt + 28, 0);
    ck_assert_int_eq(acis_wire_decode_from(pkt, len, 8192, 1, &d), ACIS_WERR_OK);
    /* the other checks still hold */
    ck_assert_int_eq(acis_wire_decode_from(pkt, len - 1, 8192, 1, &d), ACIS_WERR_LENGTH);
    pkt[0] ^= 1;
    ck_assert_int_eq(acis_wire_decode_from(pkt, len, 8192, 1, &d), ACIS_WERR_MAGIC);
    /* flagged but with a checksum: checked like any other */
    build(&h);
    acis_put16(pkt + 8, ACIS_F_UNSEALED);
    ck_assert_int_eq(acis_wire_decode_from(pkt, len, 8192, 1, &d), ACIS_WERR_CHECKSUM);
    h.flags = ACIS_F_UNSEALED;
    build(&h);
    ck_assert_int_eq(acis_wire_decode_from(pkt, len, 8192, 1, &d), ACIS_WERR_OK);
    /* every single-bit corruption (what the fault injector makes) and a
     * spread of single-byte ones of a sealed packet is refused, loopback
     * or not */
    static const uint8_t flips[] = { 1, 2, 4, 8, 16, 32, 64, 128, 0x81, 0xff, 0x5a, 0x3c };
    h.flags = 0;
    for (size_t i = 0; i < len; i++)
        for (size_t f = 0; f < sizeof flips; f++) {
            uint8_t v = flips[f];
            build(&h);
            pkt[i] ^= (uint8_t)v;
            ck_assert_int_ne(acis_wire_decode_from(pkt, len, 8192, 1, &d), ACIS_WERR_OK);
        }
    /* never a control message */
    struct acis_hdr c = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_CT_FREE, 0), .job_key = 1, .ctx = 2,
    };
    acis_hdr_encode(&c, pkt);
    acis_hdr_unsealed(pkt);
    ck_assert_int_eq(acis_wire_decode_from(pkt, ACIS_HDR_LEN, 8192, 1, &d), ACIS_WERR_FLAGS);
}
END_TEST

START_TEST(control_lengths)
{
    uint8_t pl[16] = { 0 };
    struct acis_hdr h = base(), d;
    h.opcode = ACIS_OPC(ACIS_K_HELLO, 0);
    h.op = ACIS_OP_NONE;
    h.payload_len = ACIS_HELLO_LEN;
    size_t len = build(&h);
    ck_assert_int_eq(acis_wire_decode(pkt, len, 8192, &d), ACIS_WERR_OK);
    h.payload_len = ACIS_HELLO_LEN + 4;
    len = build(&h);
    ck_assert_int_eq(acis_wire_decode(pkt, len, 8192, &d), ACIS_WERR_LENGTH);
    /* CT_CREATE: count must match the ranks that follow, and not be 0 */
    h.opcode = ACIS_OPC(ACIS_K_CT_CREATE, 0);
    h.payload_len = 12;
    acis_put32(pl, 2);
    acis_hdr_encode(&h, pkt);
    memcpy(pkt + ACIS_HDR_LEN, pl, 12);
    acis_hdr_seal(pkt, pl, 12);
    ck_assert_int_eq(acis_wire_decode(pkt, ACIS_HDR_LEN + 12, 8192, &d), ACIS_WERR_OK);
    acis_put32(pl, 3);
    memcpy(pkt + ACIS_HDR_LEN, pl, 12);
    acis_hdr_seal(pkt, pl, 12);
    ck_assert_int_eq(acis_wire_decode(pkt, ACIS_HDR_LEN + 12, 8192, &d), ACIS_WERR_LENGTH);
    h.payload_len = 4;
    acis_put32(pl, 0);
    acis_hdr_encode(&h, pkt);
    memcpy(pkt + ACIS_HDR_LEN, pl, 4);
    acis_hdr_seal(pkt, pl, 4);
    ck_assert_int_eq(acis_wire_decode(pkt, ACIS_HDR_LEN + 4, 8192, &d), ACIS_WERR_LENGTH);
    /* CT_JOIN: a size and a member, the size not 0; CT_INSTALL: a size */
    unsigned kinds[2] = { ACIS_K_CT_JOIN, ACIS_K_CT_INSTALL };
    uint32_t lens[2] = { ACIS_CT_JOIN_LEN, ACIS_CT_INSTALL_LEN };
    for (int k = 0; k < 2; k++)
        for (uint32_t size = 0; size < 2; size++)
            for (uint32_t extra = 0; extra <= 4; extra += 4) {
                h.opcode = ACIS_OPC(kinds[k], 0);
                h.payload_len = lens[k] + extra;
                memset(pl, 0, sizeof pl);
                acis_put32(pl, size);
                acis_hdr_encode(&h, pkt);
                memcpy(pkt + ACIS_HDR_LEN, pl, h.payload_len);
                acis_hdr_seal(pkt, pl, h.payload_len);
                ck_assert_int_eq(acis_wire_decode(pkt, ACIS_HDR_LEN + h.payload_len, 8192, &d),
                                 size && !extra ? ACIS_WERR_OK : ACIS_WERR_LENGTH);
            }
}
END_TEST

/* docs/protocol.md's example packet, byte for byte. */
START_TEST(doc_example)
{
    static const uint8_t want[ACIS_HDR_LEN + 8] = {
        0x41, 0x43, 0x49, 0x53, 0x02, 0x04, 0x01, 0x05, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x00,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5f, 0x69, 0x39, 0x1f,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x07, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
    };
    const int32_t v[2] = { 7, -1 };
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_ALLREDUCE, 0), .op = ACIS_OP_SUM, .dtype = ACIS_DT_I32,
        .slot = 3, .payload_len = 8, .job_key = 0x1122334455667788ull, .ctx = 0x10001,
        .seq = 5, .src = 1, .total_len = 8, .rx_len = 8, .member = 1,
    }, d;
    uint8_t b[ACIS_HDR_LEN + 8];
    acis_hdr_encode(&h, b);
    memcpy(b + ACIS_HDR_LEN, v, 8);
    acis_hdr_seal(b, v, 8);
    ck_assert_mem_eq(b, want, sizeof want);
    ck_assert_int_eq(acis_wire_decode(want, sizeof want, 8192, &d), ACIS_WERR_OK);
}
END_TEST

START_TEST(sizes)
{
    struct { float v; int i; } fi;
    struct { double v; int i; } di;
    struct { long v; int i; } li;
    struct { short v; int i; } si;
    struct { long double v; int i; } ldi;
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_FLOAT_INT), sizeof fi);
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_DOUBLE_INT), sizeof di);
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_LONG_INT), sizeof li);
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_SHORT_INT), sizeof si);
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_LONG_DOUBLE_INT), sizeof ldi);
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_F80), sizeof(long double));
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_C80), sizeof(long double complex));
    ck_assert_uint_eq(acis_wire_dt_size(ACIS_DT_COUNT), 0);
    ck_assert_str_eq(acis_wire_kind_name(ACIS_K_ALLREDUCE), "allreduce");
    ck_assert_str_eq(acis_wire_counter_name(ACIS_SWC_drop_spoofed), "drop_spoofed");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, crc_vector);
    tcase_add_test(tc, split);
    tcase_add_test(tc, rejections);
    tcase_add_test(tc, lengths);
    tcase_add_test(tc, control_lengths);
    tcase_add_test(tc, unsealed);
    tcase_add_test(tc, sizes);
    tcase_add_test(tc, doc_example);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
