/* check_policy.c -- unit tests of the selection policy: every branch of
 * acis_policy(), in the order it checks, and the wire op/type rules it
 * relies on. */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "fallback/fallback.h"
#include "util/util.h"

/* An input that offloads; each test breaks one thing. */
static struct acis_policy_in ok(void)
{
    struct acis_policy_in in = {
        .master = ACIS_AUTO, .coll_mode = ACIS_AUTO, .device_ok = 1,
        .implemented = 1, .base_implemented = 1, .form = ACIS_FORM_BLOCKING,
        .intercomm = 0, .comm_size = 4, .reduction = 1,
        .wop = ACIS_OP_SUM, .prim = ACIS_DT_I32, .bytes = 64,
        .max_bytes = 1 << 20,
    };
    return in;
}

START_TEST(offloads)
{
    struct acis_policy_in in = ok();
    ck_assert_int_eq(acis_policy(&in), ACIS_REASON_NONE);
    in.master = ACIS_ON;
    ck_assert_int_eq(acis_policy(&in), ACIS_REASON_NONE);
    in.reduction = 0;
    in.wop = ACIS_OP_NONE;
    in.prim = ACIS_DT_NONE;             /* bcast of a mixed struct type */
    ck_assert_int_eq(acis_policy(&in), ACIS_REASON_NONE);
}
END_TEST

START_TEST(each_reason)
{
    struct acis_policy_in in;
#define EXPECT(change, reason) \
    do { in = ok(); change; ck_assert_int_eq(acis_policy(&in), reason); } while (0)
    EXPECT(in.master = ACIS_OFF, ACIS_REASON_DISABLED);
    EXPECT((in.master = ACIS_OFF, in.coll_mode = ACIS_ON), ACIS_REASON_DISABLED);
    EXPECT(in.coll_mode = ACIS_OFF, ACIS_REASON_COLL_DISABLED);
    EXPECT(in.device_ok = 0, ACIS_REASON_NO_DEVICE);
    EXPECT(in.intercomm = 1, ACIS_REASON_INTERCOMM);
    EXPECT(in.comm_size = 1, ACIS_REASON_SINGLE_RANK);
    EXPECT(in.implemented = 0, ACIS_REASON_NOT_OFFLOADABLE);
    EXPECT((in.implemented = 0, in.form = ACIS_FORM_NONBLOCKING), ACIS_REASON_NONBLOCKING);
    EXPECT((in.implemented = 0, in.base_implemented = 0, in.form = ACIS_FORM_NONBLOCKING),
           ACIS_REASON_NOT_OFFLOADABLE);
    EXPECT((in.implemented = 0, in.form = ACIS_FORM_PERSISTENT), ACIS_REASON_PERSISTENT);
    EXPECT(in.bytes = 0, ACIS_REASON_NONE);       /* count 0 goes to the switch too */
    EXPECT(in.wop = ACIS_OP_NONE, ACIS_REASON_OP_USER);
    EXPECT(in.prim = ACIS_DT_NONE, ACIS_REASON_DATATYPE);
    EXPECT(in.wop = ACIS_OP_MINLOC, ACIS_REASON_OP_DATATYPE);
    EXPECT((in.prim = ACIS_DT_BYTE, in.wop = ACIS_OP_SUM), ACIS_REASON_OP_DATATYPE);
    EXPECT(in.bytes = (1 << 20) + 1, ACIS_REASON_MSG_SIZE);
#undef EXPECT
}
END_TEST

START_TEST(limits_and_modes)
{
    struct acis_policy_in in = ok();
    in.bytes = in.max_bytes;                  /* the limit itself is allowed */
    ck_assert_int_eq(acis_policy(&in), ACIS_REASON_NONE);
    in.bytes = in.max_bytes + 1;
    in.coll_mode = ACIS_ON;                   /* on ignores the size limit */
    ck_assert_int_eq(acis_policy(&in), ACIS_REASON_NONE);
    in = ok();
    in.reduction = 0;
    in.bytes = 0;                             /* barrier moves no data */
    ck_assert_int_eq(acis_policy(&in), ACIS_REASON_NONE);
}
END_TEST

START_TEST(op_type_rules)
{
    /* The MPI rules, restricted to what MPICH 4.0 also accepts. */
    ck_assert(acis_wire_op_valid(ACIS_OP_SUM, ACIS_DT_I8));
    ck_assert(acis_wire_op_valid(ACIS_OP_PROD, ACIS_DT_C64));
    ck_assert(!acis_wire_op_valid(ACIS_OP_MAX, ACIS_DT_C64));
    ck_assert(acis_wire_op_valid(ACIS_OP_MAX, ACIS_DT_F80));
    ck_assert(!acis_wire_op_valid(ACIS_OP_LAND, ACIS_DT_F64));
    ck_assert(acis_wire_op_valid(ACIS_OP_LXOR, ACIS_DT_BOOL));
    ck_assert(!acis_wire_op_valid(ACIS_OP_SUM, ACIS_DT_BOOL));
    ck_assert(acis_wire_op_valid(ACIS_OP_BXOR, ACIS_DT_BYTE));
    ck_assert(!acis_wire_op_valid(ACIS_OP_LOR, ACIS_DT_BYTE));
    ck_assert(acis_wire_op_valid(ACIS_OP_MINLOC, ACIS_DT_LONG_DOUBLE_INT));
    ck_assert(!acis_wire_op_valid(ACIS_OP_SUM, ACIS_DT_2INT));
    ck_assert(!acis_wire_op_valid(ACIS_OP_NONE, ACIS_DT_I32));
    ck_assert(!acis_wire_op_valid(ACIS_OP_SUM, ACIS_DT_NONE));
    ck_assert(!acis_wire_op_valid(ACIS_OP_COUNT, ACIS_DT_I32));
    ck_assert(!acis_wire_op_valid(ACIS_OP_SUM, ACIS_DT_COUNT));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, offloads);
    tcase_add_test(tc, each_reason);
    tcase_add_test(tc, limits_and_modes);
    tcase_add_test(tc, op_type_rules);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
