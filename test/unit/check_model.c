/* check_model.c -- Check unit tests of the LogGP model behind acis-model
 * (tools/model.c): the seed's equations 3.2-3.5 come out exactly for a
 * broadcast on a star; the software side picks MPICH 4.0.2's default
 * algorithm per collective, size and P (its tuning file's rules) and
 * costs it step by step; paths through fat trees and tori have the hop counts their
 * shapes give; the in-switch bandwidth term of gathers is P blocks; the
 * small-message speedup does not fall as P grows; topology strings. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define near(a, b) ck_assert_msg(fabs((a) - (b)) <= 1e-12 * fabs(b) + 1e-18, \
                                 "%.15g != %.15g", (double)(a), (double)(b))

static struct model_path path_of(const char *topo, unsigned long P)
{
    struct model_topo t;
    struct model_path p;
    char err[200];
    ck_assert_int_eq(model_topo_parse(topo, &t, err, sizeof err), 0);
    ck_assert_int_eq(model_path(&t, P, &p), 0);
    return p;
}

/* Seed 000 eq. 3.2-3.5 for a broadcast of k bytes, written out again:
 * T_Bl,P-1 = log P (Os + kG + L + Or), T_Bl,0 = Os + (log P - 1)
 * max(g, Os) + log P k G, T_Is = Os + kG + L + Or. */
START_TEST(seed_equations)
{
    struct model_params m;
    model_defaults(&m);
    m.o_send = 1.5e-6, m.o_recv = 2e-6, m.latency = 0.3e-6, m.hop = 0;
    m.per_byte = m.host_per_byte = 1e-9;
    struct model_path star = path_of("star", 16);
    double L = 2 * m.latency, k = 64;
    struct model_result r;
    model_coll(&m, &star, MODEL_BCAST, 16, k, &r);
    ck_assert_str_eq(r.algorithm, "binomial");
    double leaf = 4 * (m.o_send + k * m.per_byte + L + m.o_recv);
    near(r.software, leaf);
    near(r.inswitch, m.o_send + k * m.per_byte + L + m.o_recv);
    /* a gap larger than the leaf's path makes the root the slower one */
    m.gap = 10e-6;
    model_coll(&m, &star, MODEL_BCAST, 16, k, &r);
    near(r.software, m.o_send + 3 * m.gap + 4 * k * m.per_byte);
}
END_TEST

/* MPICH 4.0.2's choice and its cost, one process per node, on a star
 * with the default parameters: st is one step's fixed cost, G the
 * software path's per byte, F the host's fold per byte. */
static struct model_params M;
static double st, G, F;

static void defaults(void)
{
    model_defaults(&M);
    st = M.o_send + 2 * M.latency + M.hop + M.o_recv;
    G = M.host_per_byte;
    F = M.reduce_per_byte;
}

static struct model_result run(enum model_coll c, unsigned long P, double k)
{
    struct model_path p = path_of("star", P);
    struct model_result r;
    model_coll(&M, &p, c, P, k, &r);
    return r;
}

/* the software time of c is t and its algorithm a */
#define choice(c, P, k, a, t) do { \
        struct model_result r_ = run(c, P, k); \
        ck_assert_str_eq(r_.algorithm, a); \
        near(r_.software, t); \
    } while (0)

static double msg(double bytes)
{
    return st + bytes * G;
}

/* generic.json, bcast: comm_size<8 binomial; avg_msg_size<=12288
 * binomial; pow2 and <=524288 scatter + recursive doubling; else scatter
 * + ring (ceil(log2 P) scatter steps, P - 1 ring steps). */
