/* lat.c -- latency of one collective at one or more message sizes, for the
 * benchmark scripts in bench/.  A plain MPI program (not linked with acis),
 * so the same binary runs with and without LD_PRELOAD=libacis.so.
 *
 * usage: lat [-t allreduce|reduce|bcast|barrier] [-s SIZES] [-i ITERS]
 *            [-x WARMUP] [-r REPS]
 *   SIZES  comma-separated byte counts (default 8)
 * Prints one line per size: "size median_us min_us" over REPS repetitions
 * of ITERS calls each, the slowest rank's time per repetition. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void one(const char *what, char *s, char *r, int n, int root)
{
    if (strcmp(what, "allreduce") == 0)
        MPI_Allreduce(s, r, n, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
    else if (strcmp(what, "reduce") == 0)
        MPI_Reduce(s, r, n, MPI_CHAR, MPI_SUM, root, MPI_COMM_WORLD);
    else if (strcmp(what, "bcast") == 0)
        MPI_Bcast(s, n, MPI_CHAR, root, MPI_COMM_WORLD);
    else
        MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    const char *what = "allreduce", *sizes = "8";
    int iters = 10000, warmup = 1000, reps = 5, opt, rank;
    while ((opt = getopt(argc, argv, "t:s:i:x:r:")) != -1) {
        switch (opt) {
        case 't': what = optarg; break;
        case 's': sizes = optarg; break;
        case 'i': iters = atoi(optarg); break;
        case 'x': warmup = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: lat [-t coll] [-s sizes] [-i iters] [-x warmup] [-r reps]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || iters < 1) {
        fprintf(stderr, "lat: bad -r or -i\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double t[1000];
    for (const char *p = sizes; *p;) {
        int n = atoi(p);
        char *s = calloc((size_t)n + 1, 1), *r = calloc((size_t)n + 1, 1);
        for (int i = 0; i < warmup; i++)
            one(what, s, r, n, 0);
        for (int k = 0; k < reps; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                one(what, s, r, n, 0);
            double us = (MPI_Wtime() - t0) * 1e6 / iters;
            MPI_Allreduce(&us, &t[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        qsort(t, (size_t)reps, sizeof t[0], cmp);
        if (rank == 0)
            printf("%d %.4f %.4f\n", n, t[reps / 2], t[0]);
        fflush(stdout);
        free(s);
        free(r);
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    MPI_Finalize();
    return 0;
}
