/* overlap.c -- a nonblocking collective overlapped with computation:
 * start MPI_Iallreduce on one array, compute on another, then wait.  It
 * times the computation alone, the collective alone, and the two
 * overlapped, and reports how much of the collective the computation hid
 * (100 % when overlapped time = the longer of the two).  With acis the
 * switch (or the ranks' progress helper) moves the collective while the
 * rank computes; the result is checked.  A plain MPI program.
 * usage: overlap [DOUBLES] (default 1048576: 8 MiB) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double compute(double *w, int n)
{
    double s = 0;
    for (int rep = 0; rep < 40; rep++)
        for (int i = 0; i < n; i++) {
            w[i] = w[i] * 0.999 + 0.001 * (double)(i % 7);
            s += w[i];
        }
    return s;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
    double *in = malloc(sizeof(double) * (size_t)n), *out = malloc(sizeof(double) * (size_t)n);
    double *w = malloc(sizeof(double) * 65536);
    for (int i = 0; i < n; i++)
        in[i] = (double)(rank + 1) + (double)(i % 3);
    for (int i = 0; i < 65536; i++)
        w[i] = 1.0;
    MPI_Request rq;
    double sink = 0, t[3];
    for (int pass = 0; pass < 2; pass++) {        /* pass 0 warms up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        sink += compute(w, 65536);
        t[0] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        t[1] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
        sink += compute(w, 65536);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        t[2] = MPI_Wtime() - t0;
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != (double)size * (size + 1) / 2 + (double)size * (i % 3);
    double tmax[3];
    int allbad;
    MPI_Reduce(t, tmax, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double lo = tmax[0] > tmax[1] ? tmax[0] : tmax[1], hidden = tmax[0] + tmax[1] - tmax[2];
        double shorter = tmax[0] < tmax[1] ? tmax[0] : tmax[1];
        double pct = shorter > 0 ? 100.0 * hidden / shorter : 0;
        printf("overlap: %d ranks, %d doubles: compute %.2f ms, Iallreduce %.2f ms, both "
               "overlapped %.2f ms (at best %.2f): %.0f %% of the shorter hidden; result %s\n",
               size, n, 1e3 * tmax[0], 1e3 * tmax[1], 1e3 * tmax[2], 1e3 * lo,
               pct < 0 ? 0 : pct > 100 ? 100 : pct, allbad ? "WRONG" : "correct");
    }
    free(in);
    free(out);
    free(w);
    MPI_Finalize();
    return (rank == 0 && allbad) || sink < 0 ? 1 : 0;
}
