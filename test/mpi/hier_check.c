/* hier_check.c -- the node hierarchy (MPIR_CVAR_OFFLOAD_HIERARCHY=node),
 * run at 4 ranks with MPICH's fake nodes (MPIR_CVAR_ODD_EVEN_CLIQUES=1:
 * ranks 0, 2 and 1, 3) by hier.sh: allreduce, bcast from every root and
 * barrier on MPI_COMM_WORLD, a duplicate of it and a communicator of ranks
 * 0-2 (two ranks on one node, one on the other), each result compared
 * with MPICH's (PMPI) and bitwise across ranks; then the counters must
 * show the calls went through the hierarchy and only node leaders sent
 * packets to the switch. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <acis/acis.h>

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "hier_check[%d]: FAIL %s\n", rank, what);
    }
}

static void exercise(MPI_Comm comm, const char *name, int iters)
{
    enum { N = 3000 };
    static double x[N], r[N], ref[N];
    static int b[N], bref[N];
    int me, n;
    char what[64];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    for (int it = 0; it < iters; it++) {
        int count = it % 3 == 0 ? 1 : it % 3 == 1 ? 17 : N;
        for (int i = 0; i < count; i++)
            x[i] = 0.1 * (rank + 1) + 1e-7 * i + it;
        MPI_Allreduce(x, r, count, MPI_DOUBLE, MPI_SUM, comm);
        PMPI_Allreduce(x, ref, count, MPI_DOUBLE, MPI_SUM, comm);
        for (int i = 0; i < count; i++)   /* MPICH's fold order may differ */
            if (r[i] < ref[i] * (1 - 1e-12) || r[i] > ref[i] * (1 + 1e-12)) {
                snprintf(what, sizeof what, "allreduce on %s", name);
                check(0, what);
                break;
            }
        memcpy(ref, r, sizeof(double) * (size_t)count);  /* the same bits on every rank */
        MPI_Bcast(ref, count, MPI_DOUBLE, it % n, comm);
        snprintf(what, sizeof what, "allreduce bits differ between ranks on %s", name);
        check(memcmp(ref, r, sizeof(double) * (size_t)count) == 0, what);
        for (int i = 0; i < count; i++)
            b[i] = me == it % n ? it * 1000 + i : -1;
        MPI_Bcast(b, count, MPI_INT, it % n, comm);
        for (int i = 0; i < count; i++)
            bref[i] = it * 1000 + i;
        snprintf(what, sizeof what, "bcast on %s", name);
        check(memcmp(b, bref, sizeof(int) * (size_t)count) == 0, what);
        MPI_Barrier(comm);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node, dup, part;
    int node_rank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank < 3 ? 0 : MPI_UNDEFINED, rank, &part);
    acis_reset_stats();
    exercise(MPI_COMM_WORLD, "MPI_COMM_WORLD", 60);
    exercise(dup, "a duplicate", 30);
    if (part != MPI_COMM_NULL)
        exercise(part, "ranks 0-2", 30);
    struct acis_host_stats h;
    acis_get_host_stats(&h);
    check(h.hier_calls > 0, "no call went through the hierarchy");
    if (node_rank == 0)
        check(h.packets_sent > 0, "a node leader sent nothing to the switch");
    else
        check(h.packets_sent == 0, "a rank that is not a node leader used the switch");
    printf("hier_check[%d]: node rank %d, %llu hierarchical calls, %llu packets sent\n", rank,
           node_rank, (unsigned long long)h.hier_calls, (unsigned long long)h.packets_sent);
    MPI_Comm_free(&dup);
    if (part != MPI_COMM_NULL)
        MPI_Comm_free(&part);
    MPI_Comm_free(&node);
    int total;
    PMPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hier_check: %d ranks, %d failures\n", size, total);
    MPI_Finalize();
    return rank == 0 && total ? 1 : 0;
}
