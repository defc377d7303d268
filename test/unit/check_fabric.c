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

/* Under a sanitizer, some tests run a smaller share of their work (each
 * says which): the same paths, in the sanitized CI run's time. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

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
    struct sim_comm *c = sim_comm_new(n);
    memcpy(c->host, hosts, sizeof(int) * (size_t)n);
    ck_assert_uint_eq(sim_ct_create(S, c, req), ACIS_ST_OK);
    return c;
}

static struct sim_comm *world(int n)
{
    int *h = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        h[i] = i;
    struct sim_comm *c = comm(h, n, 77);
    free(h);
    return c;
}

static void comm_free(struct sim_comm *c)
{
    ck_assert_uint_eq(sim_ct_free(S, c), ACIS_ST_OK);
    sim_comm_free(c);
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
    int32_t (*in)[4] = calloc((size_t)c->n, 16), (*out)[4] = calloc((size_t)c->n, 16);
    struct sim_member *m = calloc((size_t)c->n, sizeof *m);
    for (int r = 0; r < c->n; r++)
        m[r] = (struct sim_member){ in[r], 0, 16, out[r], 0, 16 };
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_SCAN, ACIS_OP_SUM, ACIS_DT_I32, 0, 16, m, 3), 0);
    ck_assert_int_eq(S->refused, c->n);
    free(in);
    free(out);
    free(m);
}

START_TEST(fattree_two_leaves)
{
    setup_fabric("fattree:leaves=2,spines=1,radix=4", 256, 4);
    ck_assert_uint_eq(acis_fabric_switches(S->fab), 3);
    ck_assert_uint_eq(acis_fabric_parent(S->fab, 0), 2);
    struct sim_comm *c = world(4);
    /* the timing model: a barrier is 2 levels of 440 ns links and 52 ns
     * switches each way, and an 80-byte header serialized at 95.9 Gb/s */
    uint64_t m0[ACIS_SWC_COUNT], m1[ACIS_SWC_COUNT];
    struct sim_member none[4] = { { 0 } };
    acis_fabric_counters(S->fab, 2, m0);
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_BARRIER, 0, ACIS_DT_NONE, 0, 0, none, 1), 0);
    acis_fabric_counters(S->fab, 2, m1);
    ck_assert_uint_eq(m1[ACIS_SWC_model_ns] - m0[ACIS_SWC_model_ns],
                      2 * (2 * (440 + 52) + ACIS_HDR_LEN * 8 * 1000 / 95900));
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
    every_kind(SANITIZED ? x : w, 31);           /* sanitized: on 100 of them */
    enum { C = 700 };
    static int32_t in[256][C], out[3][256][C];
    static struct sim_member m[3][256];
    struct sim_comm *cs[3] = { w, e, x };
    for (int round = SANITIZED; round < 2; round++) {   /* sanitized: the lossy one */
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
    struct sim_comm *over = sim_comm_new(2);
    memcpy(over->host, a, sizeof a);
    ck_assert_uint_eq(sim_ct_create(S, over, 20), ACIS_ST_JOB_LIMIT);
    sim_comm_free(over);
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

/* A CT_JOIN from host h: set-up id, leader, size n, member m. */
static void join(int h, uint32_t id, uint32_t leader, uint32_t n, uint32_t m)
{
    uint8_t pl[ACIS_CT_JOIN_LEN], buf[ACIS_HDR_LEN + ACIS_CT_JOIN_LEN];
    struct acis_hdr hd = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_CT_JOIN, ACIS_ALG_FLAT), .payload_len = sizeof pl,
        .job_key = S->hosts[h].job_key, .seq = id, .src = S->hosts[h].rank, .root = leader,
    };
    acis_put32(pl, n);
    acis_put32(pl + 4, m);
    acis_hdr_encode(&hd, buf);
    memcpy(buf + ACIS_HDR_LEN, pl, sizeof pl);
    acis_hdr_seal(buf, pl, sizeof pl);
    sim_send_raw(S, h, buf, sizeof buf);
}

