/* check_cvars.c -- unit tests of the CVAR table and parser: defaults, every
 * value type, every way a value can be malformed, prefix precedence, the
 * unknown-name check, the all-ranks hash and the printers. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static struct acis_cvars cv;
static char err[512];

/* Parse an environment given as a NULL-terminated list of strings. */
static int parse(char **env)
{
    err[0] = '\0';
    return acis_cvars_parse(env, &cv, err, sizeof err);
}

START_TEST(defaults)
{
    char *env[] = { "PATH=/bin", NULL };
    ck_assert_int_eq(parse(env), 0);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD], ACIS_AUTO);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_ALLREDUCE], ACIS_AUTO);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_DEVICE], ACIS_DEV_AUTO);
    ck_assert_str_eq(cv.str[ACIS_CV_OFFLOAD_SWITCH], "auto");
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_MAX_MSG_SIZE], 256LL << 20);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_VERBOSE], 0);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_STATS], 0);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_SWITCH_PAYLOAD], 0);      /* auto */
    ck_assert_ptr_null(cv.source[ACIS_CV_OFFLOAD]);
}
END_TEST

START_TEST(good_values)
{
    char *env[] = {
        "MPIR_CVAR_OFFLOAD= Off ", "MPIR_CVAR_OFFLOAD_BCAST=on",
        "MPIR_CVAR_OFFLOAD_DEVICE=udp", "MPIR_CVAR_OFFLOAD_SWITCH=10.0.0.1:7000",
        "MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=4KiB", "MPIR_CVAR_OFFLOAD_VERBOSE=3",
        "MPIR_CVAR_OFFLOAD_STATS=yes", "MPIR_CVAR_OFFLOAD_SPIN_US=0", NULL
    };
    ck_assert_int_eq(parse(env), 0);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD], ACIS_OFF);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_BCAST], ACIS_ON);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_DEVICE], ACIS_DEV_UDP);
    ck_assert_str_eq(cv.str[ACIS_CV_OFFLOAD_SWITCH], "10.0.0.1:7000");
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_MAX_MSG_SIZE], 4096);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_VERBOSE], 3);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_STATS], 1);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_SPIN_US], 0);
}
END_TEST

START_TEST(sizes_and_addresses)
{
    long long n;
    char s[64];
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_MAX_MSG_SIZE, "1m", &n,
                                           NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(n, 1 << 20);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_MAX_MSG_SIZE, "2GB", &n,
                                           NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(n, 2LL << 30);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_MAX_MSG_SIZE, "1T", &n,
                                           NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH, "/dev/shm/acis", &n,
                                           s, sizeof s, err, sizeof err), 0);
    ck_assert_str_eq(s, "/dev/shm/acis");
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH, "[::1]:9", &n,
                                           s, sizeof s, err, sizeof err), 0);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH, "AUTO", &n,
                                           s, sizeof s, err, sizeof err), 0);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH, "7/0x1a2b", &n,
                                           s, sizeof s, err, sizeof err), 0);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH,
                                           "fe80::1e34:daff:fe5a:1234/291", &n, s, sizeof s,
                                           err, sizeof err), 0);
    ck_assert_str_eq(s, "fe80::1e34:daff:fe5a:1234/291");
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_VERBS_DEVICE, "mlx5_0", &n,
                                           s, sizeof s, err, sizeof err), 0);
    ck_assert_str_eq(s, "mlx5_0");
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_VERBS_PORT, "2", &n,
                                           NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(n, 2);
    /* a size that may be auto: auto is 0, below its range */
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH_PAYLOAD, "Auto", &n,
                                           NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH_PAYLOAD, "16K", &n,
                                           NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(n, 16384);
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SWITCH_PAYLOAD, "64", &n,
                                           NULL, 0, err, sizeof err), 0);
    char shown[32];
    static struct acis_cvars c0;
    acis_cvar_format(ACIS_CV_OFFLOAD_SWITCH_PAYLOAD, &c0, shown, sizeof shown);
    ck_assert_str_eq(shown, "auto");
    c0.num[ACIS_CV_OFFLOAD_SWITCH_PAYLOAD] = 1000;
    acis_cvar_format(ACIS_CV_OFFLOAD_SWITCH_PAYLOAD, &c0, shown, sizeof shown);
    ck_assert_str_eq(shown, "1000");
    /* numbers without auto in their range do not take it */
    ck_assert_int_eq(acis_cvar_parse_value(ACIS_CV_OFFLOAD_SHM_PAYLOAD, "auto", &n,
                                           NULL, 0, err, sizeof err), -1);
}
END_TEST

