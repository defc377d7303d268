/* check_fabric.c -- switches linked into fabrics, with simulated hosts and
 * no MPI: every collective kind on a fat tree of 2 leaves and a spine, on
 * 256 hosts of a fat tree and on a 4x4x4 torus, several communicators at
 * once on both, lost and doubled packets between hosts and switches, two
 * jobs on one fabric and a job at its row limit, floating-point sums the
 * same on every member and every run, rows installed and dropped on every
 * switch a communicator is below, aggregation seen in more than one
 * switch, the timing model; one core below a parent driven packet by
 * packet (joins and leaves confirmed or refused, late installs); and what
 * a row costs each switch, bounded and, at 4096 hosts, measured. */
#include "config.h"

#include <check.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simhost.h"

static struct sim *S;
static const uint64_t KEY = 0x0123456789abcdefULL, KEY2 = 0x1111222233334444ULL;

/* A fabric of topo with n hosts of job key, filling switches' host ports
 * in order; hosts get ranks 0..n-1. */
/* S: a fabric of topo built with o, no host yet. */
static void fabric_only(const char *topo, const struct acis_sw_opts *o)
{
    char err[160];
    S = calloc(1, sizeof *S);
    ck_assert_msg(sim_init_fabric(S, topo, o, err, sizeof err) == 0, "%s", err);
}

static void setup_fabric(const char *topo, uint32_t payload, int n)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = payload;
    o.tables = 8;
    o.slots = 64;                                /* a window of 8 */
    fabric_only(topo, &o);
    int h = 0;
    for (uint32_t sw = 0; sw < acis_fabric_switches(S->fab) && h < n; sw++)
        for (uint32_t p = 0; p < acis_fabric_host_ports(S->fab, sw) && h < n; p++, h++) {
            uint32_t st;
            ck_assert_int_eq(sim_join_at(S, sw, KEY, (uint32_t)h, (uint32_t)n, &st), h);
        }
    ck_assert_int_eq(h, n);
}

static void teardown(void)
{
    if (S)
        sim_fini(S);
    free(S);
    S = NULL;
}

static struct sim_comm *comm(const int *hosts, int n, uint32_t req)
{
    struct sim_comm *c = calloc(1, sizeof *c);
    c->n = n;
    memcpy(c->host, hosts, sizeof(int) * (size_t)n);
    ck_assert_uint_eq(sim_ct_create(S, c, req), ACIS_ST_OK);
    return c;
}

static struct sim_comm *world(int n)
{
    int h[SIM_MAX_HOSTS];
    for (int i = 0; i < n; i++)
        h[i] = i;
    return comm(h, n, 77);
}

static void comm_free(struct sim_comm *c)
{
    ck_assert_uint_eq(sim_ct_free(S, c), ACIS_ST_OK);
    free(c);
}

/* Switches whose counter k is nonzero. */
static uint32_t switches_with(int k)
{
    uint32_t n = 0;
    uint64_t c[ACIS_SWC_COUNT];
    for (uint32_t i = 0; i < acis_fabric_switches(S->fab); i++) {
        acis_fabric_counters(S->fab, i, c);
        n += c[k] > 0;
    }
    return n;
}

enum { N = 40 };                                 /* int32 per member block */

/* Every collective kind on c, each result checked on every member. */
static void every_kind(struct sim_comm *c, unsigned seed)
{
    int P = c->n;
    uint64_t blk = 4 * N, tot = (uint64_t)P * blk;
    int32_t **in = malloc(sizeof *in * (size_t)P), **out = malloc(sizeof *out * (size_t)P);
    struct sim_member *m = calloc((size_t)P, sizeof *m);
    for (int r = 0; r < P; r++) {
        in[r] = malloc(tot);
        out[r] = malloc(tot);
    }

    /* barrier */
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_BARRIER, 0, ACIS_DT_NONE, 0, 0, m, seed), 0);

    /* bcast of several segments from the last member */
    int root = P - 1;
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < P * N; i++)
            in[r][i] = r == root ? i * 7 + 1 : -1;
        memset(out[r], 0, tot);
        m[r] = (struct sim_member){ in[r], 0, r == root ? tot : 0, out[r], 0, tot };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_BCAST, 0, ACIS_DT_BYTE, (uint32_t)root, tot,
                                    m, seed + 1), 0);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < P * N; i++)
            ck_assert_int_eq(out[r][i], i * 7 + 1);

    /* reduce to member 1 % P and allreduce, int32 sums */
    for (int k = 0; k < 2; k++) {
        root = 1 % P;
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < P * N; i++)
                in[r][i] = r * 3 + i;
            memset(out[r], 0, tot);
            int wants = k == 1 || r == root;
            m[r] = (struct sim_member){ in[r], 0, tot, out[r], 0, wants ? tot : 0 };
        }
        ck_assert_int_eq(sim_collective(S, c, k ? ACIS_K_ALLREDUCE : ACIS_K_REDUCE, ACIS_OP_SUM,
                                        ACIS_DT_I32, (uint32_t)root, tot, m, seed + 2), 0);
        for (int r = 0; r < P; r++)
            for (int i = 0; k == 1 || r == root ? i < P * N : 0; i++)
                ck_assert_int_eq(out[r][i], 3 * P * (P - 1) / 2 + P * i);
    }

    /* gather to the middle member and allgather */
    for (int k = 0; k < 2; k++) {
        root = P / 2;
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < N; i++)
                in[r][i] = r * 100000 + i;
            memset(out[r], 0, tot);
            int wants = k == 1 || r == root;
            m[r] = (struct sim_member){ in[r], r * blk, blk, out[r], 0, wants ? tot : 0 };
        }
        ck_assert_int_eq(sim_collective(S, c, k ? ACIS_K_ALLGATHER : ACIS_K_GATHER, 0,
                                        ACIS_DT_BYTE, (uint32_t)root, tot, m, seed + 3), 0);
        for (int r = 0; r < P; r++)
            for (int q = 0; (k == 1 || r == root) && q < P; q++)
                for (int i = 0; i < N; i++)
                    ck_assert_int_eq(out[r][q * N + i], q * 100000 + i);
    }

    /* scatter from member 0 */
    for (int i = 0; i < P * N; i++)
        in[0][i] = i * 3;
    for (int r = 0; r < P; r++) {
        memset(out[r], 0, tot);
        m[r] = (struct sim_member){ in[0], 0, r == 0 ? tot : 0, out[r], r * blk, blk };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCATTER, 0, ACIS_DT_BYTE, 0, tot, m, seed + 4),
                     0);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(out[r][i], (r * N + i) * 3);

    /* reduce-scatter, member r gets block r */
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < P * N; i++)
            in[r][i] = r + i;
        memset(out[r], 0, tot);
        m[r] = (struct sim_member){ in[r], 0, tot, out[r], r * blk, blk };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_REDUCE_SCATTER, ACIS_OP_SUM, ACIS_DT_I32, 0,
                                    tot, m, seed + 5), 0);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(out[r][i], P * (r * N + i) + P * (P - 1) / 2);

    for (int r = 0; r < P; r++) {
        free(in[r]);
        free(out[r]);
    }
    free(in);
    free(out);
    free(m);
}

