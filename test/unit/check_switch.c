/* check_switch.c -- the switch core with simulated hosts, no MPI: 64 hosts
 * aggregating on one communicator, several communicators at once, every
 * collective kind, the control plane's limits and idempotence, every drop
 * reason, a long stream's answered flags, unsealed packets by port, and
 * the reduction kernels' semantics. */
#include "config.h"

#include <check.h>
#include <complex.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "simhost.h"

static struct sim *S;
static const uint64_t KEY = 0xfeedfacecafebeefULL;

static void setup_opts(struct acis_sw_opts o, int nhosts)
{
    S = calloc(1, sizeof *S);
    ck_assert_int_eq(sim_init(S, &o), 0);
    for (int i = 0; i < nhosts; i++) {
        uint32_t st;
        ck_assert_int_eq(sim_join(S, KEY, (uint32_t)i, (uint32_t)nhosts, &st), i);
    }
}

static void setup64(void)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = 1024;            /* small packets: many segments */
    o.slots = 256;               /* window of 8 per row */
    setup_opts(o, 64);
}

static void teardown(void)
{
    if (S)
        sim_fini(S);
    free(S);
    S = NULL;
}

/* A communicator of the given hosts, created on the switch. */
static struct sim_comm *comm(const int *hosts, int n)
{
    struct sim_comm *c = sim_comm_new(n);
    memcpy(c->host, hosts, sizeof(int) * (size_t)n);
    ck_assert_uint_eq(sim_ct_create(S, c, 1000 + (uint32_t)hosts[0] * 7 + (uint32_t)n), ACIS_ST_OK);
    return c;
}

static struct sim_comm *world(int n)
{
    int *h = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        h[i] = i;
    struct sim_comm *c = comm(h, n);
    free(h);
    return c;
}

static void comm_free(struct sim_comm *c)
{
    sim_comm_free(c);
}

/* Allreduce of int32 SUM on c with count elements; checks every member. */
static void allreduce_int(struct sim_comm *c, size_t count, unsigned seed)
{
    int32_t **in = malloc(sizeof(int32_t *) * (size_t)c->n);
    int32_t **out = malloc(sizeof(int32_t *) * (size_t)c->n);
    struct sim_member *m = calloc((size_t)c->n, sizeof *m);
    for (int r = 0; r < c->n; r++) {
        in[r] = malloc(4 * count + 4);
        out[r] = calloc(count + 1, 4);
        for (size_t i = 0; i < count; i++)
            in[r][i] = r * 1000 + (int32_t)i;
        m[r] = (struct sim_member){ in[r], 0, 4 * count, out[r], 0, 4 * count };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0,
                                    4 * count, m, seed), 0);
    for (int r = 0; r < c->n; r++)
        for (size_t i = 0; i < count; i++) {
            int32_t want = 1000 * c->n * (c->n - 1) / 2 + c->n * (int32_t)i;
            ck_assert_msg(out[r][i] == want, "member %d elem %zu: %d != %d", r, i,
                          out[r][i], want);
        }
    for (int r = 0; r < c->n; r++) {
        free(in[r]);
        free(out[r]);
    }
    free(in);
    free(out);
    free(m);
}

START_TEST(allreduce_64_hosts)
{
    struct sim_comm *c = world(64);
    size_t per = 1024 / 4;
    size_t counts[] = { 1, per - 1, per, per + 1, 3 * 8 * per + 5 };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        allreduce_int(c, counts[i], (unsigned)i);
    sim_counters(S);
    ck_assert_uint_gt(S->c[ACIS_SWC_seg_allreduce], 0);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_malformed] + S->c[ACIS_SWC_drop_slot] +
                      S->c[ACIS_SWC_drop_duplicate], 0);
    ck_assert_uint_eq(S->c[ACIS_SWC_elements_reduced],
                      63 * (1 + (per - 1) + per + (per + 1) + (3 * 8 * per + 5)));
    comm_free(c);
}
END_TEST

/* Float sums depend on order; the switch folds in rank order whatever the
 * arrival order, so two runs with different arrival orders agree bitwise. */
START_TEST(float_order_fixed)
{
    struct sim_comm *c = world(64);
    const size_t count = 300;
    float *in = malloc(sizeof(float) * 64 * count), *out[2];
    struct sim_member m[64];
    for (int r = 0; r < 64; r++)
        for (size_t i = 0; i < count; i++)
            in[r * count + i] = (r % 3 == 0 ? 1e8f : 1.0f) * (r % 2 ? -1.0f : 1.0f) +
                                (float)i * 0.001f + (float)r * 1e-3f;
    for (int run = 0; run < 2; run++) {
        out[run] = calloc(64 * count, sizeof(float));
        for (int r = 0; r < 64; r++)
            m[r] = (struct sim_member){ in + r * count, 0, 4 * count,
                                        out[run] + r * count, 0, 4 * count };
        ck_assert_int_eq(sim_collective(S, c, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_F32,
                                        0, 4 * count, m, 17u + 1000u * (unsigned)run), 0);
    }
    for (size_t i = 0; i < count; i++) {
        float want = in[i];
        for (int r = 1; r < 64; r++)
            want = want + in[r * count + i];
        for (int r = 0; r < 64; r++) {
            ck_assert_mem_eq(&out[0][r * count + i], &want, sizeof want);
            ck_assert_mem_eq(&out[1][r * count + i], &want, sizeof want);
        }
    }
    free(in);
    free(out[0]);
    free(out[1]);
    comm_free(c);
}
END_TEST

/* long double needs 16-byte alignment, but the payload of a packet sits
 * 72 bytes into the hosts' buffers (8 mod 16) and a 1000-byte payload is
 * no multiple of 16 either: the switch must not hand such pieces to its
 * kernels as they are (UBSan: misaligned load). */
START_TEST(long_double_pieces)
{
    enum { N = 5, COUNT = 200 };
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = 1000;
    setup_opts(o, N);
    struct sim_comm *c = world(N);
    static long double in[N][COUNT], out[N][COUNT];
    static struct { long double v; int i; } pin[N][COUNT], pout[N][COUNT];
    struct sim_member m[N], pm[N];
    for (int r = 0; r < N; r++) {
        for (int i = 0; i < COUNT; i++) {
            in[r][i] = 0.1L * (r + 1) + 1e-7L * i;
            memset(&pin[r][i], 0, sizeof pin[r][i]);
            pin[r][i].v = (long double)((i * 7 + r * 3) % 5);
            pin[r][i].i = r;
        }
        m[r] = (struct sim_member){ in[r], 0, sizeof in[r], out[r], 0, sizeof out[r] };
        pm[r] = (struct sim_member){ pin[r], 0, sizeof pin[r], pout[r], 0, sizeof pout[r] };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_F80, 0,
                                    sizeof in[0], m, 3), 0);
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_ALLREDUCE, ACIS_OP_MINLOC,
                                    ACIS_DT_LONG_DOUBLE_INT, 0, sizeof pin[0], pm, 4), 0);
    for (int i = 0; i < COUNT; i++) {
        long double want = in[0][i];
        int at = 0;
        for (int r = 1; r < N; r++) {
            want = want + in[r][i];
            if (pin[r][i].v < pin[at][i].v)
                at = r;
        }
        for (int r = 0; r < N; r++) {
            ck_assert(out[r][i] == want);
            ck_assert(pout[r][i].v == pin[at][i].v && pout[r][i].i == at);
        }
    }
    comm_free(c);
}
END_TEST

/* Three communicators with overlapping members, each running a different
 * collective, all at once. */
