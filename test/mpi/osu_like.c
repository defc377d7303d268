/* osu_like.c -- an unmodified MPI program in the style of the OSU
 * micro-benchmarks, built without libacis: the preload test runs it with
 * LD_PRELOAD=libacis.so to show that interception needs no relinking.
 * It times a collective over message sizes and validates every result.
 *
 * usage: osu_like [-t allreduce|reduce|bcast|barrier] [-m MAXBYTES]
 *                 [-i ITERS] [-x WARMUP] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check(const char *what, const signed char *buf, size_t n, int size,
                 int iter, int rank, int root)
{
    for (size_t i = 0; i < n; i++) {
        int want;
        if (strcmp(what, "bcast") == 0)
            want = (signed char)(i + (size_t)iter + (size_t)root);
        else                                   /* sum over ranks of (r + i + iter) % 7 */
            for (int r = want = 0; r < size; r++)
                want += (int)((r + i + (size_t)iter) % 7);
        if (buf[i] != (signed char)want) {
            fprintf(stderr, "osu_like[%d]: %s wrong at %zu: %d, expected %d\n", rank, what,
                    i, buf[i], (signed char)want);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = "allreduce";
    size_t max = 1 << 16;
    int iters = 100, warmup = 10, rank, size, opt, bad = 0;
    while ((opt = getopt(argc, argv, "t:m:i:x:")) != -1) {
        switch (opt) {
        case 't': what = optarg; break;
        case 'm': max = strtoul(optarg, NULL, 10); break;
        case 'i': iters = atoi(optarg); break;
        case 'x': warmup = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: osu_like [-t coll] [-m max] [-i iters] [-x warmup]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    signed char *sbuf = malloc(max ? max : 1), *rbuf = malloc(max ? max : 1);
    int barrier = strcmp(what, "barrier") == 0;
    if (rank == 0)
        printf("# osu_like %s\n# %-10s %18s\n", what, "Size", "Avg Latency(us)");
    for (size_t n = barrier ? 0 : 1; n <= max && !bad; n = n ? n * 4 : 1) {
        double t0 = 0;
        for (int it = 0; it < warmup + iters && !bad; it++) {
            int root = it % size;
            if (it == warmup)
                t0 = MPI_Wtime();
            for (size_t i = 0; i < n; i++) {
                sbuf[i] = (signed char)((rank + i + (size_t)it) % 7);
                rbuf[i] = strcmp(what, "bcast") == 0 && rank == root
                              ? (signed char)(i + (size_t)it + (size_t)root) : -1;
            }
            if (barrier)
                MPI_Barrier(MPI_COMM_WORLD);
            else if (strcmp(what, "allreduce") == 0)
                MPI_Allreduce(sbuf, rbuf, (int)n, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
            else if (strcmp(what, "reduce") == 0)
                MPI_Reduce(sbuf, rbuf, (int)n, MPI_CHAR, MPI_SUM, root, MPI_COMM_WORLD);
            else if (strcmp(what, "bcast") == 0)
                MPI_Bcast(rbuf, (int)n, MPI_CHAR, root, MPI_COMM_WORLD);
            else {
                fprintf(stderr, "osu_like: unknown collective %s\n", what);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (!barrier && (strcmp(what, "reduce") != 0 || rank == root))
                bad = check(what, rbuf, n, size, it, rank, root);
        }
        double us = (MPI_Wtime() - t0) * 1e6 / iters, max_us;
        int any_bad;
        MPI_Reduce(&us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        bad = any_bad;
        if (rank == 0)
            printf("%-12zu %18.2f%s\n", n, max_us, bad ? "  FAIL" : "");
        if (barrier)
            break;
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return bad ? 1 : 0;
}
