/* lat.c -- latency of one collective at one or more message sizes, for the
 * benchmark scripts in bench/.  A plain MPI program (not linked with acis),
 * so the same binary runs with and without LD_PRELOAD=libacis.so.
 *
 * usage: lat [-t COLL] [-s SIZES] [-i ITERS] [-x WARMUP] [-r REPS]
 *   COLL   allreduce reduce bcast barrier gather scatter allgather
 *          reduce_scatter scan exscan iallreduce ibcast (default allreduce)
 *   SIZES  comma-separated byte counts (default 8)
 * Prints one line per size: "size median_us min_us" over REPS repetitions
 * of ITERS calls each, the slowest rank's time per repetition.
 *
 * The barrier before each repetition and the reduction of the times call
 * PMPI_* directly: under LD_PRELOAD=libacis.so they are not intercepted,
 * so acis's MPIR_CVAR_OFFLOAD_STATS table counts only the measured
 * collective (bench/suite.sh reads it to tell offloaded from fallback). */
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

/* One call; n bytes is the message size OSU reports (per rank block for
 * gather/scatter/allgather/reduce_scatter). */
static int one(const char *what, char *s, char *r, int n, int root, int size)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request q;
    if (strcmp(what, "allreduce") == 0)
        return MPI_Allreduce(s, r, n, MPI_CHAR, MPI_SUM, w);
    if (strcmp(what, "reduce") == 0)
        return MPI_Reduce(s, r, n, MPI_CHAR, MPI_SUM, root, w);
    if (strcmp(what, "bcast") == 0)
        return MPI_Bcast(s, n, MPI_CHAR, root, w);
    if (strcmp(what, "barrier") == 0)
        return MPI_Barrier(w);
    if (strcmp(what, "gather") == 0)
        return MPI_Gather(s, n, MPI_CHAR, r, n, MPI_CHAR, root, w);
    if (strcmp(what, "scatter") == 0)
        return MPI_Scatter(s, n, MPI_CHAR, r, n, MPI_CHAR, root, w);
    if (strcmp(what, "allgather") == 0)
        return MPI_Allgather(s, n, MPI_CHAR, r, n, MPI_CHAR, w);
    if (strcmp(what, "reduce_scatter") == 0)
        return MPI_Reduce_scatter_block(s, r, n, MPI_CHAR, MPI_SUM, w);
    if (strcmp(what, "scan") == 0)
        return MPI_Scan(s, r, n, MPI_CHAR, MPI_SUM, w);
    if (strcmp(what, "exscan") == 0)
        return MPI_Exscan(s, r, n, MPI_CHAR, MPI_SUM, w);
    if (strcmp(what, "iallreduce") == 0) {
        MPI_Iallreduce(s, r, n, MPI_CHAR, MPI_SUM, w, &q);
        return MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (strcmp(what, "ibcast") == 0) {
        MPI_Ibcast(s, n, MPI_CHAR, root, w, &q);
        return MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    (void)size;
    return -1;
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
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t[1000];
    for (const char *p = sizes; *p;) {
        int n = atoi(p);
        size_t big = (size_t)n * (size_t)size + 1;   /* room for P blocks */
        char *s = calloc(big, 1), *r = calloc(big, 1);
        if (one(what, s, r, n, 0, size) != MPI_SUCCESS) {
            if (rank == 0)
                fprintf(stderr, "lat: unknown collective %s\n", what);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int i = 0; i < warmup; i++)
            one(what, s, r, n, 0, size);
        for (int k = 0; k < reps; k++) {
            PMPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                one(what, s, r, n, 0, size);
            double us = (MPI_Wtime() - t0) * 1e6 / iters;
            PMPI_Allreduce(&us, &t[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
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
