/* early.c -- members that return before the others have their data
 * (MPIR_CVAR_OFFLOAD_EARLY_RETURN, src/offload/early.c): roots of
 * broadcasts and scatters, leaves of gathers.  Every case has those
 * members overwrite their buffers right after each call, and the others
 * arrive late (they sleep first), so the early ones are many calls ahead:
 *   - a run of broadcasts longer than the slot window, then of scatters
 *     (the root's own block is checked: it copies it itself; and a root
 *     with room for two blocks, whose leaves must get theirs), then of
 *     gathers, also from leaves whose datatype must be packed;
 *   - leaves whose datatype must be unpacked (they take the engine's path
 *     beside a root on the short path);
 *   - a broadcast, then at once a reduction, a nonblocking broadcast and a
 *     scatter on the same communicator (answers taken before the slot and
 *     the engine are used again);
 *   - a broadcast on a dup freed right after the call, before its leaves
 *     have called;
 *   - a root that frees a communicator with its last answers still out,
 *     and looks at it again only after another member gave its row back
 *     and a new communicator took the row (the root must not wait for
 *     those answers: they are gone);
 *   - a root that changes from call to call.
 * Every value is checked on every rank.  With --expect-early the roots
 * must have returned early (the acis_host_stats counter), and every leaf
 * of the plain gathers, so a member that silently waited cannot pass;
 * with --expect-none none may have.
 * Usage: early [--expect-early | --expect-none] */
#define _DEFAULT_SOURCE /* usleep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <acis/acis.h>
#include <mpi.h>

/* 4 KiB blocks: a 4-rank gather or scatter moves 16 KiB in all, as much
 * as returns early (ACIS_EARLY_MAX, 4 KiB before 2026-11-29). */
enum { RUN = 100, N = 1024 };

static int rank, size, failures;

static void check(int ok, const char *what, int i)
{
    if (!ok && failures++ < 10)
        fprintf(stderr, "early[%d]: FAIL %s (call %d)\n", rank, what, i);
}

static void late(void)
{
    if (rank != 0)
        usleep(20000);              /* leaves come late: roots run ahead */
}

static void late_root(void)
{
    if (rank == 0)
        usleep(20000);              /* the root comes late: leaves run ahead */
}

static void bcasts(MPI_Comm comm, int root_moves)
{
    int v[N];
    late();
    for (int i = 0; i < RUN; i++) {
        int root = root_moves ? i % size : 0;
        for (int k = 0; k < N; k++)
            v[k] = rank == root ? i * 1000 + k : -1;
        MPI_Bcast(v, N, MPI_INT, root, comm);
        int ok = 1;
        for (int k = 0; k < N; k++)
            ok &= v[k] == i * 1000 + k;
        check(ok, root_moves ? "bcast, moving root" : "bcast", i);
        if (rank == root)
            memset(v, 0x5a, sizeof v);  /* the root's buffer is its own again */
    }
}

static void scatters(MPI_Comm comm)
{
    int *all = malloc(sizeof(int) * N * (size_t)size), mine[N];
    late();
    for (int i = 0; i < RUN; i++) {
        for (int k = 0; rank == 0 && k < N * size; k++)
            all[k] = i * 100000 + k;
        memset(mine, 0xff, sizeof mine);
        MPI_Scatter(all, N, MPI_INT, mine, N, MPI_INT, 0, comm);
        int ok = 1;
        for (int k = 0; k < N; k++)
            ok &= mine[k] == i * 100000 + rank * N + k;
        check(ok, "scatter", i);
        if (rank == 0)
            memset(all, 0x5a, sizeof(int) * N * (size_t)size);
    }
    free(all);
}

/* Scatters whose root (rank 0) receives into a buffer twice its share
 * (MPICH takes it and writes the share): it returns early and leaves its
 * block out of its piece, which must not cut the next leaf's bytes out
 * too.  The leaves' values are checked. */
static void wide_root(MPI_Comm comm)
{
    int *all = malloc(sizeof(int) * N * (size_t)size), *mine = malloc(sizeof(int) * 2 * N);
    for (int i = 0; i < 10; i++) {
        for (int k = 0; rank == 0 && k < N * size; k++)
            all[k] = i * 100000 + k;
        memset(mine, 0xff, sizeof(int) * 2 * N);
        MPI_Scatter(all, N, MPI_INT, mine, rank == 0 ? 2 * N : N, MPI_INT, 0, comm);
        int ok = 1;
        for (int k = 0; k < N; k++)
            ok &= mine[k] == i * 100000 + rank * N + k;
        check(ok, "scatter to a root with room for two blocks", i);
    }
    free(all);
    free(mine);
}

/* Gathers to rank 0; with packed, every rank sends every other int of
 * its buffer (its data must be packed). */
static void gathers(MPI_Comm comm, int packed)
{
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int *all = malloc(sizeof(int) * N * (size_t)size), v[2 * N];
    late_root();
    for (int i = 0; i < RUN; i++) {
        for (int k = 0; k < N; k++) {
            int x = i * 1000 + rank * N + k;
            if (packed) {
                v[2 * k] = x;
                v[2 * k + 1] = -3;
            } else {
                v[k] = x;
            }
        }
        if (packed)
            MPI_Gather(v, 1, every_other, all, N, MPI_INT, 0, comm);
        else
            MPI_Gather(v, N, MPI_INT, all, N, MPI_INT, 0, comm);
        memset(v, 0x5a, sizeof v);      /* the sender's buffer is its own again */
        int ok = 1;
        for (int k = 0; rank == 0 && k < N * size; k++)
            ok &= all[k] == i * 1000 + k;
        check(ok, packed ? "gather of packed data" : "gather", i);
    }
    free(all);
    MPI_Type_free(&every_other);
}

