/* dtype.c -- what a datatype looks like to the switch: the one wire element
 * type its signature repeats (if any), how many per instance, and whether
 * its memory already is the wire image (dense) or must be packed.
 *
 * Predefined types come from a table; derived types are decoded with
 * MPI_Type_get_envelope/contents and the result is cached on the type with
 * an attribute.  The analysis depends on the type signature, not on the
 * handle, so ranks that describe the same data with different types (4 x
 * MPI_INT here, a contiguous type of 4 MPI_INT there) reach the same
 * decision. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fallback.h"
#include "util/util.h"

struct builtin { MPI_Datatype type; uint8_t prim; };

static int free_info(MPI_Datatype t, int keyval, void *val, void *extra);

/* C, fixed-width and Fortran types whose MPICH layout is one wire element. */
static const struct builtin builtins[] = {
#if defined(__CHAR_UNSIGNED__)
    { MPI_CHAR, ACIS_DT_U8 },
#else
    { MPI_CHAR, ACIS_DT_I8 },
#endif
    { MPI_SIGNED_CHAR, ACIS_DT_I8 }, { MPI_UNSIGNED_CHAR, ACIS_DT_U8 },
    { MPI_SHORT, ACIS_DT_I16 }, { MPI_UNSIGNED_SHORT, ACIS_DT_U16 },
    { MPI_INT, ACIS_DT_I32 }, { MPI_UNSIGNED, ACIS_DT_U32 },
    { MPI_LONG, ACIS_DT_I64 }, { MPI_UNSIGNED_LONG, ACIS_DT_U64 },
    { MPI_LONG_LONG, ACIS_DT_I64 }, { MPI_UNSIGNED_LONG_LONG, ACIS_DT_U64 },
    { MPI_INT8_T, ACIS_DT_I8 }, { MPI_UINT8_T, ACIS_DT_U8 },
    { MPI_INT16_T, ACIS_DT_I16 }, { MPI_UINT16_T, ACIS_DT_U16 },
    { MPI_INT32_T, ACIS_DT_I32 }, { MPI_UINT32_T, ACIS_DT_U32 },
    { MPI_INT64_T, ACIS_DT_I64 }, { MPI_UINT64_T, ACIS_DT_U64 },
    { MPI_AINT, ACIS_DT_I64 }, { MPI_OFFSET, ACIS_DT_I64 },
    { MPI_COUNT, ACIS_DT_I64 },
    { MPI_FLOAT, ACIS_DT_F32 }, { MPI_DOUBLE, ACIS_DT_F64 },
    { MPI_LONG_DOUBLE, ACIS_DT_F80 },
    { MPI_C_FLOAT_COMPLEX, ACIS_DT_C32 }, { MPI_C_DOUBLE_COMPLEX, ACIS_DT_C64 },
    { MPI_C_LONG_DOUBLE_COMPLEX, ACIS_DT_C80 },
    { MPI_C_BOOL, ACIS_DT_BOOL }, { MPI_BYTE, ACIS_DT_BYTE },
    { MPI_FLOAT_INT, ACIS_DT_FLOAT_INT }, { MPI_DOUBLE_INT, ACIS_DT_DOUBLE_INT },
    { MPI_LONG_INT, ACIS_DT_LONG_INT }, { MPI_2INT, ACIS_DT_2INT },
    { MPI_SHORT_INT, ACIS_DT_SHORT_INT },
    { MPI_LONG_DOUBLE_INT, ACIS_DT_LONG_DOUBLE_INT },
    { MPI_INTEGER, ACIS_DT_I32 }, { MPI_REAL, ACIS_DT_F32 },
    { MPI_DOUBLE_PRECISION, ACIS_DT_F64 }, { MPI_COMPLEX, ACIS_DT_C32 },
    { MPI_DOUBLE_COMPLEX, ACIS_DT_C64 }, { MPI_2INTEGER, ACIS_DT_2INT },
    /* Fortran's sized types (BLACS combines with MPI_INTEGER4) */
    { MPI_INTEGER1, ACIS_DT_I8 }, { MPI_INTEGER2, ACIS_DT_I16 },
    { MPI_INTEGER4, ACIS_DT_I32 }, { MPI_INTEGER8, ACIS_DT_I64 },
    { MPI_REAL4, ACIS_DT_F32 }, { MPI_REAL8, ACIS_DT_F64 },
    { MPI_COMPLEX8, ACIS_DT_C32 }, { MPI_COMPLEX16, ACIS_DT_C64 },
};
#define NBUILTIN (sizeof builtins / sizeof builtins[0])

/* Predefined lookup through a small open-addressing hash built at init;
 * before that (unit tests, early calls) a linear scan. */
static unsigned hash_handle(MPI_Datatype t)
{
    uint64_t h = (uint64_t)(uintptr_t)t * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 57);                 /* 0..127 */
}

