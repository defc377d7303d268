/* soak.c -- many random collectives, each checked against plain MPICH.
 * Every rank draws the same pseudo-random sequence (--seed), so all call
 * the same collective with the same shape: which collective (blocking,
 * nonblocking, v-variants), which communicator (MPI_COMM_WORLD, a dup, one
 * with the ranks reversed), element type, operation, count (log-uniform up
 * to --max-bytes, now and then eight times more), root, and in place or
 * not.  Each call runs through libacis (MPI_*) and through MPICH (PMPI_*)
 * on the same data; results must be equal byte for byte (values are small
 * integers, exact in any order).  At the end: how many collectives the
 * switch served, and the host's retransmissions, so a run under injected
 * loss proves the loss was there and the switch did the work.
 *
 * usage: soak [--count N] [--seed S] [--max-bytes B] [--min-offloaded PCT]
 *             [--report-every N] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

#include "tdata.h"

enum shape {
    S_BARRIER, S_BCAST, S_REDUCE, S_ALLREDUCE, S_GATHER, S_SCATTER, S_ALLGATHER,
    S_REDUCE_SCATTER_BLOCK, S_SCAN, S_EXSCAN, S_GATHERV, S_ALLGATHERV, S_SCATTERV,
    S_REDUCE_SCATTER, S_IALLREDUCE, S_IBCAST, S_COUNT
};

static int rank, size;
static long failures;
static uint64_t rng;

static uint32_t draw(uint32_t n)              /* same on every rank */
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return n ? (uint32_t)(rng >> 33) % n : 0;
}

static int is_reduction(enum shape s)
{
    return s == S_REDUCE || s == S_ALLREDUCE || s == S_REDUCE_SCATTER_BLOCK || s == S_SCAN ||
           s == S_EXSCAN || s == S_REDUCE_SCATTER || s == S_IALLREDUCE;
}

/* One random collective, compared with MPICH; a mismatch is reported and
 * counted in failures. */