START_TEST(bcast_choice)
{
    defaults();
    choice(MODEL_BCAST, 7, 4 << 20, "binomial", 3 * msg(4 << 20));
    choice(MODEL_BCAST, 16, 12288, "binomial", 4 * msg(12288));
    choice(MODEL_BCAST, 12, 12288, "binomial", 4 * msg(12288));
    choice(MODEL_BCAST, 8, 12289, "scatter_recursive_doubling_allgather",
           6 * st + 2 * 12289 * 7.0 / 8 * G);
    choice(MODEL_BCAST, 16, 524288, "scatter_recursive_doubling_allgather",
           8 * st + 2 * 524288 * 15.0 / 16 * G);
    choice(MODEL_BCAST, 16, 524289, "scatter_ring_allgather",
           4 * st + 524289 * 15.0 / 16 * G + 15 * msg(524289 / 16.0));
    choice(MODEL_BCAST, 12, 12289, "scatter_ring_allgather",
           4 * st + 12289 * 11.0 / 12 * G + 11 * msg(12289 / 12.0));
    /* 512 KiB on 65536 nodes: 32 steps, not a ring of 65535; above
     * 512 KiB MPICH 4.0.2 does run that ring */
    choice(MODEL_BCAST, 65536, 524288, "scatter_recursive_doubling_allgather",
           32 * st + 2 * 524288 * 65535.0 / 65536 * G);
    struct model_result r = run(MODEL_BCAST, 65536, 1 << 20);
    ck_assert_str_eq(r.algorithm, "scatter_ring_allgather");
    ck_assert(r.software > 65535 * st);
}
END_TEST

/* allreduce: avg_msg_size<=8, or fewer elements than the largest power
 * of two <= P, recursive doubling; else Rabenseifner.  Not a power of
 * two: the extra ranks fold into partners first (one vector each way). */
START_TEST(allreduce_choice)
{
    defaults();
    choice(MODEL_ALLREDUCE, 2, 8, "recursive_doubling", msg(8) + 8 * F);
    choice(MODEL_ALLREDUCE, 2, 16, "reduce_scatter_allgather", 2 * st + 16 / 2.0 * (2 * G + F));
    choice(MODEL_ALLREDUCE, 32, 248, "recursive_doubling", 5 * (msg(248) + 248 * F));
    choice(MODEL_ALLREDUCE, 32, 256, "reduce_scatter_allgather",
           10 * st + 256 * 31.0 / 32 * (2 * G + F));
    double extra = 2 * msg(256) + 256 * F;
    choice(MODEL_ALLREDUCE, 48, 256, "reduce_scatter_allgather",
           extra + 10 * st + 256 * 31.0 / 32 * (2 * G + F));
    extra = 2 * msg(248) + 248 * F;
    choice(MODEL_ALLREDUCE, 48, 248, "recursive_doubling", extra + 5 * (msg(248) + 248 * F));
    /* 32768 doubles on 65536 ranks: still recursive doubling */
    choice(MODEL_ALLREDUCE, 65536, 262144, "recursive_doubling",
           16 * (msg(262144) + 262144 * F));
    choice(MODEL_ALLREDUCE, 65536, 524288, "reduce_scatter_allgather",
           32 * st + 524288 * 65535.0 / 65536 * (2 * G + F));
    /* the rule counts elements: 32 floats are enough on 32 ranks */
    M.type_size = 4;
    ck_assert_str_eq(run(MODEL_ALLREDUCE, 32, 128).algorithm, "reduce_scatter_allgather");
    M.type_size = 8;
    ck_assert_str_eq(run(MODEL_ALLREDUCE, 32, 128).algorithm, "recursive_doubling");
}
END_TEST

/* reduce: avg_msg_size<=2048, or fewer elements than the power of two,
 * binomial; else reduce-scatter + gather (Rabenseifner's first half,
 * then a binomial gather). */
START_TEST(reduce_choice)
{
    defaults();
    choice(MODEL_REDUCE, 32, 2048, "binomial", 5 * (msg(2048) + 2048 * F));
    choice(MODEL_REDUCE, 32, 2056, "reduce_scatter_gather",
           10 * st + 2056 * 31.0 / 32 * (2 * G + F));
    choice(MODEL_REDUCE, 48, 4096, "reduce_scatter_gather",
           msg(4096) + 4096 * F + 10 * st + 4096 * 31.0 / 32 * (2 * G + F));
    choice(MODEL_REDUCE, 1024, 4096, "binomial", 10 * (msg(4096) + 4096 * F));
    choice(MODEL_REDUCE, 1024, 8192, "reduce_scatter_gather",
           20 * st + 8192 * 1023.0 / 1024 * (2 * G + F));
}
END_TEST