/* The status of the CT_REPLY host h got (0xffffffff: none). */
static uint32_t reply_of(int h)
{
    struct sim_pkt p;
    struct acis_hdr hd;
    uint32_t st = 0xffffffffu;
    while (sim_pop(S, h, &p)) {
        if (acis_wire_decode(p.data, p.len, ACIS_MAX_PAYLOAD, &hd) == ACIS_WERR_OK &&
            ACIS_OPC_KIND(hd.opcode) == ACIS_K_CT_REPLY)
            st = acis_get32(p.data + ACIS_HDR_LEN);
        free(p.data);
    }
    return st;
}

/* A member whose answer was lost repeats its CT_JOIN after the set-up is
 * done: its own leaf answers it, with what the top gave the others (a
 * leaf once answered with its own view: no SPANS, so that member would
 * have offloaded scans the fabric cannot serve). */
START_TEST(repeat_join_same_answer)
{
    setup_fabric("fattree:leaves=2,spines=1,radix=4", 256, 4);
    struct sim_comm *c = world(4);
    ck_assert_uint_ne(c->flags & ACIS_CT_SPANS, 0);
    for (int h = 0; h < 4; h++) {
        struct sim_pkt p;
        struct acis_hdr hd;
        join(h, 77, 0, 4, (uint32_t)h);           /* world()'s set-up, again */
        ck_assert(sim_pop(S, h, &p));
        ck_assert_int_eq(acis_wire_decode(p.data, p.len, ACIS_MAX_PAYLOAD, &hd), ACIS_WERR_OK);
        ck_assert_uint_eq(ACIS_OPC_KIND(hd.opcode), ACIS_K_CT_REPLY);
        const uint8_t *r = p.data + ACIS_HDR_LEN;
        ck_assert_uint_eq(acis_get32(r), ACIS_ST_OK);
        ck_assert_uint_eq(acis_get32(r + 4), c->ctx);
        ck_assert_uint_eq(acis_get32(r + 8), c->window);
        ck_assert_uint_eq(acis_get32(r + 12), c->payload);
        ck_assert_uint_eq(acis_get32(r + 16), c->flags);
        free(p.data);
    }
    comm_free(c);
}
END_TEST

/* What a switch refuses at once: a member outside the communicator, a
 * member naming another size than the others at that switch.  (A member
 * counted twice on two switches is the job's own error: the set-up
 * completes with whichever came first, the other member is never
 * answered and its rank refuses the row, so all do.)  A host may not
 * speak for a switch. */
START_TEST(refusals)
{
    setup_fabric("fattree:leaves=2,spines=1,radix=4", 256, 3);  /* 0, 1 on leaf 0; 2 on 1 */
    join(0, 5, 0, 2, 0);
    join(1, 5, 0, 3, 1);                                        /* another size */
    ck_assert_uint_eq(reply_of(1), ACIS_ST_BAD_REQUEST);
    join(2, 6, 0, 2, 2);                                        /* member 2 of 2 */
    ck_assert_uint_eq(reply_of(2), ACIS_ST_BAD_REQUEST);
    ck_assert_uint_eq(reply_of(0), 0xffffffffu);                /* still waits */
    uint64_t c[ACIS_SWC_COUNT];
    acis_fabric_counters(S->fab, 2, c);
    ck_assert_uint_eq(c[ACIS_SWC_jobs], 1);
    ck_assert_uint_eq(c[ACIS_SWC_tables_in_use], 0);
    /* a host may not speak for a switch */
    uint8_t j[ACIS_HDR_LEN + ACIS_LINK_JOIN_LEN], pl[ACIS_LINK_JOIN_LEN];
    acis_put32(pl, 3);
    sim_control(j, ACIS_K_LINK_JOIN, KEY, 0, 0, 1, pl, ACIS_LINK_JOIN_LEN);
    sim_counters(S);
    uint64_t before = S->c[ACIS_SWC_drop_foreign];
    sim_send_raw(S, 0, j, sizeof j);
    sim_counters(S);
    ck_assert_uint_eq(S->c[ACIS_SWC_drop_foreign], before + 1);
    struct sim_comm *w = world(3);
    every_kind(w, 61);
    comm_free(w);
}
END_TEST