static int builtin_prim(MPI_Datatype t)
{
    if (t == MPI_DATATYPE_NULL)
        return -1;
    if (acis_fb.ready) {
        for (unsigned i = hash_handle(t), n = 0; n < ACIS_DT_HASH; n++, i = (i + 1) % ACIS_DT_HASH) {
            if (acis_fb.dt_hash[i].prim == 0)
                return -1;
            if (acis_fb.dt_hash[i].type == t)
                return acis_fb.dt_hash[i].prim;
        }
        return -1;
    }
    for (size_t i = 0; i < NBUILTIN; i++)
        if (builtins[i].type == t)
            return builtins[i].prim;
    return -1;
}

/* Signature bytes of one prim element (MPI_Type_size of the pair types is
 * smaller than their wire size). */
static MPI_Count prim_sig_size(int prim)
{
    if (acis_fb.ready)
        return acis_fb.sig_size[prim];
    for (size_t i = 0; i < NBUILTIN; i++)
        if (builtins[i].prim == prim && builtins[i].type != MPI_DATATYPE_NULL) {
            MPI_Count s;
            PMPI_Type_size_x(builtins[i].type, &s);
            return s;
        }
    return 0;
}

int acis_dtype_init(void)
{
    memset(acis_fb.dt_hash, 0, sizeof acis_fb.dt_hash);
    for (size_t b = 0; b < NBUILTIN; b++) {
        MPI_Datatype t = builtins[b].type;
        MPI_Count s;
        if (t == MPI_DATATYPE_NULL)
            continue;
        unsigned i = hash_handle(t);
        while (acis_fb.dt_hash[i].prim != 0 && acis_fb.dt_hash[i].type != t)
            i = (i + 1) % ACIS_DT_HASH;
        acis_fb.dt_hash[i].type = t;
        acis_fb.dt_hash[i].prim = builtins[b].prim;
        if (PMPI_Type_size_x(t, &s) == MPI_SUCCESS && acis_fb.sig_size[builtins[b].prim] == 0)
            acis_fb.sig_size[builtins[b].prim] = s;
    }
    return PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, free_info,
                                   &acis_fb.type_keyval, NULL) == MPI_SUCCESS ? 0 : -1;
}

void acis_dtype_finalize(void)
{
    PMPI_Type_free_keyval(&acis_fb.type_keyval);
}

/* Recursive walk: prim (-1: none/mixed) and whether an instance's memory is
 * its wire image starting at true_lb. */
struct walk { int prim; int dense; };

static void walk_type(MPI_Datatype t, struct walk *w);

/* Dense repetition of an instance of t needs its extent to equal its wire
 * span and its lb to be its true lb. */
static int tight(MPI_Datatype t, const struct walk *w)
{
    MPI_Count lb, extent, tlb, textent, size;
    if (w->prim <= 0)
        return 0;
    PMPI_Type_get_extent_x(t, &lb, &extent);
    PMPI_Type_get_true_extent_x(t, &tlb, &textent);
    PMPI_Type_size_x(t, &size);
    MPI_Count sig = prim_sig_size(w->prim);
    if (sig <= 0)
        return 0;
    MPI_Count span = size / sig * (MPI_Count)acis_wire_dt_size(w->prim);
    return w->dense && extent == span && lb == tlb;
}

/* Consecutive blocks: block i+1 starts where block i ends (in bytes). */
static int consecutive(int count, const int *blens, const MPI_Aint *disp_bytes,
                       MPI_Aint elem_extent)
{
    MPI_Aint next = 0;
    int first = 1;
    for (int i = 0; i < count; i++) {
        if (blens[i] == 0)
            continue;
        if (!first && disp_bytes[i] != next)
            return 0;
        first = 0;
        next = disp_bytes[i] + (MPI_Aint)blens[i] * elem_extent;
    }
    return 1;
}

static void free_if_derived(MPI_Datatype t)
{
    int ni, na, nd, comb;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED)
        PMPI_Type_free(&t);
}

