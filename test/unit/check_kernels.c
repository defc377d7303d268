/* check_kernels.c -- the reduction kernels on their own: every kernel set
 * this CPU runs (baseline, AVX2, AVX-512) and the dispatched acis_reduce
 * give bitwise what a plain scalar loop gives, for every wire type and
 * operation, on random data with special values (NaN, signed zeros,
 * infinities, denormals, integer extremes) and odd lengths; and bytes of
 * the wire that are not valid C values (a bool byte of 2). */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "switch/switch.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const float fspecial[] = { 0.0f, -0.0f, 1.0f, -1.0f, 0.1f, 1e-40f, -1e-40f,
                                  3.4e38f, -3.4e38f };
static const double dspecial[] = { 0.0, -0.0, 1.0, -1.0, 0.1, 4e-320, -4e-320,
                                   1.7e308, -1.7e308 };

/* Random elements: a third special values (NaNs with payloads, infinities
 * among them), the rest random values or random bits. */
static void fill(unsigned dt, uint8_t *p, size_t n)
{
    size_t es = acis_wire_dt_size(dt);
    for (size_t k = 0; k < n * es; k++)
        p[k] = (uint8_t)next();
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        if (dt == ACIS_DT_F32 && r % 3 == 0) {
            float v = fspecial[r / 3 % 9];
            uint32_t nan = 0x7fc00000u | (uint32_t)(r >> 40 & 0x3fffff) | (r & 8 ? 0x80000000u : 0);
            if (r % 7 == 0)
                memcpy(&v, &nan, 4);
            else if (r % 11 == 0)
                v = r & 16 ? 1.0f / 0.0f : -1.0f / 0.0f;
            memcpy(p + 4 * i, &v, 4);
        } else if (dt == ACIS_DT_F32 && r % 3 == 1) {
            float v = (float)(int32_t)(r >> 32) / 65536.0f;
            memcpy(p + 4 * i, &v, 4);
        } else if (dt == ACIS_DT_F64 && r % 3 == 0) {
            double v = dspecial[r / 3 % 9];
            uint64_t nan = 0x7ff8000000000000ull | (r >> 20) | (r & 8 ? 1ull << 63 : 0);
            if (r % 7 == 0)
                memcpy(&v, &nan, 8);
            else if (r % 11 == 0)
                v = r & 16 ? 1.0 / 0.0 : -1.0 / 0.0;
            memcpy(p + 8 * i, &v, 8);
        } else if (dt == ACIS_DT_F64 && r % 3 == 1) {
            double v = (double)(int64_t)r / 1048576.0;
            memcpy(p + 8 * i, &v, 8);
        } else if (dt <= ACIS_DT_U64 && r % 4 == 0) {          /* 0, -1, min, max */
            static const uint8_t lo[4] = { 0x00, 0xff, 0x00, 0xff }, hi[4] = { 0x00, 0xff, 0x80, 0x7f };
            unsigned k = (unsigned)(r / 4 % 4);
            memset(p + es * i, lo[k], es);
            p[es * i + es - 1] = hi[k];
        } else if ((dt == ACIS_DT_BOOL || dt <= ACIS_DT_U64) && r % 4 == 1) {
            memset(p + es * i, 0, es);
            p[es * i] = (uint8_t)(r >> 8 & 1);
        } else if (dt == ACIS_DT_F80) {
            long double v = (long double)(int64_t)r / 3.0L;
            memset(p + es * i, 0, es);
            memcpy(p + es * i, &v, sizeof v);
        }
    }
}

/* The scalar reference: one element at a time, the rules spelled out. */
#define REF_INT(T, UT)                                                           for (size_t i = 0; i < n; i++) {                                                 T a = ((T *)io)[i], b = ((const T *)in)[i], c = a;                           switch (op) {                                                                case ACIS_OP_SUM: c = (T)(UT)((UT)a + (UT)b); break;                         case ACIS_OP_PROD: c = (T)(UT)((uint64_t)(UT)a * (uint64_t)(UT)b); break;         case ACIS_OP_MIN: c = b < a ? b : a; break;                                  case ACIS_OP_MAX: c = b > a ? b : a; break;                                  case ACIS_OP_LAND: c = a && b; break;                                        case ACIS_OP_LOR: c = a || b; break;                                         case ACIS_OP_LXOR: c = !a != !b; break;                                      case ACIS_OP_BAND: c = (T)(a & b); break;                                    case ACIS_OP_BOR: c = (T)(a | b); break;                                     case ACIS_OP_BXOR: c = (T)(a ^ b); break;                                    }                                                                            ((T *)io)[i] = c;                                                        }

#define REF_FLOAT(T)                                                             for (size_t i = 0; i < n; i++) {                                                 T a = ((T *)io)[i], b = ((const T *)in)[i], c = a;                           switch (op) {                                                                case ACIS_OP_SUM: c = a + b; break;                                          case ACIS_OP_PROD: c = a * b; break;                                         case ACIS_OP_MIN: c = b < a ? b : a; break;                                  case ACIS_OP_MAX: c = b > a ? b : a; break;                                  }                                                                            ((T *)io)[i] = c;                                                        }

/* Results equal in every byte that holds a value (long double uses 10 of
 * its 16; the rest is padding any store may leave as it likes). */
