/* stress.c -- many nonblocking collectives in flight: random collectives
 * (same sequence on every rank, from a seed rank 0 picks) on 4 duplicated
 * communicators with a window of outstanding requests, mixed with
 * point-to-point traffic, completed in a random order per rank by all
 * eight completion functions, with short sleeps in one rank.  After each
 * round every result is checked against the same call made blocking
 * through PMPI, floating-point sums bitwise equal on every rank; at the
 * end the counters must show offload happened.
 * Usage: stress [--iters=ROUNDS] [--window=N] [--seed=S] */
#define _DEFAULT_SOURCE /* usleep */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <acis/acis.h>

#include "tdata.h"

enum { NCOMM = 4, MAXW = 64, PER_ROUND = 40, MAXN = 1500 };

enum kind { K_BARRIER, K_BCAST, K_ALLREDUCE, K_REDUCE, K_DALLREDUCE, K_GATHERV, K_SCATTERV,
            K_ALLGATHER, K_RSB, K_SCAN, K_EXSCAN, K_P2P, K_NKIND };
static const char *knames[K_NKIND] = { "Ibarrier", "Ibcast", "Iallreduce", "Ireduce",
                                       "Iallreduce(double)", "Igatherv", "Iscatterv",
                                       "Iallgather", "Ireduce_scatter_block", "Iscan",
                                       "Iexscan", "Isend/Irecv" };

struct job {
    int kind, comm, n, root, seed;
    void *s, *r;              /* send and receive buffers */
    int counts[64], displs[64]; /* v-variants: valid until completion */
    MPI_Request req[2];       /* p2p: send and receive */
    int nreq;
};

static int rank, size, failures;
static MPI_Comm comms[NCOMM];
static uint64_t shared_rng, local_rng;

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static void check(int ok, const char *what, int round)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "stress[%d]: FAIL %s (round %d)\n", rank, what, round);
    }
}

static void fill_int(int *v, int n, int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = (rank + 1) * (i % 101) + seed;
}

/* Not exactly representable, so the order of the sum shows in the bits. */
static void fill_dbl(double *v, int n, int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = 0.1 * (rank + 1) + 1e-7 * i + 1e-3 * seed;
}

