/* check_arrival.c -- fold on arrival: whatever order the members' packets
 * of a segment reach the switch in, a floating-point reduction is bitwise
 * the rank-order fold (((x0 + x1) + x2) + ...), scans give every member
 * its rank-order prefix, and the switch holds only pieces that came before
 * their turn, in hold buffers it gets back when the gap closes.  Driven
 * through the switch's private core (the emulator), which lets the test
 * choose the exact arrival order. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "offload/stream.h"
#include "switch/switch.h"

enum { MAXP = 64, COUNT = 300, PAYLOAD = 1000, SLOTS = 4 };

static const uint64_t KEY = 0x1234567887654321ull;

struct got {
    uint32_t n;
    uint8_t (*out)[COUNT * 8];      /* per member */
    uint32_t answers[MAXP];
};

static void take(void *arg, uint32_t member, const void *pkt, size_t len)
{
    struct got *g = arg;
    struct acis_hdr h;
    ck_assert_int_eq(acis_wire_decode(pkt, len, PAYLOAD, &h), ACIS_WERR_OK);
    ck_assert_uint_lt(member, g->n);
    ck_assert_uint_le(h.seg_offset + h.payload_len, sizeof g->out[0]);
    memcpy(g->out[member] + h.seg_offset, (const uint8_t *)pkt + ACIS_HDR_LEN, h.payload_len);
    g->answers[member]++;
}

static uint32_t seed = 12345;

static uint32_t rnd(void)
{
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
}

/* Members' data: not exactly representable, different per element. */
static void member_data(unsigned dt, uint32_t p, uint8_t (*in)[COUNT * 8])
{
    for (uint32_t r = 0; r < p; r++)
        for (int i = 0; i < COUNT; i++) {
            double v = 0.1 * (r + 1) + 1e-7 * i;
            if (dt == ACIS_DT_F32) {
                float f = (float)v;
                memcpy(in[r] + 4 * i, &f, 4);
            } else {
                memcpy(in[r] + 8 * i, &v, 8);
            }
        }
}

/* The rank-order fold of members 0..upto into out. */
static void fold(unsigned dt, const uint8_t (*in)[COUNT * 8], uint32_t upto, uint8_t *out)
{
    for (int i = 0; i < COUNT; i++) {
        if (dt == ACIS_DT_F32) {
            float a, b;
            memcpy(&a, in[0] + 4 * i, 4);
            for (uint32_t r = 1; r <= upto; r++) {
                memcpy(&b, in[r] + 4 * i, 4);
                a = a + b;
            }
            memcpy(out + 4 * i, &a, 4);
        } else {
            double a, b;
            memcpy(&a, in[0] + 8 * i, 8);
            for (uint32_t r = 1; r <= upto; r++) {
                memcpy(&b, in[r] + 8 * i, 8);
                a = a + b;
            }
            memcpy(out + 8 * i, &a, 8);
        }
    }
}

/* One SUM of kind on p members, the members of segment k arriving in the
 * order perm(k) gives (perm NULL: a random order per segment).  Checks
 * every member's answer bitwise against the rank-order fold, and that the
 * core holds no piece once the collective is over. */
