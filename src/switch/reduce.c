/* reduce.c -- the aggregation logic units: inout = inout op in, element by
 * element, for every wire datatype and operation the switch accepts.
 *
 * Semantics follow MPICH's own kernels: integer SUM and PROD wrap (done in
 * unsigned arithmetic, so no undefined behaviour), MIN/MAX pick "in" when
 * it compares less/greater, logical ops yield 0 or 1, MINLOC/MAXLOC keep
 * the smaller index on ties, complex PROD uses the textbook formula.
 *
 * Dispatch: integer and floating kernels also exist built for AVX2 and
 * AVX-512 (reduce_avx2.c, reduce_avx512.c, same loops from kern.h); the
 * best set this CPU runs is chosen once, at first use. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>

#include "kern.h"

/* Integer and floating types: the loops of kern.h, baseline build. */
KERN_TABLE(sw_kernels_base)

/* long double: the same loops, never vectorized (x87). */
KERN_FLOAT(red_f80, long double)

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

/* Types only the baseline has kernels for. */
static const sw_kernel scalar_only[ACIS_DT_COUNT] = {
    [ACIS_DT_F80] = red_f80,
    [ACIS_DT_C32] = red_c32, [ACIS_DT_C64] = red_c64, [ACIS_DT_C80] = red_c80,
    [ACIS_DT_BOOL] = red_bool,
    [ACIS_DT_FLOAT_INT] = red_float_int,   [ACIS_DT_DOUBLE_INT] = red_double_int,
    [ACIS_DT_LONG_INT] = red_long_int,     [ACIS_DT_2INT] = red_2int,
    [ACIS_DT_SHORT_INT] = red_short_int,   [ACIS_DT_LONG_DOUBLE_INT] = red_long_double_int,
};

/* The dispatch context of the kernels, filled once: per set, a kernel
 * for every type (the set's own where it has one, else the baseline's),
 * or no row at all if this CPU cannot run the set. */
static struct {
    pthread_once_t once;
    int best;
    int usable[ACIS_ISA_COUNT];
    sw_kernel set[ACIS_ISA_COUNT][ACIS_DT_COUNT];
} kd = { .once = PTHREAD_ONCE_INIT };

static int cpu_has(int isa)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (isa == ACIS_ISA_AVX2)
        return __builtin_cpu_supports("avx2");
    if (isa == ACIS_ISA_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    return isa == ACIS_ISA_BASE;
}

static void dispatch_init(void)
{
    const sw_kernel *own[ACIS_ISA_COUNT] = { sw_kernels_base, sw_kernels_avx2,
                                             sw_kernels_avx512 };
    for (int isa = 0; isa < ACIS_ISA_COUNT; isa++) {
        int built = 0;
        for (unsigned dt = 0; dt < ACIS_DT_COUNT; dt++)
            built |= own[isa][dt] != NULL;
        kd.usable[isa] = built && cpu_has(isa);
        if (kd.usable[isa])
            kd.best = isa;
        for (unsigned dt = 0; dt < ACIS_DT_COUNT; dt++)
            kd.set[isa][dt] = own[isa][dt] ? own[isa][dt]
                              : sw_kernels_base[dt] ? sw_kernels_base[dt] : scalar_only[dt];
    }
}

int acis_reduce_isa(void)
{
    pthread_once(&kd.once, dispatch_init);
    return kd.best;
}

const sw_kernel *sw_kernels_best(void)
{
    pthread_once(&kd.once, dispatch_init);
    return kd.set[kd.best];
}

const char *acis_reduce_isa_name(int isa)
{
    static const char *const names[ACIS_ISA_COUNT] = { "base", "avx2", "avx512" };
    return isa >= 0 && isa < ACIS_ISA_COUNT ? names[isa] : "?";
}

int acis_reduce_on(int isa, unsigned op, unsigned dt, void *inout, const void *in, size_t n)
{
    pthread_once(&kd.once, dispatch_init);
    if (isa < 0 || isa >= ACIS_ISA_COUNT || !kd.usable[isa])
        return -1;
    if (dt < ACIS_DT_COUNT && kd.set[isa][dt] && acis_wire_op_valid(op, dt))
        kd.set[isa][dt](op, inout, in, n);
    return 0;
}

void acis_reduce(unsigned op, unsigned dt, void *inout, const void *in, size_t n)
{
    acis_reduce_on(acis_reduce_isa(), op, dt, inout, in, n);
}
