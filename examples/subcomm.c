/* subcomm.c -- collectives on sub-communicators, as in a distributed
 * matrix-vector product y = A x on a P = R x C process grid (the seed's
 * matrix example): the grid is split into row and column communicators;
 * each process owns one block of A; the column communicator broadcasts
 * the block of x its diagonal process owns, and the row communicator sums
 * the partial products with MPI_Allreduce.  Every communicator gets its
 * own switch table row, so R + C + 1 of them offload at once.  A plain
 * MPI program: run it relinked or with LD_PRELOAD=libacis.so.
 * usage: subcomm [ROWS] (default: the most square grid; N = 512 per block) */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NB 512                                   /* rows and columns per block */

static double a_of(long i, long j)                /* A: known at every rank */
{
    return 1.0 / (1.0 + (double)((i * 7 + j * 3) % 11)) + (i == j ? 4.0 : 0.0);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rows = argc > 1 ? atoi(argv[1]) : 0;
    if (rows <= 0)
        for (rows = (int)sqrt((double)size); size % rows; rows--)
            ;
    if (size % rows) {
        if (rank == 0)
            fprintf(stderr, "subcomm: %d ranks do not make %d rows\n", size, rows);
        MPI_Finalize();
        return 1;
    }
    int cols = size / rows, my_row = rank / cols, my_col = rank % cols;
    MPI_Comm row, col;
    MPI_Comm_split(MPI_COMM_WORLD, my_row, my_col, &row);   /* ranks of my grid row */
    MPI_Comm_split(MPI_COMM_WORLD, my_col, my_row, &col);   /* ranks of my grid column */

    /* x has cols blocks; block j lives on the process of column j in row
     * j % rows, which broadcasts it down its column. */
    double *x = malloc(sizeof(double) * NB), *y = calloc(NB, sizeof(double));
    double *part = malloc(sizeof(double) * NB);
    if (my_row == my_col % rows)
        for (int k = 0; k < NB; k++)
            x[k] = 1.0 + (double)((my_col * NB + k) % 5);
    MPI_Bcast(x, NB, MPI_DOUBLE, my_col % rows, col);

    /* my block: rows my_row*NB.., columns my_col*NB.. of A */
    for (int i = 0; i < NB; i++) {
        double s = 0;
        for (int k = 0; k < NB; k++)
            s += a_of((long)my_row * NB + i, (long)my_col * NB + k) * x[k];
        part[i] = s;
    }
    MPI_Allreduce(part, y, NB, MPI_DOUBLE, MPI_SUM, row);   /* y block my_row */

    /* check against the product done here, whole rows, for my row block */
    double err = 0;
    for (int i = 0; i < NB; i++) {
        double s = 0;
        for (long j = 0; j < (long)cols * NB; j++)
            s += a_of((long)my_row * NB + i, j) * (1.0 + (double)(j % 5));
        err = fmax(err, fabs(s - y[i]) / fabs(s));
    }
    double worst;
    MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("subcomm: %d x %d grid, y = A x with %d x %d blocks: largest relative "
               "error %.1e (%s)\n", rows, cols, NB, NB, worst, worst < 1e-12 ? "correct" : "WRONG");
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    free(x);
    free(y);
    free(part);
    MPI_Finalize();
    return worst < 1e-12 ? 0 : 1;
}
