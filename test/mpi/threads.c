/* threads.c -- MPI_THREAD_MULTIPLE: two threads per rank, each running
 * collectives on its own communicator at the same time (blocking and
 * nonblocking, offloaded), checked against MPICH and against the offload
 * counters, the switch's count of their segments among them.  First,
 * SETUPS rounds in which the two threads set up two new communicators
 * at once (the first collective on each), in whatever order
 * each rank's threads get there: every one must get a switch row (a
 * set-up that held the device while it waited for the other members made
 * opposite orders on two ranks wait for each other until the timeout,
 * and the communicators stayed in MPICH).  Last, LOOKS nonblocking
 * broadcasts (on the short path and, at 64 Ki ints, through the engine)
 * that two threads per rank look at with MPI_Request_get_status alone
 * until it says done, at the same time: acis moves its calls there
 * (MPICH does not), one look at a time per call (src/offload/nbreg.c). */
#define _POSIX_C_SOURCE 200809L   /* pthread_barrier_t */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>
#include <acis/wire.h>

#define THREADS 2
#define WORK_N 3000   /* the most ints a worker's call moves */
#define ITERS 200
#define SETUPS 20
#define LOOKS 20

static int rank, size;

struct job {
    MPI_Comm comm;
    int id, failures;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    enum { N = WORK_N };                /* main() counts the segments of n below */
    static __thread int in[N], out[N], ref[N];
    for (int it = 0; it < ITERS; it++) {
        int n = 1 + (it * 37) % N;
        for (int i = 0; i < n; i++)
            in[i] = rank * 1000 + i + it + j->id;
        switch (it % 4) {
        case 0:
            MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, j->comm);
            PMPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, j->comm);
            break;
        case 1:
            memcpy(out, in, sizeof(int) * (size_t)n);
            memcpy(ref, in, sizeof(int) * (size_t)n);
            MPI_Bcast(out, n, MPI_INT, it % size, j->comm);
            PMPI_Bcast(ref, n, MPI_INT, it % size, j->comm);
            break;
        case 2: {
            MPI_Request r;
            MPI_Iallreduce(in, out, n, MPI_INT, MPI_MAX, j->comm, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            PMPI_Allreduce(in, ref, n, MPI_INT, MPI_MAX, j->comm);
            break;
        }
        default:
            MPI_Scan(in, out, n, MPI_INT, MPI_SUM, j->comm);
            PMPI_Scan(in, ref, n, MPI_INT, MPI_SUM, j->comm);
            break;
        }
        if (memcmp(out, ref, sizeof(int) * (size_t)n) != 0) {
            j->failures++;
            fprintf(stderr, "threads[%d.%d]: FAIL iteration %d\n", rank, j->id, it);
        }
    }
    return NULL;
}

static pthread_barrier_t together;

/* One round's set-up: both threads start at once. */
static void *first_call(void *arg)
{
    struct job *j = arg;
    int one = 1, sum = 0;
    pthread_barrier_wait(&together);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, j->comm);
    if (sum != size)
        j->failures++;
    return NULL;
}

/* SETUPS rounds of two communicators set up at once; the ones left in
 * MPICH, counted on this rank. */
static int setup_rounds(void)
{
    int refused = 0;
    pthread_barrier_init(&together, NULL, THREADS);
    for (int round = 0; round < SETUPS; round++) {
        struct job jobs[THREADS];
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++) {
            jobs[i] = (struct job){ .id = i };
            MPI_Comm_dup(MPI_COMM_WORLD, &jobs[i].comm);
        }
        for (int i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, first_call, &jobs[i]);
        for (int i = 0; i < THREADS; i++) {
            pthread_join(t[i], NULL);
            acis_reason_t why;
            if (!acis_comm_offloaded(jobs[i].comm, &why)) {
                refused++;
                fprintf(stderr, "threads[%d]: round %d, communicator %d in MPICH: %s\n", rank,
                        round, i, acis_reason_text(why));
            }
            refused += jobs[i].failures;
            MPI_Comm_free(&jobs[i].comm);
        }
    }
    pthread_barrier_destroy(&together);
    return refused;
}

struct look {
    MPI_Request r;
    int done;
};

static void *looker(void *arg)
{
    struct look *l = arg;
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 30)
        MPI_Request_get_status(l->r, &flag, MPI_STATUS_IGNORE);
    l->done = flag;
    return NULL;
}

/* LOOKS broadcasts, each looked at by THREADS threads at once; the
 * failures on this rank. */
