/* fuzz_wire.c -- libFuzzer harness for the packet decoder every receiver
 * runs on untrusted bytes (acis_wire_decode): it must never read out of
 * bounds or crash, and what it accepts must encode back to the same
 * header bytes and carry a matching checksum.  Each input is tried as it
 * is and repaired (magic, version, length, checksum), so the field checks
 * behind the checksum are reached too. */
#include <stdlib.h>
#include <string.h>

#include "acis/wire.h"
#include "fuzz.h"

static void try_one(const uint8_t *data, size_t size)
{
    struct acis_hdr h;
    /* both packet size limits a receiver uses: a switch's, and the largest */
    for (size_t max = 256; max <= ACIS_MAX_PAYLOAD; max += ACIS_MAX_PAYLOAD - 256) {
        if (acis_wire_decode(data, size, max, &h) != ACIS_WERR_OK)
            continue;
        FUZZ_CHECK(size == ACIS_HDR_LEN + h.payload_len);
        uint8_t again[ACIS_HDR_LEN];
        acis_hdr_encode(&h, again);
        FUZZ_CHECK(memcmp(again, data, ACIS_HDR_LEN) == 0);
        acis_hdr_seal(again, data + ACIS_HDR_LEN, h.payload_len);
        FUZZ_CHECK(memcmp(again, data, ACIS_HDR_LEN) == 0);
        FUZZ_CHECK(acis_wire_kind_name(ACIS_OPC_KIND(h.opcode))[0] != '?');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_one(data, size);
    if (size < ACIS_HDR_LEN)
        return 0;
    uint8_t *fixed = malloc(size);
    memcpy(fixed, data, size);
    acis_put32(fixed, ACIS_WIRE_MAGIC);
    fixed[4] = ACIS_WIRE_VERSION;
    acis_put32(fixed + 12, (uint32_t)(size - ACIS_HDR_LEN));
    acis_hdr_seal(fixed, fixed + ACIS_HDR_LEN, size - ACIS_HDR_LEN);
    try_one(fixed, size);
    free(fixed);
    return 0;
}