START_TEST(several_comms_at_once)
{
    int even[32], first10[10];
    for (int i = 0; i < 32; i++)
        even[i] = 2 * i;
    for (int i = 0; i < 10; i++)
        first10[i] = 9 - i;                      /* reversed rank order */
    struct sim_comm *a = world(64), *b = comm(even, 32), *c = comm(first10, 10);
    const size_t n = 700;
    int64_t ia[64][700], oa[64][700];
    double ib[32][700], ob[32][700];
    uint8_t ic[10][5000], oc[10][5000];
    struct sim_member ma[64], mb[32], mc[10];
    for (int r = 0; r < 64; r++) {
        for (size_t i = 0; i < n; i++)
            ia[r][i] = (int64_t)r << 20 | (int64_t)i;
        ma[r] = (struct sim_member){ ia[r], 0, 8 * n, oa[r], 0, 8 * n };
    }
    for (int r = 0; r < 32; r++) {
        for (size_t i = 0; i < n; i++)
            ib[r][i] = r == 5 ? 1e6 + (double)i : (double)(r * i % 97);
        mb[r] = (struct sim_member){ ib[r], 0, 8 * n, ob[r], 0, r == 3 ? 8 * n : 0 };
    }
    memset(ob, 0, sizeof ob);
    for (int r = 0; r < 10; r++) {
        for (size_t i = 0; i < sizeof ic[r]; i++)
            ic[r][i] = (uint8_t)(r == 9 ? i * 13 : 0);
        mc[r] = (struct sim_member){ ic[r], 0, r == 9 ? sizeof ic[r] : 0,
                                     oc[r], 0, r == 9 ? 0 : sizeof oc[r] };
    }
    struct sim_coll colls[3] = {
        { a, ACIS_K_ALLREDUCE, ACIS_OP_MAX, ACIS_DT_I64, 0, 8 * n, ma },
        { b, ACIS_K_REDUCE, ACIS_OP_MAX, ACIS_DT_F64, 3, 8 * n, mb },
        { c, ACIS_K_BCAST, ACIS_OP_NONE, ACIS_DT_BYTE, 9, sizeof ic[0], mc },
    };
    ck_assert_int_eq(sim_run(S, colls, 3, 99), 0);
    for (int r = 0; r < 64; r++)
        for (size_t i = 0; i < n; i++)
            ck_assert_int_eq(oa[r][i], (int64_t)63 << 20 | (int64_t)i);
    for (size_t i = 0; i < n; i++)
        ck_assert(ob[3][i] == 1e6 + (double)i);
    for (int r = 0; r < 9; r++)
        ck_assert_mem_eq(oc[r], ic[9], sizeof oc[r]);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_tables_in_use], 3);
    ck_assert_uint_gt(S->c[ACIS_SWC_seg_reduce], 0);
    ck_assert_uint_gt(S->c[ACIS_SWC_seg_bcast], 0);
    /* rows a host is not in (the embedded switch's host hands off for
     * them): host 0 is in all three, host 1 not in the even one, host 11
     * only in world; a port out of range is in none */
    ck_assert_uint_eq(acis_sw_rows_without(S->sw, S->hosts[0].port), 0);
    ck_assert_uint_eq(acis_sw_rows_without(S->sw, S->hosts[1].port), 1);
    ck_assert_uint_eq(acis_sw_rows_without(S->sw, S->hosts[11].port), 2);
    ck_assert_uint_eq(acis_sw_rows_without(S->sw, 1u << 30), 3);
    ck_assert_uint_eq(sim_ct_free(S, c), ACIS_ST_OK);
    ck_assert_uint_eq(acis_sw_rows_without(S->sw, S->hosts[11].port), 1);
    comm_free(a);
    comm_free(b);
    comm_free(c);
}
END_TEST

/* Gather-type, scatter-type and scans on 16 hosts. */
START_TEST(every_kind)
{
    struct sim_comm *c = world(16);
    enum { P = 16, N = 200 };               /* N int32 per member block */
    static int32_t in[P][P * N], out[P][P * N];
    struct sim_member m[P];
    uint64_t blk = 4 * N, tot = (uint64_t)P * blk;

    /* barrier */
    for (int r = 0; r < P; r++)
        m[r] = (struct sim_member){ NULL, 0, 0, NULL, 0, 0 };
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_BARRIER, 0, ACIS_DT_NONE, 0, 0, m, 1), 0);

    /* gather to root 7 and allgather */
    for (int k = 0; k < 2; k++) {
        memset(out, 0, sizeof out);
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < N; i++)
                in[r][i] = r * 100000 + i;
            int wants = k == 1 || r == 7;
            m[r] = (struct sim_member){ in[r], r * blk, blk, out[r], 0, wants ? tot : 0 };
        }
        ck_assert_int_eq(sim_collective(S, c, k ? ACIS_K_ALLGATHER : ACIS_K_GATHER, 0,
                                        ACIS_DT_BYTE, 7, tot, m, 2), 0);
        for (int r = 0; r < P; r++)
            if (k == 1 || r == 7)
                for (int q = 0; q < P; q++)
                    for (int i = 0; i < N; i++)
                        ck_assert_int_eq(out[r][q * N + i], q * 100000 + i);
    }

    /* scatter from root 2 */
    memset(out, 0, sizeof out);
    for (int i = 0; i < P * N; i++)
        in[2][i] = i * 3;
    for (int r = 0; r < P; r++)
        m[r] = (struct sim_member){ in[2], 0, r == 2 ? tot : 0, out[r], r * blk, blk };
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCATTER, 0, ACIS_DT_BYTE, 2, tot, m, 3), 0);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(out[r][i], (r * N + i) * 3);

    /* reduce-scatter with uneven blocks: member r gets r + 1 elements */
    uint64_t off[P + 1] = { 0 };
    for (int r = 0; r < P; r++)
        off[r + 1] = off[r] + 4 * (uint64_t)(r + 1);
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < P * N; i++)
            in[r][i] = r + i;
        m[r] = (struct sim_member){ in[r], 0, off[P], out[r], off[r], off[r + 1] - off[r] };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_REDUCE_SCATTER, ACIS_OP_SUM, ACIS_DT_I32, 0,
                                    off[P], m, 4), 0);
    for (int r = 0; r < P; r++)
        for (int i = 0; i <= r; i++) {
            int e = (int)(off[r] / 4) + i;
            ck_assert_int_eq(out[r][i], P * e + P * (P - 1) / 2);
        }

    /* scan and exscan: prefix sums in rank order */
    for (int k = 0; k < 2; k++) {
        memset(out, 0, sizeof out);
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < N; i++)
                in[r][i] = r * 10 + i;
            m[r] = (struct sim_member){ in[r], 0, blk, out[r], 0, blk };
        }
        ck_assert_int_eq(sim_collective(S, c, k ? ACIS_K_EXSCAN : ACIS_K_SCAN, ACIS_OP_SUM,
                                        ACIS_DT_I32, 0, blk, m, 5), 0);
        for (int r = k; r < P; r++) {
            int upto = k ? r - 1 : r;
            for (int i = 0; i < N; i++)
                ck_assert_int_eq(out[r][i], 10 * upto * (upto + 1) / 2 + (upto + 1) * i);
        }
    }
    sim_counters(S);
    for (int k = ACIS_SWC_seg_barrier; k <= ACIS_SWC_seg_exscan; k++)
        if (k != ACIS_SWC_seg_bcast && k != ACIS_SWC_seg_reduce && k != ACIS_SWC_seg_allreduce)
            ck_assert_msg(S->c[k] > 0, "%s not counted", acis_wire_counter_name((unsigned)k));
    comm_free(c);
}
END_TEST

/* Lost and doubled packets both ways: repeats get their answers again
 * from the slot's shadow copy, duplicates are dropped, and every kind of
 * collective still ends with the right answer on every member. */
START_TEST(loss_and_repeats)
{
    S->loss = 10;
    S->dup = 10;
    struct sim_comm *c = world(16);
    size_t per = 1024 / 4;
    allreduce_int(c, 1, 3);
    allreduce_int(c, 5 * 8 * per + 7, 4);          /* many slot uses */
    enum { P = 16, N = 300 };
    static float in[P][N], out[P][N];
    struct sim_member m[P];
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++)
            in[r][i] = (float)(r * 0.5 + i);
        m[r] = (struct sim_member){ in[r], 0, 4 * N, out[r], 0, 4 * N };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCAN, ACIS_OP_SUM, ACIS_DT_F32, 0, 4 * N, m,
                                    9), 0);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++) {
            float want = in[0][i];
            for (int q = 1; q <= r; q++)
                want = want + in[q][i];
            ck_assert_mem_eq(&out[r][i], &want, sizeof want);
        }
    /* Folded on arrival, in rank order, through losses and repeats of
     * pieces held out of order. */
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            in[r][i] = (float)(0.1 * (r + 1) + 1e-7 * i);
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_F32, 0, 4 * N,
                                    m, 10), 0);
    for (int i = 0; i < N; i++) {
        float want = in[0][i];
        for (int q = 1; q < P; q++)
            want = want + in[q][i];
        for (int r = 0; r < P; r++)
            ck_assert_mem_eq(&out[r][i], &want, sizeof want);
    }
    sim_counters(S);
    ck_assert_uint_gt(S->c[ACIS_SWC_repeats], 0);
    ck_assert_uint_gt(S->c[ACIS_SWC_drop_duplicate], 0);
    S->loss = S->dup = 0;
    comm_free(c);
}
END_TEST

/* A member without memory for its data abstains: every member of every
 * segment is told so, nothing is written, held pieces are freed, repeats
 * get the same answer, and the slots serve the next collective. */
