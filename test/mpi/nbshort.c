/* nbshort.c -- nonblocking collectives on the short path (src/offload/
 * nbc.c, short.c, early.c, late.c): posted at the start, their requests
 * complete at once when the call's answer was there, else when the
 * answer is taken.  Cases, each checking every value on every rank:
 *   - many calls in a row, more than the slot window, root and leaf
 *     buffers overwritten right after each wait;
 *   - members whose answer cannot be there yet (the others start the call
 *     only after a message this member sends once it started its own):
 *     MPI_Test must say not done, then the data must arrive -- broadcast,
 *     scatter, gather, barrier and allreduce;
 *   - a long nonblocking allreduce started behind such a call, whose
 *     packets need the slot that call holds, while the member then sits in
 *     MPI_Recv inside MPICH: the engine (moved by the progress helper) must
 *     take the answer and free the slot, and starting the allreduce must
 *     not wait for the others (they start only after this member's send);
 *   - a member in MPI_Wait on such a call whose answer needs a member
 *     that first sends it a message MPICH can deliver only while the
 *     waiting member's MPICH moves (a rendezvous): MPI_Wait runs nothing
 *     but the request's poll function, which must let MPICH move;
 *   - members polling their request with MPI_Request_get_status alone
 *     (MPICH runs no generalized request's poll function there), on the
 *     short path and through the engine (a 1 MiB broadcast): a leaf's
 *     first look, before its root started, must say not done, and the
 *     looks must then see the call done (a deadline instead of a hang)
 *     with the data in place, and the 1 MiB calls counted offloaded;
 *   - the communicator freed before the request is waited for;
 *   - MPI_Request_free and MPI_Cancel on an open request (erroneous on
 *     a collective's), on the short path and through the engine (1 MiB):
 *     refused as MPICH refuses its own, the request kept and then
 *     waited for with its data;
 *   - a request freed before it completed past acis (PMPI_Request_free,
 *     as a profiling wrapper would), and one freed after a later wait took
 *     its answer: no memory corrupted (the sanitized build runs this
 *     too), the next calls work, and MPI_Comm_free and MPI_Finalize end
 *     (on the engine's way the freed call must still finish and let its
 *     communicator go);
 *   - with --abstain, rank 1 without memory for any nonblocking call's
 *     data (MPIR_CVAR_OFFLOAD_FAULT_NOMEM_NB=1 on it alone): it takes the
 *     engine's way and abstains, and every member -- rank 0 on the short
 *     path, even as a broadcast's root or a gather's leaf -- must fail the
 *     call with MPI_ERR_NO_MEM, the communicator going on (MPI_Request_get_
 *     status too says such a call done and failed).
 * With --expect-short the counters must show every call of the first two
 * cases on the short path (so a silent engine or MPICH fallback cannot
 * pass).
 * Usage: nbshort [--expect-short | --abstain] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>
#include <mpi.h>

enum { RUN = 100, N = 16, BIG = 1 << 20 };

static int rank, size, failures;

static void check(int ok, const char *what, int i)
{
    if (!ok && failures++ < 10)
        fprintf(stderr, "nbshort[%d]: FAIL %s (call %d)\n", rank, what, i);
}

/* Calls in a row; what a member sent is its own again after the wait. */
static void ahead(MPI_Comm comm)
{
    int v[N], all[64 * N], one[N];
    MPI_Request r;
    for (int i = 0; i < RUN; i++) {
        for (int k = 0; k < N; k++)
            v[k] = rank == 0 ? i * k : -1;
        MPI_Ibcast(v, N, MPI_INT, 0, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int ok = 1;
        for (int k = 0; k < N; k++)
            ok &= v[k] == i * k;
        check(ok, "ibcast", i);
        memset(v, 0x5a, sizeof v);          /* the root's buffer is its own again */
    }
    for (int i = 0; i < RUN; i++) {
        for (int k = 0; k < size * N && rank == 0; k++)
            all[k] = i + k;
        MPI_Iscatter(all, N, MPI_INT, one, N, MPI_INT, 0, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int ok = 1;
        for (int k = 0; k < N; k++)
            ok &= one[k] == i + rank * N + k;
        check(ok, "iscatter", i);
        memset(all, 0x5a, sizeof all);
    }
    for (int i = 0; i < RUN; i++) {
        for (int k = 0; k < N; k++)
            one[k] = 1000 * rank + i + k;
        MPI_Igather(one, N, MPI_INT, all, N, MPI_INT, 0, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        memset(one, 0x5a, sizeof one);      /* a leaf's buffer is its own again */
        int ok = 1;
        for (int q = 0; q < size && rank == 0; q++)
            for (int k = 0; k < N; k++)
                ok &= all[q * N + k] == 1000 * q + i + k;
        check(ok, "igather", i);
    }
}

/* The members that started their call tell the others, which start
 * theirs only then: the leaves tell the root (to_root), or the root
 * tells the leaves. */
static void tell(int root, int to_root, MPI_Comm comm)
{
    int token = 1;
    for (int q = 0; q < size; q++) {
        if (q == root)
            continue;
        int from = to_root ? q : root, to = to_root ? root : q;
        if (rank == from)
            MPI_Send(&token, 1, MPI_INT, to, 7, comm);
        else if (rank == to)
            MPI_Recv(&token, 1, MPI_INT, from, 7, comm, MPI_STATUS_IGNORE);
    }
}

static void not_yet(MPI_Request *r, const char *what, int i)
{
    int flag = 1;
    MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    check(!flag, what, i);
}

static void pending(MPI_Comm comm)
{
    int root = size - 1, v[N], all[64 * N], one[N], sum;
    MPI_Request r;
    for (int i = 0; i < 20; i++) {
        for (int k = 0; k < N; k++)
            v[k] = rank == root ? 3 * i + k : -1;
        if (rank != root) {
            MPI_Ibcast(v, N, MPI_INT, root, comm, &r);
            not_yet(&r, "an ibcast leaf done before its root started", i);
        }
        tell(root, 1, comm);
        if (rank == root)
            MPI_Ibcast(v, N, MPI_INT, root, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int ok = 1;
        for (int k = 0; k < N; k++)
            ok &= v[k] == 3 * i + k;
        check(ok, "ibcast, leaves first", i);

        for (int k = 0; k < size * N && rank == root; k++)
            all[k] = 5 * i + k;
        if (rank != root) {
            MPI_Iscatter(NULL, N, MPI_INT, one, N, MPI_INT, root, comm, &r);
            not_yet(&r, "an iscatter leaf done before its root started", i);
        }
        tell(root, 1, comm);
        if (rank == root)
            MPI_Iscatter(all, N, MPI_INT, one, N, MPI_INT, root, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        ok = 1;
        for (int k = 0; k < N; k++)
            ok &= one[k] == 5 * i + rank * N + k;
        check(ok, "iscatter, leaves first", i);

        /* The gather root starts first and waits for the leaves. */
        for (int k = 0; k < N; k++)
            one[k] = 100 * rank + i + k;
        if (rank == root) {
            MPI_Igather(one, N, MPI_INT, all, N, MPI_INT, root, comm, &r);
            not_yet(&r, "an igather root done before its leaves started", i);
        }
        tell(root, 0, comm);
        if (rank != root)
            MPI_Igather(one, N, MPI_INT, all, N, MPI_INT, root, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        ok = 1;
        for (int q = 0; q < size && rank == root; q++)
            for (int k = 0; k < N; k++)
                ok &= all[q * N + k] == 100 * q + i + k;
        check(ok, "igather, root first", i);

        if (rank != root) {
            MPI_Ibarrier(comm, &r);
            not_yet(&r, "an ibarrier done before every member entered", i);
        }
        tell(root, 1, comm);
        if (rank == root)
            MPI_Ibarrier(comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);

        int mine = rank + i;
        if (rank != root) {
            MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm, &r);
            not_yet(&r, "an iallreduce done before every member started", i);
        }
        tell(root, 1, comm);
        if (rank == root)
            MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(sum == size * (size - 1) / 2 + size * i, "iallreduce, one late", i);
    }
}

/* A long allreduce behind a broadcast whose answer is to come. */
static void behind(MPI_Comm comm)
{
    int root = size - 1, v = rank == root ? 41 : -1, token = 0;
    int *a = malloc(sizeof(int) * BIG), *b = malloc(sizeof(int) * BIG);
    for (int k = 0; k < BIG; k++)
        a[k] = rank + k % 7;
    MPI_Request r[2];
    MPI_Status st[2];
    if (rank != root) {
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r[0]);
        MPI_Iallreduce(a, b, BIG, MPI_INT, MPI_SUM, comm, &r[1]);  /* must not wait */
        MPI_Send(&token, 1, MPI_INT, root, 8, comm);
        /* In MPICH until the root finished its allreduce: this member's
         * packets must leave without it. */
        MPI_Recv(&token, 1, MPI_INT, root, 9, comm, MPI_STATUS_IGNORE);
        MPI_Waitall(2, r, st);
    } else {
        for (int q = 0; q < size - 1; q++)
            MPI_Recv(&token, 1, MPI_INT, q, 8, comm, MPI_STATUS_IGNORE);
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r[0]);
        MPI_Iallreduce(a, b, BIG, MPI_INT, MPI_SUM, comm, &r[1]);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        for (int q = 0; q < size - 1; q++)
            MPI_Send(&token, 1, MPI_INT, q, 9, comm);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    }
    check(v == 41, "ibcast before a long iallreduce", 0);
    int ok = 1;
    for (int k = 0; k < BIG; k++)
        ok &= b[k] == size * (size - 1) / 2 + size * (k % 7);
    check(ok, "long iallreduce behind an ibcast", 0);
    free(a);
    free(b);
}

/* Rank 0 waits in MPI_Wait for a broadcast whose root starts it only
 * once rank 1's large send to rank 0 is received: 8-rank stress runs
 * hung on this (2026-11-29), the short path's poll leaving MPICH still.
 * With expect, rank 0's call must have been on the short path (the
 * engine's poll lets MPICH move anyway, so there the case proves
 * nothing). */
static void needs_mpich(MPI_Comm comm, int expect)
{
    int root = size - 1, v = rank == root ? 77 : -1, *big = malloc(sizeof(int) * BIG), ok = 1;
    MPI_Request r, rr;
    struct acis_host_stats h0, h1;
    acis_get_host_stats(&h0);
    for (int k = 0; k < BIG && rank == 1; k++)
        big[k] = k ^ 0x1234;
    if (rank == 0) {
        MPI_Irecv(big, BIG, MPI_INT, 1, 10, comm, &rr);
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        for (int k = 0; k < BIG; k++)
            ok &= big[k] == (k ^ 0x1234);
        check(ok, "a large message received while waiting for an ibcast", 0);
        acis_get_host_stats(&h1);
        check(!expect || h1.short_path - h0.short_path == 1,
              "rank 0's ibcast behind a peer's send on the short path", 0);
    } else {
        if (rank == 1)
            MPI_Send(big, BIG, MPI_INT, 0, 10, comm);
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    check(v == 77, "an ibcast waited for while a peer's send needs MPICH", 0);
    free(big);
}

/* Polled with MPI_Request_get_status alone until done: 1, or 0 after
 * 30 s (the call would never finish). */
static int looked_done(MPI_Request r)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 30)
        MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    return flag;
}

/* Broadcasts of n ints, each member looking at its request with
 * MPI_Request_get_status alone; the leaves start before the root. */
static void polled(MPI_Comm comm, int n, int *v)
{
    int root = size - 1, ok = 1;
    struct acis_coll_stats s0, s1;
    acis_get_stats(ACIS_COLL_IBCAST, &s0);
    for (int i = 0; i < 5 && ok; i++) {
        MPI_Request r;
        int flag = 1;
        for (int k = 0; k < n; k++)
            v[k] = rank == root ? k * 7 + i : -1;
        if (rank != root) {
            MPI_Ibcast(v, n, MPI_INT, root, comm, &r);
            MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
            check(!flag, "get_status: an ibcast leaf done before its root started", i);
        }
        tell(root, 1, comm);
        if (rank == root)
            MPI_Ibcast(v, n, MPI_INT, root, comm, &r);
        ok = looked_done(r);
        check(ok, "get_status: an ibcast seen done within 30 s", i);
        if (!ok)
            MPI_Abort(MPI_COMM_WORLD, 1);   /* the call cannot be waited for */
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int k = 0; k < n; k++)
            ok &= v[k] == k * 7 + i;
        check(ok, "get_status: the ibcast's data", i);
    }
    acis_get_stats(ACIS_COLL_IBCAST, &s1);
    check(n < 1024 || s1.offloaded - s0.offloaded == 5, "get_status: the large ibcasts offloaded",
          0);
}

/* The communicator is freed while a member's request is open. */
static void freed(MPI_Comm comm)
{
    int root = size - 1;
    for (int i = 0; i < 10; i++) {
        MPI_Comm dup;
        MPI_Request r;
        MPI_Comm_dup(comm, &dup);
        MPI_Barrier(dup);                   /* dup gets its row */
        int v = rank == root ? 9 + i : -1;
        if (rank != root) {
            MPI_Ibcast(&v, 1, MPI_INT, root, dup, &r);
            MPI_Comm_free(&dup);
        }
        tell(root, 1, comm);
        if (rank == root) {
            MPI_Ibcast(&v, 1, MPI_INT, root, dup, &r);
            MPI_Comm_free(&dup);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(v == 9 + i, "ibcast on a communicator freed before the wait", i);
    }
}

/* MPI_Request_free and MPI_Cancel on an open nonblocking broadcast's
 * request of n ints (buf): refused as MPICH refuses its own -- the same
 * error class through MPI_COMM_WORLD's handler, the request left as it
 * was -- and a wait then completes the call with the data. */
static void refused(MPI_Comm comm, int n, int *buf)
{
    int root = size - 1, x = rank == root ? 7 : -1, mf, mc, af, ac;
    MPI_Request m, r;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Ibcast(&x, 1, MPI_INT, root, comm, &m);        /* MPICH's own */
    MPI_Error_class(PMPI_Request_free(&m), &mf);
    MPI_Error_class(PMPI_Cancel(&m), &mc);
    PMPI_Wait(&m, MPI_STATUS_IGNORE);
    check(mf != MPI_SUCCESS && mc != MPI_SUCCESS && x == 7,
          "MPICH refuses to free or cancel its own ibcast's request", n);
    for (int k = 0; k < n; k++)
        buf[k] = rank == root ? k + 3 : -1;
    MPI_Ibcast(buf, n, MPI_INT, root, comm, &r);
    MPI_Request held = r;
    MPI_Error_class(MPI_Request_free(&r), &af);
    check(af == mf && r == held, "MPI_Request_free refused as MPICH's, the request kept", n);
    MPI_Error_class(MPI_Cancel(&r), &ac);
    check(ac == mc && r == held, "MPI_Cancel refused as MPICH's, the request kept", n);
    check(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL,
          "the refused request waited for", n);
    int ok = 1;
    for (int k = 0; k < n; k++)
        ok &= buf[k] == k + 3;
    check(ok, "the refused request's broadcast", n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Leaves free their open request past acis (PMPI_Request_free: acis's
 * MPI_Request_free refuses it): the next call works, and the
 * communicator can still be freed (its answer is taken by some later
 * call or dropped with the communicator's state). */
static void freed_request(MPI_Comm comm)
{
    int root = size - 1, w = rank == root ? 6 : -1;
    static int v;                           /* written whenever the answer is taken */
    v = rank == root ? 5 : -1;
    MPI_Request r;
    if (rank != root) {
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r);
        PMPI_Request_free(&r);
        check(r == MPI_REQUEST_NULL, "a freed request is MPI_REQUEST_NULL", 0);
    }
    tell(root, 1, comm);
    if (rank == root) {
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(&w, 1, MPI_INT, root, comm);
    check(w == 6, "bcast after a freed ibcast request", 0);

    /* A request whose answer a later wait took, freed: its communicator
     * must still close (MPI_Comm_free in main, then MPI_Finalize). */
    MPI_Request r2;
    if (rank != root)
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r);
    tell(root, 1, comm);
    if (rank == root)
        MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r);
    MPI_Ibcast(&w, 1, MPI_INT, root, comm, &r2);
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    PMPI_Request_free(&r);
    check(v == 5 && w == 6, "ibcasts before a freed request", 0);
}

/* Rank 1 abstains from every nonblocking call (see the top). */
static void abstain(MPI_Comm comm)
{
    int v[4], all[8], mine[4] = { rank, rank, rank, rank }, sum, cls;
    MPI_Request r;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int i = 0; i < 5; i++) {
        int rc = MPI_Ibcast(v, 4, MPI_INT, 0, comm, &r);
        if (rc == MPI_SUCCESS && i % 2) {   /* seen done by MPI_Request_get_status first */
            int flag = 0, rs;
            double t0 = MPI_Wtime();
            do
                rs = MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
            while (!flag && MPI_Wtime() - t0 < 30);
            MPI_Error_class(rs, &cls);
            check(flag && cls == MPI_ERR_NO_MEM,
                  "get_status on an ibcast a member abstained from says done, failed", i);
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        check(cls == MPI_ERR_NO_MEM, "an ibcast a member abstained from fails", i);
        rc = MPI_Igather(mine, 4, MPI_INT, all, 4, MPI_INT, 1, comm, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        check(cls == MPI_ERR_NO_MEM, "an igather its root abstained from fails", i);
        rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
        check(rc == MPI_SUCCESS && sum == size * (size - 1) / 2,
              "an allreduce after the failed calls", i);
    }
}

int main(int argc, char **argv)
{
    int expect = 0, abstaining = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "--expect-short"))
        expect = 1;
    else if (argc > 1 && !strcmp(argv[1], "--abstain"))
        abstaining = 1;
    else if (argc > 1) {
        if (rank == 0)
            fprintf(stderr, "nbshort: unknown argument %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (size > 64) {
        if (rank == 0)
            fprintf(stderr, "nbshort: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Barrier(comm);                      /* comm gets its row */
    if (abstaining) {
        struct acis_host_stats h;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        abstain(comm);
        acis_get_host_stats(&h);
        if (rank == 0)                      /* ... on the short path */
            check(h.short_path >= 10, "rank 0's calls on the short path", 0);
        MPI_Comm_free(&comm);
        int all;
        PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("nbshort --abstain: %d ranks, %d failures\n", size, all);
        MPI_Finalize();
        return all != 0;
    }
    struct acis_host_stats h0, h1;
    acis_get_host_stats(&h0);
    ahead(comm);
    pending(comm);
    acis_get_host_stats(&h1);
    behind(comm);
    needs_mpich(comm, expect);
    struct acis_host_stats p0, p1;
    int *big = malloc(sizeof(int) * BIG / 4);
    acis_get_host_stats(&p0);
    polled(comm, N, big);
    acis_get_host_stats(&p1);
    check(!expect || p1.short_path - p0.short_path == 5,
          "get_status: the small ibcasts on the short path", 0);
    polled(comm, BIG / 4, big);
    refused(comm, N, big);
    refused(comm, BIG / 4, big);
    free(big);
    freed(comm);
    freed_request(comm);
    MPI_Comm_free(&comm);

    /* ahead() and pending() make 3 * RUN + 5 * 20 calls on every rank,
     * each completed before the next starts: none finds its slot held. */
    long mine[2] = { failures, (long)(h1.short_path - h0.short_path) }, tot[2];
    PMPI_Reduce(mine, tot, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        printf("nbshort: %d ranks, %ld failures, %ld calls on the short path\n", size, tot[0],
               tot[1]);
        rc = tot[0] || (expect && tot[1] != (long)size * (3 * RUN + 5 * 20));
    }
    MPI_Finalize();
    return rc;
}
