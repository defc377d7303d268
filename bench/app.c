/* app.c -- an application-shaped benchmark: the communication pattern of a
 * dense linear-algebra code on a process grid (as the seed's matrix
 * example and ScaLAPACK's panel steps): ranks form a rows x cols grid,
 * split MPI_COMM_WORLD into row and column communicators, and each step
 * does a little local work, a small MPI_Allreduce along the row (a norm
 * or pivot search), an MPI_Bcast of a short panel down the column from a
 * rotating root, and every few steps an MPI_Allreduce on MPI_COMM_WORLD
 * (a residual check).  A plain MPI program (not linked with acis), so the
 * same binary runs with and without LD_PRELOAD=libacis.so.
 *
 * usage: app [-s STEPS] [-n PANEL_DOUBLES] [-w WORK]
 * Prints "steps seconds us_per_step checksum": the checksum must agree
 * between runs with and without acis (to rounding). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int steps = 20000, panel = 32, work = 200, opt;
    while ((opt = getopt(argc, argv, "s:n:w:")) != -1) {
        if (opt == 's')
            steps = atoi(optarg);
        else if (opt == 'n')
            panel = atoi(optarg);
        else if (opt == 'w')
            work = atoi(optarg);
        else {
            fprintf(stderr, "usage: app [-s STEPS] [-n PANEL_DOUBLES] [-w WORK]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rows = (int)sqrt((double)size);
    while (size % rows)
        rows--;
    int cols = size / rows, myrow = rank / cols, mycol = rank % cols;
    MPI_Comm row, col;
    MPI_Comm_split(MPI_COMM_WORLD, myrow, mycol, &row);
    MPI_Comm_split(MPI_COMM_WORLD, mycol, myrow, &col);

    double *a = malloc(sizeof(double) * (size_t)panel), *x = malloc(sizeof(double) * (size_t)panel);
    double sum = 0, norm[2], gnorm[2], resid, gresid;
    for (int i = 0; i < panel; i++)
        a[i] = 1.0 / (1 + rank + i);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        double local = 0;
        for (int w = 0; w < work; w++)                /* the step's own work */
            local += a[w % panel] * 1.0000001;
        norm[0] = local;
        norm[1] = (double)(rank + s % 7);
        MPI_Allreduce(norm, gnorm, 2, MPI_DOUBLE, MPI_MAX, row);
        for (int i = 0; i < panel; i++)
            x[i] = a[i] * gnorm[1] + s;
        MPI_Bcast(x, panel, MPI_DOUBLE, s % rows, col);
        for (int i = 0; i < panel; i++)
            a[i] = 0.5 * a[i] + 1e-9 * x[i];
        if (s % 10 == 0) {
            resid = a[0] + a[panel - 1];
            MPI_Allreduce(&resid, &gresid, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            sum += gresid;
        }
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d %.4f %.3f %.12e\n", steps, tmax, 1e6 * tmax / steps, sum);
    free(a);
    free(x);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Finalize();
    return 0;
}
