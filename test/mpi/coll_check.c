/* coll_check.c -- every intercepted collective, through libacis (MPI_*) and
 * through plain MPICH (PMPI_*) with identical inputs; results must be equal
 * byte for byte and, where every rank gets the same answer, equal on every
 * rank.  Each call's decision is read back from the acis counters and
 * checked against what this build must do, so a silent fallback fails.
 *
 * usage: coll_check [--matrix=full|quick] [--counts=N,N,...]
 *                   [--offload=COLL,...] [--offload-nb=COLL,...] [--trace]
 *                   [--colls=COLL,...] [--offloaded=COMM,...] [--may-redo]
 *   --offload     blocking collectives this build offloads (barrier, bcast,
 *                 reduce, allreduce, gather, scatter, allgather,
 *                 reduce_scatter, reduce_scatter_block, scan, exscan)
 *   --offload-nb  the same for the nonblocking forms (but MPI_Igatherv and
 *                 MPI_Iscatterv, which acis always runs in MPICH), and so
 *                 for the persistent forms (MPI_*_init, then MPI_Start) if
 *                 MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict (else they
 *                 must run in MPICH, reason persistent)
 *   --colls       run only these entry points (e.g. allreduce,ireduce)
 *   --offloaded   the communicators (world, reversed, halves) that must have
 *                 a switch row; every other one must not.  Without it, when
 *                 --offload names anything, no communicator may be without
 *                 a row because the switch refused it (comm_setup,
 *                 table_full), never answered (no_device) or failed
 *                 (device_failed, broken): else such a run would pass,
 *                 each call "expected" in MPICH
 *   --may-redo    offloaded calls may be redone in MPICH (a rank abstains):
 *                 skip the cases MPICH 4.0.2 gets wrong even when offloaded */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <acis/acis.h>

#include "tdata.h"

#define MAXCOUNTS 16

static struct {
    int full;
    int trace;                           /* print each case before running it */
    int counts[MAXCOUNTS], ncounts;
    int offload[ACIS_COLL_COUNT];        /* by entry point */
    int only[ACIS_COLL_COUNT], restrict_colls;
    int may_redo;
    int strict;                          /* persistent starts in order */
    const char *offloaded;    /* --offloaded, NULL: not checked */
    int rank;
    long cases, failures, skipped;
} opt;

/* ------------------------------------------------------------ options */

static acis_coll_t coll_by_name(const char *name)
{
    char want[80];
    snprintf(want, sizeof want, "MPI_%s", name);
    for (int c = 0; c < ACIS_COLL_COUNT; c++)
        if (strcasecmp(acis_coll_name(c), want) == 0)
            return c;
    fprintf(stderr, "coll_check: unknown collective '%s'\n", name);
    exit(2);
}

static void parse_list(const char *list, int nonblocking, int *set)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", nonblocking ? "I" : "", tok);
        set[coll_by_name(name)] = 1;
    }
}

static void parse_args(int argc, char **argv)
{
    int defaults[] = { 0, 1, 3, 1000 };
    opt.ncounts = 4;
    memcpy(opt.counts, defaults, sizeof defaults);
    opt.full = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--matrix=quick") == 0) {
            opt.full = 0;
        } else if (strcmp(argv[i], "--trace") == 0) {
            opt.trace = 1;
        } else if (strcmp(argv[i], "--matrix=full") == 0) {
            opt.full = 1;
        } else if (strncmp(argv[i], "--counts=", 9) == 0) {
            opt.ncounts = 0;
            for (char *p = argv[i] + 9; *p && opt.ncounts < MAXCOUNTS; p++) {
                opt.counts[opt.ncounts++] = (int)strtol(p, &p, 10);
                if (*p != ',')
                    break;
            }
        } else if (strncmp(argv[i], "--offload=", 10) == 0) {
            parse_list(argv[i] + 10, 0, opt.offload);
        } else if (strncmp(argv[i], "--offload-nb=", 13) == 0) {
            parse_list(argv[i] + 13, 1, opt.offload);
        } else if (strncmp(argv[i], "--offloaded=", 12) == 0) {
            opt.offloaded = argv[i] + 12;
        } else if (strcmp(argv[i], "--may-redo") == 0) {
            opt.may_redo = 1;

        } else if (strncmp(argv[i], "--colls=", 8) == 0) {
            parse_list(argv[i] + 8, 0, opt.only);
            opt.restrict_colls = 1;
        } else {
            fprintf(stderr, "coll_check: unknown option %s\n", argv[i]);
            exit(2);
        }
    }
    /* a persistent form is offloaded where its nonblocking one is (each
     * start runs as that call does, src/offload/pers.c), if the program
     * says it starts them in order: MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER */
    const char *order = getenv("MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER");
    opt.strict = order && strcasecmp(order, "strict") == 0;
    for (int c = 0; opt.strict && c < ACIS_COLL_COUNT; c++)
        if (acis_coll_form(c) == ACIS_FORM_PERSISTENT)
            for (int n = 0; n < ACIS_COLL_COUNT; n++)
                if (acis_coll_form(n) == ACIS_FORM_NONBLOCKING &&
                    acis_coll_blocking(n) == acis_coll_blocking(c))
                    opt.offload[c] = opt.offload[n];
    /* acis runs these two in MPICH on every member (docs/reliability.md);
     * their persistent forms' first start too, the others in the switch */
    opt.offload[ACIS_COLL_IGATHERV] = opt.offload[ACIS_COLL_ISCATTERV] = 0;
}