/* A spine with an odd number of links, two set-ups in progress at once:
 * the second's bitmaps are whole 64-bit words (the sanitized run checks
 * the alignment of every word the set-up reads). */
START_TEST(odd_links_two_setups)
{
    setup_fabric("fattree:leaves=3,spines=1,radix=4", 256, 6);
    join(0, 5, 0, 2, 0);                      /* host 0's half of a 2-member set-up */
    struct sim_comm *w = world(6);            /* meanwhile, everyone's */
    every_kind(w, 62);
    comm_free(w);
    ck_assert_uint_eq(reply_of(0), 0xffffffffu);   /* the first still waits */
}
END_TEST

/* ------------------------------------------------ one core below a parent */

struct wire_log {
    int n;                                       /* packets sent */
    uint32_t port[64];
    struct acis_hdr h[64];
    uint32_t status[64];                         /* first payload word */
    uint32_t word2[64];                          /* second payload word */
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
        l->word2[l->n] = acis_get32(b + ACIS_HDR_LEN + 4);
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
    uint8_t *b = malloc(ACIS_HDR_LEN + len);     /* exact: ASan sees over-reads */
    int peer = 0;
    ck_assert_ptr_nonnull(b);
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
    free(b);
}

static uint64_t counter(const struct acis_sw *sw, int k)
{
    uint64_t c[ACIS_SWC_COUNT];
    acis_sw_counters(sw, c);
    return c[k];
}

/* A job's presence is told to the parent until it confirms it (and the
 * job stays until it has), one message per job, never per rank; a
 * set-up's count goes up, its row is installed from above and its answer
 * comes down; a late CT_INSTALL of an older row never replaces a newer
 * one; links only as --links allows; a malformed claim leaves nothing. */
