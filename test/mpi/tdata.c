/* tdata.c -- the test datatype table and data patterns (see tdata.h). */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tdata.h"

#define T(mpi, kind, width) { #mpi, mpi, kind, width, kind, 0, width }
#define C(mpi, width) { #mpi, mpi, TK_COMPLEX, width, TK_FLOAT, 0, 2 * (width) }
#define P(mpi, vkind, vwidth, ctype) \
    { #mpi, mpi, TK_PAIR, vwidth, vkind, offsetof(ctype, i), sizeof(ctype) }

struct pf { float v; int i; };
struct pd { double v; int i; };
struct pl { long v; int i; };
struct p2 { int v; int i; };
struct ps { short v; int i; };
struct pld { long double v; int i; };

const struct ttype ttypes[] = {
    T(MPI_INT, TK_SINT, 4),
    T(MPI_DOUBLE, TK_FLOAT, 8),
    T(MPI_CHAR, TK_SINT, 1),
    T(MPI_FLOAT, TK_FLOAT, 4),
    T(MPI_SIGNED_CHAR, TK_SINT, 1),
    T(MPI_UNSIGNED_CHAR, TK_UINT, 1),
    T(MPI_SHORT, TK_SINT, 2),
    T(MPI_UNSIGNED_SHORT, TK_UINT, 2),
    T(MPI_UNSIGNED, TK_UINT, 4),
    T(MPI_LONG, TK_SINT, 8),
    T(MPI_UNSIGNED_LONG, TK_UINT, 8),
    T(MPI_LONG_LONG, TK_SINT, 8),
    T(MPI_UNSIGNED_LONG_LONG, TK_UINT, 8),
    T(MPI_INT8_T, TK_SINT, 1),
    T(MPI_UINT8_T, TK_UINT, 1),
    T(MPI_INT16_T, TK_SINT, 2),
    T(MPI_UINT16_T, TK_UINT, 2),
    T(MPI_INT32_T, TK_SINT, 4),
    T(MPI_UINT32_T, TK_UINT, 4),
    T(MPI_INT64_T, TK_SINT, 8),
    T(MPI_UINT64_T, TK_UINT, 8),
    T(MPI_AINT, TK_SINT, 8),
    T(MPI_LONG_DOUBLE, TK_FLOAT, 16),
    C(MPI_C_FLOAT_COMPLEX, 4),
    C(MPI_C_DOUBLE_COMPLEX, 8),
    C(MPI_C_LONG_DOUBLE_COMPLEX, 16),
    T(MPI_C_BOOL, TK_BOOL, 1),
    T(MPI_BYTE, TK_BYTE, 1),
    T(MPI_INTEGER4, TK_SINT, 4),        /* Fortran's sized types */
    T(MPI_INTEGER8, TK_SINT, 8),
    T(MPI_REAL8, TK_FLOAT, 8),
    C(MPI_COMPLEX16, 8),
    P(MPI_FLOAT_INT, TK_FLOAT, 4, struct pf),
    P(MPI_DOUBLE_INT, TK_FLOAT, 8, struct pd),
    P(MPI_LONG_INT, TK_SINT, 8, struct pl),
    P(MPI_2INT, TK_SINT, 4, struct p2),
    P(MPI_SHORT_INT, TK_SINT, 2, struct ps),
    P(MPI_LONG_DOUBLE_INT, TK_FLOAT, 16, struct pld),
};
const int nttypes = sizeof ttypes / sizeof ttypes[0];

const struct top tops[] = {
    { "MPI_SUM", MPI_SUM },   { "MPI_PROD", MPI_PROD }, { "MPI_MIN", MPI_MIN },
    { "MPI_MAX", MPI_MAX },   { "MPI_LAND", MPI_LAND }, { "MPI_LOR", MPI_LOR },
    { "MPI_LXOR", MPI_LXOR }, { "MPI_BAND", MPI_BAND }, { "MPI_BOR", MPI_BOR },
    { "MPI_BXOR", MPI_BXOR }, { "MPI_MINLOC", MPI_MINLOC },
    { "MPI_MAXLOC", MPI_MAXLOC },
};
const int ntops = sizeof tops / sizeof tops[0];

int top_valid(const struct ttype *t, MPI_Op op)
{
    int arith = op == MPI_SUM || op == MPI_PROD;
    int order = op == MPI_MIN || op == MPI_MAX;
    int logic = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
    int bits = op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
    int loc = op == MPI_MINLOC || op == MPI_MAXLOC;
    switch (t->kind) {
    case TK_SINT:
    case TK_UINT:    return arith || order || logic || bits;
    case TK_FLOAT:   return arith || order;
    case TK_COMPLEX: return arith;
    case TK_BOOL:    return logic;
    case TK_BYTE:    return bits;
    case TK_PAIR:    return loc;
    }
    return 0;
}

int tfind(const char *name)
{
    for (int i = 0; i < nttypes; i++)
        if (strcmp(ttypes[i].name, name) == 0)
            return i;
    return -1;
}

/* Store the small integer v as a value of kind/width at p. */
static void put(enum tkind kind, int width, void *p, long v)
{
    switch (kind) {
    case TK_SINT:
    case TK_UINT:
    case TK_BYTE:
        if (kind == TK_UINT || kind == TK_BYTE)
            v = v < 0 ? -v : v;
        switch (width) {
        case 1: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
        case 2: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
        case 4: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
        default: { int64_t x = v; memcpy(p, &x, 8); break; }
        }
        break;
    case TK_BOOL: { bool b = (v & 1) != 0; memcpy(p, &b, 1); break; }
    case TK_FLOAT:
    case TK_COMPLEX:
        if (width == 4) { float x = (float)v; memcpy(p, &x, 4); }
        else if (width == 8) { double x = (double)v; memcpy(p, &x, 8); }
        else { long double x = (long double)v; memcpy(p, &x, 10); }  /* x87: 10 bytes */
        break;
    case TK_PAIR:
        break;
    }
}

void tfill(const struct ttype *t, void *p, size_t count, int rank, int seed)
{
    char *c = p;
    memset(p, 0, count * (size_t)t->extent);      /* padding bytes too */
    for (size_t i = 0; i < count; i++, c += t->extent) {
        /* In -3..4: products of four stay small, signs exercise MIN/MAX. */
        long v = (long)((i * 7 + (size_t)rank * 3 + (size_t)seed * 5) % 8) - 3;
        switch (t->kind) {
        case TK_COMPLEX:
            put(t->kind, t->width, c, v);
            put(t->kind, t->width, c + t->extent / 2, (v + 2) % 3);
            break;
        case TK_PAIR: {
            int idx = rank;
            put(t->vkind, t->width, c, (v % 3));   /* ties, so index order matters */
            memcpy(c + t->idx_off, &idx, sizeof idx);
            break;
        }
        case TK_BYTE:
            put(t->kind, t->width, c, (long)((i * 37 + (size_t)rank * 101 + (size_t)seed) & 0x7f));
            break;
        default:
            put(t->kind, t->width, c, v);
            break;
        }
    }
}

/* The value-carrying byte ranges of one element: up to two (offset, len). */
static int ranges(const struct ttype *t, size_t off[2], size_t len[2])
{
    size_t w = t->width == 16 && t->kind != TK_SINT && t->kind != TK_UINT ? 10 : (size_t)t->width;
    if (t->kind == TK_PAIR && t->vkind == TK_FLOAT && t->width == 16)
        w = 10;
    off[0] = 0;
    len[0] = w;
    switch (t->kind) {
    case TK_COMPLEX:
        off[1] = (size_t)t->extent / 2;
        len[1] = w;
        return 2;
    case TK_PAIR:
        off[1] = (size_t)t->idx_off;
        len[1] = sizeof(int);
        return 2;
    default:
        return 1;
    }
}

long tdiff(const struct ttype *t, const void *a, const void *b, size_t count)
{
    size_t off[2], len[2];
    int n = ranges(t, off, len);
    const char *pa = a, *pb = b;
    for (size_t i = 0; i < count; i++, pa += t->extent, pb += t->extent)
        for (int r = 0; r < n; r++)
            if (memcmp(pa + off[r], pb + off[r], len[r]) != 0)
                return (long)i;
    return -1;
}

unsigned long long tdigest(const struct ttype *t, const void *p, size_t count)
{
    size_t off[2], len[2];
    int n = ranges(t, off, len);
    unsigned long long h = 1469598103934665603ULL;
    const unsigned char *c = p;
    for (size_t i = 0; i < count; i++, c += t->extent)
        for (int r = 0; r < n; r++)
            for (size_t k = 0; k < len[r]; k++)
                h = (h ^ c[off[r] + k]) * 1099511628211ULL;
    return h;
}

const char *targ(int argc, char **argv, const char *name, const char *dflt)
{
    size_t l = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, l) == 0 && argv[i][l] == '=')
            return argv[i] + l + 1;
    return dflt;
}

int64_t tval64(int r, int i, int salt)
{
    return (int64_t)(r + 1) * (i % 89 + 1) + (int64_t)salt * 1000;
}

void tfill64(int64_t *v, int n, int rank, int salt)
{
    for (int i = 0; i < n; i++)
        v[i] = tval64(rank, i, salt);
}

int tsum64_ok(const int64_t *v, int n, int size, int salt)
{
    for (int i = 0; i < n; i++) {
        int64_t want = 0;
        for (int r = 0; r < size; r++)
            want += tval64(r, i, salt);
        if (v[i] != want)
            return 0;
    }
    return 1;
}