static void run(unsigned kind, unsigned dt, uint32_t p, const uint32_t *perm)
{
    static uint8_t in[MAXP][COUNT * 8], out[MAXP][COUNT * 8], want[COUNT * 8];
    uint32_t granks[MAXP], order[MAXP];
    size_t es = dt == ACIS_DT_F32 ? 4 : 8, total = COUNT * es;
    for (uint32_t r = 0; r < p; r++)
        granks[r] = r;
    struct acis_swemu *e = acis_swemu_create(KEY, granks, p, p, SLOTS, PAYLOAD);
    ck_assert_ptr_nonnull(e);
    uint64_t c0[ACIS_SWC_COUNT], c1[ACIS_SWC_COUNT];
    acis_swemu_counters(e, c0);
    member_data(dt, p, in);
    memset(out, 0xee, sizeof out);
    struct got g = { .n = p, .out = out };
    static struct acis_window w[MAXP];
    static struct acis_stream st[MAXP];
    for (uint32_t r = 0; r < p; r++) {
        ck_assert_int_eq(acis_window_init(&w[r], 64), 0);
        st[r] = (struct acis_stream){
            .kind = (uint8_t)kind, .op = ACIS_OP_SUM, .dtype = (uint8_t)dt, .ctx = 0x10001,
            .seq = 1, .src = r, .member = r, .job_key = KEY, .total = total, .src_buf = in[r],
            .src_len = total, .dst_buf = out[r], .dst_len = total,
        };
        st[r].seg_bytes = acis_seg_bytes(PAYLOAD, (unsigned)kind, dt, p);   /* scans split */
        acis_stream_start(&st[r], &w[r]);
    }
    ck_assert_uint_gt(st[0].nseg, 1);
    uint8_t pkt[ACIS_HDR_LEN + PAYLOAD];
    for (uint32_t k = 0; k < st[0].nseg; k++) {
        for (uint32_t i = 0; i < p; i++)
            order[i] = perm ? perm[i] : i;
        for (uint32_t i = p - 1; !perm && i > 0; i--) {
            uint32_t j = rnd() % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (uint32_t i = 0; i < p; i++) {
            uint32_t m = order[i];
            const uint8_t *pl;
            uint32_t len;
            acis_stream_packet(&st[m], &w[m], k, pkt, &pl, &len);
            memcpy(pkt + ACIS_HDR_LEN, pl, len);
            ck_assert_int_eq(acis_swemu_input(e, m, k % SLOTS, (int)(k / SLOTS % 2), pkt,
                                              ACIS_HDR_LEN + len, take, &g), 0);
        }
    }
    for (uint32_t r = 0; r < p; r++) {
        ck_assert_uint_eq(g.answers[r], st[0].nseg);
        if (kind == ACIS_K_EXSCAN && r == 0)
            continue;                                  /* undefined: nothing sent */
        fold(dt, (const uint8_t (*)[COUNT * 8])in,
             kind == ACIS_K_ALLREDUCE ? p - 1 : kind == ACIS_K_SCAN ? r : r - 1, want);
        ck_assert_msg(memcmp(out[r], want, total) == 0, "%s p=%u member %u differs",
                      acis_wire_kind_name(kind), p, r);
    }
    acis_swemu_counters(e, c1);
    ck_assert_uint_eq(c1[ACIS_SWC_held], 0);   /* nothing held any more */
    ck_assert_uint_eq(c1[ACIS_SWC_buffer_bytes], c0[ACIS_SWC_buffer_bytes]);
    for (uint32_t r = 0; r < p; r++) {
        acis_window_free(&w[r]);
    }
    acis_swemu_destroy(e);
}

static int next_perm(uint32_t *a, uint32_t n)
{
    int i = (int)n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = (int)n - 1;
    while (a[j] <= a[i])
        j--;
    uint32_t t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int l = i + 1, r = (int)n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return 1;
}

/* P = 4: all 24 arrival orders, for allreduce and both scans. */
START_TEST(every_order_of_4)
{
    static const unsigned kinds[] = { ACIS_K_ALLREDUCE, ACIS_K_SCAN, ACIS_K_EXSCAN };
    static const unsigned dts[] = { ACIS_DT_F32, ACIS_DT_F64 };
    for (size_t k = 0; k < 3; k++)
        for (size_t d = 0; d < 2; d++) {
            uint32_t perm[4] = { 0, 1, 2, 3 };
            int n = 0;
            do {
                run(kinds[k], dts[d], 4, perm);
                n++;
            } while (next_perm(perm, 4));
            ck_assert_int_eq(n, 24);
        }
}
END_TEST

/* P = 16 and 64: random orders, a new one per segment (scans at 16: at
 * 64 members not one piece of a 1000-byte packet fits in a stride of the
 * split, and scans stay in software there). */
START_TEST(random_orders)
{
    for (int rep = 0; rep < 10; rep++) {
        run(ACIS_K_ALLREDUCE, rep % 2 ? ACIS_DT_F64 : ACIS_DT_F32, 16, NULL);
        run(ACIS_K_ALLREDUCE, rep % 2 ? ACIS_DT_F32 : ACIS_DT_F64, 64, NULL);
    }
    ck_assert_uint_eq(acis_seg_bytes(PAYLOAD, ACIS_K_SCAN, ACIS_DT_F64, 64), 0);
    run(ACIS_K_SCAN, ACIS_DT_F64, 16, NULL);
    run(ACIS_K_EXSCAN, ACIS_DT_F32, 16, NULL);
}
END_TEST

/* Only pieces ahead of the prefix are held, a hold buffer each, and they
 * go back as soon as the missing member arrives; the pool never grows. */
START_TEST(holds_only_early_pieces)
{
    enum { P = 16 };
    uint32_t granks[P];
    static float in[P][200];
    for (uint32_t r = 0; r < P; r++) {
        granks[r] = r;
        for (int i = 0; i < 200; i++)
            in[r][i] = 0.1f * (float)(r + 1) + 1e-7f * (float)i;
    }
    struct acis_swemu *e = acis_swemu_create(KEY, granks, P, P, SLOTS, PAYLOAD);
    ck_assert_ptr_nonnull(e);
    uint64_t c[ACIS_SWC_COUNT], base;
    acis_swemu_counters(e, c);
    base = c[ACIS_SWC_buffer_bytes];
    ck_assert_uint_gt(base, 0);
    uint8_t pkt[ACIS_HDR_LEN + 800];
    struct got g = { .n = P, .out = calloc(P, COUNT * 8) };
    for (uint32_t i = 0; i < P; i++) {
        uint32_t m = (i + 1) % P;                  /* 1, 2, ..., 15, then 0 */
        struct acis_hdr h = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_ALLREDUCE, 0), .op = ACIS_OP_SUM, .dtype = ACIS_DT_F32,
            .payload_len = 800, .job_key = KEY, .seq = 1, .src = m, .total_len = 800,
            .rx_len = 800, .member = m,
        };
        acis_hdr_encode(&h, pkt);
        memcpy(pkt + ACIS_HDR_LEN, in[m], 800);
        ck_assert_int_eq(acis_swemu_input(e, m, 0, 0, pkt, sizeof pkt, take, &g), 0);
        acis_swemu_counters(e, c);
        ck_assert_uint_eq(c[ACIS_SWC_held], m == 0 ? 0 : i + 1);
        ck_assert_uint_eq(c[ACIS_SWC_buffer_bytes], base);
    }
    ck_assert_uint_eq(g.answers[0], 1);
    float want[200];
    for (int i = 0; i < 200; i++) {
        want[i] = in[0][i];
        for (int r = 1; r < P; r++)
            want[i] = want[i] + in[r][i];
    }
    ck_assert_mem_eq(g.out[5], want, sizeof want);
    free(g.out);
    acis_swemu_destroy(e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arrival");
    TCase *t = tcase_create("arrival");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, every_order_of_4);
    tcase_add_test(t, random_orders);
    tcase_add_test(t, holds_only_early_pieces);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