/* allgather: pow2 and total_msg_size (k P) < 524288 recursive doubling;
 * not pow2 and < 81920 Bruck; else ring. */
START_TEST(allgather_choice)
{
    defaults();
    choice(MODEL_ALLGATHER, 32, 16383, "recursive_doubling", 5 * st + 31 * 16383 * G);
    choice(MODEL_ALLGATHER, 32, 16384, "ring", 31 * msg(16384));
    choice(MODEL_ALLGATHER, 40, 2047, "brucks", 6 * st + 39 * 2047 * G);
    choice(MODEL_ALLGATHER, 40, 2048, "ring", 39 * msg(2048));
}
END_TEST

/* gather and scatter: binomial at every size; the root moves the other
 * P - 1 blocks in ceil(log2 P) messages.  Barrier: dissemination,
 * ceil(log2 P) rounds. */
START_TEST(tree_choice)
{
    defaults();
    choice(MODEL_GATHER, 48, 4, "binomial", 6 * st + 47 * 4 * G);
    choice(MODEL_GATHER, 32, 4 << 20, "binomial", 5 * st + 31 * (4 << 20) * G);
    choice(MODEL_SCATTER, 48, 4 << 20, "binomial", 6 * st + 47 * (4 << 20) * G);
    choice(MODEL_BARRIER, 2, 0, "dissemination", st);
    choice(MODEL_BARRIER, 48, 0, "dissemination", 6 * st);
}
END_TEST

/* reduce_scatter (commutative op): the whole vector < 524288 recursive
 * halving; else pairwise, P - 1 exchanges of a block. */
START_TEST(reduce_scatter_choice)
{
    defaults();
    choice(MODEL_REDUCE_SCATTER, 32, 524287, "recursive_halving",
           5 * st + 524287 * 31.0 / 32 * (G + F));
    choice(MODEL_REDUCE_SCATTER, 32, 524288, "pairwise",
           31 * (msg(524288 / 32.0) + 524288 / 32.0 * F));
}
END_TEST

START_TEST(paths)
{
    struct model_path p = path_of("fattree:32", 32);
    ck_assert_uint_eq(p.coll_links, 2);
    ck_assert_uint_eq(p.coll_switches, 1);
    p = path_of("fattree:32", 33);         /* leaves and a spine level */
    ck_assert_uint_eq(p.coll_links, 4);
    ck_assert_uint_eq(p.coll_switches, 3);
    p = path_of("fattree:32", 512);        /* 2 * 16 * 16 */
    ck_assert_uint_eq(p.p2p_links, 4);
    p = path_of("fattree:32", 513);
    ck_assert_uint_eq(p.p2p_links, 6);
    ck_assert_uint_eq(p.p2p_switches, 5);
    p = path_of("torus", 64);              /* 4x4x4: D = 6 */
    ck_assert_uint_eq(p.dims[0], 4);
    ck_assert_uint_eq(p.dims[1], 4);
    ck_assert_uint_eq(p.dims[2], 4);
    ck_assert_uint_eq(p.p2p_links, 8);
    ck_assert_uint_eq(p.p2p_switches, 7);
    ck_assert_uint_eq(p.coll_links, 14);
    ck_assert_uint_eq(p.coll_switches, 13);
    p = path_of("torus", 128);             /* 8x4x4 */
    ck_assert_uint_eq(p.dims[0] * p.dims[1] * p.dims[2], 128);
    ck_assert_uint_eq(p.dims[0] / 2 + p.dims[1] / 2 + p.dims[2] / 2, 8);
    p = path_of("torus", 7);               /* a ring */
    ck_assert_uint_eq(p.dims[0], 7);
    ck_assert_uint_eq(p.p2p_links, 3 + 2);
    p = path_of("torus:2x2x1", 4);
    ck_assert_uint_eq(p.coll_links, 2 * 2 + 2);
    struct model_topo t;
    char err[200];
    ck_assert_int_eq(model_topo_parse("torus:2x2x1", &t, err, sizeof err), 0);
    ck_assert_int_eq(model_path(&t, 8, &p), -1);
}
END_TEST