START_TEST(link_protocol)
{
    static struct wire_log l;
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.ports = 4;
    o.tables = 4;
    o.slots = 16;
    o.links = 1;
    char err[128];
    struct acis_sw_io io = { &l, log_open, log_close, log_send, log_reply, NULL };
    struct acis_sw *sw = acis_sw_create(&o, &io, err, sizeof err);
    ck_assert_ptr_nonnull(sw);
    acis_sw_set_parent(sw, 7);
    uint8_t pl[64] = { 0 };

    /* a host joins: the parent hears of the job, and the host is welcomed
     * only once the parent confirms */
    acis_put32(pl, 2);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK)->src, ACIS_NO_RANK);
    ck_assert_uint_eq(l.h[l.n - 1].job_key, KEY);
    int before = l.n;
    acis_sw_tick(sw, 1000000000ull);             /* unconfirmed: told again */
    ck_assert_int_eq(l.n, before + 1);
    last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0, 0, pl, ACIS_HELLO_LEN);
    last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK);   /* the host repeats: again */
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_JOIN, ACIS_F_RESULT, ACIS_NO_RANK, 0, pl,
         ACIS_LINK_JOIN_LEN);
    ck_assert_uint_eq(last(&l, ACIS_K_WELCOME, 0)->seq, 1);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);
    before = l.n;
    acis_sw_tick(sw, 2000000000ull);             /* confirmed: quiet */
    ck_assert_int_eq(l.n, before);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 1, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);   /* the job is known: at once */
    ck_assert_int_eq(l.n, before + 1);
    last(&l, ACIS_K_WELCOME, 1);

    /* a set-up: the member's join goes up as a count; the parent's
     * install builds the row here and is confirmed; a late install of an
     * older row is dropped; the answer comes down to the member */
    acis_put32(pl, 2);
    acis_put32(pl + 4, 0);
    feed(sw, 0, ACIS_K_CT_JOIN, 0, 0, 0, pl, ACIS_CT_JOIN_LEN);
    last(&l, ACIS_K_CT_JOIN, ACIS_PORT_UPLINK);
    ck_assert_uint_eq(l.status[l.n - 1], 2);
    ck_assert_uint_eq(l.word2[l.n - 1], 1);      /* one member here */
    acis_put32(pl, 2);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_INSTALL, 0, ACIS_NO_RANK, 5u << 16 | 1, pl,
         ACIS_CT_INSTALL_LEN);
    ck_assert_uint_eq(last(&l, ACIS_K_CT_REPLY, ACIS_PORT_UPLINK)->ctx, 5u << 16 | 1);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);
    before = l.n;
    uint64_t stale = counter(sw, ACIS_SWC_drop_stale);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_INSTALL, 0, ACIS_NO_RANK, 4u << 16 | 1, pl,
         ACIS_CT_INSTALL_LEN);
    ck_assert_int_eq(l.n, before);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_drop_stale), stale + 1);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_tables_in_use), 1);
    uint8_t rp[ACIS_CT_REPLY_LEN] = { 0 };
    acis_put32(rp + 4, 5u << 16 | 1);
    acis_put32(rp + 8, 4);
    acis_put32(rp + 12, 16384);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_REPLY, ACIS_F_RESULT, ACIS_NO_RANK, 5u << 16 | 1, rp,
         ACIS_CT_REPLY_MIN);                     /* without flags, as switches before them */
    ck_assert_uint_eq(last(&l, ACIS_K_CT_REPLY, 0)->ctx, 5u << 16 | 1);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);
    acis_put32(pl, 2);
    acis_put32(pl + 4, 0);
    feed(sw, 0, ACIS_K_CT_JOIN, 0, 0, 0, pl, ACIS_CT_JOIN_LEN);   /* a repeat: answered here */
    ck_assert_uint_eq(last(&l, ACIS_K_CT_REPLY, 0)->ctx, 5u << 16 | 1);
    /* another set-up whose row (gen 6) replaces the stale gen 5 */
    feed_seq = 2;
    feed(sw, 0, ACIS_K_CT_JOIN, 0, 0, 0, pl, ACIS_CT_JOIN_LEN);
    last(&l, ACIS_K_CT_JOIN, ACIS_PORT_UPLINK);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_INSTALL, 0, ACIS_NO_RANK, 6u << 16 | 1, pl,
         ACIS_CT_INSTALL_LEN);
    ck_assert_uint_eq(last(&l, ACIS_K_CT_REPLY, ACIS_PORT_UPLINK)->ctx, 6u << 16 | 1);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_tables_in_use), 1);
    /* a parent's answer granting more slots than this switch serves (its
     * rows own 4 of the pool) is not believed: the row goes and the
     * member is refused */
    uint64_t malformed = counter(sw, ACIS_SWC_drop_malformed);
    acis_put32(rp + 4, 6u << 16 | 1);
    acis_put32(rp + 8, 65535);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_CT_REPLY, ACIS_F_RESULT, ACIS_NO_RANK, 6u << 16 | 1, rp,
         sizeof rp);
    ck_assert_uint_eq(last(&l, ACIS_K_CT_REPLY, 0)->ctx, 6u << 16 | 1);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_NO_SLOTS);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_drop_malformed), malformed + 1);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_tables_in_use), 0);
    feed_seq = 1;

    /* a link whose packets or table rows differ from this switch's is
     * refused and takes no port (the one allowed is still free below) */
    acis_put32(pl, o.payload + 1);
    acis_put32(pl + 4, ACIS_HELLO_SWITCH | o.tables << 16);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0x1233, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_JOB_MISMATCH);
    acis_put32(pl, o.payload);
    acis_put32(pl + 4, ACIS_HELLO_SWITCH | (o.tables + 1) << 16);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0x1232, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_JOB_MISMATCH);

    /* a link: one allowed, a second refused; a malformed job claim on it
     * is refused without taking a job entry */
    acis_put32(pl, o.payload);
    acis_put32(pl + 4, ACIS_HELLO_SWITCH | o.tables << 16);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0x1234, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_OK);
    uint32_t link = l.port[l.n - 1];
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 0x5678, 0, pl, ACIS_HELLO_LEN);
    ck_assert_uint_eq(l.status[l.n - 1], ACIS_ST_NO_PORT);
    uint64_t foreign = counter(sw, ACIS_SWC_drop_foreign);
    memset(pl, 0, 8);                            /* a world of 0 ranks */
    uint8_t jb[ACIS_HDR_LEN + ACIS_LINK_JOIN_LEN];
    sim_control(jb, ACIS_K_LINK_JOIN, KEY + 1, ACIS_NO_RANK, 0, 1, pl, ACIS_LINK_JOIN_LEN);
    int peer = 0;
    acis_sw_input(sw, link, &peer, jb, sizeof jb);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_drop_foreign), foreign + 1);
    ck_assert_uint_ne(last(&l, ACIS_K_LINK_JOIN, link)->flags & ACIS_F_ERROR, 0);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 1);

    /* the hosts leave: the parent hears once the last one has, and the
     * job stays until the parent confirms that */
    before = l.n;
    feed(sw, 1, ACIS_K_BYE, 0, 1, 0, NULL, 0);
    ck_assert_int_eq(l.n, before);
    feed(sw, 0, ACIS_K_BYE, 0, 0, 0, NULL, 0);
    last(&l, ACIS_K_LINK_LEAVE, ACIS_PORT_UPLINK);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 1);
    acis_sw_tick(sw, 3000000000ull);
    last(&l, ACIS_K_LINK_LEAVE, ACIS_PORT_UPLINK);  /* unconfirmed: told again */
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_LEAVE, ACIS_F_RESULT, ACIS_NO_RANK, 0, NULL, 0);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_jobs), 0);
    ck_assert_uint_eq(counter(sw, ACIS_SWC_tables_in_use), 0);

    /* a job the parent cannot take: its host is refused and its port
     * freed; the job goes once the parent confirms it is gone */
    acis_put32(pl, 2);
    acis_put32(pl + 4, 0);
    feed(sw, ACIS_PORT_SERVICE, ACIS_K_HELLO, 0, 1, 0, pl, ACIS_HELLO_LEN);
    last(&l, ACIS_K_LINK_JOIN, ACIS_PORT_UPLINK);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_JOIN, ACIS_F_RESULT | ACIS_F_ERROR, ACIS_NO_RANK, 0,
         pl, ACIS_LINK_JOIN_LEN);
    ck_assert_uint_eq(l.status[l.n - 2], ACIS_ST_NO_PORT);   /* the WELCOME, then */
    last(&l, ACIS_K_LINK_LEAVE, ACIS_PORT_UPLINK);          /* the leave */
    ck_assert_uint_eq(counter(sw, ACIS_SWC_ports_in_use), 0);
    feed(sw, ACIS_PORT_UPLINK, ACIS_K_LINK_LEAVE, ACIS_F_RESULT, ACIS_NO_RANK, 0, NULL, 0);
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

