/* kern.h -- the element loops of the integer and floating reduction
 * kernels, written once and compiled once per instruction set: reduce.c
 * (the x86-64 / any-CPU baseline) and reduce_avx2.c, reduce_avx512.c
 * include it after choosing their target.  The loops are plain C with no
 * reassociation, so every build computes bitwise the same result; the
 * compiler only widens them (IEEE semantics kept: no -ffast-math).
 *
 * KERN_TABLE(name) defines `const sw_kernel name[ACIS_DT_COUNT]` with the
 * entries these loops cover; other types stay NULL (scalar in reduce.c). */
#ifndef ACIS_SW_KERN_H
#define ACIS_SW_KERN_H

#include <stddef.h>
#include <stdint.h>

#include "sw.h"

/* Integer types: every op but MINLOC/MAXLOC. UT is the unsigned twin.
 * SUM and PROD wrap (unsigned arithmetic, no undefined behaviour). */
#define KERN_INT(name, T, UT)                                                \
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
            for (i = 0; i < n; i++) io[i] = (T)(io[i] != 0 && in[i] != 0);   \
            break;                                                           \
        case ACIS_OP_LOR:                                                    \
            for (i = 0; i < n; i++) io[i] = (T)(io[i] != 0 || in[i] != 0);   \
            break;                                                           \
        case ACIS_OP_LXOR:                                                   \
            for (i = 0; i < n; i++) io[i] = (T)((io[i] != 0) != (in[i] != 0)); \
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

/* Floating types: SUM, PROD, MIN, MAX.  MIN and MAX are exactly
 * "in < io ? in : io" and "in > io ? in : io": a NaN in either keeps io,
 * and of -0.0 and +0.0 (equal) io is kept. */
#define KERN_FLOAT(name, T)                                                  \
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

#define KERN_TABLE(table)                                                    \
    KERN_INT(k_i8, int8_t, uint8_t)                                          \
    KERN_INT(k_u8, uint8_t, uint8_t)                                         \
    KERN_INT(k_i16, int16_t, uint16_t)                                       \
    KERN_INT(k_u16, uint16_t, uint16_t)                                      \
    KERN_INT(k_i32, int32_t, uint32_t)                                       \
    KERN_INT(k_u32, uint32_t, uint32_t)                                      \
    KERN_INT(k_i64, int64_t, uint64_t)                                       \
    KERN_INT(k_u64, uint64_t, uint64_t)                                      \
    KERN_FLOAT(k_f32, float)                                                 \
    KERN_FLOAT(k_f64, double)                                                \
    const sw_kernel table[ACIS_DT_COUNT] = {                                 \
        [ACIS_DT_I8] = k_i8,   [ACIS_DT_U8] = k_u8,   [ACIS_DT_I16] = k_i16, \
        [ACIS_DT_U16] = k_u16, [ACIS_DT_I32] = k_i32, [ACIS_DT_U32] = k_u32, \
        [ACIS_DT_I64] = k_i64, [ACIS_DT_U64] = k_u64, [ACIS_DT_F32] = k_f32, \
        [ACIS_DT_F64] = k_f64, [ACIS_DT_BYTE] = k_u8,                        \
    };

#endif