/* --------------------------------------------------------------- cases */

struct tcase {
    acis_coll_t coll;
    const struct ttype *t;
    MPI_Op op;
    const char *opname;
    int count, root, inplace;
    MPI_Comm comm;
    const char *commname;
    int size, rank;
    acis_reason_t comm_reason;
};

static int rooted(acis_coll_t base)
{
    return base == ACIS_COLL_BCAST || base == ACIS_COLL_REDUCE ||
           base == ACIS_COLL_GATHER || base == ACIS_COLL_SCATTER ||
           base == ACIS_COLL_GATHERV || base == ACIS_COLL_SCATTERV;
}

static int vform(acis_coll_t base)
{
    return base == ACIS_COLL_GATHERV || base == ACIS_COLL_SCATTERV ||
           base == ACIS_COLL_ALLGATHERV;
}

static int reduction(acis_coll_t base)
{
    return base == ACIS_COLL_REDUCE || base == ACIS_COLL_ALLREDUCE ||
           base == ACIS_COLL_REDUCE_SCATTER || base == ACIS_COLL_REDUCE_SCATTER_BLOCK ||
           base == ACIS_COLL_SCAN || base == ACIS_COLL_EXSCAN;
}

static acis_coll_t base_of(acis_coll_t c)
{
    return acis_coll_blocking(c);
}

static int inplace_allowed(acis_coll_t base)
{
    return base != ACIS_COLL_BARRIER && base != ACIS_COLL_BCAST;
}

/* Elements in the receive buffer (largest of all ranks), for sizing. */
static size_t buf_elems(const struct tcase *k)
{
    return (size_t)(k->count + 4) * (size_t)k->size + 1;
}

/* Uneven blocks of the v-variants: rank q has count + q % 3 elements; odd
 * counts leave a one-element gap before each block, even ones pack them. */
static void v_layout(const struct tcase *k, int *counts, int *displs)
{
    for (int q = 0, at = 0; q < k->size; q++) {
        counts[q] = k->count + q % 3;
        at += k->count % 2;
        displs[q] = at;
        at += counts[q];
    }
}

static void rs_counts(const struct tcase *k, int *rc)
{
    for (int i = 0; i < k->size; i++)
        rc[i] = k->count ? k->count + i % 3 : 0;
}

/* Set up buffers for one run: sbuf holds my data; rbuf starts as a
 * sentinel, or holds my input for MPI_IN_PLACE. */
static void prepare(const struct tcase *k, char *sbuf, char *rbuf, size_t bytes)
{
    acis_coll_t base = base_of(k->coll);
    const struct ttype *t = k->t;
    size_t n = buf_elems(k), ext = (size_t)t->extent;
    int counts[64], displs[64];

    tfill(t, sbuf, n, k->rank, k->count);
    memset(rbuf, 0x5a, bytes);
    if (!k->inplace)
        return;
    v_layout(k, counts, displs);
    switch (base) {
    case ACIS_COLL_ALLREDUCE:
    case ACIS_COLL_SCAN:
    case ACIS_COLL_EXSCAN:
    case ACIS_COLL_REDUCE_SCATTER_BLOCK:
    case ACIS_COLL_REDUCE_SCATTER:
    case ACIS_COLL_REDUCE:
        if (base != ACIS_COLL_REDUCE || k->rank == k->root)
            memcpy(rbuf, sbuf, n * ext);
        break;
    case ACIS_COLL_GATHER:
    case ACIS_COLL_ALLGATHER:
        if (base == ACIS_COLL_ALLGATHER || k->rank == k->root)
            memcpy(rbuf + (size_t)k->rank * (size_t)k->count * ext, sbuf,
                   (size_t)k->count * ext);
        break;
    case ACIS_COLL_GATHERV:
    case ACIS_COLL_ALLGATHERV:
        if (base == ACIS_COLL_ALLGATHERV || k->rank == k->root)
            memcpy(rbuf + (size_t)displs[k->rank] * ext, sbuf, (size_t)counts[k->rank] * ext);
        break;
    default:
        break;
    }
}

