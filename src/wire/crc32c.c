/* crc32c.c -- CRC-32C (Castagnoli), the packet checksum: the standard
 * reflected CRC with init and final xor ~0, so acis_crc32c(0, "123456789",
 * 9) == 0xE3069283.
 *
 * With SSE4.2, long buffers run three crc32 instruction streams side by
 * side over three parts of each block (the instruction's latency is three
 * times its throughput) and join them with a precomputed "append L zero
 * bytes" operator; short buffers and other CPUs use one stream or a table.
 * The tables are built once at load time and never change. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "acis/wire.h"

#define LANE 1024                  /* bytes per stream per block */

static uint32_t table[256];        /* byte-at-a-time CRC */
static uint32_t shift[4][256];     /* raw CRC state after LANE zero bytes */

/* Raw CRC (no init/final xor) of len bytes, table method. */
static uint32_t raw_table(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

static uint32_t (*raw)(uint32_t, const uint8_t *, size_t) = raw_table;

/* Raw CRC of len bytes whose 4 bytes at hole are read as zero, then of
 * l2 more bytes at p2 (a packet's header and its payload where it lies),
 * through raw (the hardware has its own, raw_hole_hw). */
static uint32_t raw_hole_any(uint32_t crc, const uint8_t *p, size_t len, size_t hole,
                             const uint8_t *p2, size_t l2)
{
    static const uint8_t zero[4];
    crc = raw(crc, p, hole);
    crc = raw(crc, zero, sizeof zero);
    crc = raw(crc, p + hole + sizeof zero, len - hole - sizeof zero);
    return l2 ? raw(crc, p2, l2) : crc;
}

static uint32_t (*raw_hole)(uint32_t, const uint8_t *, size_t, size_t, const uint8_t *,
                            size_t) = raw_hole_any;

/* The state after LANE zero bytes from state c: linear in c. */
static uint32_t shift_lane(uint32_t c)
{
    return shift[0][c & 0xff] ^ shift[1][(c >> 8) & 0xff] ^ shift[2][(c >> 16) & 0xff] ^
           shift[3][c >> 24];
}

#if defined(__x86_64__) && defined(__GNUC__)
/* One stream, two words per turn (a packet header is ten words). */
__attribute__((target("sse4.2")))
static inline uint32_t raw_hw1(uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = crc, v, x;
    const uint8_t *end = p + len;
    for (; end - p >= 16; p += 16) {
        memcpy(&v, p, 8);
        memcpy(&x, p + 8, 8);
        c = __builtin_ia32_crc32di(c, v);
        c = __builtin_ia32_crc32di(c, x);
    }
    if (end - p >= 8) {
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
    }
    uint32_t c32 = (uint32_t)c;
    if (end - p >= 4) {
        uint32_t v4;
        memcpy(&v4, p, 4);
        c32 = __builtin_ia32_crc32si(c32, v4);
        p += 4;
    }
    while (p < end)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

__attribute__((target("sse4.2")))
static uint32_t raw_hw(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len >= 3 * LANE) {
        uint64_t c0 = crc, c1 = 0, c2 = 0;
        for (size_t i = 0; i < LANE; i += 8) {
            uint64_t a, b, d;
            memcpy(&a, p + i, 8);
            memcpy(&b, p + LANE + i, 8);
            memcpy(&d, p + 2 * LANE + i, 8);
            c0 = __builtin_ia32_crc32di(c0, a);
            c1 = __builtin_ia32_crc32di(c1, b);
            c2 = __builtin_ia32_crc32di(c2, d);
        }
        crc = shift_lane(shift_lane((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * LANE;
        len -= 3 * LANE;
    }
    return raw_hw1(crc, p, len);
}

/* A packet header is ten words: straight-line code for them, the field
 * inside one of them masked. */
#define HEAD_WORDS 10

__attribute__((target("sse4.2")))
static uint32_t raw_hole_hw(uint32_t crc, const uint8_t *p, size_t len, size_t hole,
                            const uint8_t *p2, size_t l2)
{
    if (len < 8 * HEAD_WORDS || hole % 8 > 4 || hole / 8 >= HEAD_WORDS)
        return raw_hole_any(crc, p, len, hole, p2, l2);
    uint64_t c = crc, v[HEAD_WORDS];
    memcpy(v, p, sizeof v);
    v[hole / 8] &= ~(0xffffffffull << 8 * (hole % 8));
#pragma GCC unroll 10
    for (int i = 0; i < HEAD_WORDS; i++)
        c = __builtin_ia32_crc32di(c, v[i]);
    crc = (uint32_t)c;
    if (len > sizeof v)
        crc = raw_hw(crc, p + sizeof v, len - sizeof v);
    if (!l2)
        return crc;
    return l2 < 3 * LANE ? raw_hw1(crc, p2, l2) : raw_hw(crc, p2, l2);
}

#endif

__attribute__((constructor))
static void crc_init(void)
{
    static const uint8_t zeros[LANE];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
        table[i] = c;
    }
    /* LANE zero bytes act linearly on the state: shift the 32 one-bit
     * states through them, then combine (32 KiB of table steps at load,
     * not 1 MiB: that took 8.4 million instructions in every process). */
    uint32_t bit[32];
    for (int j = 0; j < 32; j++)
        bit[j] = raw_table(1u << j, zeros, LANE);
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 1; b < 256; b++)
            shift[k][b] = shift[k][b & (b - 1)] ^ bit[8 * k + __builtin_ctz(b)];
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        raw = raw_hw;
        raw_hole = raw_hole_hw;
    }
#endif
}

uint32_t acis_crc32c(uint32_t crc, const void *buf, size_t len)
{
    return ~raw(~crc, buf, len);
}

uint32_t acis_crc32c_hole(uint32_t crc, const void *buf, size_t len, size_t hole)
{
    return ~raw_hole(~crc, buf, len, hole, NULL, 0);
}

uint32_t acis_crc32c_hole2(uint32_t crc, const void *buf, size_t len, size_t hole,
                           const void *p2, size_t l2)
{
    return ~raw_hole(~crc, buf, len, hole, p2, l2);
}