START_TEST(abstain)
{
    S->loss = 10;
    S->dup = 10;
    enum { P = 16, N = 3000 };                     /* 12 segments of 1 KiB */
    struct sim_comm *c = world(P);
    static float in[P][N], out[P][N];
    struct sim_member m[P];
    unsigned kinds[] = { ACIS_K_ALLREDUCE, ACIS_K_SCAN, ACIS_K_ALLGATHER };
    for (unsigned k = 0; k < 3; k++) {
        int gather = kinds[k] == ACIS_K_ALLGATHER;
        uint64_t total = 4 * N, piece = gather ? total / P : total;
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < N; i++)
                in[r][i] = (float)(0.1 * (r + 1) + 1e-7 * i);
            m[r] = (struct sim_member){ in[r], gather ? r * piece : 0, piece, out[r], 0, total };
        }
        S->abstainer = 1 + c->host[5 + k];
        memset(out, 0x5a, sizeof out);
        sim_counters(S);
        uint64_t before = S->c[ACIS_SWC_abstained];
        ck_assert_int_eq(sim_collective(S, c, kinds[k], gather ? ACIS_OP_NONE : ACIS_OP_SUM,
                                        gather ? ACIS_DT_BYTE : ACIS_DT_F32, 0, total, m,
                                        20 + k), 0);
        ck_assert_int_eq(S->refused, P);
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < sizeof out[r]; i++)
                ck_assert_uint_eq(((uint8_t *)out[r])[i], 0x5a);
        sim_counters(S);
        ck_assert_uint_eq(S->c[ACIS_SWC_abstained] - before,
                          (total + acis_seg_bytes(1024, kinds[k], ACIS_DT_F32, P) - 1) /
                              acis_seg_bytes(1024, kinds[k], ACIS_DT_F32, P));
    }
    S->abstainer = 0;
    sim_counters(S);
    ck_assert_uint_gt(S->c[ACIS_SWC_repeats], 0);
    uint64_t held = S->c[ACIS_SWC_buffer_bytes];
    allreduce_int(c, 5 * 8 * 256 + 7, 4);          /* the slots are fine after */
    ck_assert_int_eq(S->refused, 0);
    sim_counters(S);
    ck_assert_uint_le(S->c[ACIS_SWC_buffer_bytes], held);   /* no piece left held */
    S->loss = S->dup = 0;
    comm_free(c);
}
END_TEST

/* A copy of an old segment arriving late cannot claim a slot. */
START_TEST(stale_packet)
{
    struct sim_comm *c = world(2);
    uint8_t old[ACIS_HDR_LEN + 4];
    /* capture host 0's first packet of the first collective */
    struct acis_stream st = { .kind = ACIS_K_ALLREDUCE, .op = ACIS_OP_SUM, .dtype = ACIS_DT_I32,
                              .ctx = c->ctx, .seq = c->seq + 1, .src = 0, .job_key = KEY,
                              .total = 4, .seg_bytes = 1024 };
    int32_t one = 1, res;
    st.src_buf = (const uint8_t *)&one;
    st.src_len = 4;
    st.dst_buf = (uint8_t *)&res;
    st.dst_len = 4;
    struct acis_window w;
    acis_window_init(&w, c->window);
    w.next_pos = c->win[0].next_pos;
    acis_stream_start(&st, &w);
    const uint8_t *pl;
    uint32_t len;
    acis_stream_next(&st, &w, old, &pl, &len, sim_now());
    memcpy(old + ACIS_HDR_LEN, pl, len);
    acis_hdr_seal(old, old + ACIS_HDR_LEN, len);
    acis_window_free(&w);
    /* run the window around twice so that slot is two uses further on */
    for (uint32_t i = 0; i < 2 * c->window + 1; i++)
        allreduce_int(c, 1, i);
    sim_counters(S);
    uint64_t before = S->c[ACIS_SWC_drop_stale];
    sim_send_raw(S, 0, old, sizeof old);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_stale], before + 1);
    allreduce_int(c, 3, 99);                        /* and nothing is stuck */
    comm_free(c);
}
END_TEST

/* The answered flags of a stream are its window's slots (no memory of
 * its own, however long the collective): 300 segments through 8 slots,
 * answered in a scrambled order with repeats, must agree with a plain
 * bitmap after every step, and every repeat must be refused. */
START_TEST(answered_flags)
{
    enum { NSEG = 300, SEG = 16, WIN = 8 };
    static uint8_t dst[NSEG * SEG], data[SEG];
    uint8_t ref[NSEG] = { 0 }, hdr[ACIS_HDR_LEN];
    struct acis_stream st = { .kind = ACIS_K_ALLGATHER, .dtype = ACIS_DT_BYTE, .ctx = 1,
                              .seq = 1, .total = NSEG * SEG, .seg_bytes = SEG,
                              .src_buf = data, .src_len = SEG, .dst_buf = dst,
                              .dst_len = NSEG * SEG };
    struct acis_window w;
    ck_assert_int_eq(acis_window_init(&w, WIN), 0);
    w.next_pos = 5;                                 /* not slot-aligned */
    acis_stream_start(&st, &w);
    ck_assert_uint_eq(st.nseg, NSEG);
    uint32_t rnd = 12345;
    while (!acis_stream_finished(&st)) {
        while (acis_stream_can_send(&st, &w)) {
            const uint8_t *pl;
            uint32_t len;
            acis_stream_next(&st, &w, hdr, &pl, &len, 0);
        }
        rnd = rnd * 1103515245u + 12345u;
        uint32_t slot = (rnd >> 8) % WIN;
        if (!w.busy[slot])
            continue;
        uint32_t k = w.seg[slot];
        struct acis_hdr h = { .opcode = ACIS_OPC(ACIS_K_ALLGATHER, 0), .slot = (uint16_t)slot,
                              .seg_index = k, .total_len = NSEG * SEG, .payload_len = SEG,
                              .seg_offset = (uint64_t)k * SEG };
        ck_assert_int_eq(acis_stream_answer(&st, &w, &h, data), 0);
        ref[k] = 1;
        ck_assert_int_eq(acis_stream_answer(&st, &w, &h, data), -1);     /* a repeat */
        for (uint32_t j = 0; j < NSEG; j++)
            ck_assert_int_eq(acis_stream_has(&st, &w, j), ref[j]);
        if (k >= WIN) {                             /* an old use of this slot */
            h.seg_index = k - WIN;
            h.seg_offset = (uint64_t)(k - WIN) * SEG;
            ck_assert_int_eq(acis_stream_answer(&st, &w, &h, data), -1);
        }
    }
    ck_assert_uint_eq(st.answered, NSEG);
    ck_assert_uint_eq(w.busy_count, 0);
    acis_window_free(&w);
}
END_TEST

START_TEST(control_plane)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.ports = 4;
    o.tables = 2;
    o.job_rows = 2;              /* one job may fill the table (job_limits) */
    o.slots = 8;
    setup_opts(o, 3);
    uint32_t st;
    /* a fourth host of another job fits; a fifth does not */
    ck_assert_int_eq(sim_join(S, KEY + 1, 0, 1, &st), 3);
    ck_assert_int_eq(sim_join(S, KEY + 2, 0, 1, &st), -1);
    ck_assert_uint_eq(st, ACIS_ST_NO_PORT);
    /* a job known with another size is refused */
    sim_leave(S, 3);
    ck_assert_int_eq(sim_join(S, KEY, 0, 5, &st), -1);
    ck_assert_uint_eq(st, ACIS_ST_JOB_MISMATCH);

    int all[3] = { 0, 1, 2 }, two[2] = { 1, 2 };
    struct sim_comm *a = comm(all, 3);
    uint32_t ctx = a->ctx;
    ck_assert_uint_eq(sim_ct_create(S, a, 1000 + 3), ACIS_ST_OK);   /* same request */
    ck_assert_uint_eq(a->ctx, ctx);                                 /* same answer */
    struct sim_comm *b = comm(two, 2);
    struct sim_comm *cfull = sim_comm_new(2);
    cfull->host[0] = 0;
    cfull->host[1] = 1;
    ck_assert_uint_eq(sim_ct_create(S, cfull, 77), ACIS_ST_TABLE_FULL);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_tables_refused], 1);
    ck_assert_uint_eq(S->c[ACIS_SWC_tables_in_use], 2);

    /* free a row; its old context id is dead, the row is reused */
    ck_assert_uint_eq(sim_ct_free(S, b), ACIS_ST_OK);
    ck_assert_uint_eq(sim_ct_free(S, b), ACIS_ST_NO_CTX);
    uint32_t old = b->ctx;
    ck_assert_uint_eq(sim_ct_create(S, b, 55), ACIS_ST_OK);
    ck_assert_uint_ne(b->ctx, old);
    ck_assert_uint_eq(b->ctx & 0xffff, old & 0xffff);

    /* a member naming itself outside the communicator; a member list (the
     * shared-memory switch's CT_CREATE), which a network switch never takes */
    sim_ct_free(S, b);
    uint8_t buf[ACIS_HDR_LEN + 12], pl[12];
    acis_put32(pl, 2);
    acis_put32(pl + 4, 2);               /* member 2 of 2 */
    sim_control(buf, ACIS_K_CT_JOIN, KEY, 0, 0, 4242, pl, ACIS_CT_JOIN_LEN);
    sim_send_raw(S, 0, buf, ACIS_HDR_LEN + ACIS_CT_JOIN_LEN);
    struct sim_pkt p;
    ck_assert(sim_pop(S, 0, &p));
    ck_assert_uint_eq(acis_get32(p.data + ACIS_HDR_LEN), ACIS_ST_BAD_REQUEST);
    free(p.data);
    acis_put32(pl + 4, 0);
    acis_put32(pl + 8, 1);
    sim_counters(S);
    uint64_t foreign = S->c[ACIS_SWC_drop_foreign];
    sim_control(buf, ACIS_K_CT_CREATE, KEY, 0, 0, 4243, pl, sizeof pl);
    sim_send_raw(S, 0, buf, sizeof buf);
    ck_assert(!sim_pop(S, 0, &p));
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_foreign], foreign + 1);

    /* a HELLO retry gets the same port, the job's last one's too (port_of
     * stops after the job's ports) */
    sim_counters(S);
    uint64_t in_use = S->c[ACIS_SWC_ports_in_use];
    for (int id = 1; id <= 2; id++) {
        uint32_t port = S->hosts[id].port;
        uint8_t hb[ACIS_HDR_LEN + ACIS_HELLO_LEN], hp[ACIS_HELLO_LEN] = { 3 };
        sim_control(hb, ACIS_K_HELLO, KEY, (uint32_t)id, 0, 9, hp, sizeof hp);
        acis_sw_input(S->sw, ACIS_PORT_SERVICE, &id, hb, sizeof hb);
        ck_assert_uint_eq(S->hosts[id].port, port);
        while (sim_pop(S, id, &p))
            free(p.data);
    }
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_ports_in_use], in_use);

    /* the last BYE of a job releases its rows */
    for (int h = 0; h < 3; h++)
        sim_leave(S, h);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_tables_in_use], 0);
    ck_assert_uint_eq(S->c[ACIS_SWC_jobs], 0);
    ck_assert_uint_eq(S->c[ACIS_SWC_ports_in_use], 0);
    struct acis_sw_size z;
    char err[128];
    acis_sw_size(&o, &z, err, sizeof err);
    ck_assert_uint_eq(S->c[ACIS_SWC_buffer_bytes], z.pool);   /* fixed, from the start */
    comm_free(a);
    comm_free(b);
    sim_comm_free(cfull);
}
END_TEST

