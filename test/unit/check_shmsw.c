/* check_shmsw.c -- Check unit tests of the shared-memory switch
 * (src/switch/shmsw.c) with simulated hosts and no MPI: each host is an
 * attachment of its own to one segment (as each MPI process has), posting
 * packets in every order; results must be bitwise the rank-order fold
 * (the network switch's), whoever arrives last; concurrent hosts on
 * threads; posts that disagree are caught; a member that abstains; the
 * control plane; the segment's size against /dev/shm's room. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "switch/switch.h"

#define MAXP 16

struct fabric {
    char name[64];
    uint32_t n;
    struct acis_shmsw *sw[MAXP];
    uint32_t ctx, window, payload;
};

static struct acis_hdr control(unsigned kind, uint32_t src, uint32_t seq, uint32_t len)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .job_key = 42, .seq = seq, .src = src,
        .payload_len = len,
    };
    return h;
}

/* Segment for n hosts, every host joined, one row for all of them. */
static void fabric_up(struct fabric *f, uint32_t n, uint32_t slots)
{
    static int made;
    char why[256];
    uint8_t ans[ACIS_HDR_LEN + 4 + 8 * ACIS_SWC_COUNT], pl[4 + 4 * MAXP];
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.tables = 4;
    o.slots = slots * 4;
    o.payload = 4096;
    memset(f, 0, sizeof *f);
    f->n = n;
    snprintf(f->name, sizeof f->name, "/acis-check-%d-%d", (int)getpid(), made++);
    ck_assert_msg(acis_shmsw_create(f->name, 42, n, &o, why, sizeof why) == 0, "%s", why);
    for (uint32_t r = 0; r < n; r++) {
        f->sw[r] = acis_shmsw_attach(f->name, why, sizeof why);
        ck_assert_msg(f->sw[r] != NULL, "%s", why);
        struct acis_hdr h = control(ACIS_K_HELLO, r, 1, ACIS_HELLO_LEN);
        uint8_t hello[ACIS_HELLO_LEN] = { 0 };
        acis_put32(hello, n);
        ck_assert_uint_gt(acis_shmsw_control(f->sw[r], &h, hello, ans), 0);
        ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN), ACIS_ST_OK);
        f->payload = acis_get32(ans + ACIS_HDR_LEN + 8);
    }
    acis_shmsw_unlink(f->name);                      /* as the job does once all mapped */
    acis_put32(pl, n);
    for (uint32_t r = 0; r < n; r++)
        acis_put32(pl + 4 + 4 * r, r);
    struct acis_hdr h = control(ACIS_K_CT_CREATE, 0, 7, 4 + 4 * n);
    acis_shmsw_control(f->sw[0], &h, pl, ans);
    ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN), ACIS_ST_OK);
    f->ctx = acis_get32(ans + ACIS_HDR_LEN + 4);
    f->window = acis_get32(ans + ACIS_HDR_LEN + 8);
    /* it takes a gather or scatter root's empty pieces for its own block */
    ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN + 16), ACIS_CT_OWN_BLOCK);
}

static void fabric_down(struct fabric *f)
{
    for (uint32_t r = 0; r < f->n; r++)
        acis_shmsw_detach(f->sw[r]);
}

/* Member r's packet of collective number i (one segment). */
static struct acis_hdr data(const struct fabric *f, unsigned kind, unsigned op, unsigned dt,
                            uint32_t r, uint32_t i, uint64_t total, uint64_t off,
                            uint32_t len, uint32_t rx_off, uint32_t rx_len)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .op = (uint8_t)op, .dtype = (uint8_t)dt,
        .flags = (uint16_t)((i / f->window) & 1 ? ACIS_F_ROUND : 0),
        .slot = (uint16_t)(i % f->window), .payload_len = len, .job_key = 42,
        .ctx = f->ctx, .seq = i + 1, .src = r, .seg_offset = off, .total_len = total,
        .rx_off = rx_off, .rx_len = rx_len,
    };
    return h;
}

/* Not exactly representable, and odd members add and take away 1e16:
 * the sum's bits depend on the order of the fold. */
static double value(uint32_t r, uint32_t i, uint32_t k)
{
    double big = r % 2 ? ((r / 2) % 2 ? -1e16 : 1e16) : 0;
    return big + 0.1 * (r + 1) + 1e-3 * (k + 1) * (i % 13 + 1);
}