/* Float sums on c, twice with different arrival orders: every member
 * gets bitwise the same result in both runs, near the exact sum. */
static void float_sums(struct sim_comm *c)
{
    enum { COUNT = 100 };
    int P = c->n;
    float *in = malloc(sizeof(float) * (size_t)P * COUNT), *out[2];
    struct sim_member *m = calloc((size_t)P, sizeof *m);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < COUNT; i++)
            in[r * COUNT + i] = (r % 3 ? 0.1f : 3e5f) + (float)i * 1e-3f;
    for (int run = 0; run < 2; run++) {
        out[run] = calloc((size_t)P * COUNT, sizeof(float));
        for (int r = 0; r < P; r++)
            m[r] = (struct sim_member){ in + r * COUNT, 0, 4 * COUNT, out[run] + r * COUNT,
                                        0, 4 * COUNT };
        ck_assert_int_eq(sim_collective(S, c, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_F32, 0,
                                        4 * COUNT, m, 9 + 1000u * (unsigned)run), 0);
    }
    for (int i = 0; i < COUNT; i++) {
        double exact = 0;
        for (int r = 0; r < P; r++)
            exact += in[r * COUNT + i];
        ck_assert_double_eq_tol(out[0][i], exact, 1e-4 * exact + 1);
        for (int r = 0; r < P; r++) {
            ck_assert_mem_eq(&out[0][r * COUNT + i], &out[0][i], sizeof(float));
            ck_assert_mem_eq(&out[1][r * COUNT + i], &out[0][i], sizeof(float));
        }
    }
    free(in);
    free(out[0]);
    free(out[1]);
    free(m);
}

/* Scans need prefixes that no switch of a fabric has: every member is
 * told to redo it in MPICH, none waits. */
static void scan_refused(struct sim_comm *c)
{
    int32_t in[SIM_MAX_HOSTS][4] = { { 0 } }, out[SIM_MAX_HOSTS][4];
    struct sim_member m[SIM_MAX_HOSTS];
    for (int r = 0; r < c->n; r++)
        m[r] = (struct sim_member){ in[r], 0, 16, out[r], 0, 16 };
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCAN, ACIS_OP_SUM, ACIS_DT_I32, 0, 16, m, 3), 0);
    ck_assert_int_eq(S->refused, c->n);
}

