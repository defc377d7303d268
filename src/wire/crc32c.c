/* crc32c.c -- CRC-32C (Castagnoli), the packet checksum.  Uses the SSE4.2
 * crc32 instruction when the CPU has it, a table otherwise; both give the
 * same value (the standard reflected CRC-32C with init and final xor
 * ~0). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "acis/wire.h"

static uint32_t table[256];

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
        table[i] = c;
    }
}

static uint32_t crc_table(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = crc;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

static uint32_t (*impl)(uint32_t, const uint8_t *, size_t);

__attribute__((constructor))
static void crc_select(void)
{
    table_init();
    impl = crc_table;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        impl = crc_hw;
#endif
}

uint32_t acis_crc32c(uint32_t crc, const void *buf, size_t len)
{
    return ~impl(~crc, buf, len);
}