/* What a switch holds is fixed when it starts and bounded by its own
 * ports, whatever the communicators: a row is a bit per port and a few
 * words, a job a few words and two bits per port. */
START_TEST(table_bounds)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    struct acis_sw_size z;
    char err[160];
    const uint32_t radix[] = { 7, 128, 512 };
    for (int i = 0; i < 3; i++) {
        o.ports = radix[i];
        acis_sw_size(&o, &z, err, sizeof err);
        ck_assert_msg(z.window > 0, "%s", err);
        ck_assert_uint_le(z.row, 128);           /* at 512 ports too */
        ck_assert_uint_le(z.job, 224);
        ck_assert_uint_le(z.pool, (uint64_t)o.pool + 256);   /* alignment at most */
        ck_assert_uint_eq(z.total, z.rows + z.jobs_bytes + z.setups_bytes + z.ports_bytes +
                                       z.pool + z.other);
    }
    o.pool = 4096;                               /* too small for one slot a row */
    acis_sw_size(&o, &z, err, sizeof err);
    ck_assert_uint_eq(z.window, 0);
    ck_assert_ptr_nonnull(strstr(err, "--pool"));
}
END_TEST

/* The quiet transport: answers are only counted (hosts have no queues). */
struct quiet {
    uint32_t ctx;
    uint64_t welcomed, replies;
};

