/* persist.c -- persistent collectives (MPI_*_init) through acis, against
 * MPICH's blocking calls on the same data.  Each request is made once and
 * started ROUNDS times with new data every time; its completion goes
 * through every wait and test call in turn, each time in one array with
 * MPICH's own point-to-point requests (a ring exchange): MPI_Wait,
 * MPI_Test loops, MPI_Waitall, MPI_Waitany and MPI_Testsome loops,
 * MPI_Testall, MPI_Testany, MPI_Waitsome, MPI_Request_get_status.  Also:
 * MPI_Startall of two requests, and of a request it must refuse beside
 * one it must then leave inactive (acis's or MPICH's), and of acis's
 * request twice; a derived datatype and a communicator freed right after
 * init; a request freed while it runs; gatherv and scatterv with blocks
 * of different sizes (the first start runs in MPICH while the sizes
 * travel).
 *
 * With --assert-comm (and MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=any) the
 * program asserts mpi_assert_strict_persistent_collective_ordering on
 * MPI_COMM_WORLD (MPI_Comm_set_info; its dups keep it), and on a dup
 * without it starts a broadcast and a barrier in opposite orders on odd
 * and even ranks, as MPI-4.0 allows: those run in MPICH (reason
 * persistent) and are right.
 *
 * --nomem (with MPIR_CVAR_OFFLOAD_FAULT_NOMEM_NB): starts that fail on
 * every member return MPI_ERR_NO_MEM through MPI_ERRORS_RETURN, alike on
 * every rank, once: a second MPI_Wait on the inactive request succeeds.
 * --orphans: 64 communicators, each with a request started and freed
 * while running and the communicator freed, with no wait or test call
 * after: the blocking calls move the freed requests, so their rows come
 * back and a last communicator still gets one.
 *
 * usage: persist [--rounds=N] [--expect-offload] [--assert-comm] [--nomem]
 *                [--orphans]
 *   --expect-offload  every init was offloaded and every start but the
 *                     first of gatherv and scatterv ran in the switch (the
 *                     counters) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>
#include <mpi.h>

#define N 257                     /* elements: more than one segment of small packets */

static int rank, size, rounds = 40, failures;

static void check(int ok, const char *what, int round)
{
    if (!ok && failures++ < 10)
        fprintf(stderr, "persist: rank %d: %s wrong in round %d\n", rank, what, round);
}

/* Complete req, MPICH's ring requests beside it, the way round picks. */
static void complete(MPI_Request *req, int round, MPI_Comm comm)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = round * 1000 + rank, in = -1;
    MPI_Request r[3];
    r[0] = *req;
    MPI_Irecv(&in, 1, MPI_INT, left, 7, comm, &r[1]);
    MPI_Isend(&out, 1, MPI_INT, right, 7, comm, &r[2]);
    int flag = 0, idx, outc, ind[3], done = 0;
    MPI_Status st[3];
    switch (round % 9) {
    case 0:
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Waitall(2, &r[1], st);
        break;
    case 1:
        while (!flag)
            MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
        MPI_Waitall(2, &r[1], st);
        break;
    case 2:
        MPI_Waitall(3, r, st);
        break;
    case 3:
        for (int k = 0; k < 3; k++) {
            MPI_Waitany(3, r, &idx, &st[0]);
            check(idx != MPI_UNDEFINED, "waitany index", round);
        }
        break;
    case 4:
        while (done < 3) {
            MPI_Testsome(3, r, &outc, ind, st);
            done += outc == MPI_UNDEFINED ? 3 : outc;
        }
        break;
    case 5:
        while (!flag)
            MPI_Testall(3, r, &flag, st);
        break;
    case 6:
        while (done < 3) {
            MPI_Testany(3, r, &idx, &flag, MPI_STATUS_IGNORE);
            done += flag && idx != MPI_UNDEFINED;
        }
        break;
    case 7:
        while (done < 3) {
            MPI_Waitsome(3, r, &outc, ind, st);
            done += outc;
        }
        break;
    default:
        while (!flag)
            MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Waitall(2, &r[1], st);
        break;
    }
    check(r[0] == *req, "persistent handle kept", round);
    check(in == round * 1000 + left, "ring message", round);
}

