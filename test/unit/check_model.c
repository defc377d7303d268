/* check_model.c -- Check unit tests of the LogGP model behind acis-model
 * (tools/model.c): the seed's equations 3.2-3.5 come out exactly for a
 * broadcast on a star; MPICH's algorithm choice follows its default
 * thresholds; paths through fat trees and tori have the hop counts their
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

static const char *alg(enum model_coll c, unsigned long P, double k)
{
    struct model_params m;
    model_defaults(&m);
    struct model_path p = path_of("star", P);
    struct model_result r;
    model_coll(&m, &p, c, P, k, &r);
    return r.algorithm;
}

START_TEST(mpich_choice)
{
    ck_assert_str_eq(alg(MODEL_ALLREDUCE, 8, 2047), "recursive_doubling");
    ck_assert_str_eq(alg(MODEL_ALLREDUCE, 8, 2048), "reduce_scatter_allgather");
    ck_assert_str_eq(alg(MODEL_REDUCE, 8, 2047), "binomial");
    ck_assert_str_eq(alg(MODEL_REDUCE, 8, 2048), "reduce_scatter_gather");
    ck_assert_str_eq(alg(MODEL_BCAST, 4, 1 << 20), "binomial");
    ck_assert_str_eq(alg(MODEL_BCAST, 8, 12287), "binomial");
    ck_assert_str_eq(alg(MODEL_BCAST, 8, 12288), "scatter_recursive_doubling_allgather");
    ck_assert_str_eq(alg(MODEL_BCAST, 12, 12288), "scatter_ring_allgather");
    ck_assert_str_eq(alg(MODEL_BCAST, 8, 524288), "scatter_ring_allgather");
    ck_assert_str_eq(alg(MODEL_ALLGATHER, 8, 1024), "recursive_doubling");
    ck_assert_str_eq(alg(MODEL_ALLGATHER, 8, 65536), "ring");
    ck_assert_str_eq(alg(MODEL_ALLGATHER, 6, 1024), "brucks");
    ck_assert_str_eq(alg(MODEL_ALLGATHER, 6, 16384), "ring");
    ck_assert_str_eq(alg(MODEL_REDUCE_SCATTER, 8, 524287), "recursive_halving");
    ck_assert_str_eq(alg(MODEL_REDUCE_SCATTER, 8, 524288), "pairwise");
    ck_assert_str_eq(alg(MODEL_BARRIER, 8, 0), "dissemination");
    ck_assert_str_eq(alg(MODEL_GATHER, 8, 4), "binomial");
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
    tcase_add_test(tc, mpich_choice);
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
