/* lat.c -- latency of one collective at one or more message sizes, for the
 * benchmark scripts in bench/.  A plain MPI program (not linked with acis),
 * so the same binary runs with and without LD_PRELOAD=libacis.so.
 *
 * usage: lat [-t COLL] [-s SIZES] [-i ITERS] [-x WARMUP] [-r REPS] [-b SECONDS] [-w]
 *   COLL   allreduce reduce bcast barrier gather scatter allgather
 *          reduce_scatter (MPI_Reduce_scatter_block) scan exscan; each
 *          with an i in front for its
 *          nonblocking form (MPI_I* and MPI_Wait per call, as OSU's
 *          osu_i* without overlap); and pallreduce pbcast (persistent:
 *          MPI_*_init once per size, then MPI_Start and MPI_Wait per
 *          call); and reduce_scatterv (MPI_Reduce_scatter, n for every
 *          rank in its counts array, as OSU's osu_reduce_scatter calls
 *          it; blocking only) (default allreduce)
 *   SIZES  comma-separated byte counts (default 8)
 * Prints one line per size: "size median_us min_us" over REPS repetitions
 * of ITERS calls each, the slowest rank's time per repetition.
 *
 * -b SECONDS caps one repetition at about that long: the warm-up (itself
 * stopped after SECONDS / 2) gives the time per call, and ITERS is cut
 * to fit, never below 2; all ranks agree on the count.  Then a fourth
 * column gives the calls per repetition used.  Without -b the counts are
 * exactly as given.
 *
 * -w writes every rank's send buffer (a new byte value each call, all
 * the bytes the rank sends: n, or n per rank for a scatter's root and a
 * reduce_scatter) before
 * each call, as an application computes its data between calls, and
 * times the calls alone: each call's time is read around it, the writes
 * left out.  Without -w the buffers are written once (OSU's way): a
 * single-copy transfer then reads lines its reader still holds from the
 * last call.  The clock reads add some 50 ns a call.
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

/* The persistent request of pallreduce and pbcast, made at a size's first
 * call and freed after its last. */
static MPI_Request preq = MPI_REQUEST_NULL;
static int preq_made;

/* The nonblocking form of what (without its i) started into *q; -1 if
 * there is none. */
static int start(const char *what, char *s, char *r, int n, int root, MPI_Request *q)
{
    MPI_Comm w = MPI_COMM_WORLD;
    if (strcmp(what, "allreduce") == 0)
        return MPI_Iallreduce(s, r, n, MPI_CHAR, MPI_SUM, w, q);
    if (strcmp(what, "reduce") == 0)
        return MPI_Ireduce(s, r, n, MPI_CHAR, MPI_SUM, root, w, q);
    if (strcmp(what, "bcast") == 0)
        return MPI_Ibcast(s, n, MPI_CHAR, root, w, q);
    if (strcmp(what, "barrier") == 0)
        return MPI_Ibarrier(w, q);
    if (strcmp(what, "gather") == 0)
        return MPI_Igather(s, n, MPI_CHAR, r, n, MPI_CHAR, root, w, q);
    if (strcmp(what, "scatter") == 0)
        return MPI_Iscatter(s, n, MPI_CHAR, r, n, MPI_CHAR, root, w, q);
    if (strcmp(what, "allgather") == 0)
        return MPI_Iallgather(s, n, MPI_CHAR, r, n, MPI_CHAR, w, q);
    if (strcmp(what, "reduce_scatter") == 0)
        return MPI_Ireduce_scatter_block(s, r, n, MPI_CHAR, MPI_SUM, w, q);
    if (strcmp(what, "scan") == 0)
        return MPI_Iscan(s, r, n, MPI_CHAR, MPI_SUM, w, q);
    if (strcmp(what, "exscan") == 0)
        return MPI_Iexscan(s, r, n, MPI_CHAR, MPI_SUM, w, q);
    return -1;
}

/* MPI_Reduce_scatter's counts array: n for each of size ranks. */
static const int *counts(int n, int size)
{
    static int c[4096];
    for (int i = 0; i < size && i < 4096; i++)
        c[i] = n;
    return c;
}

/* One call; n bytes is the message size OSU reports (per rank block for
 * gather/scatter/allgather/reduce_scatter); a nonblocking or persistent
 * one is a start and its wait. */
