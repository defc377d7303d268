/* model.c -- the LogGP model of model.h: the path a message or an
 * offloaded collective takes through a topology, and the time of one
 * collective call in MPICH's software algorithms and in the switch.
 *
 * Software: every step of an algorithm costs O_s + m G + L + O_r on the
 * critical path (seed 000 eq. 3.2), L being the longest path between two
 * hosts (LogGP's L is an upper bound); reductions add the host's fold
 * time.  The algorithm is the one MPICH 4.0.2 picks by default with one
 * process per node (see the thresholds below).
 * Switch: each host pays O_s once and O_r once; the data crosses its
 * link once (the bytes it sends or receives, whichever is more), and
 * the latency of the path up the aggregation tree and back down, every
 * switch adding its pipeline delay (eq. 3.3, 3.5): switches stream and
 * fold at line rate, so there is no g and no per-step overhead. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* MPICH 4.0.2's default choice for a blocking collective on P processes,
 * one per node, with a built-in commutative op.  MPI_Xxx goes to the ch4
 * device (MPIR_CVAR_DEVICE_COLLECTIVES=percoll and
 * MPIR_CVAR_XXX_DEVICE_COLLECTIVE=true); ch4's tuning file
 * (maint/tuning/coll/ch4/generic.json) hands a communicator with no node
 * hierarchy (one process per node makes none: src/mpi/comm/commutil.c)
 * to the netmod, which calls MPIR_Xxx_impl; MPIR_CVAR_XXX_INTRA_ALGORITHM
 * = auto then takes the algorithm from maint/tuning/coll/mpir/generic.json
 * as src/mpi/coll/src/csel.c reads it (compiled into libmpich: test/
 * acis_model.sh reads the rules back out of the installed one).  The
 * numbers are that file's; the classic CVARs
 * (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE=2048 and friends) appear only in
 * 4.0.2's nonblocking, node-aware (smp) and group code.  avg_msg_size is k;
 * total_msg_size is k P for allgather and the whole vector for
 * reduce_scatter; count<pow2 compares the element count with the largest
 * power of two <= P. */
#define BCAST_MIN_PROCS  8       /* comm_size<8: binomial at any size */
#define BCAST_SHORT      12288   /* avg_msg_size<=12288: binomial */
#define BCAST_LONG       524288  /* pow2 and avg_msg_size<=524288: scatter +
                                    recursive doubling; above, or not pow2,
                                    scatter + ring */
#define ALLREDUCE_TINY   8       /* avg_msg_size<=8 or count<pow2: recursive
                                    doubling; else Rabenseifner */
#define REDUCE_SHORT     2048    /* avg_msg_size<=2048 or count<pow2:
                                    binomial; else reduce-scatter + gather */
#define ALLGATHER_SHORT  81920   /* not pow2, total_msg_size<81920: Bruck */
#define ALLGATHER_LONG   524288  /* pow2, total_msg_size<524288: recursive
                                    doubling; else ring */
#define REDSCAT_LONG     524288  /* total_msg_size<524288: recursive
                                    halving; else pairwise */

void model_defaults(struct model_params *m)
{
    memset(m, 0, sizeof *m);
    m->latency = 440e-9;
    m->per_byte = 8.0 / 95.9e9;
    m->hop = 52e-9;
    m->o_send = m->o_recv = 14.8e-6;
    m->gap = 0;
    m->host_per_byte = m->per_byte;
    m->reduce_per_byte = 1.0 / 10e9;
    m->type_size = 8;
}

static const char *const coll_names[MODEL_COLL_COUNT] = {
    "allreduce", "reduce", "bcast", "barrier",
    "allgather", "gather", "scatter", "reduce_scatter",
};

const char *model_coll_name(enum model_coll c)
{
    return (unsigned)c < MODEL_COLL_COUNT ? coll_names[c] : "?";
}

int model_coll_lookup(const char *s)
{
    for (int c = 0; c < MODEL_COLL_COUNT; c++)
        if (strcmp(s, coll_names[c]) == 0)
            return c;
    return -1;
}

/* ------------------------------------------------------------ topology */

/* The torus of P switches with the smallest diameter (then the flattest
 * largest side): X >= Y >= Z, X * Y * Z = P. */
static void torus_dims(unsigned long P, unsigned dims[3])
{
    unsigned long best = (unsigned long)-1;
    for (unsigned long z = 1; z * z * z <= P; z++) {
        if (P % z)
            continue;
        for (unsigned long y = z; y * y <= P / z; y++) {
            if ((P / z) % y)
                continue;
            unsigned long x = P / z / y;
            unsigned long d = x / 2 + y / 2 + z / 2;
            if (d < best) {
                best = d;
                dims[0] = (unsigned)x, dims[1] = (unsigned)y, dims[2] = (unsigned)z;
            }
        }
    }
}