static int same(unsigned dt, const uint8_t *a, const uint8_t *b, size_t n)
{
    int ld = dt == ACIS_DT_F80 || dt == ACIS_DT_C80 || dt == ACIS_DT_LONG_DOUBLE_INT;
    if (!ld)
        return memcmp(a, b, n * acis_wire_dt_size(dt)) == 0;
    for (size_t k = 0; k < n * acis_wire_dt_size(dt); k += 16) {
        size_t used = dt == ACIS_DT_LONG_DOUBLE_INT && k % 32 ? 4 : 10;
        if (memcmp(a + k, b + k, used) != 0)
            return 0;
    }
    return 1;
}

/* 1 if the reference covers dt (the types the vector sets cover). */
static int reference(unsigned op, unsigned dt, void *io, const void *in, size_t n)
{
    switch (dt) {
    case ACIS_DT_I8: REF_INT(int8_t, uint8_t) return 1;
    case ACIS_DT_U8: case ACIS_DT_BYTE: REF_INT(uint8_t, uint8_t) return 1;
    case ACIS_DT_I16: REF_INT(int16_t, uint16_t) return 1;
    case ACIS_DT_U16: REF_INT(uint16_t, uint16_t) return 1;
    case ACIS_DT_I32: REF_INT(int32_t, uint32_t) return 1;
    case ACIS_DT_U32: REF_INT(uint32_t, uint32_t) return 1;
    case ACIS_DT_I64: REF_INT(int64_t, uint64_t) return 1;
    case ACIS_DT_U64: REF_INT(uint64_t, uint64_t) return 1;
    case ACIS_DT_F32: REF_FLOAT(float) return 1;
    case ACIS_DT_F64: REF_FLOAT(double) return 1;
    default: return 0;
    }
}

/* Every set against the reference (or, for types only the baseline
 * covers, against the baseline), and acis_reduce against both. */
START_TEST(every_kernel)
{
    static const size_t lens[] = { 0, 1, 7, 33, 1000 + 37, 4096 + 5 };
    enum { MAXN = 4096 + 5 + 1, ES = 32 };    /* the longest, and one past it */
    _Alignas(64) static uint8_t io0[MAXN * ES], in[MAXN * ES], want[MAXN * ES], got[MAXN * ES];
    int sets = 0, compared = 0;
    for (int isa = 0; isa < ACIS_ISA_COUNT; isa++)
        sets += acis_reduce_on(isa, ACIS_OP_SUM, ACIS_DT_I32, got, in, 0) == 0;
    ck_assert_int_ge(sets, 1);
    ck_assert_int_eq(acis_reduce_on(acis_reduce_isa(), ACIS_OP_SUM, ACIS_DT_I32, got, in, 0), 0);
    for (unsigned dt = 0; dt < ACIS_DT_COUNT; dt++)
        for (unsigned op = ACIS_OP_SUM; op < ACIS_OP_COUNT; op++) {
            if (!acis_wire_op_valid(op, dt))
                continue;
            size_t es = acis_wire_dt_size(dt);
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                size_t n = lens[l];
                fill(dt, io0, n + 1);
                fill(dt, in, n + 1);
                memcpy(want, io0, (n + 1) * es);
                if (!reference(op, dt, want, in, n))
                    ck_assert_int_eq(acis_reduce_on(ACIS_ISA_BASE, op, dt, want, in, n), 0);
                for (int isa = -1; isa < ACIS_ISA_COUNT; isa++) {
                    memcpy(got, io0, (n + 1) * es);
                    if (isa < 0)
                        acis_reduce(op, dt, got, in, n);
                    else if (acis_reduce_on(isa, op, dt, got, in, n) != 0)
                        continue;
                    ck_assert_msg(same(dt, got, want, n + 1),
                                  "%s %s n=%zu set %s differs", acis_wire_op_name(op),
                                  acis_wire_dt_name(dt), n,
                                  isa < 0 ? "dispatched" : acis_reduce_isa_name(isa));
                    compared++;
                }
            }
        }
    ck_assert_int_gt(compared, 0);
}
END_TEST

/* The MIN/MAX rule on the cases where vector min/max instructions differ
 * by operand order: signed zeros and NaNs keep io unless in compares. */
START_TEST(min_max_specials)
{
    const float nan = __builtin_nanf("");
    for (int isa = 0; isa < ACIS_ISA_COUNT; isa++) {
        float io[17], in[17];
        float want_min[17], want_max[17];
        const float a[4] = { 0.0f, -0.0f, nan, 1.0f }, b[4] = { -0.0f, 0.0f, 1.0f, nan };
        for (int i = 0; i < 17; i++) {
            io[i] = a[i % 4];
            in[i] = b[i % 4];
            want_min[i] = want_max[i] = io[i];          /* every pair keeps io */
        }
        float x[17];
        memcpy(x, io, sizeof x);
        if (acis_reduce_on(isa, ACIS_OP_MIN, ACIS_DT_F32, x, in, 17) != 0)
            continue;
        ck_assert_mem_eq(x, want_min, sizeof x);
        memcpy(x, io, sizeof x);
        acis_reduce_on(isa, ACIS_OP_MAX, ACIS_DT_F32, x, in, 17);
        ck_assert_mem_eq(x, want_max, sizeof x);
    }
}
END_TEST

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
    tcase_add_test(t, every_kernel);
    tcase_add_test(t, min_max_specials);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
