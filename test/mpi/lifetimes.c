/* lifetimes.c -- MPI object lifetimes under nonblocking collectives: every
 * nonblocking collective acis offloads is started on a duplicated
 * communicator with a derived datatype that needs packing (dup'ed from the
 * one the reference uses; reductions use MPI_INT, as MPICH defines no
 * predefined op on derived types), and the datatype, the dup and a user op are
 * freed before the request completes (MPI says the call must still finish
 * normally).  Results are compared with the same call made through PMPI
 * with live objects; the counters must show the calls offloaded.
 * Usage: lifetimes [--iters=N] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

#include "tdata.h"

enum { N = 300, NB = 2 * N };   /* N elements of a vector type: 2N ints span */

static int rank, size, failures;
static MPI_Datatype vec;         /* an int with the extent of 2: needs MPI_Pack */

static void check(int ok, const char *what, int it)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "lifetimes[%d]: FAIL %s (iteration %d)\n", rank, what, it);
    }
}

static void fill(int *v, int n, int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = (rank + 1) * (i % 89) + seed;
}

static void user_max(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i])
            ((int *)inout)[i] = ((int *)in)[i];
}

/* Start collective k on comm with type t and op op (acis path), or make it
 * blocking through PMPI (reference).  Buffers are size*NB ints. */
static int run(int k, MPI_Comm comm, MPI_Datatype t, MPI_Op op, int *s, int *r, int pm,
               MPI_Request *req)
{
    static int counts[64], displs[64];
    int root = size - 1;
    for (int q = 0; q < size; q++) {
        counts[q] = N - q;
        displs[q] = q * N;
    }
    switch (k) {
    case 0: return pm ? PMPI_Barrier(comm) : MPI_Ibarrier(comm, req);
    case 1: return pm ? PMPI_Bcast(s, N, t, root, comm) : MPI_Ibcast(s, N, t, root, comm, req);
    case 2: return pm ? PMPI_Reduce(s, r, N, t, op, root, comm)
                      : MPI_Ireduce(s, r, N, t, op, root, comm, req);
    case 3: return pm ? PMPI_Allreduce(s, r, N, t, op, comm)
                      : MPI_Iallreduce(s, r, N, t, op, comm, req);
    case 4: return pm ? PMPI_Gather(s, N / 2, t, r, N / 2, t, root, comm)
                      : MPI_Igather(s, N / 2, t, r, N / 2, t, root, comm, req);
    case 5: return pm ? PMPI_Gatherv(s, N - rank, t, r, counts, displs, t, root, comm)
                      : MPI_Igatherv(s, N - rank, t, r, counts, displs, t, root, comm, req);
    case 6: return pm ? PMPI_Scatter(s, N / 2, t, r, N / 2, t, root, comm)
                      : MPI_Iscatter(s, N / 2, t, r, N / 2, t, root, comm, req);
    case 7: return pm ? PMPI_Scatterv(s, counts, displs, t, r, N - rank, t, root, comm)
                      : MPI_Iscatterv(s, counts, displs, t, r, N - rank, t, root, comm, req);
    case 8: return pm ? PMPI_Allgather(s, N / 2, t, r, N / 2, t, comm)
                      : MPI_Iallgather(s, N / 2, t, r, N / 2, t, comm, req);
    case 9: return pm ? PMPI_Allgatherv(s, N - rank, t, r, counts, displs, t, comm)
                      : MPI_Iallgatherv(s, N - rank, t, r, counts, displs, t, comm, req);
    case 10: return pm ? PMPI_Reduce_scatter_block(s, r, N / 2, t, op, comm)
                       : MPI_Ireduce_scatter_block(s, r, N / 2, t, op, comm, req);
    case 11: return pm ? PMPI_Scan(s, r, N, t, op, comm) : MPI_Iscan(s, r, N, t, op, comm, req);
    case 12: return pm ? PMPI_Exscan(s, r, N, t, op, comm)
                       : MPI_Iexscan(s, r, N, t, op, comm, req);
    default: return MPI_ERR_ARG;
    }
}

static const char *names[] = { "Ibarrier", "Ibcast", "Ireduce", "Iallreduce", "Igather",
                               "Igatherv", "Iscatter", "Iscatterv", "Iallgather",
                               "Iallgatherv", "Ireduce_scatter_block", "Iscan", "Iexscan" };