int model_path(const struct model_topo *t, unsigned long P, struct model_path *out)
{
    memset(out, 0, sizeof *out);
    if (P < 1)
        return -1;
    switch (t->kind) {
    case MODEL_STAR:
        out->p2p_links = out->coll_links = 2;
        out->p2p_switches = out->coll_switches = 1;
        return 0;
    case MODEL_FATTREE: {
        /* a folded Clos of h levels: half of a switch's ports face down
         * except at the top, so it holds 2 (R/2)^h hosts */
        if (t->radix < 4)
            return -1;
        unsigned h = 1;
        for (double cap = t->radix; cap < (double)P; cap *= t->radix / 2)
            h++;
        out->p2p_links = out->coll_links = 2 * h;
        out->p2p_switches = out->coll_switches = 2 * h - 1;
        return 0;
    }
    case MODEL_TORUS: {
        /* one switch per host; a message crosses at most D = sum of
         * floor(side / 2) switch-switch links, a collective climbs a
         * tree of depth D to the middle switch and comes back down */
        unsigned *d = out->dims;
        if (t->dims[0]) {
            if ((unsigned long)t->dims[0] * t->dims[1] * t->dims[2] != P)
                return -1;
            memcpy(d, t->dims, sizeof out->dims);
        } else {
            torus_dims(P, d);
        }
        unsigned D = d[0] / 2 + d[1] / 2 + d[2] / 2;
        out->p2p_links = D + 2;
        out->p2p_switches = D + 1;
        out->coll_links = 2 * D + 2;
        out->coll_switches = 2 * D + 1;
        return 0;
    }
    }
    return -1;
}

int model_topo_parse(const char *s, struct model_topo *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    char *end;
    if (strcmp(s, "star") == 0) {
        t->kind = MODEL_STAR;
        return 0;
    }
    if (strncmp(s, "fattree", 7) == 0 && (s[7] == '\0' || s[7] == ':')) {
        t->kind = MODEL_FATTREE;
        t->radix = 32;
        if (s[7] == ':') {
            unsigned long r = strtoul(s + 8, &end, 10);
            if (end == s + 8 || *end || r < 4 || r > 1024 || r % 2)
                goto bad;
            t->radix = (unsigned)r;
        }
        return 0;
    }
    if (strncmp(s, "torus", 5) == 0 && (s[5] == '\0' || s[5] == ':')) {
        t->kind = MODEL_TORUS;
        if (s[5] == '\0')
            return 0;
        const char *p = s + 6;
        for (int i = 0; i < 3; i++) {
            unsigned long v = strtoul(p, &end, 10);
            if (end == p || v < 1 || v > 4096 || *end != (i < 2 ? 'x' : '\0'))
                goto bad;
            t->dims[i] = (unsigned)v;
            p = end + 1;
        }
        return 0;
    }
bad:
    snprintf(err, errlen, "bad topology '%s' (allowed: star, fattree, fattree:R with R even "
             "in 4..1024, torus, torus:XxYxZ)", s);
    return -1;
}

void model_topo_name(const struct model_topo *t, char *buf, size_t len)
{
    if (t->kind == MODEL_STAR)
        snprintf(buf, len, "star");
    else if (t->kind == MODEL_FATTREE)
        snprintf(buf, len, "fattree:%u", t->radix);
    else if (t->dims[0])
        snprintf(buf, len, "torus:%ux%ux%u", t->dims[0], t->dims[1], t->dims[2]);
    else
        snprintf(buf, len, "torus");
}

/* ---------------------------------------------------------- collectives */

/* One software message of bytes over the longest path; one step's fixed
 * cost (the bytes are counted apart when a step's size varies). */
static double msg(const struct model_params *m, double L, double bytes)
{
    return m->o_send + bytes * m->host_per_byte + L + m->o_recv;
}

static double step(const struct model_params *m, double L)
{
    return m->o_send + L + m->o_recv;
}

static unsigned ceil_log2(unsigned long P)
{
    unsigned l = 0;
    while ((1ul << l) < P)
        l++;
    return l;
}

/* Binomial tree from the root (eq. 3.2 and 3.4): the slower of the last
 * process to receive and the root, which sends lg messages in turn. */
static double binomial_bcast(const struct model_params *m, double L, unsigned lg, double k)
{
    double leaf = lg * msg(m, L, k);
    double gap = m->gap > m->o_send ? m->gap : m->o_send;
    double root = m->o_send + (lg ? lg - 1 : 0) * gap + lg * k * m->host_per_byte;
    return leaf > root ? leaf : root;
}

/* Reduce-scatter by recursive halving among p2 processes (lgf steps),
 * then the matching allgather or gather by recursive doubling: the
 * bandwidth half of Rabenseifner's algorithm. */