/* Sum of doubles in every arrival order: the bits of the rank-order fold. */
START_TEST(fold_order)
{
    enum { P = 5, K = 64 };
    struct fabric f;
    fabric_up(&f, P, 8);
    static double in[P][K], want[K];
    uint32_t perm[P] = { 0, 1, 2, 3, 4 };
    for (uint32_t i = 0; i < 120; i++) {              /* 120 = 5! orders */
        for (uint32_t r = 0; r < P; r++)
            for (uint32_t k = 0; k < K; k++)
                in[r][k] = value(r, i, k);
        memcpy(want, in[0], sizeof want);
        for (uint32_t r = 1; r < P; r++)
            acis_reduce(ACIS_OP_SUM, ACIS_DT_F64, want, in[r], K);
        /* the next permutation (Heap's would do; this walks all 120) */
        uint32_t c = i, pool[P] = { 0, 1, 2, 3, 4 };
        for (uint32_t j = 0, left = P; j < P; j++, left--) {
            uint32_t pick = c % left;
            c /= left;
            perm[j] = pool[pick];
            memmove(pool + pick, pool + pick + 1, (left - pick - 1) * sizeof *pool);
        }
        struct acis_shm_wait w[P];
        for (uint32_t j = 0; j < P; j++) {
            uint32_t r = perm[j];
            struct acis_hdr h = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_F64, r, i,
                                     sizeof want, 0, sizeof want, 0, sizeof want);
            ck_assert_int_eq(acis_shmsw_post(f.sw[r], &h, (uint8_t *)in[r], &w[r]), 0);
            struct acis_hdr a;
            const uint8_t *p;
            ck_assert_int_eq(acis_shmsw_ready(f.sw[r], &w[r], &a, &p), j == P - 1);
        }
        for (uint32_t r = 0; r < P; r++) {
            struct acis_hdr a;
            const uint8_t *p;
            ck_assert(acis_shmsw_ready(f.sw[r], &w[r], &a, &p));
            ck_assert(!(a.flags & ACIS_F_ERROR));
            ck_assert_uint_eq(a.payload_len, sizeof want);
            ck_assert_msg(memcmp(p, want, sizeof want) == 0, "order %u member %u", i, r);
        }
    }
    /* Whoever came last counted the segment in its own block; any
     * process reads the sum. */
    uint64_t c[ACIS_SWC_COUNT], c3[ACIS_SWC_COUNT];
    acis_shmsw_counters(f.sw[0], c);
    acis_shmsw_counters(f.sw[3], c3);
    ck_assert_uint_eq(c[ACIS_SWC_seg_allreduce], 120);
    ck_assert_uint_eq(c[ACIS_SWC_segments], 120);
    ck_assert_uint_eq(c[ACIS_SWC_packets_in], 120 * P);
    ck_assert_uint_eq(c[ACIS_SWC_elements_reduced], 120 * (P - 1) * K);
    ck_assert_uint_eq(c[ACIS_SWC_drop_mismatch], 0);
    ck_assert_mem_eq(c, c3, sizeof c);
    fabric_down(&f);
}
END_TEST

/* Scan and exscan: member r gets the fold of 0..r (0..r-1). */
START_TEST(scans)
{
    enum { P = 6, K = 10 };
    struct fabric f;
    fabric_up(&f, P, 4);
    int32_t in[P][K];
    for (uint32_t i = 0; i < 8; i++) {
        unsigned kind = i % 2 ? ACIS_K_EXSCAN : ACIS_K_SCAN;
        struct acis_shm_wait w[P];
        for (uint32_t j = 0; j < P; j++) {
            uint32_t r = (j * 5 + i) % P;                 /* a different order each time */
            for (uint32_t k = 0; k < K; k++)
                in[r][k] = (int32_t)(r * 100 + k + i);
            uint32_t rx = kind == ACIS_K_EXSCAN && r == 0 ? 0 : sizeof in[r];
            struct acis_hdr h = data(&f, kind, ACIS_OP_SUM, ACIS_DT_I32, r, i, sizeof in[r], 0,
                                     sizeof in[r], 0, rx);
            ck_assert_int_eq(acis_shmsw_post(f.sw[r], &h, (uint8_t *)in[r], &w[r]), 0);
        }
        for (uint32_t r = 0; r < P; r++) {
            struct acis_hdr a;
            const uint8_t *p;
            ck_assert(acis_shmsw_ready(f.sw[r], &w[r], &a, &p));
            uint32_t upto = kind == ACIS_K_SCAN ? r + 1 : r;
            if (upto == 0) {
                ck_assert(a.flags & ACIS_F_ACK);
                continue;
            }
            for (uint32_t k = 0; k < K; k++) {
                int32_t s = 0;
                for (uint32_t q = 0; q < upto; q++)
                    s += (int32_t)(q * 100 + k + i);
                ck_assert_int_eq(((const int32_t *)p)[k], s);
            }
        }
    }
    fabric_down(&f);
}
END_TEST

