/* dtype_check.c -- derived datatypes through the switch: contiguous runs
 * of one type go in place, strided and resized ones are packed, pair types
 * with holes are spread to their wire layout, mixed-type structs travel as
 * packed bytes in data-movement collectives.  Results are compared with
 * MPICH on equivalent predefined-type calls (MPICH 4.0 refuses predefined
 * operations on derived types, so the reference uses the element type),
 * gaps in strided buffers must stay untouched, and every call must be
 * offloaded. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "dtype_check[%d]: FAIL %s\n", rank, what);
    }
}

/* Run f and require that exactly one call of coll was offloaded. */
#define OFFLOADED(coll, call)                                                 \
    do {                                                                      \
        struct acis_coll_stats a_, b_;                                        \
        acis_get_stats(coll, &a_);                                            \
        call;                                                                 \
        acis_get_stats(coll, &b_);                                            \
        check(b_.offloaded == a_.offloaded + 1, #call " not offloaded");      \
    } while (0)

static void contiguous_run(void)
{
    enum { N = 300 };
    MPI_Datatype four;
    MPI_Type_contiguous(4, MPI_DOUBLE, &four);
    MPI_Type_commit(&four);
    static double in[4 * N], out[4 * N], ref[4 * N];
    for (int i = 0; i < 4 * N; i++)
        in[i] = rank * 10 + i % 13;
    OFFLOADED(ACIS_COLL_ALLREDUCE, MPI_Allreduce(in, out, N, four, MPI_SUM, MPI_COMM_WORLD));
    PMPI_Allreduce(in, ref, 4 * N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check(memcmp(out, ref, sizeof ref) == 0, "allreduce, contiguous(4, MPI_DOUBLE)");
    MPI_Type_free(&four);
}

/* vector(50, 2, 3, MPI_INT): 100 ints with a gap after every pair. */
static void strided_reduction(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(50, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int in[150], out[150], packed_in[100], packed_ref[100];
    for (int i = 0; i < 150; i++) {
        in[i] = rank * 100 + i;
        out[i] = -7;
    }
    for (int b = 0, k = 0; b < 50; b++)
        for (int j = 0; j < 2; j++)
            packed_in[k++] = in[3 * b + j];
    OFFLOADED(ACIS_COLL_ALLREDUCE, MPI_Allreduce(in, out, 1, vec, MPI_MAX, MPI_COMM_WORLD));
    PMPI_Allreduce(packed_in, packed_ref, 100, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int ok = 1;
    for (int b = 0, k = 0; b < 50; b++) {
        for (int j = 0; j < 2; j++)
            ok &= out[3 * b + j] == packed_ref[k++];
        ok &= out[3 * b + 2] == -7;                   /* the gap is not touched */
    }
    check(ok, "allreduce, vector(50, 2, 3, MPI_INT)");
    MPI_Type_free(&vec);
}

/* Pair types with holes: dense runs in place, strided runs spread. */
static void pairs(void)
{
    struct di { double v; int i; } in[64], out[64], ref[64], pin[32], pref[32];
    MPI_Datatype two, every_other;
    MPI_Type_contiguous(2, MPI_DOUBLE_INT, &two);
    MPI_Type_commit(&two);
    MPI_Type_vector(32, 1, 2, MPI_DOUBLE_INT, &every_other);
    MPI_Type_commit(&every_other);
    memset(in, 0, sizeof in);
    for (int i = 0; i < 64; i++) {
        in[i].v = (i * 7 + rank * 3) % 5;
        in[i].i = rank;
    }
    memset(out, 0, sizeof out);
    OFFLOADED(ACIS_COLL_REDUCE, MPI_Reduce(in, out, 32, two, MPI_MINLOC, 0, MPI_COMM_WORLD));
    PMPI_Reduce(in, ref, 64, MPI_DOUBLE_INT, MPI_MINLOC, 0, MPI_COMM_WORLD);
    int ok = 1;
    for (int i = 0; rank == 0 && i < 64; i++)
        ok &= out[i].v == ref[i].v && out[i].i == ref[i].i;
    check(ok, "reduce MINLOC, contiguous(2, MPI_DOUBLE_INT)");

    for (int i = 0; i < 64; i++)
        out[i] = (struct di){ -1, -1 };
    for (int i = 0; i < 32; i++)
        pin[i] = in[2 * i];
    OFFLOADED(ACIS_COLL_ALLREDUCE,
              MPI_Allreduce(in, out, 1, every_other, MPI_MAXLOC, MPI_COMM_WORLD));
    PMPI_Allreduce(pin, pref, 32, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    ok = 1;
    for (int i = 0; i < 32; i++)
        ok &= out[2 * i].v == pref[i].v && out[2 * i].i == pref[i].i &&
              out[2 * i + 1].v == -1 && out[2 * i + 1].i == -1;
    check(ok, "allreduce MAXLOC, vector of MPI_DOUBLE_INT");
    MPI_Type_free(&two);
    MPI_Type_free(&every_other);
}

/* A struct of mixed types moves as packed bytes: bcast and gather. */
static void mixed_struct(void)
{
    struct rec { int a; double b; char c[3]; } in[10], out[10], ref[10], *g, *gref;
    int bl[3] = { 1, 1, 3 };
    MPI_Aint disp[3] = { offsetof(struct rec, a), offsetof(struct rec, b),
                         offsetof(struct rec, c) };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, st, rec;
    MPI_Type_create_struct(3, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct rec), &rec);
    MPI_Type_commit(&rec);
    memset(in, 0, sizeof in);
    for (int i = 0; i < 10; i++)
        in[i] = (struct rec){ rank * 100 + i, rank + i * 0.5, { (char)('a' + i), 'x', (char)rank } };
    memcpy(out, in, sizeof in);
    memcpy(ref, in, sizeof in);
    OFFLOADED(ACIS_COLL_BCAST, MPI_Bcast(out, 10, rec, size - 1, MPI_COMM_WORLD));
    PMPI_Bcast(ref, 10, rec, size - 1, MPI_COMM_WORLD);
    int ok = 1;
    for (int i = 0; i < 10; i++)
        ok &= out[i].a == ref[i].a && out[i].b == ref[i].b && !memcmp(out[i].c, ref[i].c, 3);
    check(ok, "bcast of a mixed struct");

    g = calloc((size_t)size * 10, sizeof *g);
    gref = calloc((size_t)size * 10, sizeof *gref);
    OFFLOADED(ACIS_COLL_GATHER, MPI_Gather(in, 10, rec, g, 10, rec, 0, MPI_COMM_WORLD));
    PMPI_Gather(in, 10, rec, gref, 10, rec, 0, MPI_COMM_WORLD);
    ok = 1;
    for (int i = 0; rank == 0 && i < size * 10; i++)
        ok &= g[i].a == gref[i].a && g[i].b == gref[i].b && !memcmp(g[i].c, gref[i].c, 3);
    check(ok, "gather of a mixed struct");
    free(g);
    free(gref);
    MPI_Type_free(&st);
    MPI_Type_free(&rec);
}

/* The same data described differently on different ranks must take the
 * same path: MPI_INT x 8 here, contiguous(8, MPI_INT) there, a resized
 * vector elsewhere -- all are eight ints in a row. */
static void different_handles(void)
{
    MPI_Datatype eight, rs;
    MPI_Type_contiguous(8, MPI_INT, &eight);
    MPI_Type_commit(&eight);
    MPI_Type_create_resized(MPI_INT, 0, sizeof(int), &rs);
    MPI_Type_commit(&rs);
    int in[8], out[8], ref[8];
    for (int i = 0; i < 8; i++)
        in[i] = rank + i;
    int how = rank % 3;
    OFFLOADED(ACIS_COLL_ALLREDUCE,
              MPI_Allreduce(in, out, how == 0 ? 8 : how == 1 ? 1 : 8,
                            how == 0 ? MPI_INT : how == 1 ? eight : rs, MPI_SUM,
                            MPI_COMM_WORLD));
    PMPI_Allreduce(in, ref, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(memcmp(out, ref, sizeof ref) == 0, "allreduce with different type handles");
    MPI_Type_free(&eight);
    MPI_Type_free(&rs);
}

/* A mixed struct cannot be reduced by the switch; with a user op the call
 * runs in MPICH, counted with reason op_user, and its result is MPICH's. */
struct pair { double v; int n; };

static void pair_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    struct pair *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[i].v += a[i].v;
        b[i].n += a[i].n;
    }
}

static void user_op_struct(void)
{
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { offsetof(struct pair, v), offsetof(struct pair, n) };
    MPI_Datatype types[2] = { MPI_DOUBLE, MPI_INT }, st;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_commit(&st);
    MPI_Op op;
    MPI_Op_create(pair_sum, 1, &op);
    struct pair in[5], out[5], ref[5];
    for (int i = 0; i < 5; i++)
        in[i] = (struct pair){ rank + i * 0.25, rank * i };
    struct acis_coll_stats a, b;
    acis_get_stats(ACIS_COLL_ALLREDUCE, &a);
    MPI_Allreduce(in, out, 5, st, op, MPI_COMM_WORLD);
    acis_get_stats(ACIS_COLL_ALLREDUCE, &b);
    PMPI_Allreduce(in, ref, 5, st, op, MPI_COMM_WORLD);
    check(b.by_reason[ACIS_REASON_OP_USER] == a.by_reason[ACIS_REASON_OP_USER] + 1,
          "user op on a struct not sent to software with reason op_user");
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= out[i].v == ref[i].v && out[i].n == ref[i].n;
    check(ok, "user op on a struct");
    MPI_Op_free(&op);
    MPI_Type_free(&st);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    contiguous_run();
    strided_reduction();
    pairs();
    mixed_struct();
    different_handles();
    user_op_struct();
    int total;
    PMPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("dtype_check: %d ranks, %d failures\n", size, total);
    MPI_Finalize();
    return rank == 0 && total ? 1 : 0;
}