static void one(long i, MPI_Comm *comms, int ncomms, size_t max_bytes, char *b[4])
{
    enum shape s = (enum shape)draw(S_COUNT);
    MPI_Comm comm = comms[draw((uint32_t)ncomms)];
    int n, me, root;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    root = (int)draw((uint32_t)n);

    const struct ttype *t;
    MPI_Op op = MPI_OP_NULL;
    /* Holey pair types only reduce, and MPICH 4.0.2's binomial gather and
     * scatter truncate MPI_C_LONG_DOUBLE_COMPLEX messages (a 4-rank gather
     * of 386 at root 1 fails in plain MPICH): no reference to compare with. */
    do {
        t = &ttypes[draw((uint32_t)nttypes)];
    } while (!is_reduction(s) && (t->kind == TK_PAIR || t->type == MPI_C_LONG_DOUBLE_COMPLEX));
    if (is_reduction(s))
        do
            op = tops[draw((uint32_t)ntops)].op;
        while (!top_valid(t, op));
    size_t big = draw(50) == 0 ? 8 : 1;
    size_t maxc = max_bytes * big / (size_t)t->extent / (is_reduction(s) ? 1 : (size_t)n);
    size_t c = draw(3) == 0 ? 0 : (size_t)1 << draw(30);
    c = maxc ? (c + draw(1000)) % (maxc + 1) : 0;
    int in_place = draw(4) == 0 && (s == S_ALLREDUCE || (s == S_REDUCE && root == 0));
    int seed = (int)(i % 1000);
    int cnt = (int)c, counts[64], displs[64], total = 0;
    for (int q = 0; q < n; q++) {
        counts[q] = (int)(draw((uint32_t)c + 1));
        displs[q] = total;
        total += counts[q];
    }
    size_t ext = (size_t)t->extent, whole = (size_t)n * c;
    MPI_Datatype T = t->type;
    char *snd = b[0], *got = b[1], *ref = b[2];
    size_t out = whole > (size_t)total ? whole : (size_t)total;
    out = (out > c ? out : c) * ext;
    memset(got, 0x5a, out);
    memset(ref, 0x5a, out);
    tfill(t, snd, whole > c ? whole : c, me, seed);
    MPI_Request rq;
    size_t cmp = 0;                           /* elements to compare */
    int check = 1;

    switch (s) {
    case S_BARRIER:
        MPI_Barrier(comm);
        check = 0;
        break;
    case S_BCAST:
    case S_IBCAST:
        if (me == root) {
            memcpy(got, snd, c * ext);
            memcpy(ref, snd, c * ext);
        }
        if (s == S_BCAST)
            MPI_Bcast(got, cnt, T, root, comm);
        else {
            MPI_Ibcast(got, cnt, T, root, comm, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        PMPI_Bcast(ref, cnt, T, root, comm);
        cmp = c;
        break;
    case S_REDUCE:
        if (in_place && me == root) {
            memcpy(got, snd, c * ext);
            MPI_Reduce(MPI_IN_PLACE, got, cnt, T, op, root, comm);
        } else {
            MPI_Reduce(snd, got, cnt, T, op, root, comm);
        }
        PMPI_Reduce(snd, ref, cnt, T, op, root, comm);
        cmp = me == root ? c : 0;
        break;
    case S_ALLREDUCE:
    case S_IALLREDUCE:
        if (in_place) {
            memcpy(got, snd, c * ext);
            MPI_Allreduce(MPI_IN_PLACE, got, cnt, T, op, comm);
        } else if (s == S_ALLREDUCE) {
            MPI_Allreduce(snd, got, cnt, T, op, comm);
        } else {
            MPI_Iallreduce(snd, got, cnt, T, op, comm, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        PMPI_Allreduce(snd, ref, cnt, T, op, comm);
        cmp = c;
        break;
    case S_GATHER:
        MPI_Gather(snd, cnt, T, got, cnt, T, root, comm);
        PMPI_Gather(snd, cnt, T, ref, cnt, T, root, comm);
        cmp = me == root ? whole : 0;
        break;
    case S_SCATTER:
        MPI_Scatter(snd, cnt, T, got, cnt, T, root, comm);
        PMPI_Scatter(snd, cnt, T, ref, cnt, T, root, comm);
        cmp = c;
        break;
    case S_ALLGATHER:
        MPI_Allgather(snd, cnt, T, got, cnt, T, comm);
        PMPI_Allgather(snd, cnt, T, ref, cnt, T, comm);
        cmp = whole;
        break;
    case S_REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(snd, got, cnt, T, op, comm);
        PMPI_Reduce_scatter_block(snd, ref, cnt, T, op, comm);
        cmp = c;
        break;
    case S_SCAN:
        MPI_Scan(snd, got, cnt, T, op, comm);
        PMPI_Scan(snd, ref, cnt, T, op, comm);
        cmp = c;
        break;
    case S_EXSCAN:
        MPI_Exscan(snd, got, cnt, T, op, comm);
        PMPI_Exscan(snd, ref, cnt, T, op, comm);
        cmp = me ? c : 0;                     /* undefined at rank 0 */
        break;
    case S_GATHERV:
        MPI_Gatherv(snd, counts[me], T, got, counts, displs, T, root, comm);
        PMPI_Gatherv(snd, counts[me], T, ref, counts, displs, T, root, comm);
        cmp = me == root ? (size_t)total : 0;
        break;
    case S_ALLGATHERV:
        MPI_Allgatherv(snd, counts[me], T, got, counts, displs, T, comm);
        PMPI_Allgatherv(snd, counts[me], T, ref, counts, displs, T, comm);
        cmp = (size_t)total;
        break;
    case S_SCATTERV:
        MPI_Scatterv(snd, counts, displs, T, got, counts[me], T, root, comm);
        PMPI_Scatterv(snd, counts, displs, T, ref, counts[me], T, root, comm);
        cmp = (size_t)counts[me];
        break;
    case S_REDUCE_SCATTER:
        MPI_Reduce_scatter(snd, got, counts, T, op, comm);
        PMPI_Reduce_scatter(snd, ref, counts, T, op, comm);
        cmp = (size_t)counts[me];
        break;
    default:
        check = 0;
    }
    long at = check && cmp ? tdiff(t, got, ref, cmp) : -1;
    if (at >= 0 && failures++ < 20)
        fprintf(stderr, "soak[%d]: FAIL #%ld shape %d %s count %zu root %d%s: element %ld\n",
                rank, i, (int)s, t->name, c, root, in_place ? " in place" : "", at);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long count = atol(targ(argc, argv, "--count", "100000"));
    rng = strtoull(targ(argc, argv, "--seed", "1"), NULL, 10);
    size_t max_bytes = (size_t)atol(targ(argc, argv, "--max-bytes", "16384"));
    double min_off = atof(targ(argc, argv, "--min-offloaded", "0"));
    long every = atol(targ(argc, argv, "--report-every", "0"));
    if (size > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);

    MPI_Comm comms[3];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[2]);   /* ranks reversed */
    char *b[4];
    size_t cap = (max_bytes * 8 + 64) * (size_t)size * 2;
    for (int k = 0; k < 4; k++)
        b[k] = malloc(cap);

    double t0 = MPI_Wtime();
    for (long i = 0; i < count; i++) {
        one(i, comms, 3, max_bytes, b);
        if (every && (i + 1) % every == 0 && rank == 0)
            fprintf(stderr, "soak: %ld collectives, %.1f s\n", i + 1, MPI_Wtime() - t0);
    }
    double secs = MPI_Wtime() - t0;

    uint64_t calls = 0, off = 0;
    for (int c = 0; c < ACIS_COLL_COUNT; c++) {
        struct acis_coll_stats st;
        acis_get_stats(c, &st);
        calls += st.calls;
        off += st.offloaded;
    }
    struct acis_host_stats h;
    acis_get_host_stats(&h);
    uint64_t mine[4] = { off, calls, h.retransmits, (uint64_t)failures }, sum[4];
    PMPI_Allreduce(mine, sum, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    double pct = sum[1] ? 100.0 * (double)sum[0] / (double)sum[1] : 0;
    if (rank == 0) {
        printf("soak: %d ranks, %ld collectives in %.1f s (%.0f/s), %.1f %% offloaded, "
               "%llu retransmissions, %llu failures\n",
               size, count, secs, (double)count / secs, pct, (unsigned long long)sum[2],
               (unsigned long long)sum[3]);
        if (pct < min_off)
            printf("soak: FAIL: fewer than %.0f %% offloaded\n", min_off);
    }
    for (int k = 0; k < 4; k++)
        free(b[k]);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_Finalize();
    return sum[3] || pct < min_off ? 1 : 0;
}