/* Allgather: pieces land in place, everyone reads the whole. */
START_TEST(allgather)
{
    enum { P = 4, B = 100 };
    struct fabric f;
    fabric_up(&f, P, 4);
    uint8_t piece[P][B], want[P * B];
    for (uint32_t r = 0; r < P; r++)
        memset(piece[r], 'a' + (int)r, B);
    for (uint32_t r = 0; r < P; r++)
        memcpy(want + r * B, piece[r], B);
    struct acis_shm_wait w[P];
    for (uint32_t r = P; r-- > 0;) {
        struct acis_hdr h = data(&f, ACIS_K_ALLGATHER, ACIS_OP_NONE, ACIS_DT_BYTE, r, 0,
                                 sizeof want, r * B, B, 0, sizeof want);
        ck_assert_int_eq(acis_shmsw_post(f.sw[r], &h, piece[r], &w[r]), 0);
    }
    for (uint32_t r = 0; r < P; r++) {
        struct acis_hdr a;
        const uint8_t *p;
        ck_assert(acis_shmsw_ready(f.sw[r], &w[r], &a, &p));
        ck_assert_int_eq(memcmp(p, want, sizeof want), 0);
    }
    fabric_down(&f);
}
END_TEST

/* Posts that disagree (an erroneous program) complete with ERROR,
 * counted; a post out of turn (wrong round) or out of range is refused. */
START_TEST(disagreement)
{
    struct fabric f;
    fabric_up(&f, 2, 4);
    int32_t x = 5;
    struct acis_shm_wait w[2];
    struct acis_hdr h0 = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0, 0, 4, 0, 4, 0, 4);
    struct acis_hdr h1 = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_MAX, ACIS_DT_I32, 1, 0, 4, 0, 4, 0, 4);
    ck_assert_int_eq(acis_shmsw_post(f.sw[0], &h0, (uint8_t *)&x, &w[0]), 0);
    ck_assert_int_eq(acis_shmsw_post(f.sw[1], &h1, (uint8_t *)&x, &w[1]), 0);
    struct acis_hdr a;
    const uint8_t *p;
    ck_assert(acis_shmsw_ready(f.sw[0], &w[0], &a, &p));
    ck_assert(a.flags & ACIS_F_ERROR);
    uint64_t c[ACIS_SWC_COUNT];
    acis_shmsw_counters(f.sw[0], c);
    ck_assert_uint_eq(c[ACIS_SWC_drop_mismatch], 1);
    struct acis_hdr late = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0, 1, 4, 0, 4, 0, 4);
    late.flags ^= ACIS_F_ROUND;                     /* claims the wrong use of its slot */
    ck_assert_int_eq(acis_shmsw_post(f.sw[0], &late, (uint8_t *)&x, &w[0]), -1);
    struct acis_hdr big = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0, 1, 4, 0, 8, 0, 4);
    ck_assert_int_eq(acis_shmsw_post(f.sw[0], &big, (uint8_t *)&x, &w[0]), -1);
    struct acis_hdr stranger = h0;
    stranger.ctx ^= 0x10000;                         /* a stale generation */
    ck_assert_int_eq(acis_shmsw_post(f.sw[0], &stranger, (uint8_t *)&x, &w[0]), -1);
    acis_shmsw_counters(f.sw[0], c);
    ck_assert_uint_eq(c[ACIS_SWC_drop_range], 2);
    ck_assert_uint_eq(c[ACIS_SWC_drop_foreign], 1);
    fabric_down(&f);
}
END_TEST

/* A member without memory for its data abstains: whoever posts last,
 * every member is answered ERROR | ABSTAIN with nothing in it, and the
 * slot's next use folds normally. */