static void fill(int *v, int round, int salt)
{
    for (int i = 0; i < N * size; i++)
        v[i] = (rank + 1) * (i + 3) + round * 7 + salt;
}

/* One persistent reduction-like call: init once, ROUNDS starts. */
enum which { ALLREDUCE, REDUCE, BCAST, GATHER, SCATTER, ALLGATHER, ALLGATHERV,
             REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, BARRIER, NWHICH };
static const char *const names[] = { "allreduce", "reduce", "bcast", "gather", "scatter",
                                     "allgather", "allgatherv", "reduce_scatter",
                                     "reduce_scatter_block", "scan", "exscan", "barrier" };

static int init_one(enum which w, int *s, int *r, int *counts, int *displs, MPI_Datatype t,
                    MPI_Comm comm, MPI_Request *req)
{
    int root = size - 1;
    switch (w) {
    case ALLREDUCE: return MPI_Allreduce_init(s, r, N, t, MPI_SUM, comm, MPI_INFO_NULL, req);
    case REDUCE: return MPI_Reduce_init(s, r, N, t, MPI_SUM, root, comm, MPI_INFO_NULL, req);
    case BCAST: return MPI_Bcast_init(r, N, t, root, comm, MPI_INFO_NULL, req);
    case GATHER: return MPI_Gather_init(s, N, t, r, N, t, root, comm, MPI_INFO_NULL, req);
    case SCATTER: return MPI_Scatter_init(s, N, t, r, N, t, root, comm, MPI_INFO_NULL, req);
    case ALLGATHER: return MPI_Allgather_init(s, N, t, r, N, t, comm, MPI_INFO_NULL, req);
    case ALLGATHERV:
        return MPI_Allgatherv_init(s, counts[rank], t, r, counts, displs, t, comm,
                                   MPI_INFO_NULL, req);
    case REDUCE_SCATTER:
        return MPI_Reduce_scatter_init(s, r, counts, t, MPI_SUM, comm, MPI_INFO_NULL, req);
    case REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block_init(s, r, N, t, MPI_SUM, comm, MPI_INFO_NULL, req);
    case SCAN: return MPI_Scan_init(s, r, N, t, MPI_SUM, comm, MPI_INFO_NULL, req);
    case EXSCAN: return MPI_Exscan_init(s, r, N, t, MPI_SUM, comm, MPI_INFO_NULL, req);
    default: return MPI_Barrier_init(comm, MPI_INFO_NULL, req);
    }
}

static void reference(enum which w, int *s, int *r, int *counts, int *displs, MPI_Comm comm)
{
    int root = size - 1;
    switch (w) {
    case ALLREDUCE: PMPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, comm); break;
    case REDUCE: PMPI_Reduce(s, r, N, MPI_INT, MPI_SUM, root, comm); break;
    case BCAST: PMPI_Bcast(r, N, MPI_INT, root, comm); break;
    case GATHER: PMPI_Gather(s, N, MPI_INT, r, N, MPI_INT, root, comm); break;
    case SCATTER: PMPI_Scatter(s, N, MPI_INT, r, N, MPI_INT, root, comm); break;
    case ALLGATHER: PMPI_Allgather(s, N, MPI_INT, r, N, MPI_INT, comm); break;
    case ALLGATHERV:
        PMPI_Allgatherv(s, counts[rank], MPI_INT, r, counts, displs, MPI_INT, comm);
        break;
    case REDUCE_SCATTER: PMPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, comm); break;
    case REDUCE_SCATTER_BLOCK:
        PMPI_Reduce_scatter_block(s, r, N, MPI_INT, MPI_SUM, comm);
        break;
    case SCAN: PMPI_Scan(s, r, N, MPI_INT, MPI_SUM, comm); break;
    case EXSCAN: PMPI_Exscan(s, r, N, MPI_INT, MPI_SUM, comm); break;
    default: PMPI_Barrier(comm); break;
    }
}