/* Build a valid allreduce packet of 4 int32 for host h on comm c, seg 0. */
static size_t data_pkt(uint8_t *buf, struct sim_comm *c, int h, uint32_t src, uint64_t key,
                       uint32_t slot, unsigned op)
{
    int32_t v[4] = { 1, 2, 3, 4 };
    struct acis_hdr hd = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_ALLREDUCE, 0), .op = (uint8_t)op, .dtype = ACIS_DT_I32,
        .slot = (uint16_t)slot, .payload_len = 16, .job_key = key, .ctx = c->ctx,
        .seq = 1, .src = src, .seg_index = 0, .seg_offset = 0, .total_len = 16,
        .rx_len = 16,
    };
    (void)h;
    acis_hdr_encode(&hd, buf);
    memcpy(buf + ACIS_HDR_LEN, v, 16);
    acis_hdr_seal(buf, v, 16);
    return ACIS_HDR_LEN + 16;
}

START_TEST(drops)
{
    int some[3] = { 0, 1, 2 };
    struct sim_comm *c = comm(some, 3);
    uint8_t b[ACIS_HDR_LEN + 64];
    size_t n;
    sim_counters(S);
    uint64_t before[ACIS_SWC_COUNT];
    memcpy(before, S->c, sizeof before);

    n = data_pkt(b, c, 0, 5, KEY, 0, ACIS_OP_SUM);         /* src is not the port's rank */
    sim_send_raw(S, 0, b, n);
    n = data_pkt(b, c, 0, 0, KEY ^ 1, 0, ACIS_OP_SUM);     /* another job's key */
    sim_send_raw(S, 0, b, n);
    n = data_pkt(b, c, 9, 9, KEY, 0, ACIS_OP_SUM);         /* host 9 is no member */
    sim_send_raw(S, 9, b, n);
    n = data_pkt(b, c, 0, 0, KEY, c->window, ACIS_OP_SUM); /* slot outside the window */
    sim_send_raw(S, 0, b, n);
    n = data_pkt(b, c, 0, 0, KEY, 0, ACIS_OP_SUM);         /* valid, then again */
    sim_send_raw(S, 0, b, n);
    sim_send_raw(S, 0, b, n);
    n = data_pkt(b, c, 1, 1, KEY, 0, ACIS_OP_MAX);         /* same slot, other op */
    sim_send_raw(S, 1, b, n);
    n = data_pkt(b, c, 1, 1, KEY, 0, ACIS_OP_SUM);
    b[ACIS_HDR_LEN] ^= 1;                                   /* corrupted payload */
    sim_send_raw(S, 1, b, n);
    uint32_t saved = c->ctx;
    c->ctx ^= 0x30000;                                      /* stale context id */
    n = data_pkt(b, c, 1, 1, KEY, 0, ACIS_OP_SUM);
    sim_send_raw(S, 1, b, n);
    c->ctx = saved;
    sim_send_raw(S, 1, "garbage", 7);

    sim_counters(S);
#define DELTA(x) (S->c[ACIS_SWC_##x] - before[ACIS_SWC_##x])
    ck_assert_uint_eq(DELTA(drop_spoofed), 1);
    ck_assert_uint_eq(DELTA(drop_foreign), 2);
    ck_assert_uint_eq(DELTA(drop_not_member), 1);
    ck_assert_uint_eq(DELTA(drop_slot), 1);
    ck_assert_uint_eq(DELTA(drop_duplicate), 1);
    ck_assert_uint_eq(DELTA(pending), 1);       /* the repeat is told "still waiting" */
    ck_assert_uint_eq(DELTA(drop_mismatch), 1);
    ck_assert_uint_eq(DELTA(drop_malformed), 2);
#undef DELTA
    /* The slot still holds member 0's good packet; the others complete it. */
    n = data_pkt(b, c, 1, 1, KEY, 0, ACIS_OP_SUM);
    sim_send_raw(S, 1, b, n);
    n = data_pkt(b, c, 2, 2, KEY, 0, ACIS_OP_SUM);
    sim_send_raw(S, 2, b, n);
    for (int h = 0; h < 3; h++) {
        struct sim_pkt p;
        struct acis_hdr hd;
        ck_assert(sim_pop(S, h, &p));
        ck_assert_int_eq(acis_wire_decode(p.data, p.len, 8192, &hd), ACIS_WERR_OK);
        if (hd.flags & ACIS_F_PENDING) {            /* the notice to the repeater */
            ck_assert_int_eq(h, 0);
            free(p.data);
            ck_assert(sim_pop(S, h, &p));
            ck_assert_int_eq(acis_wire_decode(p.data, p.len, 8192, &hd), ACIS_WERR_OK);
        } else if (h == 1) {                        /* its other op was refused */
            ck_assert_uint_eq(hd.flags & (ACIS_F_ERROR | ACIS_F_ABSTAIN), ACIS_F_ERROR);
            ck_assert_uint_eq(hd.op, ACIS_OP_MAX);
            free(p.data);
            ck_assert(sim_pop(S, h, &p));
            ck_assert_int_eq(acis_wire_decode(p.data, p.len, 8192, &hd), ACIS_WERR_OK);
        }
        ck_assert_int_eq(acis_get32(p.data + ACIS_HDR_LEN + 12), 12);   /* 4 * 3 */
        free(p.data);
    }
    comm_free(c);
}
END_TEST

/* A gather piece outside the sender's own block is refused. */
START_TEST(gather_range)
{
    int two[2] = { 0, 1 };
    struct sim_comm *c = comm(two, 2);
    uint8_t b[ACIS_HDR_LEN + 8], d[8] = { 0 };
    struct acis_hdr hd = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_GATHER, 0), .dtype = ACIS_DT_BYTE, .payload_len = 8,
        .job_key = KEY, .ctx = c->ctx, .seq = 1, .src = 0, .seg_offset = 8,
        .total_len = 16,
    };
    acis_hdr_encode(&hd, b);
    memcpy(b + ACIS_HDR_LEN, d, 8);
    acis_hdr_seal(b, d, 8);
    sim_send_raw(S, 0, b, sizeof b);                   /* rank 0 claims rank 1's block */
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_range], 1);
    comm_free(c);
}
END_TEST

/* The root of a gather or scatter copies its own block itself: it sends
 * nothing for the segments inside that block and asks nothing of them
 * (1024-byte segments, 3000-byte blocks: two segments lie inside root 2's
 * block [6000, 9000)).  Everything else arrives, under loss and
 * duplication; nothing is written into the skipped segments. */
