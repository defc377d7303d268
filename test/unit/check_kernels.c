/* check_kernels.c -- the reduction kernels on their own: bytes of the
 * wire that are not valid C values (a bool byte of 2). */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "switch/switch.h"

/* Any nonzero byte is true; results are 0 or 1. */
START_TEST(bool_bytes)
{
    const uint8_t a[6] = { 2, 0, 255, 1, 0, 128 }, b[6] = { 1, 3, 0, 0, 0, 64 };
    const uint8_t land[6] = { 1, 0, 0, 0, 0, 1 }, lor[6] = { 1, 1, 1, 1, 0, 1 },
                  lxor[6] = { 0, 1, 1, 1, 0, 0 };
    uint8_t x[6];
    memcpy(x, a, sizeof x);
    acis_reduce(ACIS_OP_LAND, ACIS_DT_BOOL, x, b, 6);
    ck_assert_mem_eq(x, land, sizeof x);
    memcpy(x, a, sizeof x);
    acis_reduce(ACIS_OP_LOR, ACIS_DT_BOOL, x, b, 6);
    ck_assert_mem_eq(x, lor, sizeof x);
    memcpy(x, a, sizeof x);
    acis_reduce(ACIS_OP_LXOR, ACIS_DT_BOOL, x, b, 6);
    ck_assert_mem_eq(x, lxor, sizeof x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernels");
    TCase *t = tcase_create("kernels");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, bool_bytes);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