static int look_rounds(void)
{
    enum { BIG = 65536 };
    int failures = 0, *v = malloc(sizeof(int) * BIG);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Barrier(comm);                      /* comm gets its row */
    struct acis_coll_stats s0, s1;
    acis_get_stats(ACIS_COLL_IBCAST, &s0);
    for (int round = 0; round < LOOKS; round++) {
        int n = round % 2 ? BIG : 16, root = round % size, ok = 1;
        struct look l[THREADS];
        pthread_t t[THREADS];
        for (int k = 0; k < n; k++)
            v[k] = rank == root ? k + round : -1;
        MPI_Request r;
        MPI_Ibcast(v, n, MPI_INT, root, comm, &r);
        for (int i = 0; i < THREADS; i++) {
            l[i] = (struct look){ .r = r };
            pthread_create(&t[i], NULL, looker, &l[i]);
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(t[i], NULL);
            ok &= l[i].done;
        }
        if (!ok) {
            fprintf(stderr, "threads[%d]: FAIL round %d: get_status never said done\n", rank, round);
            MPI_Abort(MPI_COMM_WORLD, 1);   /* the call cannot be waited for */
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int k = 0; k < n; k++)
            ok &= v[k] == k + round;
        if (!ok) {
            failures++;
            fprintf(stderr, "threads[%d]: FAIL round %d: the looked-at ibcast's data\n", rank, round);
        }
    }
    acis_get_stats(ACIS_COLL_IBCAST, &s1);
    if (s1.offloaded - s0.offloaded != LOOKS) {
        failures++;
        fprintf(stderr, "threads[%d]: %llu of %d looked-at ibcasts offloaded\n", rank,
                (unsigned long long)(s1.offloaded - s0.offloaded), LOOKS);
    }
    MPI_Comm_free(&comm);
    free(v);
    return failures;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "threads: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 1;
    }
    int set_up_late = setup_rounds();
    struct job jobs[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (struct job){ .id = i };
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[i].comm);
    }
    struct acis_coll_stats a0, b0, i0, s0, a1, b1, i1, s1;
    uint64_t w0[ACIS_SWC_COUNT], w1[ACIS_SWC_COUNT];
    struct acis_switch_info si;
    int have_sw = acis_get_switch_info(&si) == 0 && si.payload >= 4;
    PMPI_Barrier(MPI_COMM_WORLD);       /* every earlier segment completed */
    have_sw = have_sw && acis_get_switch_stats(w0, ACIS_SWC_COUNT) == ACIS_SWC_COUNT;
    acis_get_stats(ACIS_COLL_ALLREDUCE, &a0);
    acis_get_stats(ACIS_COLL_BCAST, &b0);
    acis_get_stats(ACIS_COLL_IALLREDUCE, &i0);
    acis_get_stats(ACIS_COLL_SCAN, &s0);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, &jobs[i]);
    int failures = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        failures += jobs[i].failures;
        MPI_Comm_free(&jobs[i].comm);
    }
    acis_get_stats(ACIS_COLL_ALLREDUCE, &a1);
    acis_get_stats(ACIS_COLL_BCAST, &b1);
    acis_get_stats(ACIS_COLL_IALLREDUCE, &i1);
    acis_get_stats(ACIS_COLL_SCAN, &s1);
    uint64_t off = (a1.offloaded - a0.offloaded) + (b1.offloaded - b0.offloaded) +
                   (i1.offloaded - i0.offloaded) + (s1.offloaded - s0.offloaded);
    if (off != THREADS * ITERS) {
        failures++;
        fprintf(stderr, "threads[%d]: %llu of %d collectives offloaded\n", rank,
                (unsigned long long)off, THREADS * ITERS);
    }
    /* The switch counted every segment of the two threads' allreduces and
     * bcasts: two posts on one rank never overlap (the shared-memory
     * switch's counters are written without locked instructions). */
    PMPI_Barrier(MPI_COMM_WORLD);
    if (have_sw && rank == 0 && acis_get_switch_stats(w1, ACIS_SWC_COUNT) == ACIS_SWC_COUNT) {
        uint64_t want = 0, per = si.payload / 4;   /* ints a reduction's segment holds */
        for (int it = 0; it < ITERS; it++) {
            uint64_t n = 1 + (uint64_t)(it * 37) % WORK_N; /* worker()'s n */
            if (it % 4 == 1)                               /* bcast: bytes */
                want += THREADS * ((4 * n + si.payload - 1) / si.payload);
            else if (it % 4 != 3)                          /* allreduce, iallreduce */
                want += THREADS * ((n + per - 1) / per);
        }
        uint64_t got = (w1[ACIS_SWC_seg_allreduce] - w0[ACIS_SWC_seg_allreduce]) +
                       (w1[ACIS_SWC_seg_bcast] - w0[ACIS_SWC_seg_bcast]);
        if (got != want) {
            failures++;
            fprintf(stderr, "threads: the switch counted %llu allreduce and bcast segments, "
                    "expected %llu\n", (unsigned long long)got, (unsigned long long)want);
        }
    }
    failures += set_up_late + look_rounds();
    int total;
    PMPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("threads: %d ranks x %d threads, %d failures\n", size, THREADS, total);
    MPI_Finalize();
    return rank == 0 && total ? 1 : 0;
}
