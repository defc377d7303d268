/* demo.c -- a small MPI application that never mentions acis: a
 * distributed power iteration on a ring-structured matrix.  Rank 0
 * broadcasts the problem size, every step normalises with MPI_Allreduce,
 * the residual is gathered with MPI_Reduce, and steps are fenced with
 * MPI_Barrier.  Relinked with -lacis (or run with LD_PRELOAD=libacis.so)
 * those collectives run in the switch; the answer is the same. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, n = 0, steps = 50;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        n = argc > 1 ? atoi(argv[1]) : 4096;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (n < size) {
        if (rank == 0)
            fprintf(stderr, "demo: need at least one row per rank\n");
        MPI_Finalize();
        return 1;
    }
    int lo = (int)((long)n * rank / size), hi = (int)((long)n * (rank + 1) / size);
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++)
        x[i] = 1.0;
    double lambda = 0;
    for (int s = 0; s < steps; s++) {
        /* y = A x for my rows of A = 2 on the diagonal, 1 on the ring. */
        for (int i = 0; i < n; i++)
            y[i] = 0;
        for (int i = lo; i < hi; i++)
            y[i] = 2 * x[i] + x[(i + 1) % n] + x[(i + n - 1) % n] * (1.0 + (i % 3) * 0.25);
        MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double part = 0, norm2 = 0;
        for (int i = lo; i < hi; i++)
            part += y[i] * y[i];
        MPI_Allreduce(&part, &norm2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        lambda = sqrt(norm2) / sqrt((double)n);
        for (int i = 0; i < n; i++)
            x[i] = y[i] / sqrt(norm2) * sqrt((double)n);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double mine = 0, worst = 0;
    for (int i = lo; i < hi; i++)
        mine = fmax(mine, fabs(x[i]));
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("demo: %d ranks, n = %d, %d steps: dominant eigenvalue ~ %.6f, max |x| = %.6f\n",
               size, n, steps, lambda, worst);
    free(x);
    free(y);
    MPI_Finalize();
    return 0;
}