/* Start j on its communicator (pm: blocking through PMPI into r). */
static void start(struct job *j, int pm)
{
    MPI_Comm c = comms[j->comm];
    int n = j->n, *counts = j->counts, *displs = j->displs, total = 0;
    for (int q = 0; q < size; q++) {
        counts[q] = (n + q) % 7 + q;
        displs[q] = total;
        total += counts[q];
    }
    MPI_Request *rq = &j->req[0];
    j->nreq = 1;
    switch (j->kind) {
    case K_BARRIER: pm ? PMPI_Barrier(c) : MPI_Ibarrier(c, rq); break;
    case K_BCAST:
        if (pm)
            PMPI_Bcast(j->r, n, MPI_INT, j->root, c);
        else
            MPI_Ibcast(j->r, n, MPI_INT, j->root, c, rq);
        break;
    case K_ALLREDUCE:
        pm ? PMPI_Allreduce(j->s, j->r, n, MPI_INT, MPI_SUM, c)
           : MPI_Iallreduce(j->s, j->r, n, MPI_INT, MPI_SUM, c, rq);
        break;
    case K_REDUCE:
        pm ? PMPI_Reduce(j->s, j->r, n, MPI_INT, MPI_MAX, j->root, c)
           : MPI_Ireduce(j->s, j->r, n, MPI_INT, MPI_MAX, j->root, c, rq);
        break;
    case K_DALLREDUCE:
        pm ? PMPI_Allreduce(j->s, j->r, n, MPI_DOUBLE, MPI_SUM, c)
           : MPI_Iallreduce(j->s, j->r, n, MPI_DOUBLE, MPI_SUM, c, rq);
        break;
    case K_GATHERV:
        pm ? PMPI_Gatherv(j->s, counts[rank], MPI_INT, j->r, counts, displs, MPI_INT, j->root, c)
           : MPI_Igatherv(j->s, counts[rank], MPI_INT, j->r, counts, displs, MPI_INT, j->root,
                          c, rq);
        break;
    case K_SCATTERV:
        pm ? PMPI_Scatterv(j->s, counts, displs, MPI_INT, j->r, counts[rank], MPI_INT, j->root, c)
           : MPI_Iscatterv(j->s, counts, displs, MPI_INT, j->r, counts[rank], MPI_INT, j->root,
                           c, rq);
        break;
    case K_ALLGATHER:
        pm ? PMPI_Allgather(j->s, n / size, MPI_INT, j->r, n / size, MPI_INT, c)
           : MPI_Iallgather(j->s, n / size, MPI_INT, j->r, n / size, MPI_INT, c, rq);
        break;
    case K_RSB:
        pm ? PMPI_Reduce_scatter_block(j->s, j->r, n / size, MPI_INT, MPI_SUM, c)
           : MPI_Ireduce_scatter_block(j->s, j->r, n / size, MPI_INT, MPI_SUM, c, rq);
        break;
    case K_SCAN:
        pm ? PMPI_Scan(j->s, j->r, n, MPI_INT, MPI_SUM, c)
           : MPI_Iscan(j->s, j->r, n, MPI_INT, MPI_SUM, c, rq);
        break;
    case K_EXSCAN:
        pm ? PMPI_Exscan(j->s, j->r, n, MPI_INT, MPI_SUM, c)
           : MPI_Iexscan(j->s, j->r, n, MPI_INT, MPI_SUM, c, rq);
        break;
    case K_P2P: {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        if (pm) {
            PMPI_Sendrecv(j->s, n, MPI_INT, right, 9, j->r, n, MPI_INT, left, 9, c,
                          MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(j->r, n, MPI_INT, left, 9, c, &j->req[1]);
            MPI_Isend(j->s, n, MPI_INT, right, 9, c, &j->req[0]);
            j->nreq = 2;
        }
        break;
    }
    }
}

static void make(struct job *j)
{
    j->kind = (int)(rnd(&shared_rng) % K_NKIND);
    j->comm = (int)(rnd(&shared_rng) % NCOMM);
    j->n = 1 + (int)(rnd(&shared_rng) % MAXN);
    if (rnd(&shared_rng) % 8 == 0)
        j->n = 20000 + (int)(rnd(&shared_rng) % 20000);   /* many segments */
    j->root = (int)(rnd(&shared_rng) % (uint32_t)size);
    j->seed = (int)(rnd(&shared_rng) % 1000);
    size_t bytes = (size_t)(j->n + 64) * (size_t)size * sizeof(double);
    j->s = malloc(bytes);
    j->r = malloc(bytes);
    memset(j->r, 0, bytes);
    if (j->kind == K_DALLREDUCE)
        fill_dbl(j->s, j->n, j->seed);
    else
        fill_int(j->s, (j->n + 64) * size, j->seed);
    if (j->kind == K_BCAST)
        fill_int(j->r, j->n, j->seed);
}

/* A flat list of the requests of the jobs in the window. */
struct win {
    struct job *job[MAXW];
    int n;
};

static int nreqs(struct win *w, MPI_Request *all, int *owner)
{
    int k = 0;
    for (int i = 0; i < w->n; i++)
        for (int q = 0; q < w->job[i]->nreq; q++) {
            all[k] = w->job[i]->req[q];
            owner[k++] = i * 2 + q;
        }
    return k;
}

static void put_back(struct win *w, const MPI_Request *all, const int *owner, int k)
{
    for (int i = 0; i < k; i++)
        w->job[owner[i] / 2]->req[owner[i] % 2] = all[i];
}

/* Drop jobs whose requests are all done. */
static void sweep(struct win *w)
{
    for (int i = 0; i < w->n;) {
        struct job *j = w->job[i];
        int live = 0;
        for (int q = 0; q < j->nreq; q++)
            live |= j->req[q] != MPI_REQUEST_NULL;
        if (!live)
            w->job[i] = w->job[--w->n];
        else
            i++;
    }
}

/* Complete at least one request (wait) or maybe some (test), with a
 * completion function chosen by this rank alone. */
static void complete(struct win *w, int must)
{
    static MPI_Request all[2 * MAXW];
    static int owner[2 * MAXW], idx[2 * MAXW];
    static MPI_Status sts[2 * MAXW];  /* not MPI_STATUSES_IGNORE: gcc warns on it */
    int k = nreqs(w, all, owner), flag, one, out;
    if (!k)
        return;
    int f = (int)(rnd(&local_rng) % 8), pick = (int)(rnd(&local_rng) % (uint32_t)k);
    if (must && f % 2)
        f--;                                     /* the blocking twin */
    switch (f) {
    case 0: MPI_Wait(&all[pick], MPI_STATUS_IGNORE); break;
    case 1: MPI_Test(&all[pick], &flag, MPI_STATUS_IGNORE); break;
    case 2: MPI_Waitany(k, all, &one, MPI_STATUS_IGNORE); break;
    case 3: MPI_Testany(k, all, &one, &flag, MPI_STATUS_IGNORE); break;
    case 4: MPI_Waitsome(k, all, &out, idx, sts); break;
    case 5: MPI_Testsome(k, all, &out, idx, sts); break;
    case 6: MPI_Waitall(k < 3 ? k : 3, all + (k < 3 ? 0 : pick % (k - 2)), sts);
            break;
    case 7: MPI_Testall(k, all, &flag, sts); break;
    }
    put_back(w, all, owner, k);
    sweep(w);
}

static unsigned long long digest(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* In issue order, the same calls blocking through PMPI; compare. */
static void verify(struct job *jobs, int n, int round, int *counted)
{
    for (int i = 0; i < n; i++) {
        struct job *j = &jobs[i], ref = *j;
        size_t bytes = (size_t)(j->n + 64) * (size_t)size * sizeof(double), cmp = 0;
        ref.r = calloc(1, bytes);
        if (j->kind == K_BCAST) {
            ref.s = j->s;
            fill_int(ref.r, j->n, j->seed);
        }
        start(&ref, 1);
        int c = j->n / size * size;
        switch (j->kind) {
        case K_BCAST: case K_ALLREDUCE: case K_SCAN: case K_P2P: cmp = (size_t)j->n * 4; break;
        case K_REDUCE: cmp = rank == j->root ? (size_t)j->n * 4 : 0; break;
        case K_EXSCAN: cmp = rank ? (size_t)j->n * 4 : 0; break;
        case K_ALLGATHER: cmp = (size_t)c * 4; break;
        case K_RSB: cmp = (size_t)(j->n / size) * 4; break;
        case K_GATHERV: cmp = rank == j->root ? (size_t)(j->n + 64) * (size_t)size * 4 : 0; break;
        case K_SCATTERV: cmp = (size_t)((j->n + rank) % 7 + rank) * 4; break;
        }
        char what[96];
        snprintf(what, sizeof what, "%s of %d on comm %d differs from PMPI", knames[j->kind],
                 j->n, j->comm);
        if (j->kind == K_DALLREDUCE) {
            const double *a = j->r, *b = ref.r;
            int ok = 1;
            for (int e = 0; e < j->n; e++) {
                double d = a[e] - b[e];
                ok &= (d < 0 ? -d : d) <= 1e-12 * (b[e] < 0 ? -b[e] : b[e]);
            }
            check(ok, what, round);
            unsigned long long mine = digest(j->r, (size_t)j->n * 8), all[64];
            PMPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
                           comms[j->comm]);
            for (int q = 0; q < size; q++)
                check(all[q] == mine, "Iallreduce(double) not bitwise equal on every rank",
                      round);
        } else {
            check(memcmp(j->r, ref.r, cmp) == 0, what, round);
        }
        counted[j->kind]++;
        free(ref.r);
        free(j->s);
        free(j->r);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = atoi(targ(argc, argv, "--iters", "3"));
    int window = atoi(targ(argc, argv, "--window", "20"));
    unsigned long long seed = strtoull(targ(argc, argv, "--seed", "0"), NULL, 10);
    if (window < 1 || window > MAXW)
        window = 20;
    if (!seed)
        seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("stress: %d ranks, seed %llu, %d rounds of %d, window %d\n", size, seed,
               rounds, PER_ROUND, window);
    shared_rng = seed;
    local_rng = seed * 31 + (uint64_t)rank + 1;
    for (int c = 0; c < NCOMM; c++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]);
        MPI_Barrier(comms[c]);  /* sets its row up: nonblocking calls before the
                                   first blocking one run in MPICH */
    }
    acis_reset_stats();

    int counted[K_NKIND] = { 0 };
    struct job *jobs = calloc(PER_ROUND, sizeof *jobs);
    for (int round = 0; round < rounds; round++) {
        struct win w = { .n = 0 };
        for (int i = 0; i < PER_ROUND; i++) {
            struct job *j = &jobs[i];
            make(j);
            start(j, 0);
            w.job[w.n++] = j;
            if (rank == size - 1 && rnd(&local_rng) % 16 == 0)
                usleep(1000 + rnd(&local_rng) % 4000);
            while (w.n >= window)
                complete(&w, 1);
            if (rnd(&local_rng) % 3 == 0)
                complete(&w, 0);
        }
        while (w.n)
            complete(&w, 1);
        verify(jobs, PER_ROUND, round, counted);
    }
    free(jobs);

    struct acis_coll_stats st;
    uint64_t off = 0;
    /* Igatherv and Iscatterv run in MPICH by design (docs/reliability.md) */
    acis_coll_t nb[] = { ACIS_COLL_IBARRIER, ACIS_COLL_IBCAST, ACIS_COLL_IALLREDUCE,
                         ACIS_COLL_IREDUCE, ACIS_COLL_IALLGATHER,
                         ACIS_COLL_IREDUCE_SCATTER_BLOCK, ACIS_COLL_ISCAN, ACIS_COLL_IEXSCAN };
    for (size_t i = 0; i < sizeof nb / sizeof nb[0]; i++) {
        acis_get_stats(nb[i], &st);
        off += st.offloaded;
    }
    int ncoll = 0;
    for (int k = 0; k < K_NKIND; k++)
        ncoll += k == K_P2P || k == K_GATHERV || k == K_SCATTERV ? 0 : counted[k];
    check(off >= (uint64_t)ncoll * 9 / 10, "fewer than 90% of the collectives offloaded", -1);
    for (int c = 0; c < NCOMM; c++)
        MPI_Comm_free(&comms[c]);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("stress: %d collectives (%llu offloaded on rank 0), %d p2p, %d failures\n",
               ncoll, (unsigned long long)off, counted[K_P2P], all);
    MPI_Finalize();
    return all ? 1 : 0;
}