static double rabenseifner(const struct model_params *m, double L, unsigned lgf,
                           unsigned long p2, double k)
{
    double part = k * (double)(p2 - 1) / (double)p2;
    return 2 * lgf * step(m, L) + part * (2 * m->host_per_byte + m->reduce_per_byte);
}

static double software(const struct model_params *m, double L, enum model_coll c,
                       unsigned long P, double k, const char **alg)
{
    unsigned lg = ceil_log2(P);
    unsigned lgf = (1ul << lg) == P ? lg : lg - 1;
    unsigned long p2 = 1ul << lgf;
    int pof2 = p2 == P;
    double fold = k * m->reduce_per_byte;
    /* non-power-of-two: the extra processes fold into partners first
     * and get the result last (two more steps of the whole vector) */
    double extra = pof2 ? 0 : 2 * msg(m, L, k) + fold;

    /* count<pow2: fewer elements than the power-of-two group has ranks */
    int few = k < (double)p2 * m->type_size;

    switch (c) {
    case MODEL_BARRIER:
        *alg = "dissemination";
        return lg * step(m, L);
    case MODEL_BCAST: {
        if (P < BCAST_MIN_PROCS || k <= BCAST_SHORT) {
            *alg = "binomial";
            return binomial_bcast(m, L, lg, k);
        }
        /* scatter by binomial tree, then allgather the pieces */
        double part = k * (double)(P - 1) / (double)P * m->host_per_byte;
        if (pof2 && k <= BCAST_LONG) {
            *alg = "scatter_recursive_doubling_allgather";
            return 2 * lg * step(m, L) + 2 * part;
        }
        *alg = "scatter_ring_allgather";
        return lg * step(m, L) + part + (double)(P - 1) * msg(m, L, k / (double)P);
    }
    case MODEL_ALLREDUCE:
        if (k <= ALLREDUCE_TINY || few) {
            *alg = "recursive_doubling";
            return extra + lgf * (msg(m, L, k) + fold);
        }
        *alg = "reduce_scatter_allgather";
        return extra + rabenseifner(m, L, lgf, p2, k);
    case MODEL_REDUCE:
        if (k <= REDUCE_SHORT || few) {
            *alg = "binomial";
            return lg * (msg(m, L, k) + fold);
        }
        *alg = "reduce_scatter_gather";
        return (pof2 ? 0 : msg(m, L, k) + fold) + rabenseifner(m, L, lgf, p2, k);
    case MODEL_ALLGATHER: {
        double n = k * (double)P, rest = k * (double)(P - 1) * m->host_per_byte;
        if (n < ALLGATHER_LONG && pof2) {
            *alg = "recursive_doubling";
            return lg * step(m, L) + rest;
        }
        if (n < ALLGATHER_SHORT) {
            *alg = "brucks";
            return lg * step(m, L) + rest;
        }
        *alg = "ring";
        return (double)(P - 1) * msg(m, L, k);
    }
    case MODEL_GATHER:
    case MODEL_SCATTER:
        /* the root receives (sends) the other P - 1 blocks in lg messages */
        *alg = "binomial";
        return lg * step(m, L) + k * (double)(P - 1) * m->host_per_byte;
    case MODEL_REDUCE_SCATTER:
        if (k < REDSCAT_LONG) {
            *alg = "recursive_halving";
            return (pof2 ? 0 : msg(m, L, k) + fold + msg(m, L, k / (double)P)) +
                   lgf * step(m, L) +
                   k * (double)(p2 - 1) / (double)p2 * (m->host_per_byte + m->reduce_per_byte);
        }
        *alg = "pairwise";
        return (double)(P - 1) * (msg(m, L, k / (double)P) + k / (double)P * m->reduce_per_byte);
    case MODEL_COLL_COUNT:
        break;
    }
    *alg = "?";
    return 0;
}

/* The bytes that cross the busiest host link once in the switch: a root
 * or every member takes all P blocks in gathers and scatters. */
static double inswitch_bytes(enum model_coll c, unsigned long P, double k)
{
    switch (c) {
    case MODEL_BARRIER:
        return 0;
    case MODEL_ALLGATHER:
    case MODEL_GATHER:
    case MODEL_SCATTER:
        return k * (double)P;
    default:
        return k;
    }
}

void model_coll(const struct model_params *m, const struct model_path *path,
                enum model_coll c, unsigned long P, double k, struct model_result *out)
{
    double Lp = path->p2p_links * m->latency + path->p2p_switches * m->hop;
    double Lc = path->coll_links * m->latency + path->coll_switches * m->hop;
    if (P < 2) {
        out->software = out->inswitch = 0;
        out->algorithm = "none";
        return;
    }
    out->software = software(m, Lp, c, P, k, &out->algorithm);
    out->inswitch = m->o_send + inswitch_bytes(c, P, k) * m->per_byte + Lc + m->o_recv;
}