/* Starts of w's request: each with new data, checked against MPICH.  The
 * request's datatype (a dup of MPI_INT) and, with own_comm, its
 * communicator are freed right after init. */
static long run_one(enum which w, int own_comm)
{
    size_t n = (size_t)N * (size_t)size;
    int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r), *ref = malloc(n * sizeof *ref);
    int *counts = malloc((size_t)size * sizeof *counts), *displs = malloc((size_t)size * sizeof *displs);
    for (int q = 0; q < size; q++) {
        counts[q] = N - q;                         /* allgatherv, reduce_scatter */
        displs[q] = q ? displs[q - 1] + counts[q - 1] + 1 : 0;
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Datatype t;
    MPI_Request req;
    int moves = w == BCAST || w == GATHER || w == SCATTER || w == ALLGATHER || w == ALLGATHERV;
    if (moves)
        MPI_Type_dup(MPI_INT, &t);                 /* freed below: the request keeps its own */
    else
        t = MPI_INT;                               /* MPI_SUM is for predefined types */
    if (own_comm) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Barrier(comm);                         /* its row: set up by a blocking call */
    }
    init_one(w, s, r, counts, displs, t, comm, &req);
    if (moves)
        MPI_Type_free(&t);
    MPI_Comm cmp = comm;
    if (own_comm) {
        MPI_Comm_dup(comm, &cmp);                  /* for the reference and the ring */
        MPI_Comm_free(&comm);
    }
    for (int round = 0; round < rounds; round++) {
        if (getenv("PERSIST_TRACE"))
            fprintf(stderr, "persist: rank %d: %s round %d\n", rank, names[w], round);
        fill(s, round, w);
        memset(r, 0x5a, n * sizeof *r);
        if (w == BCAST && rank == size - 1)
            fill(r, round, w);
        MPI_Start(&req);
        complete(&req, round, cmp);
        int *keep = malloc(n * sizeof *keep);
        memcpy(keep, r, n * sizeof *r);
        memset(ref, 0x5a, n * sizeof *ref);
        if (w == BCAST) {
            if (rank == size - 1)
                fill(ref, round, w);
        }
        reference(w, s, ref, counts, displs, cmp);
        int ok = 1;
        size_t cmpn = w == BCAST || w == REDUCE_SCATTER_BLOCK || w == SCATTER ? N
                      : w == REDUCE_SCATTER ? (size_t)counts[rank] : n;
        if (w == REDUCE && rank != size - 1)
            cmpn = 0;                              /* only the root gets the result */
        if (w == GATHER && rank != size - 1)
            cmpn = 0;
        if (w == EXSCAN && rank == 0)
            cmpn = 0;                              /* undefined on rank 0 */
        if (w == ALLGATHERV)
            cmpn = (size_t)(displs[size - 1] + counts[size - 1]);
        if (w == BARRIER)
            cmpn = 0;
        for (size_t i = 0; i < cmpn && ok; i++)
            ok = keep[i] == ref[i];
        check(ok, names[w], round);
        free(keep);
    }
    MPI_Request_free(&req);
    check(req == MPI_REQUEST_NULL, "freed handle", 0);
    if (own_comm)
        MPI_Comm_free(&cmp);
    free(s);
    free(r);
    free(ref);
    free(counts);
    free(displs);
    return rounds;
}

static int finish(int bad)
{
    int all;
    PMPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("persist: %d ranks, %s\n", size, all ? "FAILED" : "all right");
    MPI_Finalize();
    return all ? 1 : 0;
}

/* Starts that fail (injected) fail on every member, report
 * MPI_ERR_NO_MEM once, and leave the request restartable. */
