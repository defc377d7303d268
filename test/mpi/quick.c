/* quick.c -- the quick path (src/offload/short.c, qcache.c): a
 * broadcast, scatter, gather, allgather or reduction, blocking or not, of
 * a shape the short path prepared before on the same communicator runs
 * from what it kept.  Every value is
 * checked on every rank, every call:
 *   - shapes interleaved, more of them than the cache holds: broadcasts
 *     from every root and of two sizes, scatters and gathers with and
 *     without MPI_IN_PLACE at the root, from and to the first rank and
 *     the last, whose blocks begin and end the data (the root keeps its
 *     block out of its piece and its answer), a nonblocking gather to the
 *     last rank, allgathers with and without it,
 *     a nonblocking allgather and broadcast; reductions (allreduce, reduce
 *     from every root, reduce_scatter_block, scan, exscan, iallreduce,
 *     ireduce) whose shapes differ only in op or datatype, in place and
 *     not, and reduce_scatters whose counts differ only in their values;
 *     buffers change place from call
 *     to call (what is kept is where the data lies in them, not where
 *     they are);
 *   - a derived datatype freed and another made, which MPICH mostly
 *     gives the same handle: a contiguous type, then a vector with holes;
 *     the holes must stay as they were;
 *   - a communicator freed and another made (the same handle again) with
 *     its ranks in reverse order: roots and blocks follow the new one;
 *   - a broadcast of a shape seen before without its buffer (NULL): an
 *     error on every rank, as the ordinary way gives, not a crash.
 * With --expect-offload every one of those calls on a predefined type
 * must have been offloaded and taken the short path (the counters
 * acis_get_stats / acis_get_host_stats give): a call the cache sent
 * elsewhere, or did not count, cannot pass; and the root of every such
 * gather and scatter must have kept its block (the own_block counter;
 * a scatter's root does when it returns early, as by default).  With
 * --expect-quick four reduction shapes repeated on a new communicator
 * must take the quick path but for their first calls (the quick_path
 * counter): a shape the cache does not keep cannot pass.
 * Usage: quick [--expect-offload] [--expect-quick] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>
#include <mpi.h>

enum { ROUNDS = 30, N = 16, SLACK = 4 };

static int rank, size, failures;
static long calls;                      /* offloadable calls made (predefined types) */
static long kept;                       /* gathers and blocking scatters (not in place)
                                           this rank was the root of */

static void check(int ok, const char *what, int i)
{
    if (!ok && failures++ < 10)
        fprintf(stderr, "rank %d: %s wrong (call %d)\n", rank, what, i);
}

static int value(int round, int root, int at)
{
    return round * 1000 + root * 100 + at;
}

/* Broadcasts of n ints from every root, from a buffer that moves. */
static void bcasts(MPI_Comm comm, int me, int np, int round, int n)
{
    static int store[SLACK + N];
    for (int root = 0; root < np; root++) {
        int *buf = store + (round + root) % SLACK;
        for (int i = 0; i < n; i++)
            buf[i] = me == root ? value(round, root, i) : -1;
        MPI_Bcast(buf, n, MPI_INT, root, comm);
        calls++;
        for (int i = 0; i < n; i++)
            check(buf[i] == value(round, root, i), "bcast", round);
    }
}

/* Scatters and gathers of 2 ints per rank, the root rank 0 and then the
 * last rank, in place every other round. */