START_TEST(fattree_two_leaves)
{
    setup_fabric("fattree:leaves=2,spines=1,radix=4", 256, 4);
    ck_assert_uint_eq(acis_fabric_switches(S->fab), 3);
    ck_assert_uint_eq(acis_fabric_parent(S->fab, 0), 2);
    struct sim_comm *c = world(4);
    /* the timing model: a barrier is 2 levels of 440 ns links and 52 ns
     * switches each way, and a 72-byte header serialized at 95.9 Gb/s */
    uint64_t m0[ACIS_SWC_COUNT], m1[ACIS_SWC_COUNT];
    struct sim_member none[4] = { { 0 } };
    acis_fabric_counters(S->fab, 2, m0);
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_BARRIER, 0, ACIS_DT_NONE, 0, 0, none, 1), 0);
    acis_fabric_counters(S->fab, 2, m1);
    ck_assert_uint_eq(m1[ACIS_SWC_model_ns] - m0[ACIS_SWC_model_ns],
                      2 * (2 * (440 + 52) + 72 * 8 * 1000 / 95900));
    every_kind(c, 1);
    float_sums(c);
    scan_refused(c);
    /* both leaves combined their hosts and sent up; the spine answered */
    ck_assert_uint_eq(switches_with(ACIS_SWC_link_up), 2);
    ck_assert_uint_eq(switches_with(ACIS_SWC_link_down), 2);
    ck_assert_uint_eq(switches_with(ACIS_SWC_seg_allreduce), 3);
    uint64_t c2[ACIS_SWC_COUNT];
    acis_fabric_counters(S->fab, 2, c2);
    ck_assert_uint_eq(c2[ACIS_SWC_link_up], 0);
    ck_assert_uint_gt(c2[ACIS_SWC_elements_reduced], 0);
    acis_fabric_counters(S->fab, 0, m0);
    ck_assert_uint_eq(m0[ACIS_SWC_model_ns], 0);     /* counted at the top only */
    ck_assert_uint_eq(c2[ACIS_SWC_tables_in_use], 1);

    /* members in another order, and a communicator on one leaf */
    int rev[4] = { 3, 0, 2, 1 }, one[2] = { 1, 0 };
    struct sim_comm *r = comm(rev, 4, 5), *o = comm(one, 2, 6);
    every_kind(r, 11);
    every_kind(o, 21);
    acis_fabric_counters(S->fab, 1, c2);
    ck_assert_uint_eq(c2[ACIS_SWC_tables_in_use], 2);   /* leaf 1 holds no row of o */
    comm_free(r);
    comm_free(o);
    comm_free(c);
    for (uint32_t i = 0; i < 3; i++) {
        acis_fabric_counters(S->fab, i, c2);
        ck_assert_uint_eq(c2[ACIS_SWC_tables_in_use], 0);
        ck_assert_uint_eq(c2[ACIS_SWC_drop_malformed] + c2[ACIS_SWC_drop_foreign] +
                          c2[ACIS_SWC_drop_range] + c2[ACIS_SWC_drop_slot], 0);
    }
    /* the hosts leave: every switch forgets the job */
    for (int h = 0; h < 4; h++)
        sim_leave(S, h);
    for (uint32_t i = 0; i < 3; i++) {
        acis_fabric_counters(S->fab, i, c2);
        ck_assert_uint_eq(c2[ACIS_SWC_jobs], 0);
    }
}
END_TEST

/* A gather or scatter root keeps its own block at home on a fabric too:
 * its leaf takes the empty pieces, the spine the leaf's spans without
 * them.  Blocks of 1000 bytes, 256-byte segments (three inside each
 * block), members on both leaves, roots on either, loss and duplication. */
START_TEST(own_blocks_across_leaves)
{
    enum { P = 4, B = 1000 };
    static uint8_t in[P][P * B], out[P][P * B];
    struct sim_member m[P];
    setup_fabric("fattree:leaves=2,spines=1,radix=4", 256, P);
    struct sim_comm *c = world(P);
    ck_assert_uint_ne(c->flags & ACIS_CT_OWN_BLOCK, 0);
    S->loss = S->dup = 5;
    for (uint32_t root = 1; root < P; root += 2) {
        S->owner = (int)root + 1;                /* world: member r is host r */
        S->own_off = root * B;
        S->own_len = B;
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < B; i++)
                in[r][i] = (uint8_t)(r * 29 + i);
            memset(out[r], 0, sizeof out[r]);
            m[r] = (struct sim_member){ in[r], (uint64_t)r * B, B, out[r], 0,
                                        r == (int)root ? P * B : 0 };
        }
        memcpy(out[root] + root * B, in[root], B);     /* the root's own copy */
        ck_assert_int_eq(sim_collective(S, c, ACIS_K_GATHER, 0, ACIS_DT_BYTE, root, P * B, m,
                                        60 + root), 0);
        for (int q = 0; q < P; q++)
            for (int i = 0; i < B; i++)
                ck_assert_uint_eq(out[root][q * B + i], (uint8_t)(q * 29 + i));
        for (int i = 0; i < P * B; i++)
            in[root][i] = (uint8_t)(i * 11 + root);
        for (int r = 0; r < P; r++) {
            memset(out[r], 0, sizeof out[r]);
            m[r] = (struct sim_member){ in[root], 0, r == (int)root ? P * B : 0, out[r],
                                        (uint64_t)r * B, B };
        }
        memcpy(out[root], in[root] + root * B, B);
        ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCATTER, 0, ACIS_DT_BYTE, root, P * B, m,
                                        70 + root), 0);
        for (int r = 0; r < P; r++)
            for (int i = 0; i < B; i++)
                ck_assert_uint_eq(out[r][i], (uint8_t)((r * B + i) * 11 + root));
    }
    S->owner = 0;
    S->loss = S->dup = 0;
    for (uint32_t i = 0; i < 3; i++) {
        uint64_t k[ACIS_SWC_COUNT];
        acis_fabric_counters(S->fab, i, k);
        ck_assert_uint_eq(k[ACIS_SWC_drop_range], 0);
    }
    comm_free(c);
}
END_TEST

/* 256 hosts on 16 leaves: three communicators at once, then with lost
 * and doubled packets on every link. */