static void q_send(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                   int iovcnt)
{
    struct quiet *q = ctx;
    const uint8_t *h = iov[0].iov_base;
    (void)ports;
    if (ACIS_OPC_KIND(h[5]) == ACIS_K_WELCOME)
        q->welcomed += n;
    if (iovcnt == 2 && ACIS_OPC_KIND(h[5]) == ACIS_K_CT_REPLY &&
        acis_get32(iov[1].iov_base) == ACIS_ST_OK) {
        q->ctx = acis_get32((const uint8_t *)iov[1].iov_base + 4);
        q->replies += n;
    }
}

static void q_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)ctx;
    (void)peer;
    (void)iov;
    (void)iovcnt;
}

static uint64_t heap(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* The smallest switches a big fabric needs in a test's memory. */
static struct acis_sw_opts small_switch(void)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.tables = 2;
    o.slots = 8;
    o.payload = 1024;
    o.pool = 32768;
    o.jobs = 2;
    o.setups = 2;
    return o;
}

/* P hosts of one job join fabric f (host r on switch at(r), on the port
 * its rank gives) and all join one communicator: its context id, 0 if
 * not every member got it. */
static uint32_t quiet_world(struct acis_fabric *f, struct quiet *q, uint32_t P,
                            uint32_t (*at)(uint32_t))
{
    uint8_t pkt[ACIS_HDR_LEN + 8], pl[8] = { 0 };
    acis_put32(pl, P);
    for (uint32_t r = 0; r < P; r++) {
        int peer = (int)r;
        sim_control(pkt, ACIS_K_HELLO, KEY, r, 0, 1, pl, ACIS_HELLO_LEN);
        acis_fabric_service(f, at(r), &peer, pkt, ACIS_HDR_LEN + ACIS_HELLO_LEN);
    }
    ck_assert_uint_eq(q->welcomed, P);
    for (uint32_t r = 0; r < P; r++) {
        struct acis_hdr hd = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_CT_JOIN, ACIS_ALG_FLAT), .payload_len = ACIS_CT_JOIN_LEN,
            .job_key = KEY, .seq = 9, .src = r, .root = 0,
        };
        acis_put32(pl, P);
        acis_put32(pl + 4, r);
        acis_hdr_encode(&hd, pkt);
        memcpy(pkt + ACIS_HDR_LEN, pl, 8);
        acis_hdr_seal(pkt, pl, 8);
        acis_fabric_input(f, r, NULL, pkt, sizeof pkt);   /* fabric port r: its host */
    }
    return q->replies == P ? q->ctx : 0;
}

static uint32_t on_leaf(uint32_t r)
{
    return r / 256;
}

/* The big fabrics' scale: under a sanitizer (whose allocator is what it
 * would check, and keeps no mallinfo) the same paths at a sixteenth of
 * it, so the sanitized CI run stays in its time. */
#if SANITIZED
#define BIG_LEAVES 16
#define BIG_TORUS "torus:8x8x8"
#else
#define BIG_LEAVES 256
#define BIG_TORUS "torus:16x16x16"
#endif

/* A 65,536-rank communicator on a fat tree of 256 leaves of 256 hosts
 * (radix 512): no member list anywhere, every member answered; what the
 * switches hold is what acis_sw_size says, measured around their
 * creation, and the set-up allocates nothing. */