START_TEST(own_blocks)
{
    enum { P = 4, B = 3000 };
    static uint8_t in[P][P * B], out[P][P * B];
    struct sim_member m[P];
    struct sim_comm *c = world(P);
    ck_assert_uint_ne(c->flags & ACIS_CT_OWN_BLOCK, 0);    /* the switch says it may */
    S->loss = 5;
    S->dup = 5;
    S->owner = 1 + 2;              /* world(P): member r is host r */
    S->own_off = 2 * B;
    S->own_len = B;
    for (int round = 0; round < 4; round++) {
        memset(out, 0xee, sizeof out);
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < B; i++)
                in[r][i] = (uint8_t)(r * 31 + i * 7 + round);
            m[r] = (struct sim_member){ in[r], (uint64_t)r * B, B, out[r], 0, r == 2 ? P * B : 0 };
        }
        ck_assert_int_eq(sim_collective(S, c, ACIS_K_GATHER, 0, ACIS_DT_BYTE, 2, P * B, m,
                                        20 + (unsigned)round), 0);
        for (int q = 0; q < P; q++)
            for (int i = 0; i < B; i++) {
                uint64_t at = (uint64_t)q * B + (uint64_t)i;
                int skipped = at >= 6144 && at < 8192;
                ck_assert_uint_eq(out[2][at], skipped ? 0xee : (uint8_t)(q * 31 + i * 7 + round));
            }
        /* scatter from root 2, which asks for nothing (it copies its block) */
        memset(out, 0xee, sizeof out);
        for (int i = 0; i < P * B; i++)
            in[2][i] = (uint8_t)(i * 13 + round);
        for (int r = 0; r < P; r++)
            m[r] = (struct sim_member){ in[2], 0, r == 2 ? P * B : 0, out[r], (uint64_t)r * B,
                                        r == 2 ? 0 : B };
        ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCATTER, 0, ACIS_DT_BYTE, 2, P * B, m,
                                        40 + (unsigned)round), 0);
        for (int r = 0; r < P; r++)
            for (int i = 0; i < (r == 2 ? 0 : B); i++)
                ck_assert_uint_eq(out[r][i], (uint8_t)((r * B + i) * 13 + round));
    }
    S->loss = S->dup = 0;
    S->owner = 0;
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_range], 0);
    comm_free(c);
}
END_TEST

/* Only the root may leave out a piece, and only inside its own block. */
START_TEST(own_block_only_root)
{
    int two[2] = { 0, 1 };
    struct sim_comm *c = comm(two, 2);
    uint8_t b[ACIS_HDR_LEN];
    for (uint32_t src = 0; src < 2; src++) {
        struct acis_hdr hd = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_GATHER, 0), .dtype = ACIS_DT_BYTE, .payload_len = 0,
            .job_key = KEY, .ctx = c->ctx, .seq = 1, .src = src, .root = 0, .member = src,
            .seg_index = src ? 2 : 1, .slot = (uint16_t)(src ? 2 : 1),
            .seg_offset = src ? 2048 : 1024, .total_len = 4096,
        };                         /* segment 1 is inside rank 0's block, 2 in rank 1's */
        acis_hdr_encode(&hd, b);
        acis_hdr_seal(b, NULL, 0);
        sim_send_raw(S, (int)src, b, sizeof b);
    }
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_range], 1);     /* rank 1's, not the root's */
    comm_free(c);
}
END_TEST

/* A VAR (gatherv-type) piece of host h: bytes [off, off + len) of a
 * 1024-byte allgather, seg 0, asking the whole segment back. */
static void var_piece(struct sim_comm *c, int h, uint64_t key, uint32_t seq, uint32_t off,
                      uint32_t len, uint8_t fill)
{
    uint8_t b[ACIS_HDR_LEN + 1024], d[1024];
    memset(d, fill, sizeof d);
    struct acis_hdr hd = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_ALLGATHER, ACIS_ALG_VAR), .dtype = ACIS_DT_BYTE,
        .payload_len = len, .job_key = key, .ctx = c->ctx, .seq = seq,
        .src = S->hosts[h].rank, .member = S->hosts[h].rank, .seg_offset = len ? off : 0,
        .total_len = 1024, .rx_len = 1024, .flags = (uint16_t)(seq % 2 ? 0 : ACIS_F_ROUND),
        .slot = 0,
    };
    acis_hdr_encode(&hd, b);
    memcpy(b + ACIS_HDR_LEN, d, len);
    acis_hdr_seal(b, d, len);
    sim_send_raw(S, h, b, ACIS_HDR_LEN + len);
}

/* The answer host h got: its flags, its payload into out (len returned). */
static uint32_t var_answer(int h, uint16_t *flags, uint8_t *out)
{
    struct sim_pkt p;
    struct acis_hdr hd;
    ck_assert(sim_pop(S, h, &p));
    ck_assert_int_eq(acis_wire_decode(p.data, p.len, 8192, &hd), ACIS_WERR_OK);
    *flags = hd.flags;
    memcpy(out, p.data + ACIS_HDR_LEN, hd.payload_len);
    free(p.data);
    return hd.payload_len;
}

/* Job B gets the row (and its slots' buffers) job A used: pieces that do
 * not tile a segment never give B a byte of A's.  None at all: the bytes
 * asked for are zeros; overlapping (across words, or by one byte inside
 * one): refused, marking nothing; some missing: every member is told to
 * redo the call. */
/* The transport of unsealed_by_port: every host is on loopback but host 1. */
static int all_but_1(void *ctx, const void *peer)
{
    (void)ctx;
    return *(const int *)peer != 1;
}

/* One allreduce piece of member m on c (i-th call), unsealed or not, from
 * its host. */
static void piece_to(struct sim *s, struct sim_comm *c, int m, uint32_t i, int unsealed)
{
    _Alignas(16) uint8_t pkt[ACIS_HDR_LEN + 16];
    int32_t d[4] = { 1, 2, 3, m };
    size_t len = sim_piece(pkt, s, c, m, i, ACIS_DT_I32, d, 4);
    if (unsealed)
        acis_hdr_unsealed(pkt);
    sim_send_raw(s, c->host[m], pkt, len);
}

/* The answer host h got: 1 unsealed, 0 sealed (checked), -1 none. */
static int answer_of(struct sim *s, int h)
{
    struct sim_pkt p;
    struct acis_hdr d;
    if (!sim_pop(s, h, &p))
        return -1;
    int r = acis_wire_decode(p.data, p.len, ACIS_MAX_PAYLOAD, &d) == ACIS_WERR_OK ? 0 : -1;
    if (r < 0 && acis_wire_decode_from(p.data, p.len, ACIS_MAX_PAYLOAD, 1, &d) == ACIS_WERR_OK &&
        (d.flags & ACIS_F_UNSEALED))
        r = 1;
    free(p.data);
    return r;
}

static uint64_t ctr(struct sim *s, enum acis_switch_counter k)
{
    sim_counters(s);
    return s->c[k];
}

/* Members whose packets of a segment disagree (counts that differ: an
 * erroneous program) are each answered ERROR, the answer echoing the
 * packet so that its host takes it for its segment's (acis_stream_answer
 * says -2, the slot kept): the one that did not match at once, the ones
 * the segment holds when they repeat theirs.  Before, the first got
 * nothing and the others "pending" for as long as they repeated, so
 * nobody ever timed out: the job hung. */
START_TEST(disagreeing_members)
{
    struct sim_comm *c = world(2);
    enum { N = 4 };
    int32_t a[2 * N] = { 1, 2, 3, 4, 5, 6, 7, 8 }, res[2 * N];
    struct acis_window w[2];
    struct acis_stream st[2];
    uint8_t pkt[2][ACIS_HDR_LEN + sizeof a];
    size_t len[2];
    for (int m = 0; m < 2; m++) {                   /* member 1 reduces twice the count */
        st[m] = (struct acis_stream){ .kind = ACIS_K_ALLREDUCE, .op = ACIS_OP_SUM,
                                      .dtype = ACIS_DT_I32, .ctx = c->ctx, .seq = c->seq + 1,
                                      .src = (uint32_t)c->host[m], .member = (uint32_t)m,
                                      .job_key = KEY, .total = 4u * N * (m + 1),
                                      .seg_bytes = 1024, .src_buf = (const uint8_t *)a,
                                      .src_len = 4u * N * (m + 1), .dst_buf = (uint8_t *)res,
                                      .dst_len = 4u * N * (m + 1) };
        acis_window_init(&w[m], c->window);
        w[m].next_pos = c->win[m].next_pos;
        acis_stream_start(&st[m], &w[m]);
        const uint8_t *pl;
        uint32_t n;
        acis_stream_next(&st[m], &w[m], pkt[m], &pl, &n, sim_now());
        memcpy(pkt[m] + ACIS_HDR_LEN, pl, n);
        acis_hdr_seal(pkt[m], pkt[m] + ACIS_HDR_LEN, n);
        len[m] = ACIS_HDR_LEN + n;
    }
    uint64_t before = ctr(S, ACIS_SWC_drop_mismatch);
    sim_send_raw(S, c->host[0], pkt[0], len[0]);
    sim_send_raw(S, c->host[1], pkt[1], len[1]);   /* does not match member 0's */
    ck_assert_uint_eq(ctr(S, ACIS_SWC_drop_mismatch), before + 1);
    ck_assert_int_eq(answer_of(S, c->host[0]), -1); /* member 0 still waits */
    sim_send_raw(S, c->host[0], pkt[0], len[0]);   /* and repeats its packet */
    for (int m = 0; m < 2; m++) {
        struct sim_pkt p;
        struct acis_hdr h;
        ck_assert(sim_pop(S, c->host[m], &p));
        ck_assert_int_eq(acis_wire_decode(p.data, p.len, ACIS_MAX_PAYLOAD, &h), ACIS_WERR_OK);
        ck_assert_uint_eq(h.flags & (ACIS_F_ERROR | ACIS_F_ABSTAIN | ACIS_F_PENDING),
                          ACIS_F_ERROR);
        ck_assert_uint_eq(h.total_len, st[m].total);   /* its own packet's */
        ck_assert_int_eq(acis_stream_answer(&st[m], &w[m], &h, p.data + ACIS_HDR_LEN), -2);
        ck_assert_int_eq(acis_stream_has(&st[m], &w[m], 0), 0);   /* the slot is kept */
        h.flags |= ACIS_F_ABSTAIN;                     /* an abstention answers it */
        ck_assert_int_eq(acis_stream_answer(&st[m], &w[m], &h, NULL), 0);
        ck_assert(st[m].refused);
        free(p.data);
        acis_window_free(&w[m]);
    }
    /* ERROR on a host's packet is not a disagreement (only a switch
     * below says so): it is taken as a piece (the next slot's use) */
    _Alignas(16) uint8_t pk[ACIS_HDR_LEN + 4 * N];
    for (int m = 0; m < 2; m++) {
        size_t n = sim_piece(pk, S, c, m, 1, ACIS_DT_I32, a, N);
        if (m == 1) {
            acis_put16(pk + 8, (uint16_t)(acis_get16(pk + 8) | ACIS_F_ERROR));
            acis_hdr_seal(pk, pk + ACIS_HDR_LEN, 4 * N);
        }
        sim_send_raw(S, c->host[m], pk, n);
    }
    for (int m = 0; m < 2; m++) {
        struct sim_pkt p;
        struct acis_hdr h;
        ck_assert(sim_pop(S, c->host[m], &p));
        ck_assert_int_eq(acis_wire_decode(p.data, p.len, ACIS_MAX_PAYLOAD, &h), ACIS_WERR_OK);
        ck_assert_uint_eq(h.flags & ACIS_F_ERROR, 0);
        ck_assert_uint_eq(h.payload_len, 4 * N);
        ck_assert_int_eq((int32_t)acis_get32(p.data + ACIS_HDR_LEN + 4), 2 * a[1]);
        free(p.data);
    }
    comm_free(c);
}
END_TEST