START_TEST(fattree_256_hosts)
{
    setup_fabric("fattree:leaves=16,spines=16,radix=32", 1024, 256);
    int evens[128], mixed[100];
    for (int i = 0; i < 128; i++)
        evens[i] = 2 * i;
    for (int i = 0; i < 100; i++)
        mixed[i] = (i * 37 + 11) % 256;          /* a permutation's prefix */
    struct sim_comm *w = world(256), *e = comm(evens, 128, 8), *x = comm(mixed, 100, 9);
    every_kind(w, 31);
    enum { C = 700 };
    static int32_t in[256][C], out[3][256][C];
    static struct sim_member m[3][256];
    struct sim_comm *cs[3] = { w, e, x };
    for (int round = 0; round < 2; round++) {
        S->loss = round ? 5 : 0;
        S->dup = round ? 5 : 0;
        struct sim_coll colls[3];
        for (int k = 0; k < 3; k++) {
            for (int r = 0; r < cs[k]->n; r++) {
                for (int i = 0; i < C; i++)
                    in[r][i] = r - i;
                m[k][r] = (struct sim_member){ in[r], 0, 4 * C, out[k][r], 0, 4 * C };
            }
            colls[k] = (struct sim_coll){ cs[k], ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0,
                                          4 * C, m[k] };
        }
        memset(out, 0, sizeof out);
        ck_assert_int_eq(sim_run(S, colls, 3, 40u + (unsigned)round), 0);
        for (int k = 0; k < 3; k++)
            for (int r = 0; r < cs[k]->n; r++)
                for (int i = 0; i < C; i++)
                    ck_assert_int_eq(out[k][r][i],
                                     cs[k]->n * (cs[k]->n - 1) / 2 - cs[k]->n * i);
    }
    S->loss = S->dup = 0;
    sim_counters(S);
    ck_assert_uint_gt(S->c[ACIS_SWC_repeats], 0);       /* loss was repaired */
    ck_assert_uint_eq(switches_with(ACIS_SWC_link_up), 16);
    float_sums(w);
    comm_free(w);
    comm_free(e);
    comm_free(x);
}
END_TEST

START_TEST(torus_4x4x4)
{
    setup_fabric("torus:4x4x4", 512, 64);
    uint32_t top = 0, deepest = 0;
    for (uint32_t i = 0; i < 64; i++) {
        uint32_t d = 0;
        for (uint32_t j = i; acis_fabric_parent(S->fab, j) != ACIS_PORT_SERVICE;
             j = acis_fabric_parent(S->fab, j))
            d++;
        top += d == 0;
        deepest = d > deepest ? d : deepest;
    }
    ck_assert_uint_eq(top, 1);
    ck_assert_uint_eq(deepest, 6);                /* 2 hops per ring of 4 */
    struct sim_comm *w = world(64);
    every_kind(w, 51);
    float_sums(w);
    scan_refused(w);
    /* every switch but the top sent up; every switch with children folded */
    ck_assert_uint_eq(switches_with(ACIS_SWC_link_up), 63);
    ck_assert_uint_gt(switches_with(ACIS_SWC_elements_reduced), 1);
    /* two more communicators, one plane of the torus and a scattered set,
     * at once beside the world */
    int plane[16], odd[21];
    for (int i = 0; i < 16; i++)
        plane[i] = 32 + i;                       /* z = 2 */
    for (int i = 0; i < 21; i++)
        odd[i] = (i * 3 + 1) % 64;
    struct sim_comm *pl = comm(plane, 16, 3), *od = comm(odd, 21, 4);
    every_kind(pl, 52);
    every_kind(od, 53);
    enum { C = 300 };
    static int32_t in[64][C], out[3][64][C];
    static struct sim_member m[3][64];
    struct sim_comm *cs[3] = { w, pl, od };
    struct sim_coll colls[3];
    for (int k = 0; k < 3; k++) {
        for (int r = 0; r < cs[k]->n; r++) {
            for (int i = 0; i < C; i++)
                in[r][i] = 7 * r + i;
            m[k][r] = (struct sim_member){ in[r], 0, 4 * C, out[k][r], 0, 4 * C };
        }
        colls[k] = (struct sim_coll){ cs[k], ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0,
                                      4 * C, m[k] };
    }
    ck_assert_int_eq(sim_run(S, colls, 3, 54), 0);
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < cs[k]->n; r++)
            for (int i = 0; i < C; i++)
                ck_assert_int_eq(out[k][r][i], 7 * cs[k]->n * (cs[k]->n - 1) / 2 + cs[k]->n * i);
    comm_free(pl);
    comm_free(od);
    comm_free(w);
}
END_TEST

