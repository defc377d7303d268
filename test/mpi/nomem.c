/* nomem.c -- a nonblocking collective in which one member has no memory
 * for its data, or (--mode=request) none for its request.
 *
 * Data: rank 0 runs with MPIR_CVAR_OFFLOAD_FAULT_NOMEM_NB=1 and
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
 *
 * Request (--mode=request): rank 0 runs with MPIR_CVAR_OFFLOAD_FAULT_NOMEM_REQUEST=1: MPICH
 * "cannot" allocate the request of any of its offloaded nonblocking
 * calls.  The call must complete before it returns there (its request is
 * MPI_REQUEST_NULL), and every rank's call must succeed, offloaded, with
 * the result MPICH's blocking call gives.  Failing the call on rank 0
 * alone left the others waiting for its packets.
 * Usage: nomem [--iters=N] [--mode=data|request] */
#define _DEFAULT_SOURCE /* usleep */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <acis/acis.h>

#include "tdata.h"

enum { N = 4096, KINDS = 8, SENTINEL = -7 };
static const char *names[KINDS] = { "Iallreduce", "Ibcast", "Ireduce", "Iallgather",
                                    "Iscan", "Igather", "Iscatter", "Ibarrier" };

static int rank, size, failures, request;

static void check(int ok, const char *what, const char *kind, int it)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "nomem[%d]: FAIL %s %s (iteration %d)\n", rank, kind, what, it);
    }
}

/* Collective k, nonblocking into *req, or (req NULL) MPICH's blocking one. */
static int call(int k, const int *s, int *r, MPI_Request *req)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = N / size;
    void *b = rank == 1 ? (void *)s : r;
    switch (k) {
    case 0: return req ? MPI_Iallreduce(s, r, N, MPI_INT, MPI_SUM, w, req)
                       : PMPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, w);
    case 1: return req ? MPI_Ibcast(b, N, MPI_INT, 1, w, req) : PMPI_Bcast(b, N, MPI_INT, 1, w);
    case 2: return req ? MPI_Ireduce(s, r, N, MPI_INT, MPI_SUM, 1, w, req)
                       : PMPI_Reduce(s, r, N, MPI_INT, MPI_SUM, 1, w);
    case 3: return req ? MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, w, req)
                       : PMPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, w);
    case 4: return req ? MPI_Iscan(s, r, N, MPI_INT, MPI_SUM, w, req)
                       : PMPI_Scan(s, r, N, MPI_INT, MPI_SUM, w);
    case 5: return req ? MPI_Igather(s, n, MPI_INT, r, n, MPI_INT, 1, w, req)
                       : PMPI_Gather(s, n, MPI_INT, r, n, MPI_INT, 1, w);
    case 6: return req ? MPI_Iscatter(s, n, MPI_INT, r, n, MPI_INT, 1, w, req)
                       : PMPI_Scatter(s, n, MPI_INT, r, n, MPI_INT, 1, w);
    default: return req ? MPI_Ibarrier(w, req) : PMPI_Barrier(w);
    }
}

static void one(int k, int it)
{
    int s[N], r[N], z[N], rz[N], ref[N];
    for (int i = 0; i < N; i++) {
        s[i] = rank * 100 + i + it;
        r[i] = ref[i] = SENTINEL;
        z[i] = rank + i;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    int rc_start, rc_wait, rc_z;
    if (rank == 0) {
        usleep(10000);                 /* the others are in the Allreduce */
        rc_start = call(k, s, r, &req);
        if (request)
            check(req == MPI_REQUEST_NULL, "did not complete before it returned", names[k], it);
        rc_wait = MPI_Wait(&req, MPI_STATUS_IGNORE);
        rc_z = MPI_Allreduce(z, rz, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else {
        rc_start = call(k, s, r, &req);
        rc_z = MPI_Allreduce(z, rz, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        rc_wait = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    int cls = MPI_SUCCESS;
    if (rc_wait != MPI_SUCCESS)
        MPI_Error_class(rc_wait, &cls);
    check(rc_start == MPI_SUCCESS, "did not start", names[k], it);
    if (request) {
        check(cls == MPI_SUCCESS, "failed", names[k], it);
        check(call(k, s, ref, NULL) == MPI_SUCCESS, "MPICH's own call failed", names[k], it);
        check(!memcmp(r, ref, sizeof r), "gave a result other than MPICH's", names[k], it);
    } else {
        check(cls == MPI_ERR_NO_MEM, "did not fail with MPI_ERR_NO_MEM", names[k], it);
        for (int i = 0; i < N; i++)
            if (r[i] != SENTINEL) {
                check(0, "wrote its result buffer", names[k], it);
                break;
            }
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
    request = strcmp(targ(argc, argv, "--mode", "data"), "request") == 0;
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < KINDS; k++) {
            one(k, it);
            PMPI_Barrier(MPI_COMM_WORLD);
        }

    struct acis_host_stats hs;
    acis_get_host_stats(&hs);
    long nb = 0;
    for (int c = 0; c < ACIS_COLL_COUNT; c++) {
        struct acis_coll_stats cs;
        if (acis_coll_form((acis_coll_t)c) == ACIS_FORM_NONBLOCKING &&
            acis_get_stats((acis_coll_t)c, &cs) == 0)
            nb += (long)cs.offloaded;
    }
    long mine[4] = { failures, (long)hs.abstained, (long)hs.own_block, -nb }, tot[4];
    PMPI_Allreduce(mine, tot, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&mine[3], &tot[3], 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (request) {
        /* every rank offloaded every call, and nobody abstained */
        if (rank == 0 && (-tot[3] < (long)KINDS * iters || tot[1])) {
            fprintf(stderr, "nomem: %ld nonblocking calls offloaded on some rank, fewer than "
                    "%d; %ld abstained\n", -tot[3], KINDS * iters, tot[1]);
            tot[0]++;
        }
    } else if (rank == 0 && tot[1] < 2L * KINDS * iters) {
        /* rank 0 abstained from every nonblocking call and every Allreduce */
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