static void rooted(MPI_Comm comm, int me, int np, int round)
{
    int all[2 * 64], mine[2], inplace = round % 2 && me == 0;
    for (int i = 0; i < 2 * np; i++)
        all[i] = me == 0 ? value(round, 0, i) : -1;
    MPI_Scatter(all, 2, MPI_INT, inplace ? MPI_IN_PLACE : (void *)mine, 2, MPI_INT, 0, comm);
    calls++;
    if (!inplace)
        check(mine[0] == value(round, 0, 2 * me) && mine[1] == value(round, 0, 2 * me + 1),
              "scatter", round);
    kept += me == 0 && !inplace && np > 1;
    int last = round % 2 && me == np - 1;  /* from the last rank: its block ends the data */
    for (int i = 0; i < 2 * np; i++)
        all[i] = me == np - 1 ? value(round + 2, np - 1, i) : -1;
    mine[0] = mine[1] = -1;
    MPI_Scatter(all, 2, MPI_INT, last ? MPI_IN_PLACE : (void *)mine, 2, MPI_INT, np - 1, comm);
    calls++;
    if (!last)
        check(mine[0] == value(round + 2, np - 1, 2 * me) &&
              mine[1] == value(round + 2, np - 1, 2 * me + 1), "scatter from the last", round);
    kept += me == np - 1 && !last && np > 1;
    mine[0] = value(round, me, 0);
    mine[1] = value(round, me, 1);
    for (int i = 0; i < 2 * np; i++)
        all[i] = inplace && i / 2 == 0 ? value(round, 0, i) : -1;
    MPI_Gather(inplace ? MPI_IN_PLACE : mine, 2, MPI_INT, all, 2, MPI_INT, 0, comm);
    calls++;
    if (me == 0)
        for (int i = 0; i < 2 * np; i++)
            check(all[i] == value(round, i / 2, i % 2), "gather", round);
    kept += me == 0 && np > 1;
    inplace = round % 2 && me == np - 1;   /* to the last rank: its block ends the result */
    for (int i = 0; i < 2 * np; i++)
        all[i] = inplace && i / 2 == np - 1 ? value(round + 1, np - 1, i % 2) : -1;
    int next[2] = { value(round + 1, me, 0), value(round + 1, me, 1) };
    MPI_Gather(inplace ? MPI_IN_PLACE : next, 2, MPI_INT, all, 2, MPI_INT, np - 1, comm);
    calls++;
    if (me == np - 1)
        for (int i = 0; i < 2 * np; i++)
            check(all[i] == value(round + 1, i / 2, i % 2), "gather to the last", round);
    kept += me == np - 1 && np > 1;
    MPI_Request g;                      /* nonblocking: the root's block once it succeeded */
    for (int i = 0; i < 2 * np; i++)
        all[i] = inplace && i / 2 == np - 1 ? value(round + 3, np - 1, i % 2) : -1;
    next[0] = value(round + 3, me, 0);
    next[1] = value(round + 3, me, 1);
    MPI_Igather(inplace ? MPI_IN_PLACE : next, 2, MPI_INT, all, 2, MPI_INT, np - 1, comm, &g);
    MPI_Wait(&g, MPI_STATUS_IGNORE);
    calls++;
    if (me == np - 1)
        for (int i = 0; i < 2 * np; i++)
            check(all[i] == value(round + 3, i / 2, i % 2), "igather to the last", round);
    kept += me == np - 1 && np > 1;

    int ip = round % 2;                 /* every rank in place, every other round */
    for (int i = 0; i < 2 * np; i++)
        all[i] = ip && i / 2 == me ? value(round, me, i % 2) : -1;
    MPI_Allgather(ip ? MPI_IN_PLACE : mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    calls++;
    for (int i = 0; i < 2 * np; i++)
        check(all[i] == value(round, i / 2, i % 2), "allgather", round);
    MPI_Request r;
    for (int i = 0; i < 2 * np; i++)
        all[i] = -1;
    MPI_Iallgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    calls++;
    for (int i = 0; i < 2 * np; i++)
        check(all[i] == value(round, i / 2, i % 2), "iallgather", round);
    int v = me == np - 1 ? value(round, np - 1, 7) : -1;
    MPI_Ibcast(&v, 1, MPI_INT, np - 1, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    calls++;
    check(v == value(round, np - 1, 7), "ibcast", round);
}

/* Reductions of shapes that differ only in their op or datatype, from
 * every root, in place and not, blocking and not: a cache that missed
 * the op or the type would answer with another call's arithmetic. */
static void reductions(MPI_Comm comm, int me, int np, int round)
{
    int a[N], b[N], blk[2 * 64], sum = 0, max = 0, exs = 0;
    double d = round + me * 0.5, dmax = -1;
    for (int q = 0; q < np; q++) {
        sum += value(round, q, 0);
        max = value(round, q, 0) > max ? value(round, q, 0) : max;
        exs += q < me ? value(round, q, 0) : 0;
    }
    for (int op = 0; op < 2; op++) {
        MPI_Op o = op ? MPI_MAX : MPI_SUM;
        int want = op ? max : sum;
        const char *what = op ? "allreduce max" : "allreduce sum";
        for (int i = 0; i < N; i++)
            a[i] = value(round, me, 0) + i, b[i] = -1;
        MPI_Allreduce(a, b, N, MPI_INT, o, comm);
        calls++;
        for (int i = 0; i < N; i++)
            check(b[i] == want + (op ? i : np * i), what, round);
        for (int root = 0; root < np; root++) {
            int inplace = me == root && round % 2;
            for (int i = 0; i < N; i++)
                a[i] = value(round, me, 0) + i, b[i] = inplace ? a[i] : -1;
            MPI_Reduce(inplace ? MPI_IN_PLACE : a, b, N, MPI_INT, o, root, comm);
            calls++;
            for (int i = 0; i < N && me == root; i++)
                check(b[i] == want + (op ? i : np * i), op ? "reduce max" : "reduce sum", round);
        }
    }
    MPI_Allreduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, comm);    /* another type */
    calls++;
    check(dmax == round + (np - 1) * 0.5, "allreduce max of doubles", round);
    b[0] = value(round, me, 0);
    MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, comm);
    calls++;
    check(b[0] == sum, "allreduce in place", round);
    for (int i = 0; i < 2 * np; i++)
        blk[i] = value(round, me, 0) + i;
    MPI_Reduce_scatter_block(blk, b, 2, MPI_INT, MPI_SUM, comm);
    calls++;
    check(b[0] == sum + np * 2 * me && b[1] == sum + np * (2 * me + 1), "reduce_scatter_block",
          round);
    /* counts that differ only in their values, not their sum: a cache
     * that missed the array would place the blocks of the other call */
    for (int shift = 0; shift < 2; shift++) {
        int rc[64], at = 0, got[2 * 64];
        for (int q = 0; q < np; q++)
            rc[q] = 1 + (q + shift) % 2;
        for (int q = 0; q < me; q++)
            at += rc[q];
        for (int i = 0; i < 2 * np; i++)
            blk[i] = value(round, me, 0) + i, got[i] = -1;
        MPI_Reduce_scatter(blk, got, rc, MPI_INT, MPI_SUM, comm);
        calls++;
        for (int i = 0; i < rc[me]; i++)
            check(got[i] == sum + np * (at + i), "reduce_scatter", round);
        check(got[rc[me]] == -1, "reduce_scatter past its block", round);
    }
    a[0] = value(round, me, 0);
    MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, comm);
    calls++;
    check(b[0] == exs + a[0], "scan", round);
    b[0] = -1;
    MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, comm);
    calls++;
    check(me == 0 || b[0] == exs, "exscan", round);
    MPI_Request r;
    MPI_Iallreduce(a, b, 1, MPI_INT, MPI_MAX, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    calls++;
    check(b[0] == max, "iallreduce max", round);
    b[0] = -1;
    MPI_Ireduce(a, b, 1, MPI_INT, MPI_SUM, np - 1, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    calls++;
    check(me != np - 1 || b[0] == sum, "ireduce", round);
}

static void shapes(MPI_Comm comm)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    for (int round = 0; round < ROUNDS; round++) {
        bcasts(comm, me, np, round, 1);
        rooted(comm, me, np, round);
        reductions(comm, me, np, round);
        bcasts(comm, me, np, round, N);
    }
}