/* Two jobs on one fabric, their communicators running at once. */
START_TEST(two_jobs)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = 256;
    fabric_only("fattree:leaves=2,spines=1,radix=8", &o);
    uint32_t st;
    /* job A: ranks 0-3 over both leaves; job B: ranks 0-3 likewise */
    for (int h = 0; h < 8; h++)
        ck_assert_int_eq(sim_join_at(S, (uint32_t)(h % 2), h < 4 ? KEY : KEY2,
                                     (uint32_t)(h % 4), 4, &st), h);
    int a[4] = { 0, 1, 2, 3 }, b[4] = { 4, 5, 6, 7 };
    struct sim_comm *ca = comm(a, 4, 1), *cb = comm(b, 4, 1);
    ck_assert_uint_ne(ca->ctx, cb->ctx);
    enum { C = 300 };
    static int32_t in[8][C], out[8][C];
    struct sim_member ma[4], mb[4];
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < C; i++) {
            in[r][i] = r + i;
            in[4 + r][i] = 1000 * r - i;
        }
        ma[r] = (struct sim_member){ in[r], 0, 4 * C, out[r], 0, 4 * C };
        mb[r] = (struct sim_member){ in[4 + r], 0, 4 * C, out[4 + r], 0, 4 * C };
    }
    struct sim_coll colls[2] = {
        { ca, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I32, 0, 4 * C, ma },
        { cb, ACIS_K_ALLREDUCE, ACIS_OP_MAX, ACIS_DT_I32, 0, 4 * C, mb },
    };
    ck_assert_int_eq(sim_run(S, colls, 2, 5), 0);
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < C; i++) {
            ck_assert_int_eq(out[r][i], 6 + 4 * i);
            ck_assert_int_eq(out[4 + r][i], 3000 - i);
        }
    uint64_t c[ACIS_SWC_COUNT];
    acis_fabric_counters(S->fab, 2, c);
    ck_assert_uint_eq(c[ACIS_SWC_jobs], 2);
    ck_assert_uint_eq(c[ACIS_SWC_tables_in_use], 2);
    comm_free(ca);
    comm_free(cb);
}
END_TEST

/* Tenancy: a job that holds all the rows one job may hold is refused at
 * the top (its ranks run that communicator in MPICH, reason table_full),
 * and another job still gets a row on every switch it is below. */
START_TEST(job_limit_at_the_top)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = 256;
    o.tables = 4;                                /* a job may hold 3 */
    o.slots = 16;
    fabric_only("fattree:leaves=2,spines=1,radix=8", &o);
    uint32_t st;
    for (int h = 0; h < 4; h++)
        ck_assert_int_eq(sim_join_at(S, (uint32_t)(h % 2), h < 2 ? KEY : KEY2,
                                     (uint32_t)(h % 2), 2, &st), h);
    int a[2] = { 0, 1 }, b[2] = { 2, 3 };
    struct sim_comm *ca[3];
    for (int k = 0; k < 3; k++)
        ca[k] = comm(a, 2, 10u + (uint32_t)k);
    struct sim_comm over = { .n = 2, .host = { 0, 1 } };
    ck_assert_uint_eq(sim_ct_create(S, &over, 20), ACIS_ST_JOB_LIMIT);
    for (int i = 0; i < over.n; i++)
        acis_window_free(&over.win[i]);
    struct sim_comm *cb = comm(b, 2, 1);
    every_kind(cb, 90);
    uint64_t c[ACIS_SWC_COUNT];
    for (uint32_t i = 0; i < 2; i++) {
        acis_fabric_counters(S->fab, i, c);
        ck_assert_uint_eq(c[ACIS_SWC_tables_in_use], 4);   /* 3 of A, 1 of B */
    }
    acis_fabric_counters(S->fab, 2, c);
    ck_assert_uint_eq(c[ACIS_SWC_tables_refused], 1);
    for (int k = 0; k < 3; k++)
        comm_free(ca[k]);
    comm_free(cb);
}
END_TEST

/* The top of the tree refuses what it cannot serve, whoever asks. */
START_TEST(refusals)
{
    setup_fabric("fattree:leaves=2,spines=1,radix=4", 256, 3);   /* rank 3 never joins */
    struct sim_comm c = { .n = 3, .host = { 0, 1, 2 } };
    uint8_t pl[4 + 16], buf[ACIS_HDR_LEN + sizeof pl];
    acis_put32(pl, 4);
    for (uint32_t i = 0; i < 4; i++)
        acis_put32(pl + 4 + 4 * i, i);            /* ranks 0..3 of a world of 3 */
    sim_control(buf, ACIS_K_CT_CREATE, KEY, 2, 0, 5, pl, sizeof pl);
    sim_send_raw(S, 2, buf, sizeof buf);
    struct sim_pkt p;
    struct acis_hdr h;
    int got = 0;
    while (sim_pop(S, 2, &p)) {
        if (acis_wire_decode(p.data, p.len, ACIS_MAX_PAYLOAD, &h) == ACIS_WERR_OK &&
            ACIS_OPC_KIND(h.opcode) == ACIS_K_CT_REPLY) {
            ck_assert_uint_eq(acis_get32(p.data + ACIS_HDR_LEN), ACIS_ST_UNKNOWN_RANK);
            got = 1;
        }
        free(p.data);
    }
    ck_assert_int_eq(got, 1);
    /* a host may not speak for a switch */
    uint8_t j[ACIS_HDR_LEN + ACIS_LINK_JOIN_LEN];
    acis_put32(pl, 3);
    sim_control(j, ACIS_K_LINK_JOIN, KEY, 0, 0, 1, pl, ACIS_LINK_JOIN_LEN);
    sim_counters(S);
    uint64_t before = S->c[ACIS_SWC_drop_foreign];
    sim_send_raw(S, 0, j, sizeof j);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_foreign], before + 1);
    ck_assert_uint_eq(sim_ct_create(S, &c, 6), ACIS_ST_OK);
    every_kind(&c, 61);
    ck_assert_uint_eq(sim_ct_free(S, &c), ACIS_ST_OK);
}
END_TEST