START_TEST(abstain)
{
    enum { P = 3 };
    struct fabric f;
    fabric_up(&f, P, 4);
    int32_t x[P] = { 1, 2, 4 };
    for (uint32_t last = 0; last < P; last++) {
        struct acis_shm_wait w[P];
        uint32_t i = 2 * last;                      /* collectives i and i + 1 */
        for (uint32_t k = 0; k < P; k++) {
            uint32_t r = (last + 1 + k) % P;        /* member `last` posts last */
            int abst = r == 1;
            struct acis_hdr h = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, r, i, 4, 0,
                                     abst ? 0 : 4, 0, 4);
            if (abst)
                h.flags |= ACIS_F_ABSTAIN;
            ck_assert_int_eq(acis_shmsw_post(f.sw[r], &h, (uint8_t *)&x[r], &w[r]), 0);
        }
        for (uint32_t r = 0; r < P; r++) {
            struct acis_hdr a;
            const uint8_t *p;
            ck_assert(acis_shmsw_ready(f.sw[r], &w[r], &a, &p));
            ck_assert_uint_eq(a.flags & (ACIS_F_ERROR | ACIS_F_ABSTAIN),
                              ACIS_F_ERROR | ACIS_F_ABSTAIN);
            ck_assert_uint_eq(a.payload_len, 0);
        }
        for (uint32_t r = 0; r < P; r++) {
            struct acis_hdr h = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, r, i + 1, 4,
                                     0, 4, 0, 4);
            ck_assert_int_eq(acis_shmsw_post(f.sw[r], &h, (uint8_t *)&x[r], &w[r]), 0);
        }
        for (uint32_t r = 0; r < P; r++) {
            struct acis_hdr a;
            const uint8_t *p;
            int32_t got;
            ck_assert(acis_shmsw_ready(f.sw[r], &w[r], &a, &p));
            ck_assert_uint_eq(a.flags & ACIS_F_ERROR, 0);
            memcpy(&got, p, 4);
            ck_assert_int_eq(got, 7);
        }
    }
    struct acis_hdr bad = data(&f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0, 6, 4, 0, 4, 0, 4);
    bad.flags |= ACIS_F_ABSTAIN;                    /* abstaining, yet with data */
    struct acis_shm_wait w;
    ck_assert_int_eq(acis_shmsw_post(f.sw[0], &bad, (uint8_t *)&x[0], &w), -1);
    uint64_t c[ACIS_SWC_COUNT];
    acis_shmsw_counters(f.sw[0], c);
    ck_assert_uint_eq(c[ACIS_SWC_abstained], P);
    ck_assert_uint_eq(c[ACIS_SWC_drop_mismatch], 0);
    ck_assert_uint_eq(c[ACIS_SWC_drop_range], 1);
    fabric_down(&f);
}
END_TEST

/* Rows: a full table refuses, a freed row is reused with a new context. */
START_TEST(rows)
{
    struct fabric f;
    fabric_up(&f, 2, 2);                             /* 4 rows, one taken */
    uint8_t ans[ACIS_HDR_LEN + 4 + 8 * ACIS_SWC_COUNT], pl[12];
    acis_put32(pl, 2);
    acis_put32(pl + 4, 0);
    acis_put32(pl + 8, 1);
    uint32_t ctx[4] = { f.ctx };
    for (uint32_t i = 1; i < 5; i++) {
        struct acis_hdr h = control(ACIS_K_CT_CREATE, 0, 100 + i, sizeof pl);
        acis_shmsw_control(f.sw[0], &h, pl, ans);
        ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN), i < 4 ? ACIS_ST_OK : ACIS_ST_TABLE_FULL);
        if (i < 4)
            ctx[i] = acis_get32(ans + ACIS_HDR_LEN + 4);
    }
    struct acis_hdr fr = control(ACIS_K_CT_FREE, 0, 200, 0);
    fr.ctx = ctx[2];
    acis_shmsw_control(f.sw[0], &fr, NULL, ans);
    ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN), ACIS_ST_OK);
    acis_shmsw_control(f.sw[0], &fr, NULL, ans);     /* twice: no such context */
    ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN), ACIS_ST_NO_CTX);
    struct acis_hdr h = control(ACIS_K_CT_CREATE, 0, 300, sizeof pl);
    acis_shmsw_control(f.sw[0], &h, pl, ans);
    ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN), ACIS_ST_OK);
    uint32_t again = acis_get32(ans + ACIS_HDR_LEN + 4);
    ck_assert_uint_eq(again & 0xffff, ctx[2] & 0xffff);
    ck_assert_uint_ne(again, ctx[2]);
    acis_put32(pl + 8, 9);                           /* a rank that never joined */
    h.seq = 301;
    acis_shmsw_control(f.sw[0], &h, pl, ans);
    ck_assert_uint_eq(acis_get32(ans + ACIS_HDR_LEN), ACIS_ST_UNKNOWN_RANK);
    fabric_down(&f);
}
END_TEST