/* Four reduction shapes, no more than the cache holds, on a new
 * communicator, each called REPEATS times: all but each shape's first
 * call must take the quick path (the quick_path counter; a few more may
 * miss, were a slot still held).  Returns the calls that did, or -1 if a
 * value was wrong. */
enum { REPEATS = 50 };
static long repeats(void)
{
    MPI_Comm c;
    struct acis_host_stats h0, h1;
    int a[64], b[2], rc[64], sum = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int q = 0; q < size; q++)
        rc[q] = 1, sum += q, a[q] = rank;     /* a reduce_scatter sends size of them */
    acis_get_host_stats(&h0);
    int before = failures;
    for (int i = 0; i < REPEATS; i++) {
        MPI_Request r;
        a[0] = rank + i;
        a[1] = rank;
        MPI_Allreduce(a, b, 2, MPI_INT, MPI_SUM, c);
        check(b[0] == sum + size * i && b[1] == sum, "repeated allreduce", i);
        b[0] = -1;
        MPI_Reduce(a, b, 1, MPI_INT, MPI_MAX, 0, c);
        check(rank != 0 || b[0] == size - 1 + i, "repeated reduce", i);
        MPI_Reduce_scatter(a, b, rc, MPI_INT, MPI_SUM, c);
        check(b[0] == (rank == 0 ? sum + size * i : sum), "repeated reduce_scatter", i);
        MPI_Iallreduce(a, b, 1, MPI_INT, MPI_MIN, c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(b[0] == i, "repeated iallreduce", i);
    }
    acis_get_host_stats(&h1);
    MPI_Comm_free(&c);
    return failures > before ? -1 : (long)(h1.quick_path - h0.quick_path);
}