/* ------------------------------------------------ one core below a parent */

struct wire_log {
    int n;                                       /* packets sent */
    uint32_t port[64];
    struct acis_hdr h[64];
    uint32_t status[64];                         /* first payload word */
};

static int log_open(void *ctx, uint32_t port, const void *peer)
{
    (void)ctx;
    (void)port;
    (void)peer;
    return 0;
}

static void log_close(void *ctx, uint32_t port)
{
    (void)ctx;
    (void)port;
}

static void log_packet(struct wire_log *l, uint32_t port, const struct iovec *iov, int iovcnt)
{
    uint8_t b[ACIS_HDR_LEN + 64] = { 0 };
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        size_t k = iov[i].iov_len < sizeof b - len ? iov[i].iov_len : sizeof b - len;
        memcpy(b + len, iov[i].iov_base, k);
        len += k;
    }
    if (l->n < 64) {
        acis_hdr_decode(b, &l->h[l->n]);
        l->port[l->n] = port;
        l->status[l->n] = acis_get32(b + ACIS_HDR_LEN);
        l->n++;
    }
}

static void log_send(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                     int iovcnt)
{
    for (uint32_t i = 0; i < n; i++)
        log_packet(ctx, ports[i], iov, iovcnt);
}

static void log_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)peer;
    log_packet(ctx, ACIS_PORT_SERVICE, iov, iovcnt);
}

/* The last packet sent, which must be of kind to port. */
static const struct acis_hdr *last(const struct wire_log *l, unsigned kind, uint32_t port)
{
    ck_assert_int_gt(l->n, 0);
    ck_assert_uint_eq(ACIS_OPC_KIND(l->h[l->n - 1].opcode), kind);
    ck_assert_uint_eq(l->port[l->n - 1], port);
    return &l->h[l->n - 1];
}

static uint32_t feed_seq = 1;                   /* seq of what feed() sends */

static void feed(struct acis_sw *sw, uint32_t port, unsigned kind, uint16_t flags, uint32_t src,
                 uint32_t ctx, const uint8_t *pl, size_t len)
{
    uint8_t b[ACIS_HDR_LEN + 64];
    int peer = 0;
    sim_control(b, kind, KEY, src, ctx, feed_seq, pl, len);
    if (flags) {                                 /* reseal with the flags */
        struct acis_hdr h;
        acis_hdr_decode(b, &h);
        h.flags = flags;
        h.checksum = 0;
        acis_hdr_encode(&h, b);
        acis_hdr_seal(b, pl, len);
    }
    acis_sw_input(sw, port, &peer, b, ACIS_HDR_LEN + len);
}

static uint64_t counter(const struct acis_sw *sw, int k)
{
    uint64_t c[ACIS_SWC_COUNT];
    acis_sw_counters(sw, c);
    return c[k];
}

/* Joins and leaves are told to the parent until it confirms them (and the
 * job stays until it has); a late CT_INSTALL of an older row never
 * replaces a newer one; links only as --links allows; a malformed join
 * leaves nothing behind. */
START_TEST(link_protocol)
{
    static struct wire_log l;
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.ports = 4;
    o.tables = 4;
    o.slots = 16;
    o.links = 1;
    char err[128];
    struct acis_sw_io io = { &l, log_open, log_close, log_send, log_reply };
    struct acis_sw *sw = acis_sw_create(&o, &io, err, sizeof err);
    ck_assert_ptr_nonnull(sw);
    acis_sw_set_parent(sw, 7);
    uint8_t pl[64] = { 0 };

    /* a host joins: the parent hears, and the host is welcomed (with the
     * parent's boot id) only once the parent confirms */
    acis_put32(pl, 2);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK)->src, 0);
    int before = l.n;
    acis_sw_tick(sw, 1000000000ull);             /* unconfirmed: told again */
    ck_assert_int_eq(l.n, before + 1);
    last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0, 0, pl, ACIS_HELLO_LEN);
    last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK);   /* the host repeats: again */
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_JOIN, ACIS_F_RESULT, 0, 0, pl, ACIS_LINK_JOIN_LEN);
    ck_assert_uint_eq(last(&l, ACIS_K_WELCOME, 0)->seq, 1);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);
    before = l.n;
    acis_sw_tick(sw, 2000000000ull);             /* confirmed: quiet */
    ck_assert_int_eq(l.n, before);

    /* rows: gen 5 installed and confirmed; a late gen 4 is dropped; gen 6
     * replaces it */
    acis_put32(pl, 2);
    acis_put32(pl + 4, 0);
    acis_put32(pl + 8, 1);                       /* rank 1 is elsewhere */
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_INSTALL, 0, ACIS_NO_RANK, 5u << 16 | 1, pl, 12);
    ck_assert_uint_eq(last(&l, ACIS_K_CT_REPLY, ACIS_PORT_UPLINK)->ctx, 5u << 16 | 1);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);
    before = l.n;
    uint64_t stale = counter(sw, ACIS_SWC_drop_stale);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_INSTALL, 0, ACIS_NO_RANK, 4u << 16 | 1, pl, 12);
    ck_assert_int_eq(l.n, before);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_drop_stale), stale + 1);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_tables_in_use), 1);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_INSTALL, 0, ACIS_NO_RANK, 6u << 16 | 1, pl, 12);
    ck_assert_uint_eq(last(&l, ACIS_K_CT_REPLY, ACIS_PORT_UPLINK)->ctx, 6u << 16 | 1);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_tables_in_use), 1);

    /* a link: one allowed, a second refused; a malformed join on it is
     * dropped without taking a job entry */
    memset(pl, 0, 8);
    acis_put32(pl + 4, ACIS_HELLO_SWITCH);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0x1234, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);
    uint32_t link = l.port[l.n - 1];
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0x5678, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_NO_PORT);
    acis_put32(pl, 2);
    uint64_t foreign = counter(sw, ACIS_SWC_drop_foreign);
    feed(sw, link, ACIS_K_LINK_JOIN, 0, 9, 0, pl, ACIS_LINK_JOIN_LEN);   /* rank 9 of 2 */
    ck_assert_uint_eq(counter(sw, ACIS_SWC_drop_foreign), foreign + 1);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 1);

    /* the host leaves: the job stays until the parent confirms that leave
     * (a confirmation that echoes an older seq is not one) */
    feed(sw, 0, ACIS_K_BYE, 0, 0, 0, NULL, 0);
    ck_assert_uint_eq(last(&l, ACIS_K_LINK_LEAVE, ACIS_PORT_UPLINK)->seq, 2);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 1);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_LEAVE, ACIS_F_RESULT, 0, 0, NULL, 0);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 1);
    feed_seq = 2;
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_LEAVE, ACIS_F_RESULT, 0, 0, NULL, 0);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 0);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_tables_in_use), 0);

    /* a join the parent cannot take: the host is refused and its port
     * freed, the job forgotten */
    feed_seq = 1;
    acis_put32(pl, 2);
    acis_put32(pl + 4, 0);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 1, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK)->seq, 1);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_JOIN, ACIS_F_RESULT | ACIS_F_ERROR, 1, 0, pl,
         ACIS_LINK_JOIN_LEN);
    last(&l, ACIS_K_WELCOME, 0);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_NO_PORT);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_ports_in_use), 0);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 0);
    acis_sw_destroy(sw);
}
END_TEST