static void walk_contents(MPI_Datatype t, int comb, int ni, int na, int nd,
                          struct walk *w)
{
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    MPI_Aint *disp = NULL;
    w->prim = -1;
    w->dense = 0;
    if (!ints || !aints || !types)
        goto done;
    PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types);

    struct walk sub = { -1, 0 };
    if (comb != MPI_COMBINER_STRUCT) {
        walk_type(types[0], &sub);
        w->prim = sub.prim;
    }
    MPI_Aint lb, ext;
    if (nd > 0)
        PMPI_Type_get_extent(types[0], &lb, &ext);
    int sub_tight = comb != MPI_COMBINER_STRUCT && tight(types[0], &sub);

    switch (comb) {
    case MPI_COMBINER_DUP:
        w->dense = sub.dense;
        break;
    case MPI_COMBINER_RESIZED:
        w->dense = sub.dense;
        break;
    case MPI_COMBINER_CONTIGUOUS:
        w->dense = sub.dense && (ints[0] <= 1 || sub_tight);
        break;
    case MPI_COMBINER_VECTOR:
        w->dense = sub.dense && (ints[0] <= 1 || (sub_tight && ints[2] == ints[1]));
        break;
    case MPI_COMBINER_HVECTOR:
        w->dense = sub.dense &&
                   (ints[0] <= 1 || (sub_tight && aints[0] == (MPI_Aint)ints[1] * ext));
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        int n = ints[0];
        int *blens = malloc(sizeof(int) * (size_t)(n + 1));
        disp = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
        if (!blens || !disp) {
            free(blens);
            break;
        }
        for (int i = 0; i < n; i++) {
            switch (comb) {
            case MPI_COMBINER_INDEXED:
                blens[i] = ints[1 + i];
                disp[i] = (MPI_Aint)ints[1 + n + i] * ext;
                break;
            case MPI_COMBINER_HINDEXED:
                blens[i] = ints[1 + i];
                disp[i] = aints[i];
                break;
            case MPI_COMBINER_INDEXED_BLOCK:
                blens[i] = ints[1];
                disp[i] = (MPI_Aint)ints[2 + i] * ext;
                break;
            default:
                blens[i] = ints[1];
                disp[i] = aints[i];
                break;
            }
        }
        w->dense = sub.dense && sub_tight && consecutive(n, blens, disp, ext);
        free(blens);
        break;
    }
    case MPI_COMBINER_STRUCT: {
        int n = ints[0], dense = 1, prim = -2;
        MPI_Aint next = 0;
        int first = 1;
        for (int i = 0; i < n; i++) {
            if (ints[1 + i] == 0)
                continue;
            struct walk e;
            walk_type(types[i], &e);
            if (prim == -2)
                prim = e.prim;
            else if (prim != e.prim)
                prim = -1;
            PMPI_Type_get_extent(types[i], &lb, &ext);
            if (!e.dense || (ints[1 + i] > 1 && !tight(types[i], &e)) ||
                (!first && aints[i] != next))
                dense = 0;
            first = 0;
            next = aints[i] + (MPI_Aint)ints[1 + i] * ext;
        }
        w->prim = prim == -2 ? -1 : prim;
        w->dense = dense && w->prim > 0;
        break;
    }
    default:
        /* subarray, darray, Fortran parameterised types: same elements as
         * the old type, but the layout is left to MPI_Pack. */
        w->dense = 0;
        break;
    }
    for (int i = 0; i < nd; i++)
        free_if_derived(types[i]);
done:
    free(disp);
    free(ints);
    free(aints);
    free(types);
}

static void walk_type(MPI_Datatype t, struct walk *w)
{
    int prim = builtin_prim(t);
    if (prim >= 0) {
        w->prim = prim;
        w->dense = 1;
        return;
    }
    int ni, na, nd, comb;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb == MPI_COMBINER_NAMED) {
        w->prim = -1;                   /* a predefined type acis lacks */
        w->dense = 0;
        return;
    }
    walk_contents(t, comb, ni, na, nd, w);
}

static int analyse(MPI_Datatype t, struct acis_dtinfo *out)
{
    MPI_Count lb, extent, tlb, textent;
    struct walk w;
    memset(out, 0, sizeof *out);
    if (PMPI_Type_size_x(t, &out->size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_x(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(t, &tlb, &textent) != MPI_SUCCESS)
        return -1;
    out->extent = extent;
    out->true_lb = tlb;
    walk_type(t, &w);
    if (w.prim <= 0) {
        out->prim = ACIS_DT_NONE;
        return 0;
    }
    MPI_Count sig = prim_sig_size(w.prim);
    out->prim = (uint8_t)w.prim;
    out->nprim = sig > 0 ? (uint64_t)(out->size / sig) : 0;
    out->dense = (uint8_t)tight(t, &w);
    return 0;
}

static int free_info(MPI_Datatype t, int keyval, void *val, void *extra)
{
    free(val);
    return MPI_SUCCESS;
}

int acis_dtype_info(MPI_Datatype type, struct acis_dtinfo *out)
{
    int prim = builtin_prim(type);
    if (prim >= 0) {                    /* the common case: no MPI calls */
        size_t ws = acis_wire_dt_size((unsigned)prim);
        out->prim = (uint8_t)prim;
        out->dense = 1;
        out->predefined = 1;
        out->nprim = 1;
        out->extent = (MPI_Count)ws;
        out->true_lb = 0;
        out->size = prim_sig_size(prim);
        return 0;
    }
    if (acis_fb.ready) {
        void *val;
        int found = 0;
        if (PMPI_Type_get_attr(type, acis_fb.type_keyval, &val, &found) ==
                MPI_SUCCESS && found) {
            *out = *(struct acis_dtinfo *)val;
            out->predefined = 0;
            return 0;
        }
    }
    int rc = analyse(type, out);
    out->predefined = 0;
    if (rc == 0 && acis_fb.ready) {
        struct acis_dtinfo *copy = malloc(sizeof *copy);
        if (copy) {
            *copy = *out;
            if (PMPI_Type_set_attr(type, acis_fb.type_keyval, copy) != MPI_SUCCESS)
                free(copy);
        }
    }
    return rc;
}

int acis_dtype_raw_bytes(const struct acis_dtinfo *dt)
{
    return dt->dense && dt->prim != ACIS_DT_NONE &&
           prim_sig_size(dt->prim) == (MPI_Count)acis_wire_dt_size(dt->prim);
}