/* Call one entry point through acis (pm = 0) or MPICH (pm = 1), in the
 * form of k->coll: blocking; nonblocking then MPI_Wait; persistent init,
 * MPI_Start, MPI_Wait, MPI_Request_free. */
#define DO(N, IN, ...)                                                           \
    (form == ACIS_FORM_BLOCKING                                                \
         ? (pm ? PMPI_##N(__VA_ARGS__) : MPI_##N(__VA_ARGS__))                  \
     : form == ACIS_FORM_NONBLOCKING                                            \
         ? (pm ? PMPI_##IN(__VA_ARGS__, &req) : MPI_##IN(__VA_ARGS__, &req))    \
         : (pm ? PMPI_##N##_init(__VA_ARGS__, MPI_INFO_NULL, &req)              \
               : MPI_##N##_init(__VA_ARGS__, MPI_INFO_NULL, &req)))

static int run(const struct tcase *k, int pm, char *sbuf, char *rbuf)
{
    acis_coll_t base = base_of(k->coll);
    int form = acis_coll_form(k->coll);
    MPI_Datatype t = k->t->type;
    MPI_Op op = k->op;
    MPI_Comm comm = k->comm;
    int n = k->count, root = k->root, me = k->rank == k->root;
    const void *s = k->inplace ? MPI_IN_PLACE : sbuf;
    const void *rs = k->inplace && !me ? sbuf : s;        /* rooted: in place at root only */
    int rc[64], counts[64], displs[64];
    MPI_Request req = MPI_REQUEST_NULL;
    int err;

    rs_counts(k, rc);
    v_layout(k, counts, displs);
    switch (base) {
    case ACIS_COLL_BARRIER:
        err = DO(Barrier, Ibarrier, comm);
        break;
    case ACIS_COLL_BCAST:
        if (me)
            memcpy(rbuf, sbuf, (size_t)n * (size_t)k->t->extent);
        err = DO(Bcast, Ibcast, rbuf, n, t, root, comm);
        break;
    case ACIS_COLL_REDUCE:                   /* MPICH's run never in place: see mpich_bug() */
        err = DO(Reduce, Ireduce, pm ? sbuf : rs, rbuf, n, t, op, root, comm);
        break;
    case ACIS_COLL_ALLREDUCE:
        err = DO(Allreduce, Iallreduce, s, rbuf, n, t, op, comm);
        break;
    case ACIS_COLL_SCAN:
        err = DO(Scan, Iscan, s, rbuf, n, t, op, comm);
        break;
    case ACIS_COLL_EXSCAN:
        err = DO(Exscan, Iexscan, s, rbuf, n, t, op, comm);
        break;
    case ACIS_COLL_REDUCE_SCATTER_BLOCK:
        err = DO(Reduce_scatter_block, Ireduce_scatter_block, s, rbuf, n, t, op, comm);
        break;
    case ACIS_COLL_REDUCE_SCATTER:
        err = DO(Reduce_scatter, Ireduce_scatter, s, rbuf, rc, t, op, comm);
        break;
    case ACIS_COLL_GATHER:
        err = DO(Gather, Igather, rs, n, t, rbuf, n, t, root, comm);
        break;
    case ACIS_COLL_GATHERV:
        err = DO(Gatherv, Igatherv, rs, counts[k->rank], t, rbuf, counts, displs, t, root, comm);
        break;
    case ACIS_COLL_SCATTER:
        err = DO(Scatter, Iscatter, sbuf, n, t, k->inplace && me ? MPI_IN_PLACE : rbuf, n, t,
                 root, comm);
        break;
    case ACIS_COLL_SCATTERV:
        err = DO(Scatterv, Iscatterv, sbuf, counts, displs, t,
                 k->inplace && me ? MPI_IN_PLACE : rbuf, counts[k->rank], t, root, comm);
        break;
    case ACIS_COLL_ALLGATHER:
        err = DO(Allgather, Iallgather, s, n, t, rbuf, n, t, comm);
        break;
    case ACIS_COLL_ALLGATHERV:
        err = DO(Allgatherv, Iallgatherv, s, counts[k->rank], t, rbuf, counts, displs, t, comm);
        break;
    default:
        return MPI_ERR_OTHER;
    }
    if (err == MPI_SUCCESS && form == ACIS_FORM_PERSISTENT)
        err = pm ? PMPI_Start(&req) : MPI_Start(&req);
    if (err == MPI_SUCCESS && req != MPI_REQUEST_NULL)
        err = pm ? PMPI_Wait(&req, MPI_STATUS_IGNORE) : MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS && form == ACIS_FORM_PERSISTENT)
        err = pm ? PMPI_Request_free(&req) : MPI_Request_free(&req);
    return err;
}

/* What this build must decide for the case. */
static acis_reason_t expected(const struct tcase *k, int user_op)
{
    acis_coll_t base = base_of(k->coll);
    acis_reason_t cr = k->comm_reason;
    if (cr == ACIS_REASON_DISABLED || cr == ACIS_REASON_NO_DEVICE ||
        cr == ACIS_REASON_INTERCOMM || cr == ACIS_REASON_SINGLE_RANK)
        return cr;
    if (acis_coll_form(k->coll) == ACIS_FORM_PERSISTENT && !opt.strict)
        return ACIS_REASON_PERSISTENT;
    if (!opt.offload[k->coll])
        return k->coll != base && opt.offload[base] ? ACIS_REASON_NONBLOCKING
                                                    : ACIS_REASON_NOT_OFFLOADABLE;
    if (user_op)
        return ACIS_REASON_OP_USER;
    return cr;
}

static acis_reason_t decision(const struct acis_coll_stats *a,
                              const struct acis_coll_stats *b)
{
    if (b->offloaded == a->offloaded + 1)
        return ACIS_REASON_NONE;
    for (int r = 1; r < ACIS_REASON_COUNT; r++)
        if (b->by_reason[r] == a->by_reason[r] + 1)
            return (acis_reason_t)r;
    return ACIS_REASON_COUNT;                    /* not counted at all */
}

static void fail(const struct tcase *k, const char *what, long detail)
{
    opt.failures++;
    if (opt.failures <= 20)
        fprintf(stderr, "coll_check[%d]: FAIL %s %s %s count %d root %d%s on %s: %s (%ld)\n",
                opt.rank, acis_coll_name(k->coll), k->t ? k->t->name : "-",
                k->opname ? k->opname : "", k->count, k->root,
                k->inplace ? " in-place" : "", k->commname, what, detail);
}

/* Cases MPICH 4.0.2 itself gets wrong, so there is no reference to compare
 * with.  (1) MPI_Reduce with MPI_IN_PLACE at a root other than 0 crashes
 * once the message passes about 2 KiB; the reference run avoids
 * MPI_IN_PLACE, so only calls acis hands to MPICH are skipped.  (2)
 * MPI_Scatter and MPI_Gather of a type with holes (MPI_DOUBLE_INT,
 * MPI_SHORT_INT ...) fail with "Message truncated" whenever the binomial
 * tree forwards blocks (root other than 0, or more than 2 ranks) and the
 * blocks are large: seen from 6400 bytes per rank at 4 ranks (4800
 * passed) and above 8 KiB at 2; so from 4 KiB. */
static int mpich_bug(const struct tcase *k, int user_op)
{
    acis_coll_t base = base_of(k->coll);
    size_t bytes = (size_t)k->count * (size_t)k->t->extent;
    int holes = k->t->kind == TK_PAIR &&
                (k->t->idx_off != k->t->width || k->t->idx_off + 4 != k->t->extent);
    int to_mpich = opt.may_redo || expected(k, user_op) != ACIS_REASON_NONE;
    if (base == ACIS_COLL_REDUCE && k->inplace && k->root != 0 && bytes > 1024)
        return to_mpich;
    return (base == ACIS_COLL_SCATTER || base == ACIS_COLL_GATHER ||
            base == ACIS_COLL_SCATTERV || base == ACIS_COLL_GATHERV) && holes &&
           (k->root != 0 || k->size > 2) && bytes > 4096;
}

/* What gather or scatter must produce, from the data pattern every rank
 * knows (for the cases MPICH cannot be asked). */
static void local_reference(const struct tcase *k, char *rbuf, size_t bytes)
{
    acis_coll_t base = base_of(k->coll);
    size_t n = buf_elems(k), ext = (size_t)k->t->extent;
    char *data = malloc(n * ext);
    int counts[64], displs[64], v = vform(base);
    v_layout(k, counts, displs);
    if (!v)
        for (int q = 0; q < k->size; q++) {
            counts[q] = k->count;
            displs[q] = q * k->count;
        }
    memset(rbuf, 0x5a, bytes);
    if ((base == ACIS_COLL_GATHER || base == ACIS_COLL_GATHERV) && k->rank == k->root) {
        for (int q = 0; q < k->size; q++) {
            tfill(k->t, data, n, q, k->count);
            memcpy(rbuf + (size_t)displs[q] * ext, data, (size_t)counts[q] * ext);
        }
    } else if ((base == ACIS_COLL_SCATTER || base == ACIS_COLL_SCATTERV) &&
               !(k->inplace && k->rank == k->root)) {
        tfill(k->t, data, n, k->root, k->count);
        memcpy(rbuf, data + (size_t)displs[k->rank] * ext, (size_t)counts[k->rank] * ext);
    }
    free(data);
}

static void one_case(struct tcase *k, int user_op)
{
    size_t bytes = buf_elems(k) * (size_t)(k->t ? k->t->extent : 1);
    char *sbuf = malloc(bytes), *rbuf_a = malloc(bytes), *rbuf_b = malloc(bytes);
    static const struct ttype none = { "-", MPI_BYTE, TK_BYTE, 1, TK_BYTE, 0, 1 };
    const struct ttype *saved = k->t;
    struct acis_coll_stats before, after;

    if (!k->t)
        k->t = &none;
    int no_ref = mpich_bug(k, user_op);
    if (no_ref && (opt.may_redo || expected(k, user_op) != ACIS_REASON_NONE)) {
        opt.skipped++;                  /* acis would hand it to MPICH itself */
        k->t = saved;
        free(sbuf);
        free(rbuf_a);
        free(rbuf_b);
        return;
    }
    opt.cases++;
    if (opt.trace)
        fprintf(stderr, "coll_check[%d]: %s %s %s count %d root %d%s on %s\n", opt.rank,
                acis_coll_name(k->coll), k->t->name, k->opname ? k->opname : "", k->count,
                k->root, k->inplace ? " in-place" : "", k->commname);
    prepare(k, sbuf, rbuf_a, bytes);
    acis_get_stats(k->coll, &before);
    int ea = run(k, 0, sbuf, rbuf_a);
    acis_get_stats(k->coll, &after);
    int eb = MPI_SUCCESS;
    if (no_ref) {
        local_reference(k, rbuf_b, bytes);
    } else {
        prepare(k, sbuf, rbuf_b, bytes);
        eb = run(k, 1, sbuf, rbuf_b);
    }
    if (ea != MPI_SUCCESS || eb != MPI_SUCCESS)
        fail(k, "MPI error", ea != MPI_SUCCESS ? ea : eb);

    acis_coll_t base = base_of(k->coll);
    int skip = base == ACIS_COLL_EXSCAN && k->rank == 0;   /* undefined there */
    long at = skip ? -1 : tdiff(k->t, rbuf_a, rbuf_b, buf_elems(k));
    if (at >= 0)
        fail(k, "result differs from MPICH at element", at);
    acis_reason_t want = expected(k, user_op), got = decision(&before, &after);
    if (want != got) {
        char what[160];
        snprintf(what, sizeof what, "decision %s, expected %s",
                 got < ACIS_REASON_COUNT ? acis_reason_name(got) : "uncounted",
                 acis_reason_name(want));
        fail(k, what, 0);
    }
    if (base == ACIS_COLL_ALLREDUCE || base == ACIS_COLL_ALLGATHER ||
        base == ACIS_COLL_ALLGATHERV || base == ACIS_COLL_BCAST) {
        size_t m = (size_t)k->count * (base == ACIS_COLL_ALLGATHER ? (size_t)k->size : 1);
        if (base == ACIS_COLL_ALLGATHERV)
            m = buf_elems(k);                 /* gaps hold the same sentinel everywhere */
        uint64_t d = tdigest(k->t, rbuf_a, m);
        uint64_t both[2] = { d, ~d }, agg[2];
        PMPI_Allreduce(both, agg, 2, MPI_UINT64_T, MPI_MAX, k->comm);
        if (agg[0] != d || agg[1] != ~d)
            fail(k, "result not identical on every rank", 0);
    }
    k->t = saved;
    free(sbuf);
    free(rbuf_a);
    free(rbuf_b);
}

/* Types and ops to try for a collective. */
static void for_types_ops(struct tcase *k)
{
    acis_coll_t base = base_of(k->coll);
    static const char *const quick_red[][2] = {
        { "MPI_INT", "MPI_SUM" }, { "MPI_DOUBLE", "MPI_SUM" },
        { "MPI_CHAR", "MPI_MAX" }, { "MPI_DOUBLE_INT", "MPI_MAXLOC" },
    };
    static const char *const quick_move[] = { "MPI_INT", "MPI_DOUBLE_INT", "MPI_CHAR" };

    if (base == ACIS_COLL_BARRIER) {
        k->t = NULL;
        k->opname = NULL;
        one_case(k, 0);
        return;
    }
    for (int ti = 0; ti < nttypes; ti++) {
        k->t = &ttypes[ti];
        if (!reduction(base)) {
            int pick = opt.full;
            for (size_t q = 0; !pick && q < sizeof quick_move / sizeof *quick_move; q++)
                pick = strcmp(quick_move[q], k->t->name) == 0;
            if (pick) {
                k->opname = NULL;
                one_case(k, 0);
            }
            continue;
        }
        for (int oi = 0; oi < ntops; oi++) {
            if (!top_valid(k->t, tops[oi].op))
                continue;
            int pick = opt.full;
            for (size_t q = 0; !pick && q < sizeof quick_red / sizeof *quick_red; q++)
                pick = strcmp(quick_red[q][0], k->t->name) == 0 &&
                       strcmp(quick_red[q][1], tops[oi].name) == 0;
            if (!pick)
                continue;
            k->op = tops[oi].op;
            k->opname = tops[oi].name;
            one_case(k, 0);
        }
    }
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* A user-defined op must go to software, on every rank alike. */
static void user_op_case(struct tcase *k)
{
    MPI_Op op;
    MPI_Op_create(user_sum, 1, &op);
    k->coll = ACIS_COLL_ALLREDUCE;
    k->t = &ttypes[tfind("MPI_INT")];
    k->op = op;
    k->opname = "user op";
    k->count = 10;
    k->inplace = 0;
    one_case(k, 1);
    MPI_Op_free(&op);
}

/* Ranks describing the same data with different types (3 x MPI_INT here,
 * one contiguous type of 3 MPI_INT there) must decide alike. */
static void mixed_types_case(struct tcase *k)
{
    MPI_Datatype three;
    int buf[3], ref[3];
    struct acis_coll_stats before, after;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    int odd = k->rank % 2;
    for (int i = 0; i < 3; i++)
        buf[i] = ref[i] = k->rank == 0 ? 10 + i : -1;
    opt.cases++;
    k->coll = ACIS_COLL_BCAST;
    k->count = 3;
    k->t = &ttypes[tfind("MPI_INT")];
    k->opname = "mixed type handles";
    k->root = 0;
    k->inplace = 0;
    acis_get_stats(ACIS_COLL_BCAST, &before);
    MPI_Bcast(buf, odd ? 1 : 3, odd ? three : MPI_INT, 0, k->comm);
    acis_get_stats(ACIS_COLL_BCAST, &after);
    PMPI_Bcast(ref, 3, MPI_INT, 0, k->comm);
    if (memcmp(buf, ref, sizeof buf) != 0)
        fail(k, "result differs", 0);
    acis_reason_t want = expected(k, 0), got = decision(&before, &after);
    if (want != got)
        fail(k, "decision differs from the expected one", (long)got);
    MPI_Type_free(&three);
}

/* With --offloaded: comm (key) has a row exactly when the list names it,
 * so a library that refused every communicator cannot pass; without it,
 * no communicator may be refused its row. */
static void check_offloaded(const char *key, const char *name, int offl, acis_reason_t why)
{
    int any = 0;
    for (int c = 0; c < ACIS_COLL_COUNT; c++)
        any |= opt.offload[c];
    if (!opt.offloaded && any &&
        (why == ACIS_REASON_COMM_SETUP || why == ACIS_REASON_NO_DEVICE ||
         why == ACIS_REASON_TABLE_FULL || why == ACIS_REASON_DEVICE_FAILED ||
         why == ACIS_REASON_BROKEN)) {
        opt.failures++;
        fprintf(stderr, "coll_check[%d]: FAIL %s has no switch row: %s\n", opt.rank, name,
                acis_reason_name(why));
    }
    if (!opt.offloaded)
        return;
    size_t l = strlen(key);
    int want = 0;
    for (const char *p = opt.offloaded; *p; p += strcspn(p, ","), p += *p == ',')
        want |= strncmp(p, key, l) == 0 && (p[l] == ',' || p[l] == 0);
    if (want != offl) {
        opt.failures++;
        fprintf(stderr, "coll_check[%d]: FAIL %s %s offloaded\n", opt.rank, name,
                want ? "should be" : "should not be");
    }
}

static void for_comm(MPI_Comm comm, const char *key, const char *name)
{
    struct tcase k = { .comm = comm, .commname = name };
    MPI_Comm_size(comm, &k.size);
    MPI_Comm_rank(comm, &k.rank);
    int offl = acis_comm_offloaded(comm, &k.comm_reason) == 1;
    check_offloaded(key, name, offl, k.comm_reason);

    for (int c = 0; c < ACIS_COLL_COUNT; c++) {
        if (opt.restrict_colls && !opt.only[c])
            continue;
        k.coll = (acis_coll_t)c;
        acis_coll_t base = base_of(k.coll);
        int roots[3] = { 0, k.size - 1, k.size / 2 }, nroots = rooted(base) ? 3 : 1;
        if (!opt.full && nroots > 1)
            nroots = 2;
        for (int ci = 0; ci < opt.ncounts; ci++) {
            k.count = base == ACIS_COLL_BARRIER ? 0 : opt.counts[ci];
            for (int ri = 0; ri < nroots; ri++) {
                k.root = roots[ri];
                if (ri > 0 && roots[ri] == roots[ri - 1])
                    continue;
                for (k.inplace = 0; k.inplace <= inplace_allowed(base); k.inplace++)
                    for_types_ops(&k);
            }
            if (base == ACIS_COLL_BARRIER)
                break;
        }
    }
    user_op_case(&k);
    mixed_types_case(&k);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &opt.rank);
    parse_args(argc, argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for_comm(MPI_COMM_WORLD, "world", "MPI_COMM_WORLD");
    MPI_Comm rev, halves;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -opt.rank, &rev);   /* ranks reversed */
    MPI_Comm_set_name(rev, "reversed");
    for_comm(rev, "reversed", "reversed");
    MPI_Comm_free(&rev);
    if (size >= 4) {
        MPI_Comm_split(MPI_COMM_WORLD, opt.rank % 2, opt.rank, &halves);
        for_comm(halves, "halves", "odd/even halves");
        MPI_Comm_free(&halves);
    }

    struct acis_host_stats hs;
    acis_get_host_stats(&hs);
    long mine[11] = { opt.cases, opt.failures, opt.skipped, (long)hs.retransmits,
                      (long)hs.abstained, (long)hs.redone, (long)hs.short_path,
                      (long)hs.early_return, (long)hs.own_block, (long)hs.home_answers,
                      (long)hs.home_requests },
         tot[11];
    PMPI_Reduce(mine, tot, 11, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    long foreign[2] = { (long)hs.packets_foreign, (long)hs.packets_foreign }, ftot[2];
    PMPI_Reduce(&foreign[0], &ftot[0], 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&foreign[1], &ftot[1], 1, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
    long total_f = tot[1];
    if (opt.rank == 0)
        printf("coll_check: %d ranks, %ld cases, %ld failures, %ld skipped (MPICH 4.0.2 bugs), "
               "%ld retransmissions, %ld abstained, %ld redone, %ld on the short path, "
               "%ld returned early, %ld roots kept their block, %ld answers handed over "
               "in place, %ld requests taken in place, %ld foreign datagrams dropped (fewest "
               "on one rank: %ld)\n", size, tot[0], tot[1], tot[2], tot[3], tot[4], tot[5],
               tot[6], tot[7], tot[8], tot[9], tot[10], ftot[0], ftot[1]);
    MPI_Finalize();
    return opt.rank == 0 && total_f ? 1 : 0;
}