/* Many jobs through a spine of two links: the spine's job table is not
 * limited by its port count. */
START_TEST(jobs_over_links)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = 256;
    fabric_only("fattree:leaves=2,spines=1,radix=16", &o);
    uint32_t st;
    for (int h = 0; h < 8; h++)                  /* four jobs of two ranks */
        ck_assert_int_eq(sim_join_at(S, (uint32_t)(h % 2), KEY + (uint64_t)(h / 2),
                                     (uint32_t)(h % 2), 2, &st), h);
    for (int k = 0; k < 4; k++) {
        int hs[2] = { 2 * k, 2 * k + 1 };
        struct sim_comm *c = comm(hs, 2, 1);
        every_kind(c, 70u + (unsigned)k);
        comm_free(c);
    }
    uint64_t c[ACIS_SWC_COUNT];
    acis_fabric_counters(S->fab, 2, c);
    ck_assert_uint_eq(c[ACIS_SWC_jobs], 4);
}
END_TEST

/* What a row costs each switch is bounded by the switch's radix (a fat
 * tree) or its six neighbours and one host (a torus), whatever the
 * communicator's size: never O(members). */
START_TEST(table_bounds)
{
    const char *topo[2] = { "fattree:leaves=64,spines=1,radix=128", "torus:16x16x16" };
    const uint32_t bound[2] = { 128, 7 };
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    char err[160];
    for (int t = 0; t < 2; t++) {
        uint32_t n, *parent, *hosts;
        ck_assert_int_eq(acis_fabric_plan(topo[t], 0, &n, &parent, &hosts, err, sizeof err), 0);
        uint32_t *kids = malloc(sizeof(uint32_t) * n);
        for (uint64_t p = 2; p <= 4096; p *= 2) {
            ck_assert_int_eq(acis_fabric_row_children(parent, hosts, n, p, kids), 0);
            uint32_t most = 0, sum = 0;
            for (uint32_t i = 0; i < n; i++) {
                most = kids[i] > most ? kids[i] : most;
                sum += kids[i];
            }
            ck_assert_uint_le(most, bound[t]);
            ck_assert_uint_ge(sum, p);           /* every member is some switch's child */
            struct acis_sw_row_size r, cap;
            o.ports = bound[t];
            acis_sw_row_size(&o, most, &r);
            acis_sw_row_size(&o, bound[t], &cap);
            ck_assert_uint_le(r.state, cap.state);
        }
        /* both have 4096 hosts */
        ck_assert_int_eq(acis_fabric_row_children(parent, hosts, n, 4097, kids), -1);
        free(kids);
        free(parent);
        free(hosts);
    }
}
END_TEST

/* 4096 hosts on 64 leaves under a spine (no simulated host queues: the
 * answers are only counted): the heap one world communicator's rows take
 * in all 65 switches, measured, against acis_sw_row_size's account of
 * them; and no switch holds more than its radix of children. */
struct quiet {
    uint32_t ctx;
    int welcomed;
};