static int nomem(void)
{
    int a, b, fails = 0;
    MPI_Request q;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Allreduce_init(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    for (int round = 0; round < 200; round++) {
        a = rank + round;
        b = -1;
        MPI_Start(&q);
        int rc = MPI_Wait(&q, MPI_STATUS_IGNORE), mine[2] = { rc != MPI_SUCCESS, 0 }, sum[2];
        check(rc == MPI_SUCCESS || rc == MPI_ERR_NO_MEM, "error code", round);
        check(rc != MPI_SUCCESS || b == size * (size - 1) / 2 + size * round, "result", round);
        mine[1] = MPI_Wait(&q, MPI_STATUS_IGNORE) != MPI_SUCCESS;   /* inactive now */
        check(!mine[1], "second wait on the inactive request", round);
        PMPI_Allreduce(mine, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        check(sum[0] == 0 || sum[0] == size, "every member fails alike", round);
        fails += mine[0];
    }
    MPI_Request_free(&q);
    if (rank == 0)
        printf("persist: %d of 200 starts failed on every member\n", fails);
    check(fails > 0, "the injection", 0);
    return failures;
}

/* Requests freed while running, on communicators freed after them.  A
 * freed request still writes its result when it finishes, which the
 * program cannot see: its buffers stay valid to the end (MPI's rule). */
static int orphans(void)
{
    static int a[64], b[64];
    for (int round = 0; round < 64; round++) {
        MPI_Comm c;
        MPI_Request q;
        a[round] = rank;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Barrier(c);
        MPI_Allreduce_init(&a[round], &b[round], 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Request_free(&q);
        MPI_Comm_free(&c);
    }
    MPI_Comm last;
    acis_reason_t why = ACIS_REASON_NONE;
    MPI_Comm_dup(MPI_COMM_WORLD, &last);
    MPI_Barrier(last);
    check(acis_comm_offloaded(last, &why) == 1, "a row after 64 freed requests", (int)why);
    MPI_Comm_free(&last);
    return failures;
}

/* MPI_Startall of mix must fail with MPI_ERR_REQUEST and leave *p,
 * acis's allreduce, inactive: it then starts, and its result b is sum. */
static void refused_inactive(MPI_Request mix[2], MPI_Request *p, const int *b, int sum,
                             const char *why)
{
    char what[96];
    int cls = MPI_SUCCESS;
    MPI_Error_class(MPI_Startall(2, mix), &cls);
    snprintf(what, sizeof what, "startall of %s: error class", why);
    check(cls == MPI_ERR_REQUEST, what, 0);
    int rc = MPI_Start(p);
    snprintf(what, sizeof what, "start after a startall of %s", why);
    check(rc == MPI_SUCCESS, what, 0);
    if (rc == MPI_SUCCESS) {
        MPI_Wait(p, MPI_STATUS_IGNORE);
        snprintf(what, sizeof what, "allreduce after a startall of %s", why);
        check(*b == sum, what, 0);
    }
}

/* MPI_Startall with a request it must refuse starts none of them, as
 * MPICH's checks every request first: MPICH's nonblocking barrier beside
 * acis's inactive allreduce two[0]; two[0] twice (MPICH would post its
 * receive twice); then acis's started two[0] beside MPICH's persistent
 * receive.  Returns the starts of two[0] it made. */
static long startall_refused(MPI_Request two[2], int *a, int *b)
{
    MPI_Request mix[2], ibar, precv;
    int cls = MPI_SUCCESS, flag = 0, in = -1, sum = size * (size + 1) / 2;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Ibarrier(MPI_COMM_SELF, &ibar);           /* MPICH's own, not persistent */
    mix[0] = two[0];
    mix[1] = ibar;
    *a = rank + 1;
    refused_inactive(mix, &two[0], b, sum, "a nonblocking barrier");
    PMPI_Wait(&ibar, MPI_STATUS_IGNORE);
    mix[0] = mix[1] = two[0];                      /* MPICH would post its receive twice */
    refused_inactive(mix, &two[0], b, sum, "a request twice");
    MPI_Recv_init(&in, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &precv);
    mix[0] = precv;
    mix[1] = two[0];
    MPI_Start(&two[0]);                            /* started: the startall must refuse */
    MPI_Error_class(MPI_Startall(2, mix), &cls);
    check(cls == MPI_ERR_REQUEST, "startall of a started request: error class", 0);
    MPI_Wait(&two[0], MPI_STATUS_IGNORE);
    check(*b == sum, "allreduce started beside a refused startall", 0);
    MPI_Request_get_status(precv, &flag, MPI_STATUS_IGNORE);
    check(flag, "MPICH's receive left inactive by a refused startall", 0);
    if (!flag) {                                   /* started: complete it */
        int out = 1;
        MPI_Send(&out, 1, MPI_INT, 0, 99, MPI_COMM_SELF);
        MPI_Wait(&precv, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&precv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return 3;
}

int main(int argc, char **argv)
{
    int expect = 0, assert_comm = 0, mode = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--rounds=", 9) == 0)
            rounds = atoi(argv[i] + 9);
        else if (strcmp(argv[i], "--assert-comm") == 0)
            assert_comm = 1;
        else if (strcmp(argv[i], "--nomem") == 0)
            mode = 1;
        else if (strcmp(argv[i], "--orphans") == 0)
            mode = 2;
        else if (strcmp(argv[i], "--expect-offload") == 0)
            expect = 1;
        else {
            fprintf(stderr, "persist: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mode)
        return finish(mode == 1 ? nomem() : orphans());
    acis_reset_stats();
    long starts = 0;
    int inits = 0, unordered = 0;

    if (assert_comm) {
        /* out of order on a communicator that does not assert order */
        MPI_Comm any;
        MPI_Request two[2];
        MPI_Status st2[2];
        MPI_Comm_dup(MPI_COMM_WORLD, &any);
        MPI_Barrier(any);
        for (int round = 0; round < rounds; round++) {
            int a = rank == 0 ? round + 42 : -1;
            MPI_Bcast_init(&a, 1, MPI_INT, 0, any, MPI_INFO_NULL, &two[0]);
            MPI_Barrier_init(any, MPI_INFO_NULL, &two[1]);
            MPI_Start(&two[rank % 2]);
            MPI_Start(&two[1 - rank % 2]);
            MPI_Waitall(2, two, st2);
            check(a == round + 42, "bcast started out of order", round);
            MPI_Request_free(&two[0]);
            MPI_Request_free(&two[1]);
            unordered += 2;
        }
        MPI_Comm_free(&any);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_strict_persistent_collective_ordering", "true");
        MPI_Comm_set_info(MPI_COMM_WORLD, info);
        MPI_Info_free(&info);
    }

    for (int w = 0; w < NWHICH; w++) {
        starts += run_one((enum which)w, 0);
        inits++;
    }
    /* the communicator freed after init too */
    for (int w = 0; w < NWHICH; w += 3) {
        starts += run_one((enum which)w, 1);
        inits++;
    }

    if (getenv("PERSIST_TRACE"))
        fprintf(stderr, "persist: rank %d: startall\n", rank);
    /* MPI_Startall of two; then a request freed while it runs */
    int a = rank + 1, b = 0, v = rank == 0 ? 42 : 0, sum = 0;
    MPI_Request two[2];
    MPI_Status st2[2];
    MPI_Allreduce_init(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &two[0]);
    MPI_Bcast_init(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &two[1]);
    inits += 2;
    for (int round = 0; round < rounds; round++) {
        a = rank + round;
        v = rank == 0 ? round : -1;
        MPI_Startall(2, two);
        MPI_Waitall(2, two, st2);
        check(b == size * (size - 1) / 2 + size * round, "startall allreduce", round);
        check(v == round, "startall bcast", round);
        starts += 2;
    }
    starts += startall_refused(two, &a, &b);
    MPI_Start(&two[0]);
    starts++;
    MPI_Request_free(&two[0]);                     /* running: it finishes anyway */
    MPI_Request_free(&two[1]);
    PMPI_Allreduce(&a, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    if (getenv("PERSIST_TRACE"))
        fprintf(stderr, "persist: rank %d: gatherv, scatterv\n", rank);
    /* gatherv and scatterv: blocks of rank + 1 elements; the first start
     * runs in MPICH while the sizes travel, the others in the switch */
    int vcnt[64], vdsp[64], vs[80], vr[64 * 65], vref[64 * 65], vfirst = 0;
    for (int q = 0; q < size && q < 64; q++) {
        vcnt[q] = q + 1;
        vdsp[q] = q ? vdsp[q - 1] + vcnt[q - 1] + 2 : 1;
    }
    for (int sv = 0; sv < 2 && size <= 64; sv++) {
        MPI_Request vq;
        int root = sv ? 0 : size - 1;
        if (sv == 0)
            MPI_Gatherv_init(vs, rank + 1, MPI_INT, vr, vcnt, vdsp, MPI_INT, root,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &vq);
        else
            MPI_Scatterv_init(vr, vcnt, vdsp, MPI_INT, vs, rank + 1, MPI_INT, root,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &vq);
        inits++;
        vfirst++;
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < 80; i++)
                vs[i] = rank * 100 + round + i;
            for (int i = 0; i < 64 * 65; i++)
                vr[i] = vref[i] = -1;
            if (sv == 1 && rank == root)
                for (int i = 0; i < 64 * 65; i++)
                    vr[i] = vref[i] = i * 3 + round;
            MPI_Start(&vq);
            complete(&vq, round, MPI_COMM_WORLD);
            starts++;
            int got[80];
            memcpy(got, sv ? vs : vr, sizeof got);
            for (int i = 0; i < 80; i++)
                vs[i] = rank * 100 + round + i;
            if (sv == 0)
                PMPI_Gatherv(vs, rank + 1, MPI_INT, vref, vcnt, vdsp, MPI_INT, root,
                             MPI_COMM_WORLD);
            else
                PMPI_Scatterv(vref, vcnt, vdsp, MPI_INT, vs, rank + 1, MPI_INT, root,
                              MPI_COMM_WORLD);
            int ok = 1;
            if (sv == 0 && rank == root)
                ok = memcmp(vr, vref, sizeof vr) == 0;
            else if (sv == 1)
                ok = memcmp(got, vs, (size_t)(rank + 1) * sizeof(int)) == 0;
            check(ok, sv ? "scatterv" : "gatherv", round);
        }
        MPI_Request_free(&vq);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    struct acis_host_stats hs;
    struct acis_coll_stats cs;
    acis_get_host_stats(&hs);
    long offl = 0, software = 0, order_reason = 0;
    for (int c = 0; c < ACIS_COLL_COUNT; c++) {
        if (acis_coll_form(c) != ACIS_FORM_PERSISTENT || acis_get_stats(c, &cs) != 0)
            continue;
        offl += (long)cs.offloaded;
        for (int r = 1; r < ACIS_REASON_COUNT; r++)
            software += (long)cs.by_reason[r];
        order_reason += (long)cs.by_reason[ACIS_REASON_PERSISTENT];
    }
    if (expect) {
        if (offl != inits || software != unordered || order_reason != unordered ||
            (long)hs.persistent_starts != starts - vfirst || hs.redone) {
            fprintf(stderr, "persist: rank %d: %ld of %d inits offloaded, %ld in MPICH (want "
                            "%d, reason persistent), %ld of %ld starts in the switch (want "
                            "all but %d), %llu redone\n",
                    rank, offl, inits, software, unordered, (long)hs.persistent_starts, starts,
                    vfirst, (unsigned long long)hs.redone);
            failures++;
        }
    }
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("persist: %d ranks, %d requests, %ld starts each, %s\n", size, inits, starts,
               all ? "FAILED" : "all right");
    MPI_Finalize();
    return all ? 1 : 0;
}