/* RDMA endpoints: LID/QPN and GID/QPN, read and written back. */
START_TEST(ib_addresses)
{
    struct acis_ib_addr a;
    char out[80];
    ck_assert_int_eq(acis_ib_addr_parse("7/0x1a2b", &a), 0);
    ck_assert_int_eq(a.has_gid, 0);
    ck_assert_uint_eq(a.lid, 7);
    ck_assert_uint_eq(a.qpn, 0x1a2b);
    acis_ib_addr_format(&a, out, sizeof out);
    ck_assert_str_eq(out, "7/6699");
    ck_assert_int_eq(acis_ib_addr_parse("fe80::1e34:daff:fe5a:1234/0xffffff", &a), 0);
    ck_assert_int_eq(a.has_gid, 1);
    ck_assert_uint_eq(a.gid[0], 0xfe);
    ck_assert_uint_eq(a.gid[15], 0x34);
    ck_assert_uint_eq(a.qpn, 0xffffff);
    acis_ib_addr_format(&a, out, sizeof out);
    ck_assert_str_eq(out, "fe80::1e34:daff:fe5a:1234/16777215");
    ck_assert_int_eq(acis_ib_addr_parse("::ffff:10.0.0.2/12", &a), 0);   /* RoCE v2 */
    ck_assert_uint_eq(a.gid[15], 2);
    const char *bad[] = { "", "7", "/5", "7/", "0/5", "7/0", "7/0x1000000", "65536/5",
                          "-1/5", "7/-5", "fe80::zz/5", "7/5/6", "10.0.0.1:7000", "7/5x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(acis_ib_addr_parse(bad[i], &a) == -1, "'%s' accepted", bad[i]);
}
END_TEST

/* The verbs channel is a valid device only in builds that have it. */
START_TEST(verbs_in_this_build)
{
    char *env[] = { "MPIR_CVAR_OFFLOAD_DEVICE=verbs", NULL };
#ifdef ACIS_HAVE_VERBS
    ck_assert_int_eq(parse(env), 0);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_DEVICE], ACIS_DEV_VERBS);
#else
    ck_assert_int_eq(parse(env), -1);
    ck_assert_msg(strstr(err, "MPIR_CVAR_OFFLOAD_DEVICE") && strstr(err, "udp|shm|none|auto") &&
                  strstr(err, "libibverbs"), "%s", err);
#endif
}
END_TEST

/* Every malformed value: the message names the variable, quotes the value
 * and says what is allowed. */
static const struct bad {
    const char *assign;        /* NAME=value */
    const char *allowed;       /* expected in the message */
} bad[] = {
    { "MPIR_CVAR_OFFLOAD=maybe", "auto|on|off" },
    { "MPIR_CVAR_OFFLOAD=", "auto|on|off" },
    { "MPIR_CVAR_OFFLOAD_ALLREDUCE=1", "auto|on|off" },
    { "MPIR_CVAR_OFFLOAD_REDUCE_SCATTER_BLOCK=yes", "auto|on|off" },
    { "MPIR_CVAR_OFFLOAD_DEVICE=tcp", "udp|shm|verbs|none|auto" },
    { "MPIR_CVAR_OFFLOAD_COMM_SETUP=now", "lazy|eager" },
    { "MPIR_CVAR_OFFLOAD_WAIT=sleep", "auto|spin|block" },
    { "MPIR_CVAR_OFFLOAD_STATS=2", "0|1" },
    { "MPIR_CVAR_OFFLOAD_STATS=enabled", "0|1" },
    { "MPIR_CVAR_OFFLOAD_VERBOSE=4", "0..3" },
    { "MPIR_CVAR_OFFLOAD_VERBOSE=-1", "0..3" },
    { "MPIR_CVAR_OFFLOAD_VERBOSE=1.5", "0..3" },
    { "MPIR_CVAR_OFFLOAD_VERBOSE=one", "0..3" },
    { "MPIR_CVAR_OFFLOAD_SPIN_US=99999999999999999999999", "0..10000000" },
    { "MPIR_CVAR_OFFLOAD_TIMEOUT_MS=10", "100..3600000" },
    { "MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=10Q", "0..1T" },
    { "MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=2T", "0..1T" },
    { "MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=99999999999G", "0..1T" },
    { "MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=K", "0..1T" },
    { "MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=1KX", "0..1T" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=localhost", "auto|HOST:PORT|PATH" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=host:0", "auto|HOST:PORT|PATH" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=host:65536", "auto|HOST:PORT|PATH" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=host:port", "auto|HOST:PORT|PATH" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=:7000", "auto|HOST:PORT|PATH" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=my host:7000", "auto|HOST:PORT|PATH" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=relative/path", "auto|HOST:PORT|PATH" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=0/5", "LID/QPN|GID/QPN" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=7/0x1000000", "LID/QPN|GID/QPN" },
    { "MPIR_CVAR_OFFLOAD_SWITCH=fe80::zz/5", "LID/QPN|GID/QPN" },
    { "MPIR_CVAR_OFFLOAD_VERBS_DEVICE=mlx5 0", "auto|NAME" },
    { "MPIR_CVAR_OFFLOAD_VERBS_DEVICE=../x", "auto|NAME" },
    { "MPIR_CVAR_OFFLOAD_VERBS_DEVICE=", "auto|NAME" },
    { "MPIR_CVAR_OFFLOAD_VERBS_PORT=256", "0..255" },
    { "MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=0", "auto, or a size in bytes (K, M, G suffixes) in 64..65000" },
    { "MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=63", "auto, or a size in bytes" },
    { "MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=64K", "64..65000" },
    { "MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=autox", "64..65000" },
    { "MPICH_OFFLOAD=sometimes", "auto|on|off" },
    { "MPIR_PARAM_OFFLOAD_BCAST=x", "auto|on|off" },
};

START_TEST(bad_values)
{
    const struct bad *b = &bad[_i];
    char assign[128];
    snprintf(assign, sizeof assign, "%s", b->assign);
    char *env[] = { assign, NULL };
    ck_assert_int_eq(parse(env), -1);
    char name[96];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(b->assign, "="), b->assign);
    ck_assert_msg(strstr(err, name) != NULL, "'%s' lacks the name %s", err, name);
    ck_assert_msg(strstr(err, b->allowed) != NULL, "'%s' lacks '%s'", err, b->allowed);
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", strchr(b->assign, '=') + 1);
    ck_assert_msg(strstr(err, quoted) != NULL, "'%s' lacks the value %s", err, quoted);
}
END_TEST