/* Leaves receive into every other int: their result is unpacked. */
static void packed_leaves(MPI_Comm comm)
{
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int v[2 * N];
    late();
    for (int i = 0; i < RUN; i++) {
        for (int k = 0; k < 2 * N; k++)
            v[k] = rank == 0 ? i + k : -7;
        if (rank == 0)
            MPI_Bcast(v, N, MPI_INT, 0, comm);
        else
            MPI_Bcast(v, 1, every_other, 0, comm);
        int ok = 1;
        for (int k = 0; rank != 0 && k < N; k++)
            ok &= v[2 * k] == i + k && v[2 * k + 1] == -7;
        check(ok, "bcast to unpacking leaves", i);
    }
    MPI_Type_free(&every_other);
}

/* A broadcast, then at once other collectives on the same communicator. */
static void mixed(MPI_Comm comm)
{
    int v[N], sum, *all = malloc(sizeof(int) * (size_t)size), one;
    late();
    for (int i = 0; i < RUN / 4; i++) {
        for (int k = 0; k < N; k++)
            v[k] = rank == 0 ? i - k : 0;
        MPI_Bcast(v, N, MPI_INT, 0, comm);
        check(v[N - 1] == i - (N - 1), "bcast before allreduce", i);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
        check(sum == size * (size - 1) / 2, "allreduce after bcast", i);
        MPI_Request req;
        v[0] = rank == 0 ? 3 * i : 0;
        MPI_Ibcast(v, 1, MPI_INT, 0, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check(v[0] == 3 * i, "ibcast after bcast", i);
        for (int q = 0; q < size; q++)
            all[q] = rank == 0 ? i + q : -1;
        MPI_Scatter(all, 1, MPI_INT, &one, 1, MPI_INT, 0, comm);
        check(one == i + rank, "scatter after ibcast", i);
    }
    free(all);
}

/* The root frees the communicator right after its call returned. */
static void freed(MPI_Comm comm)
{
    for (int i = 0; i < 10; i++) {
        MPI_Comm dup;
        MPI_Comm_dup(comm, &dup);
        int v = rank == 0 ? 77 + i : 0;
        late();
        MPI_Bcast(&v, 1, MPI_INT, 0, dup);
        MPI_Comm_free(&dup);
        check(v == 77 + i, "bcast on a communicator freed at once", i);
    }
}

/* The last rank roots broadcasts on a, returns early from them and frees
 * a first (MPI_Comm_free starts a's closing barrier; MPICH's split and
 * barrier after it are not acis's, so the root does not look at a again
 * until the MPI_Barrier at the end).  The others free a later, see the
 * closing barrier done, give the row back, and b -- the others without
 * the root -- takes that row and uses it.  Each round uses fewer of a's
 * slots than the one before, so no later use answers the slot of the
 * root's last call.  Needs 3 ranks. */
static void reused(void)
{
    int root = size - 1;
    for (int i = 0; i < 5 && size >= 3; i++) {
        MPI_Comm a, b;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Barrier(a);                     /* a gets its row */
        for (int k = 0; k < 25 - 5 * i; k++) {
            int v = rank == root ? 11 * k + i : -1;
            MPI_Bcast(&v, 1, MPI_INT, root, a);
            check(v == 11 * k + i, "bcast on a communicator freed next", i);
        }
        if (rank != root)
            usleep(20000);                  /* the root starts closing a first */
        MPI_Comm_free(&a);
        MPI_Comm_split(MPI_COMM_WORLD, rank == root ? MPI_UNDEFINED : 0, rank, &b);
        if (b != MPI_COMM_NULL) {
            MPI_Barrier(b);                 /* b gets a's row */
            for (int k = 0; k < 3; k++) {
                int v = rank == 0 ? 7 * k + i : -1;
                MPI_Bcast(&v, 1, MPI_INT, 0, b);
                check(v == 7 * k + i, "bcast on the communicator that took the row", i);
            }
            MPI_Comm_free(&b);
        }
        PMPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);        /* the root frees a's state here */
    }
}

int main(int argc, char **argv)
{
    int expect = 0;             /* 1: early returns must be seen; -1: none */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--expect-early"))
            expect = 1;
        else if (!strcmp(argv[a], "--expect-none"))
            expect = -1;
        else {
            if (rank == 0)
                fprintf(stderr, "early: unknown argument %s\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    bcasts(comm, 0);
    scatters(comm);
    wide_root(comm);
    struct acis_host_stats g0, g1;
    acis_get_host_stats(&g0);
    gathers(comm, 0);
    acis_get_host_stats(&g1);
    if (rank != 0 && expect)            /* a leaf of a gather returns early too */
        check(expect > 0 ? g1.early_return > g0.early_return
                         : g1.early_return == g0.early_return,
              expect > 0 ? "a gather leaf returned early" : "no gather leaf returned early",
              0);
    gathers(comm, 1);
    packed_leaves(comm);
    mixed(comm);
    freed(comm);
    reused();
    bcasts(comm, 1);
    MPI_Comm_free(&comm);

    struct acis_host_stats hs;
    acis_get_host_stats(&hs);
    long mine[2] = { failures, (long)hs.early_return }, tot[2];
    PMPI_Reduce(mine, tot, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        printf("early: %d ranks, %ld failures, %ld calls returned early\n", size, tot[0],
               tot[1]);
        rc = tot[0] || (expect > 0 && tot[1] == 0) || (expect < 0 && tot[1] != 0);
    }
    MPI_Finalize();
    return rc;
}