/* A contiguous type of 4 ints, freed; a vector of 2 x 2 ints with a
 * 2-int hole (likely the same handle): the hole must stay. */
static void types(void)
{
    MPI_Datatype t;
    int buf[6];
    for (int round = 0; round < 2 * ROUNDS; round++) {
        int vec = round >= ROUNDS;
        if (vec)
            MPI_Type_vector(2, 2, 4, MPI_INT, &t);
        else
            MPI_Type_contiguous(4, MPI_INT, &t);
        MPI_Type_commit(&t);
        for (int i = 0; i < 6; i++)
            buf[i] = rank == 0 ? value(round, 0, i) : -1;
        MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 6; i++) {
            int moved = vec ? i != 2 && i != 3 : i < 4;
            check(buf[i] == (moved || rank == 0 ? value(round, 0, i) : -1),
                  vec ? "bcast of a vector" : "bcast of a contiguous type", round);
        }
        MPI_Type_free(&t);
    }
}

/* A shape seen before, then the same call without its buffer. */
static void missing_buffer(void)
{
    MPI_Comm c;
    int v[N] = { 0 };
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    for (int i = 0; i < 3; i++)
        MPI_Bcast(v, N, MPI_INT, 0, c);
    check(MPI_Bcast(NULL, N, MPI_INT, 0, c) != MPI_SUCCESS, "a broadcast without a buffer", 0);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    int expect = 0, expect_quick = 0;
    for (int i = 1; i < argc; i++) {
        expect |= strcmp(argv[i], "--expect-offload") == 0;
        expect_quick |= strcmp(argv[i], "--expect-quick") == 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    static const acis_coll_t counted[] = { ACIS_COLL_BCAST, ACIS_COLL_SCATTER, ACIS_COLL_GATHER,
                                           ACIS_COLL_ALLGATHER, ACIS_COLL_IALLGATHER,
                                           ACIS_COLL_IBCAST, ACIS_COLL_ALLREDUCE,
                                           ACIS_COLL_REDUCE, ACIS_COLL_REDUCE_SCATTER_BLOCK,
                                           ACIS_COLL_REDUCE_SCATTER,
                                           ACIS_COLL_SCAN, ACIS_COLL_EXSCAN,
                                           ACIS_COLL_IALLREDUCE, ACIS_COLL_IREDUCE,
                                           ACIS_COLL_IGATHER };
    enum { NCOUNTED = sizeof counted / sizeof counted[0] };
    struct acis_coll_stats c0[NCOUNTED], c1[NCOUNTED];
    struct acis_host_stats h0, h1;
    for (int i = 0; i < NCOUNTED; i++)
        acis_get_stats(counted[i], &c0[i]);
    acis_get_host_stats(&h0);

    shapes(MPI_COMM_WORLD);
    MPI_Comm dup, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    shapes(dup);
    MPI_Comm_free(&dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);   /* ranks reversed */
    shapes(rev);
    MPI_Comm_free(&rev);

    long offloaded = 0;
    for (int i = 0; i < NCOUNTED; i++) {
        acis_get_stats(counted[i], &c1[i]);
        offloaded += (long)(c1[i].offloaded - c0[i].offloaded);
    }
    acis_get_host_stats(&h1);
    long short_path = (long)(h1.short_path - h0.short_path);
    long quick = repeats();
    types();
    missing_buffer();
    if (expect_quick)
        check(quick >= 4 * REPEATS - 8, "count of quick-path calls of four shapes", (int)quick);
    if (expect) {
        check(offloaded == calls, "count of offloaded calls", (int)offloaded);
        check(short_path == calls, "count of short-path calls", (int)short_path);
        check((long)(h1.own_block - h0.own_block) == kept, "count of roots' blocks kept",
              (int)(h1.own_block - h0.own_block));
    }
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("quick: %ld calls, %ld offloaded, %ld on the short path, %d failures; "
               "%ld of %d repeated calls on the quick path\n",
               calls, offloaded, short_path, all, quick, 4 * REPEATS);
    MPI_Finalize();
    return all ? 1 : 0;
}
