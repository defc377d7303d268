/* fuzz_stream.c -- libFuzzer harness for what a host does with the
 * answers it receives (src/offload/stream.c after acis_wire_decode): a
 * collective of a few segments waits for answers; the input is a sequence
 * of datagrams, each decoded and offered to it.  Whatever arrives, an
 * answer may only land inside the range the host asked for, each segment
 * is taken at most once, and the window's count of busy slots stays
 * consistent. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "offload/stream.h"

#define PAYLOAD 128
#define WINDOW 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct acis_window w;
    struct acis_stream s;
    uint8_t src[1000], dst[1000 + 64];
    FUZZ_CHECK(acis_window_init(&w, WINDOW) == 0);
    if (size < 2) {
        acis_window_free(&w);
        return 0;
    }
    memset(&s, 0, sizeof s);
    s.kind = (uint8_t)(1 + data[0] % ACIS_K_COLL_LAST);
    s.dtype = ACIS_DT_I32;
    s.op = s.kind == ACIS_K_REDUCE || s.kind == ACIS_K_ALLREDUCE ||
                   s.kind == ACIS_K_REDUCE_SCATTER || s.kind == ACIS_K_SCAN ||
                   s.kind == ACIS_K_EXSCAN ? ACIS_OP_SUM : ACIS_OP_NONE;
    s.ctx = 0x10001;
    s.seq = 7;
    s.job_key = 42;
    s.total = 1000 - data[1] % 200 / 4 * 4;
    s.seg_bytes = acis_seg_bytes(PAYLOAD, s.kind, s.dtype, 0);
    memset(src, 0xab, sizeof src);
    memset(dst, 0xcd, sizeof dst);
    s.src_buf = src;
    s.src_len = s.total;
    s.dst_buf = dst;
    s.dst_off = data[1] % 2 ? 0 : 96;
    s.dst_len = s.total - s.dst_off;
    acis_stream_start(&s, &w);
    data += 2;
    size -= 2;
    uint8_t hdr[ACIS_HDR_LEN];
    const uint8_t *pl;
    uint32_t len;
    while (acis_stream_can_send(&s, &w))
        acis_stream_next(&s, &w, hdr, &pl, &len, 0);

    uint8_t pkt[ACIS_HDR_LEN + PAYLOAD];
    while (size >= 2) {
        size_t n = acis_get16(data) % (sizeof pkt + 1);
        data += 2;
        size -= 2;
        n = fuzz_take(&data, &size, pkt, n);
        struct acis_hdr h;
        if (n >= ACIS_HDR_LEN) {           /* a checksum a fuzzer cannot guess */
            acis_put32(pkt, ACIS_WIRE_MAGIC);
            pkt[4] = ACIS_WIRE_VERSION;
            acis_put32(pkt + 12, (uint32_t)(n - ACIS_HDR_LEN));
            acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, n - ACIS_HDR_LEN);
        }
        if (acis_wire_decode(pkt, n, PAYLOAD, &h) != ACIS_WERR_OK || h.ctx != s.ctx ||
            h.seq != s.seq)
            continue;
        uint32_t before = s.answered;
        int rc = acis_stream_answer(&s, &w, &h, pkt + ACIS_HDR_LEN);
        FUZZ_CHECK(rc != 0 || s.answered == before + 1);
        FUZZ_CHECK(s.answered <= s.nseg);
        while (acis_stream_can_send(&s, &w))
            acis_stream_next(&s, &w, hdr, &pl, &len, 0);
    }
    /* nothing written past the range asked for (dst holds dst_len bytes) */
    for (size_t i = s.dst_len; i < sizeof dst; i++)
        FUZZ_CHECK(dst[i] == 0xcd);
    uint32_t busy = 0;
    for (uint32_t i = 0; i < WINDOW; i++)
        busy += w.busy[i];
    FUZZ_CHECK(busy == w.busy_count);
    acis_window_free(&w);
    return 0;
}
