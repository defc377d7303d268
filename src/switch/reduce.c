/* reduce.c -- the aggregation logic units: inout = inout op in, element by
 * element, for every wire datatype and operation the switch accepts.
 *
 * Semantics follow MPICH's own kernels: integer SUM and PROD wrap (done in
 * unsigned arithmetic, so no undefined behaviour), MIN/MAX pick "in" when
 * it compares less/greater, logical ops yield 0 or 1, MINLOC/MAXLOC keep
 * the smaller index on ties, complex PROD uses the textbook formula. */
#include "config.h"

#include <stdint.h>

#include "sw.h"

/* Integer types: every op but MINLOC/MAXLOC. UT is the unsigned twin. */
#define INT_KERNEL(name, T, UT)                                              \
    static void name(unsigned op, void *vio, const void *vin, size_t n)     \
    {                                                                        \
        T *restrict io = vio;                                                \
        const T *restrict in = vin;                                          \
        size_t i;                                                            \
        switch (op) {                                                        \
        case ACIS_OP_SUM:                                                    \
            for (i = 0; i < n; i++) io[i] = (T)(UT)((UT)io[i] + (UT)in[i]);  \
            break;                                                           \
        case ACIS_OP_PROD:                                                   \
            for (i = 0; i < n; i++)                                          \
                io[i] = (T)(UT)((uint64_t)(UT)io[i] * (uint64_t)(UT)in[i]);  \
            break;                                                           \
        case ACIS_OP_MIN:                                                    \
            for (i = 0; i < n; i++) io[i] = in[i] < io[i] ? in[i] : io[i];   \
            break;                                                           \
        case ACIS_OP_MAX:                                                    \
            for (i = 0; i < n; i++) io[i] = in[i] > io[i] ? in[i] : io[i];   \
            break;                                                           \
        case ACIS_OP_LAND:                                                   \
            for (i = 0; i < n; i++) io[i] = (T)(io[i] && in[i]);             \
            break;                                                           \
        case ACIS_OP_LOR:                                                    \
            for (i = 0; i < n; i++) io[i] = (T)(io[i] || in[i]);             \
            break;                                                           \
        case ACIS_OP_LXOR:                                                   \
            for (i = 0; i < n; i++) io[i] = (T)(!io[i] != !in[i]);           \
            break;                                                           \
        case ACIS_OP_BAND:                                                   \
            for (i = 0; i < n; i++) io[i] = (T)(io[i] & in[i]);              \
            break;                                                           \
        case ACIS_OP_BOR:                                                    \
            for (i = 0; i < n; i++) io[i] = (T)(io[i] | in[i]);              \
            break;                                                           \
        case ACIS_OP_BXOR:                                                   \
            for (i = 0; i < n; i++) io[i] = (T)(io[i] ^ in[i]);              \
            break;                                                           \
        }                                                                    \
    }

INT_KERNEL(red_i8, int8_t, uint8_t)
INT_KERNEL(red_u8, uint8_t, uint8_t)
INT_KERNEL(red_i16, int16_t, uint16_t)
INT_KERNEL(red_u16, uint16_t, uint16_t)
INT_KERNEL(red_i32, int32_t, uint32_t)
INT_KERNEL(red_u32, uint32_t, uint32_t)
INT_KERNEL(red_i64, int64_t, uint64_t)
INT_KERNEL(red_u64, uint64_t, uint64_t)

/* Floating types: SUM, PROD, MIN, MAX. */
#define FLOAT_KERNEL(name, T)                                                \
    static void name(unsigned op, void *vio, const void *vin, size_t n)     \
    {                                                                        \
        T *restrict io = vio;                                                \
        const T *restrict in = vin;                                          \
        size_t i;                                                            \
        switch (op) {                                                        \
        case ACIS_OP_SUM:  for (i = 0; i < n; i++) io[i] = io[i] + in[i]; break; \
        case ACIS_OP_PROD: for (i = 0; i < n; i++) io[i] = io[i] * in[i]; break; \
        case ACIS_OP_MIN:                                                    \
            for (i = 0; i < n; i++) io[i] = in[i] < io[i] ? in[i] : io[i];   \
            break;                                                           \
        case ACIS_OP_MAX:                                                    \
            for (i = 0; i < n; i++) io[i] = in[i] > io[i] ? in[i] : io[i];   \
            break;                                                           \
        }                                                                    \
    }

FLOAT_KERNEL(red_f32, float)
FLOAT_KERNEL(red_f64, double)
FLOAT_KERNEL(red_f80, long double)

