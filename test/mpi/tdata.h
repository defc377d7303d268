/* tdata.h -- datatypes, operations and data patterns for the MPI tests:
 * every predefined C type acis knows, the ops MPI defines on each, and
 * deterministic small-integer data so that results are exact in every
 * type and any order of reduction; and the tests' --name=value options. */
#ifndef ACIS_TEST_TDATA_H
#define ACIS_TEST_TDATA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum tkind { TK_SINT, TK_UINT, TK_FLOAT, TK_COMPLEX, TK_BOOL, TK_BYTE, TK_PAIR };

struct ttype {
    const char *name;
    MPI_Datatype type;
    enum tkind kind;
    int width;                /* bytes of the value (of each part for complex) */
    enum tkind vkind;         /* pairs: kind of the value */
    int idx_off;              /* pairs: offset of the int index */
    int extent;               /* bytes per element in memory */
};

struct top { const char *name; MPI_Op op; };

extern const struct ttype ttypes[];
extern const int nttypes;
extern const struct top tops[];
extern const int ntops;

/* 1 if MPI defines op on type t (MPICH's MPI_CHAR extension included). */
int top_valid(const struct ttype *t, MPI_Op op);

/* Write element i of rank's data, pattern seed, into p (count elements).
 * Values are small integers, so SUM and PROD over 4 ranks stay exact. */
void tfill(const struct ttype *t, void *p, size_t count, int rank, int seed);

/* Element index of the first difference between a and b (count elements
 * of t) in bytes that carry value -- padding ignored -- or -1. */
long tdiff(const struct ttype *t, const void *a, const void *b, size_t count);

/* Hash of the value bytes of count elements (padding ignored). */
unsigned long long tdigest(const struct ttype *t, const void *p, size_t count);

/* Index of the type named name, or -1. */
int tfind(const char *name);

/* Int64 data for sums: element i of rank r's vector with pattern salt;
 * fill v[0..n) with rank's; 1 if v[0..n) is the sum over ranks 0..size-1. */
int64_t tval64(int r, int i, int salt);
void tfill64(int64_t *v, int n, int rank, int salt);
int tsum64_ok(const int64_t *v, int n, int size, int salt);

/* The value of option name ("--name=value") in argv, or dflt. */
const char *targ(int argc, char **argv, const char *name, const char *dflt);

#endif