/* Unsealed packets by port (docs/protocol.md, Unsealed packets): taken
 * only from a host on loopback whose HELLO offered them, on the quick
 * path as on the full one; answers unsealed only when every port they go
 * to is such a host. */
START_TEST(unsealed_by_port)
{
    struct sim s;
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    ck_assert_int_eq(sim_init_memory(&s, &o, all_but_1), 0);
    uint32_t st;
    s.hello_flags = ACIS_HELLO_UNSEALED;
    int h[6];
    for (int i = 0; i < 4; i++)                      /* jobs A (hosts 0, 1), B (2, 3) */
        h[i] = sim_join(&s, i < 2 ? KEY : KEY + 1, (uint32_t)(i % 2), 2, &st);
    s.hello_flags = 0;                               /* job C (4, 5): no offer */
    for (int i = 4; i < 6; i++)
        h[i] = sim_join(&s, KEY + 2, (uint32_t)(i % 2), 2, &st);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(h[i], i);
    struct sim_comm *c[3];
    for (int j = 0; j < 3; j++) {
        c[j] = sim_comm_new(2);
        c[j]->host[0] = 2 * j;
        c[j]->host[1] = 2 * j + 1;
        ck_assert_uint_eq(sim_ct_create(&s, c[j], 50 + (uint32_t)j), ACIS_ST_OK);
    }
    /* job A: host 1 is not on loopback, its unsealed piece is refused */
    uint64_t bad = ctr(&s, ACIS_SWC_drop_malformed), open = ctr(&s, ACIS_SWC_unsealed);
    piece_to(&s, c[0], 1, 0, 1);
    ck_assert_uint_eq(ctr(&s, ACIS_SWC_drop_malformed), bad + 1);
    piece_to(&s, c[0], 0, 0, 1);                     /* host 0's is taken */
    ck_assert_uint_eq(ctr(&s, ACIS_SWC_unsealed), open + 1);
    piece_to(&s, c[0], 1, 0, 0);                     /* sealed: the segment completes */
    ck_assert_int_eq(answer_of(&s, 0), 0);           /* answered to both: sealed */
    ck_assert_int_eq(answer_of(&s, 1), 0);
    /* the same on the quick path: a piece of a segment in progress, its
     * header as the first one's (unsealed, from host 0) */
    piece_to(&s, c[0], 0, c[0]->window, 1);
    bad = ctr(&s, ACIS_SWC_drop_malformed);
    piece_to(&s, c[0], 1, c[0]->window, 1);
    ck_assert_uint_eq(ctr(&s, ACIS_SWC_drop_malformed), bad + 1);
    piece_to(&s, c[0], 1, c[0]->window, 0);
    ck_assert_int_eq(answer_of(&s, 0), 0);
    ck_assert_int_eq(answer_of(&s, 1), 0);
    /* job B: both on loopback and offered: answers unsealed, and the
     * slot's next segment of the same shape takes the quick path whole */
    piece_to(&s, c[1], 0, 0, 1);
    piece_to(&s, c[1], 1, 0, 1);
    ck_assert_int_eq(answer_of(&s, 2), 1);
    ck_assert_int_eq(answer_of(&s, 3), 1);
    uint64_t quick = ctr(&s, ACIS_SWC_quick);
    open = ctr(&s, ACIS_SWC_unsealed);
    piece_to(&s, c[1], 0, c[1]->window, 1);
    piece_to(&s, c[1], 1, c[1]->window, 1);
    ck_assert_uint_eq(ctr(&s, ACIS_SWC_quick), quick + 2);
    ck_assert_uint_eq(ctr(&s, ACIS_SWC_unsealed), open + 2);
    ck_assert_int_eq(answer_of(&s, 2), 1);
    ck_assert_int_eq(answer_of(&s, 3), 1);
    /* job C: on loopback without the offer: refused, answers sealed */
    bad = ctr(&s, ACIS_SWC_drop_malformed);
    piece_to(&s, c[2], 0, 0, 1);
    ck_assert_uint_eq(ctr(&s, ACIS_SWC_drop_malformed), bad + 1);
    piece_to(&s, c[2], 0, 0, 0);
    piece_to(&s, c[2], 1, 0, 0);
    ck_assert_int_eq(answer_of(&s, 4), 0);
    ck_assert_int_eq(answer_of(&s, 5), 0);
    for (int j = 0; j < 3; j++)
        sim_comm_free(c[j]);
    sim_fini(&s);
}
END_TEST

START_TEST(var_pieces_never_leak)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = 1024;
    o.tables = 1;                          /* B must take A's row */
    o.slots = 4;
    o.job_rows = 1;
    setup_opts(o, 2);                      /* hosts 0, 1: job A */
    uint32_t st;
    ck_assert_int_eq(sim_join(S, KEY + 1, 0, 2, &st), 2);
    ck_assert_int_eq(sim_join(S, KEY + 1, 1, 2, &st), 3);
    int a[2] = { 0, 1 }, b[2] = { 2, 3 };
    struct sim_comm *ca = comm(a, 2);
    static uint8_t secret[2][512], out[2][1024];
    memset(secret, 0xA5, sizeof secret);
    struct sim_member m[2];
    for (int r = 0; r < 2; r++)
        m[r] = (struct sim_member){ secret[r], (uint64_t)r * 512, 512, out[r], 0, 1024 };
    ck_assert_int_eq(sim_collective(S, ca, ACIS_K_ALLGATHER, 0, ACIS_DT_BYTE, 0, 1024, m, 1),
                     0);
    ck_assert_uint_eq(out[1][700], 0xA5);
    ck_assert_uint_eq(sim_ct_free(S, ca), ACIS_ST_OK);
    comm_free(ca);
    struct sim_comm *cb = sim_comm_new(2);
    memcpy(cb->host, b, sizeof b);
    ck_assert_uint_eq(sim_ct_create(S, cb, 5), ACIS_ST_OK);
    ck_assert_uint_eq(cb->ctx & 0xffff, 1);           /* the same row, its slots */

    uint16_t fl;
    uint8_t got[1024];
    var_piece(cb, 2, KEY + 1, 1, 0, 0, 0);             /* no piece at all */
    var_piece(cb, 3, KEY + 1, 1, 0, 0, 0);
    for (int h = 2; h < 4; h++) {
        ck_assert_uint_eq(var_answer(h, &fl, got), 1024);
        for (int i = 0; i < 1024; i++)
            ck_assert_msg(got[i] == 0, "host %d byte %d: %#x", h, i, got[i]);
    }
    sim_counters(S);
    uint64_t range = S->c[ACIS_SWC_drop_range];
    var_piece(cb, 2, KEY + 1, 2, 0, 600, 0x11);        /* overlapping pieces */
    var_piece(cb, 3, KEY + 1, 2, 500, 524, 0x22);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_range], range + 1);
    var_piece(cb, 3, KEY + 1, 2, 600, 424, 0x22);      /* then tiling: answered */
    for (int h = 2; h < 4; h++) {
        ck_assert_uint_eq(var_answer(h, &fl, got), 1024);
        ck_assert(got[0] == 0x11 && got[599] == 0x11 && got[600] == 0x22 && got[1023] == 0x22);
    }
    uint64_t untiled = S->c[ACIS_SWC_untiled];
    var_piece(cb, 2, KEY + 1, 3, 0, 300, 0x33);        /* bytes 300..1023 missing */
    var_piece(cb, 3, KEY + 1, 3, 0, 0, 0);
    for (int h = 2; h < 4; h++) {
        ck_assert_uint_eq(var_answer(h, &fl, got), 0);
        ck_assert_uint_eq(fl & (ACIS_F_ERROR | ACIS_F_ABSTAIN), ACIS_F_ERROR | ACIS_F_ABSTAIN);
    }
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_untiled], untiled + 1);
    range = S->c[ACIS_SWC_drop_range];
    var_piece(cb, 2, KEY + 1, 4, 0, 10, 0x44);         /* byte 9 placed twice, */
    var_piece(cb, 3, KEY + 1, 4, 9, 1015, 0x55);       /* inside the first word */
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_range], range + 1);
    var_piece(cb, 3, KEY + 1, 4, 10, 1014, 0x55);      /* the refused one marked nothing */
    for (int h = 2; h < 4; h++) {
        ck_assert_uint_eq(var_answer(h, &fl, got), 1024);
        ck_assert(got[0] == 0x44 && got[9] == 0x44 && got[10] == 0x55 && got[1023] == 0x55);
    }
    sim_comm_free(cb);
}
END_TEST