/* Complex types as (re, im) pairs: SUM, PROD. */
#define COMPLEX_KERNEL(name, T)                                              \
    static void name(unsigned op, void *vio, const void *vin, size_t n)     \
    {                                                                        \
        T *restrict io = vio;                                                \
        const T *restrict in = vin;                                          \
        for (size_t i = 0; i < 2 * n; i += 2) {                              \
            if (op == ACIS_OP_SUM) {                                         \
                io[i] += in[i];                                              \
                io[i + 1] += in[i + 1];                                      \
            } else {                                                         \
                T re = io[i] * in[i] - io[i + 1] * in[i + 1];                \
                T im = io[i] * in[i + 1] + io[i + 1] * in[i];                \
                io[i] = re;                                                  \
                io[i + 1] = im;                                              \
            }                                                                \
        }                                                                    \
    }

COMPLEX_KERNEL(red_c32, float)
COMPLEX_KERNEL(red_c64, double)
COMPLEX_KERNEL(red_c80, long double)

/* C _Bool travels as one byte, but any byte may arrive: read bytes (a
 * C bool holding 2 would be undefined), nonzero is true, write 0 or 1. */
static void red_bool(unsigned op, void *vio, const void *vin, size_t n)
{
    uint8_t *io = vio;
    const uint8_t *in = vin;
    for (size_t i = 0; i < n; i++) {
        int a = io[i] != 0, b = in[i] != 0;
        if (op == ACIS_OP_LAND)
            io[i] = (uint8_t)(a & b);
        else if (op == ACIS_OP_LOR)
            io[i] = (uint8_t)(a | b);
        else
            io[i] = (uint8_t)(a ^ b);
    }
}

/* MPI_BYTE: the bitwise ops of uint8_t. */
static void red_byte(unsigned op, void *io, const void *in, size_t n)
{
    red_u8(op, io, in, n);
}

/* Pair types: value, then int index, in the C struct layout. */
#define PAIR_KERNEL(name, VT)                                                \
    static void name(unsigned op, void *vio, const void *vin, size_t n)     \
    {                                                                        \
        struct p { VT v; int i; } *io = vio;                                 \
        const struct p *in = vin;                                            \
        for (size_t k = 0; k < n; k++) {                                     \
            int better = op == ACIS_OP_MINLOC ? in[k].v < io[k].v             \
                                              : in[k].v > io[k].v;           \
            if (better)                                                      \
                io[k] = in[k];                                               \
            else if (in[k].v == io[k].v && in[k].i < io[k].i)                \
                io[k].i = in[k].i;                                           \
        }                                                                    \
    }

PAIR_KERNEL(red_float_int, float)
PAIR_KERNEL(red_double_int, double)
PAIR_KERNEL(red_long_int, long)
PAIR_KERNEL(red_2int, int)
PAIR_KERNEL(red_short_int, short)
PAIR_KERNEL(red_long_double_int, long double)

typedef void (*kernel)(unsigned op, void *io, const void *in, size_t n);

static const kernel kernels[ACIS_DT_COUNT] = {
    [ACIS_DT_I8] = red_i8,   [ACIS_DT_U8] = red_u8,   [ACIS_DT_I16] = red_i16,
    [ACIS_DT_U16] = red_u16, [ACIS_DT_I32] = red_i32, [ACIS_DT_U32] = red_u32,
    [ACIS_DT_I64] = red_i64, [ACIS_DT_U64] = red_u64, [ACIS_DT_F32] = red_f32,
    [ACIS_DT_F64] = red_f64, [ACIS_DT_F80] = red_f80, [ACIS_DT_C32] = red_c32,
    [ACIS_DT_C64] = red_c64, [ACIS_DT_C80] = red_c80, [ACIS_DT_BOOL] = red_bool,
    [ACIS_DT_BYTE] = red_byte,
    [ACIS_DT_FLOAT_INT] = red_float_int,   [ACIS_DT_DOUBLE_INT] = red_double_int,
    [ACIS_DT_LONG_INT] = red_long_int,     [ACIS_DT_2INT] = red_2int,
    [ACIS_DT_SHORT_INT] = red_short_int,   [ACIS_DT_LONG_DOUBLE_INT] = red_long_double_int,
};

void acis_reduce(unsigned op, unsigned dt, void *inout, const void *in, size_t n)
{
    if (dt < ACIS_DT_COUNT && kernels[dt] && acis_wire_op_valid(op, dt))
        kernels[dt](op, inout, in, n);
}