START_TEST(topo_strings)
{
    struct model_topo t;
    char err[200], name[64];
    const char *good[] = { "star", "fattree", "fattree:8", "torus", "torus:4x2x1" };
    const char *named[] = { "star", "fattree:32", "fattree:8", "torus", "torus:4x2x1" };
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(model_topo_parse(good[i], &t, err, sizeof err), 0);
        model_topo_name(&t, name, sizeof name);
        ck_assert_str_eq(name, named[i]);
    }
    const char *bad[] = { "", "mesh", "fattree:", "fattree:7", "fattree:2", "fattree:32x",
                          "torus:4x4", "torus:0x1x1", "torus:4x4x4x", "stars" };
    for (int i = 0; i < 10; i++) {
        err[0] = '\0';
        ck_assert_int_eq(model_topo_parse(bad[i], &t, err, sizeof err), -1);
        ck_assert_ptr_nonnull(strstr(err, "allowed"));
    }
}
END_TEST

/* The switch moves every block of a gather over the root's link once. */
START_TEST(gather_bandwidth)
{
    struct model_params m;
    model_defaults(&m);
    struct model_path p = path_of("fattree:16", 100);
    struct model_result g, a;
    double k = 1 << 20;
    model_coll(&m, &p, MODEL_GATHER, 100, k, &g);
    model_coll(&m, &p, MODEL_ALLREDUCE, 100, k, &a);
    near(g.inswitch - a.inswitch, 99 * k * m.per_byte);
    /* and software's root takes the same bytes, in log P messages */
    ck_assert(g.software > 99 * k * m.host_per_byte);
}
END_TEST

START_TEST(small_speedup_grows)
{
    struct model_params m;
    model_defaults(&m);
    enum model_coll cs[] = { MODEL_ALLREDUCE, MODEL_BARRIER, MODEL_BCAST, MODEL_REDUCE };
    for (int c = 0; c < 4; c++) {
        double prev = 0;
        for (unsigned long P = 2; P <= 65536; P *= 2) {
            struct model_path p = path_of("fattree:32", P);
            struct model_result r;
            model_coll(&m, &p, cs[c], P, 8, &r);
            double s = r.software / r.inswitch;
            ck_assert_msg(s >= prev * (1 - 1e-12), "%s: speedup %g at P=%lu after %g",
                          model_coll_name(cs[c]), s, P, prev);
            ck_assert(s >= 1);
            prev = s;
        }
        ck_assert(prev > 10);     /* 16 steps of software against one trip */
    }
}
END_TEST

START_TEST(names)
{
    for (int c = 0; c < MODEL_COLL_COUNT; c++)
        ck_assert_int_eq(model_coll_lookup(model_coll_name(c)), c);
    ck_assert_int_eq(model_coll_lookup("alltoall"), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("loggp");
    tcase_add_test(tc, seed_equations);
    tcase_add_test(tc, bcast_choice);
    tcase_add_test(tc, allreduce_choice);
    tcase_add_test(tc, reduce_choice);
    tcase_add_test(tc, allgather_choice);
    tcase_add_test(tc, tree_choice);
    tcase_add_test(tc, reduce_scatter_choice);
    tcase_add_test(tc, paths);
    tcase_add_test(tc, topo_strings);
    tcase_add_test(tc, gather_bandwidth);
    tcase_add_test(tc, small_speedup_grows);
    tcase_add_test(tc, names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