/* A transport that only counts what the switch answers. */
struct tally {
    uint64_t welcomed, refused;
};

static int t_open(void *ctx, uint32_t port, const void *peer)
{
    (void)ctx;
    (void)port;
    (void)peer;
    return 0;
}

static void t_close(void *ctx, uint32_t port)
{
    (void)ctx;
    (void)port;
}

static void t_count(struct tally *t, const struct iovec *iov, int iovcnt)
{
    const uint8_t *h = iov[0].iov_base;
    if (iovcnt == 2 && ACIS_OPC_KIND(h[5]) == ACIS_K_WELCOME) {
        if (acis_get32(iov[1].iov_base) == ACIS_ST_OK)
            t->welcomed++;
        else
            t->refused++;
    }
}

static void t_send(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                   int iovcnt)
{
    (void)ports;
    for (uint32_t i = 0; i < n; i++)
        t_count(ctx, iov, iovcnt);
}

static void t_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)peer;
    t_count(ctx, iov, iovcnt);
}

/* HELLOs claiming jobs of 2^24 ranks, each with a key of its own, from
 * a thousand senders: the switch takes what its ports and job table hold,
 * refuses the rest, and allocates nothing for any of them (on 66c2fb4
 * each such HELLO allocated and cleared 64 MiB). */
START_TEST(hello_flood)
{
    struct tally t = { 0, 0 };
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    struct acis_sw_io io = { &t, t_open, t_close, t_send, t_reply, NULL };
    char err[128];
    struct acis_sw *sw = acis_sw_create(&o, &io, err, sizeof err);
    ck_assert_ptr_nonnull(sw);
    struct mallinfo2 m0 = mallinfo2();
    uint8_t b[ACIS_HDR_LEN + ACIS_HELLO_LEN], pl[ACIS_HELLO_LEN] = { 0 };
    acis_put32(pl, 1u << 24);
    for (int i = 0; i < 1000; i++) {
        sim_control(b, ACIS_K_HELLO, KEY + (uint64_t)i * 7919, (uint32_t)i * 4099 % (1u << 24),
                    0, 1, pl, sizeof pl);
        acis_sw_input(sw, ACIS_PORT_SERVICE, &i, b, sizeof b);
    }
    acis_put32(pl, (1u << 24) + 1);                   /* more than any job may have */
    sim_control(b, ACIS_K_HELLO, KEY - 1, 0, 0, 1, pl, sizeof pl);
    acis_sw_input(sw, ACIS_PORT_SERVICE, &(int){ 0 }, b, sizeof b);
    struct mallinfo2 m1 = mallinfo2();
    uint64_t c[ACIS_SWC_COUNT];
    acis_sw_counters(sw, c);
    ck_assert_uint_eq(t.welcomed, o.ports);
    ck_assert_uint_eq(t.refused, 1000 - o.ports + 1);
    ck_assert_uint_eq(c[ACIS_SWC_ports_in_use], o.ports);
    ck_assert_uint_le(c[ACIS_SWC_jobs], 256);
#ifndef __SANITIZE_ADDRESS__
    ck_assert_uint_eq(m1.uordblks + m1.hblkhd, m0.uordblks + m0.hblkhd);
#endif
    (void)m0;
    (void)m1;
    acis_sw_destroy(sw);
}
END_TEST

/* A port its host left stays its job's while the job lives: the job's
 * rows still name it, and their answers carry the job's key (on the
 * review's tree another job's HELLO took it and heard them). */
START_TEST(port_kept_for_its_job)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.ports = 4;
    o.tables = 4;
    o.slots = 16;
    setup_opts(o, 3);                            /* KEY's ranks 0-2 on ports 0-2 */
    struct sim_comm *c = world(3);
    sim_leave(S, 1);
    uint32_t st;
    int rogue = sim_join(S, KEY + 1, 1, 2, &st); /* rank 1 of another job */
    ck_assert_int_ge(rogue, 0);
    ck_assert_uint_eq(S->hosts[rogue].port, 3);  /* not port 1 */
    int back = sim_join(S, KEY, 1, 3, &st);      /* the job's own rank 1 may */
    ck_assert_int_ge(back, 0);
    ck_assert_uint_eq(S->hosts[back].port, 1);
    sim_leave(S, rogue);
    int third = sim_join(S, KEY + 2, 0, 1, &st); /* a third job: port 3 */
    ck_assert_int_ge(third, 0);
    ck_assert_uint_eq(S->hosts[third].port, 3);
    sim_leave(S, third);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_jobs], 1);
    /* once KEY has left, its ports are anyone's */
    sim_leave(S, 0);
    sim_leave(S, 2);
    sim_leave(S, back);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_jobs], 0);
    int later = sim_join(S, KEY + 3, 1, 2, &st);
    ck_assert_int_ge(later, 0);
    ck_assert_uint_eq(S->hosts[later].port, 1);
    comm_free(c);
}
END_TEST

/* A 64 KiB scan at 256 members: segments cut so every member's piece
 * fits one pool buffer, every member's prefix right, and the switch's
 * memory what it was (on 66c2fb4 a 512 KiB scan at 256 members grew the
 * switch's buffers from 1 MiB to 129 MiB, held after the call). */
START_TEST(scan_256_members)
{
    enum { P = 256, N = 16384 };
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    setup_opts(o, P);
    struct sim_comm *c = world(P);
    ck_assert_uint_ne(c->flags & ACIS_CT_SCAN_SPLIT, 0);
    ck_assert_uint_eq(acis_seg_bytes(c->payload, ACIS_K_SCAN, ACIS_DT_I32, P), 56);
    int32_t *in = malloc(sizeof(int32_t) * N * P), *out = malloc(sizeof(int32_t) * N * P);
    struct sim_member *m = calloc(P, sizeof *m);
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++)
            in[r * N + i] = r + i;
        m[r] = (struct sim_member){ in + r * N, 0, 4 * N, out + r * N, 0, 4 * N };
    }
    uint64_t h0 = 0;
    for (int run = 0; run < 2; run++) {
        struct mallinfo2 mi = mallinfo2();
        if (run == 1)
            h0 = mi.uordblks + mi.hblkhd;
        memset(out, 0, sizeof(int32_t) * N * P);
        ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCAN, ACIS_OP_SUM, ACIS_DT_I32, 0, 4 * N,
                                        m, 7 + (unsigned)run), 0);
    }
    struct mallinfo2 m1 = mallinfo2();
    for (int r = 0; r < P; r += 17)
        for (int i = 0; i < N; i += 101)
            ck_assert_int_eq(out[r * N + i], r * (r + 1) / 2 + (r + 1) * i);
    sim_counters(S);
    struct acis_sw_size z;
    char err[128];
    acis_sw_size(&o, &z, err, sizeof err);
    ck_assert_uint_eq(S->c[ACIS_SWC_buffer_bytes], z.pool);
#ifndef __SANITIZE_ADDRESS__
    ck_assert_uint_le(m1.uordblks + m1.hblkhd, h0);     /* nothing grew */
#endif
    (void)m1;
    (void)h0;
    free(in);
    free(out);
    free(m);
    comm_free(c);
}
END_TEST

