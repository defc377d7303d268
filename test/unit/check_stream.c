/* check_stream.c -- unit tests of how long a stream may be: a result
 * space is cut into at most UINT32_MAX segments (segment indexes are
 * 32-bit on the wire), acis_stream_fits says so exactly at the edge, and
 * a stream at the edge is numbered without wrapping.  Longer ones run in
 * MPICH (src/offload/exec.c); none of this needs the memory it describes. */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "offload/stream.h"

START_TEST(fits_at_the_edge)
{
    uint64_t max = (uint64_t)UINT32_MAX;
    ck_assert_int_eq(acis_stream_fits(0, 64), 1);
    ck_assert_int_eq(acis_stream_fits(64 * max, 64), 1);           /* 256 GiB - 64 */
    ck_assert_int_eq(acis_stream_fits(64 * max + 1, 64), 0);       /* one byte more */
    ck_assert_int_eq(acis_stream_fits(65000 * max, 65000), 1);
    ck_assert_int_eq(acis_stream_fits(65000 * max + 1, 65000), 0);
    ck_assert_int_eq(acis_stream_fits(UINT64_MAX, 65000), 0);      /* no wrap in the sum */
    ck_assert_int_eq(acis_stream_fits(1, 0), 0);
}
END_TEST

START_TEST(numbered_at_the_edge)
{
    struct acis_window w;
    ck_assert_int_eq(acis_window_init(&w, 16), 0);
    struct acis_stream s = { .kind = ACIS_K_BCAST, .dtype = ACIS_DT_BYTE, .seg_bytes = 64,
                             .total = 64 * (uint64_t)UINT32_MAX };
    acis_stream_start(&s, &w);
    ck_assert_uint_eq(s.nseg, UINT32_MAX);
    ck_assert_uint_eq(w.next_pos, (uint64_t)UINT32_MAX);
    struct acis_stream t = { .kind = ACIS_K_BCAST, .dtype = ACIS_DT_BYTE, .seg_bytes = 64,
                             .total = 64 };
    acis_stream_start(&t, &w);
    ck_assert_uint_eq(t.nseg, 1);
    ck_assert_uint_eq(t.pos0, (uint64_t)UINT32_MAX);
    acis_window_free(&w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_add_test(tc, fits_at_the_edge);
    tcase_add_test(tc, numbered_at_the_edge);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