/* Hosts on threads, as processes run: every result bitwise right. */
struct host {
    struct fabric *f;
    uint32_t r, iters, bad;
};

static void *host_main(void *arg)
{
    struct host *me = arg;
    enum { K = 300 };
    double in[K], want[K], x[K];
    for (uint32_t i = 0; i < me->iters; i++) {
        for (uint32_t k = 0; k < K; k++)
            in[k] = value(me->r, i, k);
        struct acis_hdr h = data(me->f, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_F64, me->r, i,
                                 sizeof in, 0, sizeof in, 0, sizeof in);
        struct acis_shm_wait w;
        if (acis_shmsw_post(me->f->sw[me->r], &h, (uint8_t *)in, &w) != 0) {
            me->bad++;
            return NULL;
        }
        struct acis_hdr a;
        const uint8_t *p;
        while (!acis_shmsw_ready(me->f->sw[me->r], &w, &a, &p))
            acis_shmsw_sleep(me->f->sw[me->r], &w, 1);
        for (uint32_t k = 0; k < K; k++)
            want[k] = value(0, i, k);
        for (uint32_t q = 1; q < me->f->n; q++) {
            for (uint32_t k = 0; k < K; k++)
                x[k] = value(q, i, k);
            acis_reduce(ACIS_OP_SUM, ACIS_DT_F64, want, x, K);
        }
        me->bad += memcmp(p, want, sizeof want) != 0;
    }
    return NULL;
}

/* The segment must fit in /dev/shm's free space: its payload shrinks to
 * the largest that fits, and with too little room there is none. */
START_TEST(fit)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.tables = 32;
    o.slots = 1024;
    o.payload = 65000;
    ck_assert_uint_eq(acis_shmsw_fit(16, &o, UINT64_MAX), 65000);
    uint64_t room = 64ull << 20;                   /* a container's default */
    uint32_t p = acis_shmsw_fit(16, &o, room);
    ck_assert_uint_gt(p, ACIS_MIN_PAYLOAD);
    ck_assert_uint_lt(p, 16384);
    ck_assert_uint_eq(p % 64, 0);
    o.payload = p;
    ck_assert_uint_eq(acis_shmsw_fit(16, &o, room), p);          /* it fits */
    o.payload = p + 64;
    ck_assert_uint_eq(acis_shmsw_fit(16, &o, room), p);          /* more does not */
    o.payload = 65000;
    ck_assert_uint_eq(acis_shmsw_fit(2, &o, room) > p, 1);       /* fewer ranks, more room */
    ck_assert_uint_eq(acis_shmsw_fit(16, &o, 1 << 20), 0);       /* not even the least */
}
END_TEST

START_TEST(threads)
{
    enum { P = 8 };
    struct fabric f;
    fabric_up(&f, P, 4);
    pthread_t t[P];
    struct host h[P];
    for (uint32_t r = 0; r < P; r++) {
        h[r] = (struct host){ &f, r, 3000, 0 };
        ck_assert_int_eq(pthread_create(&t[r], NULL, host_main, &h[r]), 0);
    }
    for (uint32_t r = 0; r < P; r++) {
        pthread_join(t[r], NULL);
        ck_assert_uint_eq(h[r].bad, 0);
    }
    uint64_t c[ACIS_SWC_COUNT];
    acis_shmsw_counters(f.sw[0], c);
    ck_assert_uint_eq(c[ACIS_SWC_seg_allreduce], 3000);
    fabric_down(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shmsw");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fold_order);
    tcase_add_test(tc, scans);
    tcase_add_test(tc, allgather);
    tcase_add_test(tc, disagreement);
    tcase_add_test(tc, abstain);
    tcase_add_test(tc, rows);
    tcase_add_test(tc, threads);
    tcase_add_test(tc, fit);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
