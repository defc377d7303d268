/* overhead.c -- the cost of passing through libacis, measured inside one
 * process: blocks of 8-byte MPI_Allreduce calls (through acis when it is
 * preloaded or linked) alternate with blocks of PMPI_Allreduce (MPICH
 * directly), so both see the same MPICH state, cache and machine load.
 * Prints the median block time per call of each and the difference.
 *
 * usage: overhead [-b BLOCKS] [-n CALLS_PER_BLOCK] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double block(int direct, int n)
{
    char s[8] = { 1 }, r[8];
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = PMPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (direct)
            PMPI_Allreduce(s, r, 8, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Allreduce(s, r, 8, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
    }
    double us = (PMPI_Wtime() - t0) * 1e6 / n, worst;
    PMPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv)
{
    int blocks = 200, n = 5000, opt, rank;
    while ((opt = getopt(argc, argv, "b:n:")) != -1) {
        if (opt == 'b')
            blocks = atoi(optarg);
        else if (opt == 'n')
            n = atoi(optarg);
        else {
            fprintf(stderr, "usage: overhead [-b blocks] [-n calls]\n");
            return 2;
        }
    }
    if (blocks < 2 || n < 1) {
        fprintf(stderr, "overhead: need -b >= 2 and -n >= 1\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *direct = malloc(sizeof(double) * (size_t)blocks);
    double *through = malloc(sizeof(double) * (size_t)blocks);
    block(1, n);
    block(0, n);                                   /* warm-up */
    for (int b = 0; b < blocks; b++) {
        int first = b % 2;                         /* alternate the order */
        double x = block(first, n), y = block(!first, n);
        direct[b] = first ? x : y;
        through[b] = first ? y : x;
    }
    qsort(direct, (size_t)blocks, sizeof(double), cmp);
    qsort(through, (size_t)blocks, sizeof(double), cmp);
    double d = direct[blocks / 2], t = through[blocks / 2];
    if (rank == 0)
        printf("8-byte allreduce, %d blocks of %d calls: PMPI %.4f us, MPI (through "
               "libacis) %.4f us, overhead %+.4f us (%+.2f %%)\n",
               blocks, n, d, t, t - d, (t - d) / d * 100);
    free(direct);
    free(through);
    MPI_Finalize();
    return 0;
}