static void q_send(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                   int iovcnt)
{
    struct quiet *q = ctx;
    const uint8_t *h = iov[0].iov_base;
    (void)ports;
    (void)n;
    if (ACIS_OPC_KIND(h[5]) == ACIS_K_WELCOME)
        q->welcomed++;
    if (iovcnt == 2 && ACIS_OPC_KIND(h[5]) == ACIS_K_CT_REPLY)
        q->ctx = acis_get32((const uint8_t *)iov[1].iov_base + 4);
}

static void q_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)ctx;
    (void)peer;
    (void)iov;
    (void)iovcnt;
}

START_TEST(memory_at_4096_hosts)
{
    enum { P = 4096, R = 128 };
    const char *topo = "fattree:leaves=64,spines=1,radix=128";
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.tables = 4;
    o.slots = 16;
    o.payload = 1024;
    struct quiet q = { 0 };
    struct acis_sw_io io = { &q, log_open, log_close, q_send, q_reply };
    char err[160];
    struct acis_fabric *f = acis_fabric_create(topo, &o, &io, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    static uint8_t pkt[ACIS_HDR_LEN + 4 + 4 * P];
    uint8_t pl[ACIS_HELLO_LEN] = { 0 };
    acis_put32(pl, P);
    for (uint32_t r = 0; r < P; r++) {            /* host r on leaf r / 64, port r % 64 */
        int peer = (int)r;
        sim_control(pkt, ACIS_K_HELLO, KEY, r, 0, 1, pl, sizeof pl);
        acis_fabric_service(f, r / (R / 2), &peer, pkt, ACIS_HDR_LEN + sizeof pl);
    }
    ck_assert_int_eq(q.welcomed, P);
    uint8_t *members = pkt + ACIS_HDR_LEN;
    acis_put32(members, P);
    for (uint32_t r = 0; r < P; r++)
        acis_put32(members + 4 + 4 * r, r);
    static uint8_t req[ACIS_HDR_LEN + 4 + 4 * P];
    sim_control(req, ACIS_K_CT_CREATE, KEY, 0, 0, 9, members, 4 + 4 * P);
    struct mallinfo2 before = mallinfo2();
    acis_fabric_input(f, 0, NULL, req, sizeof req);   /* host 0: leaf 0's port 0 */
    struct mallinfo2 after = mallinfo2();
    ck_assert_uint_ne(q.ctx, 0);

    uint32_t n, *parent, *hosts;
    ck_assert_int_eq(acis_fabric_plan(topo, 0, &n, &parent, &hosts, err, sizeof err), 0);
    uint32_t *kids = malloc(sizeof(uint32_t) * n), held = 0, most = 0;
    ck_assert_int_eq(acis_fabric_row_children(parent, hosts, n, P, kids), 0);
    uint64_t want = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!kids[i])
            continue;
        struct acis_sw_opts so = o;
        struct acis_sw_row_size rs;
        so.ports = i < 64 ? R / 2 : 64;          /* a leaf's hosts; the spine's links */
        acis_sw_row_size(&so, kids[i], &rs);
        want += rs.state + rs.buffers;
        held++;
        most = kids[i] > most ? kids[i] : most;
    }
    uint64_t got = after.uordblks - before.uordblks;
    printf("memory_at_4096_hosts: one communicator of %d ranks on %s: %u switches hold "
           "its row, at most %u children each; heap %llu bytes measured, %llu accounted "
           "(%.0f per switch)\n", P, topo, held, most, (unsigned long long)got,
           (unsigned long long)want, (double)got / held);
    ck_assert_uint_eq(held, 65);
    ck_assert_uint_le(most, 64);
#ifndef __SANITIZE_ADDRESS__                     /* its allocator keeps no mallinfo */
    ck_assert_uint_le(got, want * 13 / 10);      /* malloc's own headers aside */
    ck_assert_uint_ge(got, want * 7 / 10);
#endif
    uint64_t c[ACIS_SWC_COUNT];
    acis_fabric_counters(f, 64, c);
    ck_assert_uint_eq(c[ACIS_SWC_tables_in_use], 1);
    free(kids);
    free(parent);
    free(hosts);
    acis_fabric_destroy(f);
}
END_TEST

START_TEST(bad_topologies)
{
    const char *bad[] = { "ring", "fattree:leaves=5,spines=1,radix=4",
                          "fattree:leaves=2,spines=3,radix=4", "fattree:leaves=2,spines=1,radix=5",
                          "torus:4x4", "torus:0x1x1", "star:2" };
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    struct acis_sw_io io = { 0 };
    char err[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        ck_assert_ptr_null(acis_fabric_create(bad[i], &o, &io, err, sizeof err));
        ck_assert_msg(strstr(err, "fattree:leaves=L") != NULL, "%s: %s", bad[i], err);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fabric");
    TCase *t = tcase_create("fabric");
    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, fattree_two_leaves);
    tcase_add_test(t, own_blocks_across_leaves);
    tcase_add_test(t, fattree_256_hosts);
    tcase_add_test(t, torus_4x4x4);
    tcase_add_test(t, two_jobs);
    tcase_add_test(t, refusals);
    tcase_add_test(t, job_limit_at_the_top);
    tcase_add_test(t, table_bounds);
    tcase_add_test(t, memory_at_4096_hosts);
    tcase_add_test(t, link_protocol);
    tcase_add_test(t, jobs_over_links);
    tcase_add_test(t, bad_topologies);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