START_TEST(fattree_65536_ranks)
{
    enum { P = BIG_LEAVES * 256 };
    char topo[64];
    snprintf(topo, sizeof topo, "fattree:leaves=%d,spines=128,radix=512", BIG_LEAVES);
    struct acis_sw_opts o = small_switch();
    struct quiet q = { 0 };
    struct acis_sw_io io = { &q, log_open, log_close, q_send, q_reply, NULL };
    char err[160];
    uint64_t h0 = heap();
    struct acis_fabric *f = acis_fabric_create(topo, &o, &io, err, sizeof err);
    uint64_t h1 = heap();
    ck_assert_msg(f != NULL, "%s", err);
    uint64_t want = acis_fabric_bytes(f);
    for (uint32_t i = 0; i < acis_fabric_switches(f); i++)
        want += acis_fabric_switch_bytes(f, i);
    uint64_t h2 = heap();
    uint32_t ctx = quiet_world(f, &q, P, on_leaf);
    uint64_t h3 = heap();
    ck_assert_uint_ne(ctx, 0);
    printf("fattree_65536_ranks: %u switches, %llu bytes accounted, %llu measured at "
           "creation; %lld bytes more after %d ranks joined and set up one communicator\n",
           acis_fabric_switches(f), (unsigned long long)want, (unsigned long long)(h1 - h0),
           (long long)(h3 - h2), P);
#ifndef __SANITIZE_ADDRESS__                     /* its allocator keeps no mallinfo */
    ck_assert_uint_le(want, (h1 - h0) * 105 / 100);
    ck_assert_uint_ge(want, (h1 - h0) * 95 / 100);
    ck_assert_uint_le(h3 > h2 ? h3 - h2 : 0, 1u << 20);   /* the fabric's queue at most */
#endif
    uint64_t c[ACIS_SWC_COUNT];
    acis_fabric_counters(f, BIG_LEAVES, c);           /* spine 0, the top */
    ck_assert_uint_eq(c[ACIS_SWC_tables_in_use], 1);
    ck_assert_uint_eq(c[ACIS_SWC_tables_created], 1);
    acis_fabric_destroy(f);
}
END_TEST

/* 4096 ranks on a 16x16x16 torus, one per switch: one communicator's
 * rows and job entries cost the fabric nothing it did not hold from the
 * start (at most the fabric queue), and barriers and allreduces run
 * through simulated hosts. */
START_TEST(torus_4096_ranks)
{
    int P = (int)(strcmp(BIG_TORUS, "torus:8x8x8") == 0 ? 512 : 4096);
    struct acis_sw_opts o = small_switch();
    fabric_only(BIG_TORUS, &o);
    uint32_t st;
    uint64_t h0 = heap();
    for (int r = 0; r < P; r++)
        ck_assert_int_eq(sim_join_at(S, (uint32_t)r, KEY, (uint32_t)r, (uint32_t)P, &st), r);
    int *h = malloc(sizeof(int) * (size_t)P);
    for (int i = 0; i < P; i++)
        h[i] = i;
    struct sim_comm *c = sim_comm_new(P);
    memcpy(c->host, h, sizeof(int) * (size_t)P);
    free(h);
    uint64_t h1 = heap();
    ck_assert_uint_eq(sim_ct_create(S, c, 3), ACIS_ST_OK);
    uint64_t h2 = heap();
    uint64_t rows = 0;
    for (uint32_t i = 0; i < acis_fabric_switches(S->fab); i++)
        rows += acis_fabric_row_bytes(S->fab, i);
    printf("torus_4096_ranks: %llu bytes of rows and job entries held fabric-wide; set-up "
           "took %lld bytes of heap (hosts' queues included)\n", (unsigned long long)rows,
           (long long)(h2 - h1));
    ck_assert_uint_le(rows, 8u << 20);
#ifndef __SANITIZE_ADDRESS__
    ck_assert_uint_le(h2 > h1 ? h2 - h1 : 0, 8u << 20);
#endif
    (void)h0;
    struct sim_member *m = calloc((size_t)P, sizeof *m);
    int64_t *in = malloc(8 * (size_t)P), *out = calloc((size_t)P, 8);
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_BARRIER, 0, ACIS_DT_NONE, 0, 0, m, 1), 0);
    for (int r = 0; r < P; r++) {
        in[r] = r + 1;
        m[r] = (struct sim_member){ &in[r], 0, 8, &out[r], 0, 8 };
    }
    ck_assert_int_eq(sim_collective(S, c, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_I64, 0, 8, m,
                                    2), 0);
    for (int r = 0; r < P; r++)
        ck_assert_int_eq(out[r], (int64_t)P * (P + 1) / 2);
    free(m);
    free(in);
    free(out);
    comm_free(c);
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
    tcase_add_test(t, odd_links_two_setups);
    tcase_add_test(t, repeat_join_same_answer);
    tcase_add_test(t, job_limit_at_the_top);
    tcase_add_test(t, table_bounds);
    tcase_add_test(t, fattree_65536_ranks);
    tcase_add_test(t, torus_4096_ranks);
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
