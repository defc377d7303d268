/* nomem.c -- a nonblocking collective in which one member has no memory
 * for its data.  Rank 0 runs with MPIR_CVAR_OFFLOAD_FAULT_NOMEM_NB=1 and
 * _NOMEM=1 (nomem.sh): it abstains from every offloaded call.  Each
 * nonblocking kind is started while the other ranks go on into a
 * blocking MPI_Allreduce that rank 0 joins only after its MPI_Wait, so a
 * call that left the others waiting for rank 0's packets would hang.
 * Every rank's MPI_Wait must return an error of class MPI_ERR_NO_MEM with
 * no result byte written (a gather or scatter root's own block neither),
 * and the blocking calls (redone in MPICH) must give the right sums.
 * Errors are returned (MPI_ERRORS_RETURN).  With 1000-byte packets
 * (nomem.sh) each call spans several segments and the roots of Igather
 * and Iscatter leave out their own block's.
 * Usage: nomem [--iters=N] */
#define _DEFAULT_SOURCE /* usleep */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <acis/acis.h>

#include "tdata.h"

enum { N = 4096, KINDS = 8, SENTINEL = -7 };
static const char *names[KINDS] = { "Iallreduce", "Ibcast", "Ireduce", "Iallgather",
                                    "Iscan", "Igather", "Iscatter", "Ibarrier" };

static int rank, size, failures;

static void check(int ok, const char *what, const char *kind, int it)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "nomem[%d]: FAIL %s %s (iteration %d)\n", rank, kind, what, it);
    }
}

static int start(int k, const int *s, int *r, MPI_Request *req)
{
    MPI_Comm w = MPI_COMM_WORLD;
    switch (k) {
    case 0: return MPI_Iallreduce(s, r, N, MPI_INT, MPI_SUM, w, req);
    case 1: return MPI_Ibcast(rank == 1 ? (void *)s : r, N, MPI_INT, 1, w, req);
    case 2: return MPI_Ireduce(s, r, N, MPI_INT, MPI_SUM, 1, w, req);
    case 3: return MPI_Iallgather(s, N / size, MPI_INT, r, N / size, MPI_INT, w, req);
    case 4: return MPI_Iscan(s, r, N, MPI_INT, MPI_SUM, w, req);
    case 5: return MPI_Igather(s, N / size, MPI_INT, r, N / size, MPI_INT, 1, w, req);
    case 6: return MPI_Iscatter(s, N / size, MPI_INT, r, N / size, MPI_INT, 1, w, req);
    default: return MPI_Ibarrier(w, req);
    }
}

static void one(int k, int it)
{
    int s[N], r[N], z[N], rz[N];
    for (int i = 0; i < N; i++) {
        s[i] = rank * 100 + i + it;
        r[i] = SENTINEL;
        z[i] = rank + i;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    int rc_start, rc_wait, rc_z;
    if (rank == 0) {
        usleep(10000);                 /* the others are in the Allreduce */
        rc_start = start(k, s, r, &req);
        rc_wait = MPI_Wait(&req, MPI_STATUS_IGNORE);
        rc_z = MPI_Allreduce(z, rz, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else {
        rc_start = start(k, s, r, &req);
        rc_z = MPI_Allreduce(z, rz, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        rc_wait = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    int cls = MPI_SUCCESS;
    if (rc_wait != MPI_SUCCESS)
        MPI_Error_class(rc_wait, &cls);
    check(rc_start == MPI_SUCCESS, "did not start", names[k], it);
    check(cls == MPI_ERR_NO_MEM, "did not fail with MPI_ERR_NO_MEM", names[k], it);
    for (int i = 0; i < N; i++)
        if (r[i] != SENTINEL) {
            check(0, "wrote its result buffer", names[k], it);
            break;
        }
    check(rc_z == MPI_SUCCESS, "then a blocking sum that failed", names[k], it);
    for (int i = 0; i < N && rc_z == MPI_SUCCESS; i++)
        if (rz[i] != size * (size - 1) / 2 + size * i) {
            check(0, "then a wrong blocking sum", names[k], it);
            break;
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int iters = atoi(targ(argc, argv, "--iters", "5"));
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < KINDS; k++) {
            one(k, it);
            PMPI_Barrier(MPI_COMM_WORLD);
        }

    struct acis_host_stats hs;
    acis_get_host_stats(&hs);
    long mine[3] = { failures, (long)hs.abstained, (long)hs.own_block }, tot[3];
    PMPI_Allreduce(mine, tot, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* rank 0 abstained from every nonblocking call and every Allreduce */
    if (rank == 0 && tot[1] < 2L * KINDS * iters) {
        fprintf(stderr, "nomem: %ld abstentions, fewer than %d\n", tot[1], 2 * KINDS * iters);
        tot[0]++;
    }
    /* the root of Igather and Iscatter left out its own block's segments */
    if (rank == 0 && tot[2] < 2L * iters) {
        fprintf(stderr, "nomem: %ld calls kept the root's block, fewer than %d\n", tot[2],
                2 * iters);
        tot[0]++;
    }
    if (rank == 0)
        printf("nomem: %d ranks, %d nonblocking calls, %ld failures, %ld abstained\n", size,
               KINDS * iters, tot[0], tot[1]);
    MPI_Finalize();
    return tot[0] ? 1 : 0;
}