START_TEST(too_long)
{
    static char assign[600];
    memset(assign, 'x', sizeof assign - 1);
    memcpy(assign, "MPIR_CVAR_OFFLOAD_SWITCH=/", 26);
    char *env[] = { assign, NULL };
    ck_assert_int_eq(parse(env), -1);
    ck_assert_ptr_nonnull(strstr(err, "longer than"));
}
END_TEST

START_TEST(unknown_name)
{
    char *env[] = { "MPIR_CVAR_OFFLOAD_ALLREDUC=on", NULL };
    ck_assert_int_eq(parse(env), -1);
    ck_assert_ptr_nonnull(strstr(err, "MPIR_CVAR_OFFLOAD_ALLREDUC is not an acis variable"));
    char *env2[] = { "MPICH_OFFLOADING=1", NULL };
    ck_assert_int_eq(parse(env2), -1);
    char *env3[] = { "MPIR_CVAR_ASYNC_PROGRESS=1", "MPICH_OFFLOAD=on", NULL };
    ck_assert_int_eq(parse(env3), 0);          /* MPICH's own CVARs pass */
}
END_TEST

START_TEST(precedence)
{
    char *env[] = { "MPIR_CVAR_OFFLOAD_VERBOSE=2", "MPICH_OFFLOAD_VERBOSE=1",
                    "MPIR_PARAM_OFFLOAD_VERBOSE=3", NULL };
    ck_assert_int_eq(parse(env), 0);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_VERBOSE], 2);
    ck_assert_str_eq(cv.source[ACIS_CV_OFFLOAD_VERBOSE], "MPIR_CVAR_");
    char *env2[] = { "MPICH_OFFLOAD_VERBOSE=1", "MPIR_PARAM_OFFLOAD_VERBOSE=3", NULL };
    ck_assert_int_eq(parse(env2), 0);
    ck_assert_int_eq(cv.num[ACIS_CV_OFFLOAD_VERBOSE], 3);
    /* a bad value under a losing prefix is still an error */
    char *env3[] = { "MPIR_CVAR_OFFLOAD_VERBOSE=1", "MPICH_OFFLOAD_VERBOSE=loud", NULL };
    ck_assert_int_eq(parse(env3), -1);
    ck_assert_ptr_nonnull(strstr(err, "MPICH_OFFLOAD_VERBOSE=\"loud\""));
}
END_TEST

START_TEST(hash_scopes)
{
    char *a[] = { "MPIR_CVAR_OFFLOAD_VERBOSE=0", NULL };
    char *b[] = { "MPIR_CVAR_OFFLOAD_VERBOSE=3", "MPIR_CVAR_OFFLOAD_SPIN_US=7", NULL };
    char *c[] = { "MPIR_CVAR_OFFLOAD_BCAST=off", NULL };
    ck_assert_int_eq(parse(a), 0);
    uint64_t ha = acis_cvars_hash(&cv);
    ck_assert_int_eq(parse(b), 0);
    ck_assert_uint_eq(acis_cvars_hash(&cv), ha);   /* local scope: ignored */
    ck_assert_int_eq(parse(c), 0);
    ck_assert_uint_ne(acis_cvars_hash(&cv), ha);   /* all-ranks scope: counted */
}
END_TEST

START_TEST(printers)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    acis_cvars_print(f, 1);
    fclose(f);
    for (int i = 0; i < ACIS_CV_COUNT; i++) {
        char name[96];
        snprintf(name, sizeof name, "`MPIR_CVAR_%s`", acis_cvar_table[i].name);
        ck_assert_msg(strstr(buf, name) != NULL, "markdown lacks %s", name);
    }
    ck_assert_ptr_nonnull(strstr(buf, "auto\\|on\\|off"));
    free(buf);
    f = open_memstream(&buf, &len);
    acis_cvars_print(f, 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE\n"));
    free(buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cvars");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, good_values);
    tcase_add_test(tc, sizes_and_addresses);
    tcase_add_test(tc, ib_addresses);
    tcase_add_test(tc, verbs_in_this_build);
    tcase_add_loop_test(tc, bad_values, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, too_long);
    tcase_add_test(tc, unknown_name);
    tcase_add_test(tc, precedence);
    tcase_add_test(tc, hash_scopes);
    tcase_add_test(tc, printers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
