/* away.c -- progress while a rank is away from acis.  Ranks pair up; in
 * each pair the "waiter" starts a large nonblocking collective (more
 * segments than one window holds), then blocks in MPICH receiving a
 * message its partner sends only after its own MPI_Wait on the same
 * collective returns.  MPICH would move its own collective inside that
 * receive; with acis, the waiter's remaining segments must leave while it
 * sits in MPICH (the progress helper) or the pair waits forever.  Then
 * the roles turn: the partner blocks in MPI_Recv while the waiter sits in
 * MPI_Wait on an acis request, which must keep MPICH moving for the
 * partner's message.  Results are compared with PMPI; the counters must
 * show the calls offloaded, and (--need-helper=1) that the helper ran.
 * Usage: away [--iters=N] [--ints=N] [--need-helper=1] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

#include "tdata.h"

static int rank, size, failures;

static void check(int ok, const char *what, int it)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "away[%d]: FAIL %s (iteration %d)\n", rank, what, it);
    }
}

/* One collective of kind k (0 allreduce, 1 bcast, 2 allgather), started
 * nonblocking, or blocking through PMPI for the reference. */
static void start(int k, const int *s, int *r, int n, int pm, MPI_Request *req)
{
    int part = n / size;
    switch (k) {
    case 0:
        if (pm)
            PMPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req);
        break;
    case 1:
        memcpy(r, s, (size_t)n * sizeof *r);
        if (pm)
            PMPI_Bcast(r, n, MPI_INT, 0, MPI_COMM_WORLD);
        else
            MPI_Ibcast(r, n, MPI_INT, 0, MPI_COMM_WORLD, req);
        break;
    default:
        if (pm)
            PMPI_Allgather(s, part, MPI_INT, r, part, MPI_INT, MPI_COMM_WORLD);
        else
            MPI_Iallgather(s, part, MPI_INT, r, part, MPI_INT, MPI_COMM_WORLD, req);
        break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = atoi(targ(argc, argv, "--iters", "3"));
    int n = atoi(targ(argc, argv, "--ints", "1048576"));
    int need_helper = atoi(targ(argc, argv, "--need-helper", "0"));
    int partner = rank ^ 1, paired = partner < size;
    int *s = malloc((size_t)n * sizeof *s), *r = malloc((size_t)n * sizeof *r);
    int *ref = malloc((size_t)n * sizeof *ref);
    if (!s || !r || !ref) {
        fprintf(stderr, "away[%d]: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    acis_reset_stats();
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < 3; k++)
            for (int turn = 0; turn < 2; turn++) {
                /* the waiter blocks in MPICH; the other waits in acis first */
                int waiter = (rank % 2) == turn, token = it;
                for (int i = 0; i < n; i++)
                    s[i] = (rank + 1) * (i % 1009) + it * 7 + k;
                MPI_Request req;
                start(k, s, r, n, 0, &req);
                if (!paired) {
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                } else if (waiter) {
                    MPI_Recv(&token, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                } else {
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    MPI_Send(&token, 1, MPI_INT, partner, 5, MPI_COMM_WORLD);
                }
                start(k, s, ref, n, 1, NULL);
                check(memcmp(r, ref, (size_t)n * sizeof *r) == 0, "result differs from MPICH's",
                      it);
            }

    struct acis_coll_stats st;
    uint64_t off = 0;
    acis_coll_t nb[] = { ACIS_COLL_IALLREDUCE, ACIS_COLL_IBCAST, ACIS_COLL_IALLGATHER };
    for (size_t i = 0; i < sizeof nb / sizeof nb[0]; i++) {
        acis_get_stats(nb[i], &st);
        off += st.offloaded;
    }
    check(off == (uint64_t)iters * 6, "not every call was offloaded", -1);
    struct acis_host_stats h;
    acis_get_host_stats(&h);
    if (need_helper && paired)
        check(h.helper_rounds > 0, "the progress helper never ran", -1);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("away: %d ranks, %d iterations of 6 calls of %d ints, %llu helper rounds "
               "on rank 0, %d failures\n",
               size, iters, n, (unsigned long long)h.helper_rounds, all);
    free(s);
    free(r);
    free(ref);
    MPI_Finalize();
    return all ? 1 : 0;
}
