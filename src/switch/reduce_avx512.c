/* reduce_avx512.c -- the loops of kern.h compiled for AVX-512 (F, BW, DQ,
 * VL; 512-bit vectors); reduce.c calls them only on a CPU that has all
 * four. */
#include "config.h"

#include "kern.h"

#if defined(__x86_64__) && defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))), \
                             apply_to = function)
KERN_TABLE(sw_kernels_avx512)
#pragma clang attribute pop
#elif defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512")
KERN_TABLE(sw_kernels_avx512)
#pragma GCC pop_options
#else
const sw_kernel sw_kernels_avx512[ACIS_DT_COUNT];   /* all NULL: not built */
#endif