static int one(const char *what, char *s, char *r, int n, int root, int size)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request q;
    if (what[0] == 'i') {
        int rc = start(what + 1, s, r, n, root, &q);
        return rc == MPI_SUCCESS ? MPI_Wait(&q, MPI_STATUS_IGNORE) : rc;
    }
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
    if (strcmp(what, "reduce_scatterv") == 0 && size <= 4096)
        return MPI_Reduce_scatter(s, r, counts(n, size), MPI_CHAR, MPI_SUM, w);
    if (strcmp(what, "scan") == 0)
        return MPI_Scan(s, r, n, MPI_CHAR, MPI_SUM, w);
    if (strcmp(what, "exscan") == 0)
        return MPI_Exscan(s, r, n, MPI_CHAR, MPI_SUM, w);
    if (strcmp(what, "pallreduce") == 0 || strcmp(what, "pbcast") == 0) {
        if (!preq_made) {                 /* made at the size's first call */
            if (what[1] == 'a')
                MPI_Allreduce_init(s, r, n, MPI_CHAR, MPI_SUM, w, MPI_INFO_NULL, &preq);
            else
                MPI_Bcast_init(s, n, MPI_CHAR, root, w, MPI_INFO_NULL, &preq);
            preq_made = 1;
        }
        MPI_Start(&preq);
        return MPI_Wait(&preq, MPI_STATUS_IGNORE);
    }
    return -1;
}

int main(int argc, char **argv)
{
    const char *what = "allreduce", *sizes = "8";
    int iters = 10000, warmup = 1000, reps = 5, opt, rank, write = 0;
    double budget = 0;
    while ((opt = getopt(argc, argv, "t:s:i:x:r:b:w")) != -1) {
        switch (opt) {
        case 't': what = optarg; break;
        case 's': sizes = optarg; break;
        case 'i': iters = atoi(optarg); break;
        case 'x': warmup = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'b': budget = atof(optarg); break;
        case 'w': write = 1; break;
        default:
            fprintf(stderr, "usage: lat [-t coll] [-s sizes] [-i iters] [-x warmup] [-r reps] "
                            "[-b seconds] [-w]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || iters < 1 || warmup < 0 || budget < 0) {
        fprintf(stderr, "lat: bad -r, -i, -x or -b\n");
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
        size_t sent = strstr(what, "scatter") ? big - 1 : (size_t)n;   /* n per rank */
        double t0 = MPI_Wtime(), el;
        if (one(what, s, r, n, 0, size) != MPI_SUCCESS) {
            if (rank == 0)
                fprintf(stderr, "lat: unknown collective %s\n", what);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        int calls = iters;
        if (budget <= 0) {
            for (int i = 0; i < warmup; i++)
                one(what, s, r, n, 0, size);
        } else {
            /* Warm up in doubling chunks; after each, the slowest rank's
             * time decides for all whether to go on. */
            double mine = MPI_Wtime() - t0;
            PMPI_Allreduce(&mine, &el, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double per_call = el;   /* the first call's, if no warm-up */
            int done = 0;
            el = 0;
            t0 = MPI_Wtime();
            for (int chunk = 1; done < warmup && el < budget / 2; chunk *= 2) {
                int k = chunk < warmup - done ? chunk : warmup - done;
                for (int i = 0; i < k; i++)
                    one(what, s, r, n, 0, size);
                done += k;
                mine = MPI_Wtime() - t0;
                PMPI_Allreduce(&mine, &el, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                per_call = el / done;
            }
            if (per_call * calls > budget)
                calls = (int)(budget / per_call);
            if (calls < 2)
                calls = 2;
        }
        for (int k = 0; k < reps; k++) {
            PMPI_Barrier(MPI_COMM_WORLD);
            double us = 0;
            if (write) {
                for (int i = 0; i < calls; i++) {
                    memset(s, (k * calls + i) & 0xff, sent);
                    t0 = MPI_Wtime();
                    one(what, s, r, n, 0, size);
                    us += MPI_Wtime() - t0;
                }
                us = us * 1e6 / calls;
            } else {
                t0 = MPI_Wtime();
                for (int i = 0; i < calls; i++)
                    one(what, s, r, n, 0, size);
                us = (MPI_Wtime() - t0) * 1e6 / calls;
            }
            PMPI_Allreduce(&us, &t[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        qsort(t, (size_t)reps, sizeof t[0], cmp);
        if (rank == 0 && budget > 0)
            printf("%d %.4f %.4f %d\n", n, t[reps / 2], t[0], calls);
        else if (rank == 0)
            printf("%d %.4f %.4f\n", n, t[reps / 2], t[0]);
        fflush(stdout);
        if (preq_made) {
            MPI_Request_free(&preq);
            preq_made = 0;
        }
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
