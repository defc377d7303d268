/* reduce_avx2.c -- the loops of kern.h compiled for AVX2 (256-bit
 * vectors); reduce.c calls them only on a CPU that has AVX2. */
#include "config.h"

#include "kern.h"

#if defined(__x86_64__) && defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
KERN_TABLE(sw_kernels_avx2)
#pragma clang attribute pop
#elif defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2")
KERN_TABLE(sw_kernels_avx2)
#pragma GCC pop_options
#else
const sw_kernel sw_kernels_avx2[ACIS_DT_COUNT];     /* all NULL: not built */
#endif
