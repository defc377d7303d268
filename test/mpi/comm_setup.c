/* comm_setup.c -- communicator table rows over a communicator's life: made
 * lazily at the first blocking collective (or at creation with
 * MPIR_CVAR_OFFLOAD_COMM_SETUP=eager), given back after MPI_Comm_free once
 * every member is done, reused by later communicators far beyond the
 * table's capacity, and refused consistently on every member when the
 * table is full.  Row counts are read from the switch itself.  A
 * nonblocking collective before a communicator's first blocking one
 * returns without waiting for the other members (lazily it runs in
 * MPICH, reason not_set_up).
 *
 * usage: comm_setup [--eager] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>
#include <acis/wire.h>

static int rank, size, failures, eager;

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "comm_setup[%d]: FAIL %s\n", rank, what);
    }
}

static struct acis_coll_stats stats(acis_coll_t coll)
{
    struct acis_coll_stats s;
    acis_get_stats(coll, &s);
    return s;
}

static long rows(void)
{
    uint64_t c[ACIS_SWC_COUNT];
    PMPI_Barrier(MPI_COMM_WORLD);          /* everyone's requests are in */
    long n = acis_get_switch_stats(c, ACIS_SWC_COUNT) > ACIS_SWC_tables_in_use
                 ? (long)c[ACIS_SWC_tables_in_use] : -1;
    PMPI_Barrier(MPI_COMM_WORLD);
    return n;
}

/* Rows in use once the members agree that freed communicators are done
 * (MPI_Comm_free does not wait for the others: a few offloaded calls
 * later rank 0 has given the rows back).  Same value on every rank. */
static long rows_settled(long want)
{
    int v = 1, r;
    long n = rows();
    for (int t = 0; t < 200 && n != want; t++) {
        MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        n = rows();
    }
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    eager = argc > 1 && strcmp(argv[1], "--eager") == 0;
    struct acis_switch_info si;
    check(acis_get_switch_info(&si) == 0, "no switch");

    int v = 1, r;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long base = rows();                     /* MPI_COMM_WORLD's row */
    check(base == 1, "MPI_COMM_WORLD should hold one row");

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    check(rows() == base + eager, eager ? "eager: no row at MPI_Comm_dup"
                                        : "lazy: a row before any collective");
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, dup);
    check(r == size, "allreduce on the dup");
    check(rows() == base + 1, "a row after the first collective");
    MPI_Comm_free(&dup);
    check(rows_settled(base) == base, "MPI_Comm_free did not give the row back");

    /* Starting a nonblocking collective is local: rank i starts one on a
     * new communicator, then lets rank i+1 go on, which only then starts
     * its own.  Waiting there for the others to set the row up hung.
     * Lazily it runs in MPICH; the next blocking call sets the row up.
     * The communicator comes from MPI_Comm_create_from_group (eager: set
     * up there). */
    MPI_Comm nb;
    MPI_Group wg;
    MPI_Request rq;
    int token = 0;
    struct acis_coll_stats s0 = stats(ACIS_COLL_IALLREDUCE), s1;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_create_from_group(wg, "acis.comm_setup", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &nb);
    MPI_Group_free(&wg);
    if (rank > 0)
        PMPI_Recv(&token, 1, MPI_INT, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Iallreduce(&v, &r, 1, MPI_INT, MPI_SUM, nb, &rq);
    if (rank + 1 < size)
        PMPI_Send(&token, 1, MPI_INT, rank + 1, 5, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    check(r == size, "a nonblocking collective before any blocking one");
    s1 = stats(ACIS_COLL_IALLREDUCE);
    check(eager ? s1.offloaded == s0.offloaded + 1
                : s1.by_reason[ACIS_REASON_NOT_SET_UP] == s0.by_reason[ACIS_REASON_NOT_SET_UP] + 1,
          eager ? "eager: the first Iallreduce was not offloaded"
                : "lazy: the first Iallreduce did not run in MPICH for reason not_set_up");
    MPI_Barrier(nb);                        /* sets the row up */
    MPI_Iallreduce(&v, &r, 1, MPI_INT, MPI_SUM, nb, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    check(r == size, "an Iallreduce after the first blocking collective");
    check(stats(ACIS_COLL_IALLREDUCE).offloaded == s1.offloaded + 1,
          "an Iallreduce after the first blocking collective was not offloaded");
    MPI_Comm_free(&nb);
    check(rows_settled(base) == base, "the nonblocking test's row was not given back");

    /* Many more communicators over time than the table has rows. */
    for (unsigned i = 0; i < 3 * si.tables; i++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, 0, (int)i % 2 ? -rank : rank, &c);
        MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, c);
        check(r == size, "allreduce on a short-lived communicator");
        MPI_Comm_free(&c);
    }
    check(rows_settled(base) == base, "rows leaked by short-lived communicators");

    /* Fill the table: every communicator beyond it falls back, on every
     * member alike, and still computes the right answer. */
    int n = (int)si.tables + 2, offl = 0, refused = 0;
    MPI_Comm *cs = malloc(sizeof(MPI_Comm) * (size_t)n);
    for (int i = 0; i < n; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &cs[i]);
        MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, cs[i]);
        check(r == size, "allreduce with the table full");
        acis_reason_t why;
        if (acis_comm_offloaded(cs[i], &why))
            offl++;
        else if (why == ACIS_REASON_TABLE_FULL)
            refused++;
    }
    int lo, hi;
    PMPI_Allreduce(&offl, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&offl, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    check(lo == hi, "members disagree on which communicators are offloaded");
    check(offl == (int)si.tables - 1 && refused == n - offl, "table capacity not honoured");
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&cs[i]);
    free(cs);
    check(rows_settled(base) == base, "rows left after freeing a full table");

    int total;
    PMPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_setup: %d ranks, %s, %u rows, %d failures\n", size,
               eager ? "eager" : "lazy", si.tables, total);
    MPI_Finalize();
    return rank == 0 && total ? 1 : 0;
}