enum { NCOLL = 13 };

static const acis_coll_t colls[NCOLL] = {
    ACIS_COLL_IBARRIER, ACIS_COLL_IBCAST, ACIS_COLL_IREDUCE, ACIS_COLL_IALLREDUCE,
    ACIS_COLL_IGATHER, ACIS_COLL_IGATHERV, ACIS_COLL_ISCATTER, ACIS_COLL_ISCATTERV,
    ACIS_COLL_IALLGATHER, ACIS_COLL_IALLGATHERV, ACIS_COLL_IREDUCE_SCATTER_BLOCK,
    ACIS_COLL_ISCAN, ACIS_COLL_IEXSCAN
};

static uint64_t offloaded(acis_coll_t c)
{
    struct acis_coll_stats s;
    acis_get_stats(c, &s);
    return s.offloaded;
}

/* One case: k with the objects freed before the wait; user: a user op. */
static void one(int k, int user, int it)
{
    size_t n = (size_t)size * NB;
    int *s = calloc(n, sizeof(int)), *r = calloc(n, sizeof(int));
    int *s2 = calloc(n, sizeof(int)), *r2 = calloc(n, sizeof(int));
    fill(s, (int)n, k + it);
    memcpy(s2, s, n * sizeof(int));
    MPI_Comm dup;
    MPI_Datatype t;
    MPI_Op op = MPI_SUM;
    MPI_Request req;
    int red = k == 2 || k == 3 || k == 10 || k == 11 || k == 12;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup);           /* sets its row up: nonblocking calls before the
                                   first blocking one run in MPICH */
    MPI_Type_dup(red ? MPI_INT : vec, &t);      /* MPICH: no MPI_SUM on derived types */
    if (user)
        MPI_Op_create(user_max, 1, &op);
    check(run(k, dup, red ? MPI_INT : t, op, s, r, 0, &req) == MPI_SUCCESS, names[k], it);
    MPI_Type_free(&t);
    if (user)
        MPI_Op_free(&op);
    MPI_Comm_free(&dup);
    /* Reuse the freed handles' memory before the wait. */
    MPI_Datatype junk[4];
    for (int i = 0; i < 4; i++)
        MPI_Type_vector(3 + i, 2, 5, MPI_DOUBLE, &junk[i]);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        MPI_Type_free(&junk[i]);

    MPI_Comm ref;
    MPI_Comm_dup(MPI_COMM_WORLD, &ref);
    MPI_Op rop = MPI_SUM;
    if (user)
        PMPI_Op_create(user_max, 1, &rop);
    run(k, ref, red ? MPI_INT : vec, rop, s2, r2, 1, NULL);
    if (user)
        PMPI_Op_free(&rop);
    MPI_Comm_free(&ref);
    char what[96];
    snprintf(what, sizeof what, "%s%s: result differs from PMPI", names[k],
             user ? " (user op)" : "");
    /* with the resized type only every other int is data */
    int same = 1;
    for (size_t i = 0; i < n; i += red ? 1 : 2)
        same &= s[i] == s2[i] && r[i] == r2[i];
    check(same, what, it);
    free(s);
    free(r);
    free(s2);
    free(r2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = atoi(targ(argc, argv, "--iters", "2"));
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &vec);
    MPI_Type_commit(&vec);
    uint64_t before[NCOLL];
    for (int k = 0; k < NCOLL; k++)
        before[k] = offloaded(colls[k]);
    int cases = 0;
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < NCOLL; k++) {
            one(k, 0, it);
            cases++;
            if (k == 3 || k == 2) {
                one(k, 1, it);
                cases++;
            }
        }
    for (int k = 0; k < NCOLL; k++) {
        if (k == 5 || k == 7)
            continue;                   /* Igatherv, Iscatterv: MPICH by design */
        char what[96];
        snprintf(what, sizeof what, "%s was not offloaded", names[k]);
        check(offloaded(colls[k]) >= before[k] + (uint64_t)iters, what, -1);
    }
    MPI_Type_free(&vec);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("lifetimes: %d ranks, %d cases, %d failures\n", size, cases, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