START_TEST(kernels)
{
    int8_t a8[2] = { 100, -128 }, b8[2] = { 100, -1 };
    acis_reduce(ACIS_OP_SUM, ACIS_DT_I8, a8, b8, 2);
    ck_assert_int_eq(a8[0], -56);                      /* wraps like MPICH */
    ck_assert_int_eq(a8[1], 127);
    uint16_t a16 = 65535, b16 = 65535;
    acis_reduce(ACIS_OP_PROD, ACIS_DT_U16, &a16, &b16, 1);
    ck_assert_uint_eq(a16, 1);
    struct { double v; int i; } x = { 2.0, 5 }, y = { 2.0, 3 }, z = { 1.0, 9 };
    acis_reduce(ACIS_OP_MINLOC, ACIS_DT_DOUBLE_INT, &x, &y, 1);
    ck_assert(x.v == 2.0 && x.i == 3);                 /* tie: smaller index */
    acis_reduce(ACIS_OP_MAXLOC, ACIS_DT_DOUBLE_INT, &x, &z, 1);
    ck_assert(x.v == 2.0 && x.i == 3);
    acis_reduce(ACIS_OP_MINLOC, ACIS_DT_DOUBLE_INT, &x, &z, 1);
    ck_assert(x.v == 1.0 && x.i == 9);
    int32_t l1[3] = { 0, 5, 7 }, l2[3] = { 3, 0, -2 };
    acis_reduce(ACIS_OP_LXOR, ACIS_DT_I32, l1, l2, 3);
    ck_assert(l1[0] == 1 && l1[1] == 1 && l1[2] == 0);
    bool p[2] = { true, false }, q[2] = { true, true };
    acis_reduce(ACIS_OP_LAND, ACIS_DT_BOOL, p, q, 2);
    ck_assert(p[0] && !p[1]);
    double complex c1 = 1 + 2 * I, c2 = 3 + 4 * I;
    acis_reduce(ACIS_OP_PROD, ACIS_DT_C64, &c1, &c2, 1);
    ck_assert(creal(c1) == -5 && cimag(c1) == 10);
    long double ld = 1e18L, le = 1;
    acis_reduce(ACIS_OP_SUM, ACIS_DT_F80, &ld, &le, 1);
    ck_assert(ld == 1e18L + 1);                        /* 64-bit mantissa */
    uint8_t by = 0xf0, bz = 0x3c;
    acis_reduce(ACIS_OP_BXOR, ACIS_DT_BYTE, &by, &bz, 1);
    ck_assert_uint_eq(by, 0xcc);
    int32_t keep = 7, other = 9;
    acis_reduce(ACIS_OP_SUM, ACIS_DT_BOOL, &keep, &other, 1);   /* not defined: no-op */
    ck_assert_int_eq(keep, 7);
}
END_TEST

/* Per-job limits: one job cannot take every port or row from the others. */
START_TEST(job_limits)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.ports = 6;
    o.tables = 4;                /* a job may hold 3 rows by default */
    o.slots = 16;
    o.job_ports = 3;
    S = calloc(1, sizeof *S);
    ck_assert_int_eq(sim_init(S, &o), 0);
    uint32_t st;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(sim_join(S, KEY, (uint32_t)i, 4, &st), i);
    ck_assert_int_eq(sim_join(S, KEY, 3, 4, &st), -1);       /* a fourth port */
    ck_assert_uint_eq(st, ACIS_ST_JOB_LIMIT);
    ck_assert_int_eq(sim_join(S, KEY + 1, 0, 2, &st), 3);    /* another job fits */
    ck_assert_int_eq(sim_join(S, KEY + 1, 1, 2, &st), 4);

    int a3[3] = { 0, 1, 2 }, b2[2] = { 3, 4 };
    struct sim_comm *rows[3];
    for (int r = 0; r < 3; r++) {
        rows[r] = sim_comm_new(3);
        memcpy(rows[r]->host, a3, sizeof a3);
        ck_assert_uint_eq(sim_ct_create(S, rows[r], 500 + (uint32_t)r), ACIS_ST_OK);
    }
    struct sim_comm *more = sim_comm_new(3);
    memcpy(more->host, a3, sizeof a3);
    ck_assert_uint_eq(sim_ct_create(S, more, 600), ACIS_ST_JOB_LIMIT);
    struct sim_comm *b = comm(b2, 2);                         /* the last row is B's */
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_tables_in_use], 4);
    ck_assert_uint_eq(S->c[ACIS_SWC_tables_refused], 1);
    /* a freed row is the job's to take again */
    ck_assert_uint_eq(sim_ct_free(S, rows[0]), ACIS_ST_OK);
    ck_assert_uint_eq(sim_ct_create(S, more, 601), ACIS_ST_OK);
    for (int r = 0; r < 3; r++)
        comm_free(rows[r]);
    comm_free(b);
    sim_comm_free(more);
}
END_TEST

struct emu_got {
    uint32_t member;
    double *out;
    uint32_t seg_bytes, answers;
};

static void emu_take(void *arg, uint32_t member, const void *pkt, size_t len)
{
    struct emu_got *g = arg;
    struct acis_hdr h;
    ck_assert_int_eq(acis_wire_decode(pkt, len, 1024, &h), ACIS_WERR_OK);
    if (member != g->member)
        return;
    memcpy((uint8_t *)g->out + h.seg_offset, (const uint8_t *)pkt + ACIS_HDR_LEN,
           h.payload_len);
    g->answers++;
}

/* The private core of a recovering rank gives what the switch gives: an
 * order-sensitive reduction folded in rank order, whatever order the
 * members' packets come in. */
START_TEST(emulator)
{
    enum { N = 4, COUNT = 1000, SLOTS = 4 };
    uint32_t granks[N] = { 7, 3, 9, 0 };
    struct acis_swemu *e = acis_swemu_create(KEY, granks, N, 10, SLOTS, 1024);
    ck_assert_ptr_nonnull(e);
    static double in[N][COUNT], want[COUNT], got[COUNT];
    for (int m = 0; m < N; m++)
        for (int i = 0; i < COUNT; i++)
            in[m][i] = 1.0 / (1 + i + 7 * m) * (m % 2 ? -1e8 : 1);
    for (int i = 0; i < COUNT; i++)
        want[i] = ((in[0][i] + in[1][i]) + in[2][i]) + in[3][i];
    struct acis_window w[N];
    struct acis_stream st[N];
    for (int m = 0; m < N; m++) {
        ck_assert_int_eq(acis_window_init(&w[m], 64), 0);
        st[m] = (struct acis_stream){
            .kind = ACIS_K_ALLREDUCE, .op = ACIS_OP_SUM, .dtype = ACIS_DT_F64,
            .ctx = 0x30003, .seq = 5, .src = granks[m], .job_key = KEY,
            .total = sizeof in[m], .src_buf = (const uint8_t *)in[m],
            .src_len = sizeof in[m], .dst_buf = (uint8_t *)got, .dst_len = sizeof got,
        };
        st[m].seg_bytes = acis_seg_bytes(1024, st[m].kind, st[m].dtype, 0);
        st[m].member = (uint32_t)m;
        acis_stream_start(&st[m], &w[m]);
    }
    struct emu_got g = { 2, got, st[0].seg_bytes, 0 };
    uint8_t pkt[ACIS_HDR_LEN + 1024];
    for (uint32_t k = 0; k < st[0].nseg; k++)
        for (int i = 0; i < N; i++) {
            int m = (int)((k + 3 * (uint32_t)i) % N);           /* a different order each time */
            const uint8_t *pl;
            uint32_t len;
            acis_stream_packet(&st[m], &w[m], k, pkt, &pl, &len);
            memcpy(pkt + ACIS_HDR_LEN, pl, len);
            ck_assert_int_eq(acis_swemu_input(e, (uint32_t)m, k % SLOTS, (int)(k / SLOTS % 2),
                                              pkt, ACIS_HDR_LEN + len, emu_take, &g), 0);
        }
    ck_assert_uint_eq(g.answers, st[0].nseg);
    ck_assert(memcmp(got, want, sizeof want) == 0);
    for (int m = 0; m < N; m++) {
        acis_window_free(&w[m]);
    }
    acis_swemu_destroy(e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("switch");
    TCase *big = tcase_create("hosts");
    tcase_add_checked_fixture(big, setup64, teardown);
    tcase_set_timeout(big, 120);
    tcase_add_test(big, allreduce_64_hosts);
    tcase_add_test(big, float_order_fixed);
    tcase_add_test(big, several_comms_at_once);
    tcase_add_test(big, every_kind);
    tcase_add_test(big, drops);
    tcase_add_test(big, disagreeing_members);
    tcase_add_test(big, gather_range);
    tcase_add_test(big, own_blocks);
    tcase_add_test(big, own_block_only_root);
    tcase_add_test(big, loss_and_repeats);
    tcase_add_test(big, abstain);
    tcase_add_test(big, stale_packet);
    suite_add_tcase(s, big);
    TCase *ctl = tcase_create("control");
    tcase_add_checked_fixture(ctl, NULL, teardown);
    tcase_set_timeout(ctl, 60);            /* scan_256_members: about 10 s under
                                              TSan, past 20 on a loaded machine */
    tcase_add_test(ctl, control_plane);
    tcase_add_test(ctl, job_limits);
    tcase_add_test(ctl, emulator);
    tcase_add_test(ctl, long_double_pieces);
    tcase_add_test(ctl, answered_flags);
    tcase_add_test(ctl, var_pieces_never_leak);
    tcase_add_test(ctl, unsealed_by_port);
    tcase_add_test(ctl, hello_flood);
    tcase_add_test(ctl, port_kept_for_its_job);
    tcase_add_test(ctl, scan_256_members);
    suite_add_tcase(s, ctl);
    TCase *k = tcase_create("kernels");
    tcase_add_test(k, kernels);
    suite_add_tcase(s, k);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
