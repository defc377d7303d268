/* hier.c -- the node hierarchy (MPIR_CVAR_OFFLOAD_HIERARCHY=node): the
 * ranks of a node combine through shared memory to a leader, only the
 * leaders use the network switch, and the result fans out on the node --
 * as SHARP's and the seed's "parent" processes do, so a switch port serves
 * a node, not a core.
 *
 * For a communicator C: N = its ranks on this node (MPI_COMM_TYPE_SHARED),
 * L = the node leaders (node rank 0).  Allreduce = MPICH's shared-memory
 * reduce to the leader on N, the leaders' allreduce in the switch on L,
 * MPICH's bcast on N; Bcast and Barrier likewise.  The intra-node steps are
 * MPICH's own shared-memory algorithms (the fastest there are on a node);
 * the step between nodes is acis's.  Results are the same on every rank
 * (one fold, broadcast) and every run (fixed algorithms on fixed groups).
 * Collectives without a hierarchical plan, nonblocking ones, and
 * communicators with one rank per node or one node run flat.
 *
 * The state is built collectively at C's first hierarchical collective
 * (every member makes the same call, as for lazy table rows), cached on C
 * with an attribute of its own and freed with it. */
#include "config.h"

#include <stdlib.h>

#include "offload/offload.h"
#include "util/util.h"

struct acis_hier {
    int usable;               /* 0: C runs flat */
    MPI_Comm node, leaders;   /* leaders is MPI_COMM_NULL off the leaders */
    int node_rank;
    int *leader_of;           /* C rank -> L rank of its node's leader */
    int *node_rank_of;        /* C rank -> its rank on its node */
};

static int hier_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    struct acis_hier *h = val;
    (void)comm;
    (void)keyval;
    (void)extra;
    if (h->node != MPI_COMM_NULL)
        PMPI_Comm_free(&h->node);
    if (h->leaders != MPI_COMM_NULL) {
        PMPI_Comm_free(&h->leaders);     /* ours: its switch row goes back */
        if (acis_oc.mode == ACIS_MODE_ACTIVE)
            acis_comm_reap(0);           /* as MPI_Comm_free (comm_life.c) */
    }
    free(h->leader_of);
    free(h->node_rank_of);
    free(h);
    return MPI_SUCCESS;
}

int acis_hier_init(void)
{
    acis_oc.hier_keyval = MPI_KEYVAL_INVALID;
    if (!acis_oc.hier)
        return 0;
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, hier_delete, &acis_oc.hier_keyval,
                                   NULL) == MPI_SUCCESS ? 0 : -1;
}

void acis_hier_release(MPI_Comm comm)
{
    void *val;
    int found = 0;
    if (acis_oc.hier_keyval != MPI_KEYVAL_INVALID &&
        PMPI_Comm_get_attr(comm, acis_oc.hier_keyval, &val, &found) == MPI_SUCCESS && found)
        PMPI_Comm_delete_attr(comm, acis_oc.hier_keyval);
}

void acis_hier_finalize(void)
{
    if (acis_oc.hier_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&acis_oc.hier_keyval);
}

/* Build C's state (collective over C).  Every member learns the same
 * facts through one allgather, so all agree whether C is usable. */
static struct acis_hier *setup(struct acis_comm *cs)
{
    struct acis_hier *h = calloc(1, sizeof *h);
    int mine[3], *all = malloc(sizeof(int) * 3 * (size_t)cs->size), lrank = -1, nsize;
    int failed = !h || !all, any;
    PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, cs->comm);
    if (failed)
        goto fail;
    h->node = h->leaders = MPI_COMM_NULL;
    PMPI_Comm_split_type(cs->comm, MPI_COMM_TYPE_SHARED, cs->rank, MPI_INFO_NULL, &h->node);
    PMPI_Comm_rank(h->node, &h->node_rank);
    PMPI_Comm_size(h->node, &nsize);
    PMPI_Comm_split(cs->comm, h->node_rank == 0 ? 0 : MPI_UNDEFINED, cs->rank, &h->leaders);
    PMPI_Comm_set_errhandler(h->node, MPI_ERRORS_RETURN);   /* C's handler, at the end */
    if (h->leaders != MPI_COMM_NULL) {
        PMPI_Comm_set_errhandler(h->leaders, MPI_ERRORS_RETURN);   /* and its dup's */
        PMPI_Comm_rank(h->leaders, &lrank);
    }
    PMPI_Bcast(&lrank, 1, MPI_INT, 0, h->node);    /* my node's leader's rank in L */
    mine[0] = lrank;
    mine[1] = h->node_rank;
    mine[2] = nsize;
    PMPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, cs->comm);
    h->leader_of = malloc(sizeof(int) * (size_t)cs->size);
    h->node_rank_of = malloc(sizeof(int) * (size_t)cs->size);
    int nodes = 0, widest = 0;
    for (int q = 0; q < cs->size; q++) {
        nodes += all[3 * q + 1] == 0;
        widest = all[3 * q + 2] > widest ? all[3 * q + 2] : widest;
    }
    failed = !h->leader_of || !h->node_rank_of;
    PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, cs->comm);
    h->usable = !any && nodes > 1 && widest > 1;
    for (int q = 0; h->usable && q < cs->size; q++) {
        h->leader_of[q] = all[3 * q];
        h->node_rank_of[q] = all[3 * q + 1];
    }
    free(all);
    return h;
fail:
    free(h);
    free(all);
    return NULL;
}

static struct acis_hier *hier_of(struct acis_comm *cs)
{
    void *val;
    int found = 0;
    if (PMPI_Comm_get_attr(cs->comm, acis_oc.hier_keyval, &val, &found) == MPI_SUCCESS && found)
        return val;
    struct acis_hier *h = setup(cs);
    if (h && PMPI_Comm_set_attr(cs->comm, acis_oc.hier_keyval, h) != MPI_SUCCESS) {
        hier_delete(cs->comm, acis_oc.hier_keyval, h, NULL);
        h = NULL;
    }
    return h;                   /* NULL on every member alike (setup agrees) */
}

/* The leaders' step: offloaded like any call (L has one rank per node, so
 * it runs flat), or MPICH if L cannot be offloaded.  If L broke
 * (fix.c) it fails on every leader alike; the error goes through C's
 * handler (by default the job ends there), and the node step still runs
 * so no rank of the node waits forever -- with MPI_ERRORS_RETURN those
 * ranks do not learn of it (docs/reliability.md).  N and L return errors
 * (MPI_ERRORS_RETURN) and acis_hier_run raises them on C. */
static int leaders_call(struct acis_call *lc)
{
    acis_reason_t r = acis_select(lc);
    if (r == ACIS_REASON_NONE)
        return acis_offload_flat(lc);
    if (r == ACIS_REASON_BROKEN)
        return MPI_ERR_INTERN;
    return lc->failed_over ? acis_call_redo(lc) : acis_call_pmpi(lc);
}

static int allreduce(const struct acis_call *c, const struct acis_hier *h)
{
    int at_leader = h->node_rank == 0;
    const void *s = c->sbuf;
    if (s == MPI_IN_PLACE && !at_leader)
        s = c->rbuf;                                  /* what this rank contributes */
    int rc = PMPI_Reduce(s, at_leader ? c->rbuf : NULL, c->scount, c->stype, c->op, 0,
                         h->node);
    if (rc == MPI_SUCCESS && at_leader) {
        struct acis_call lc = { .coll = ACIS_COLL_ALLREDUCE, .sbuf = MPI_IN_PLACE,
                                .rbuf = c->rbuf, .scount = c->scount, .stype = c->stype,
                                .op = c->op, .comm = h->leaders, .inner = 1 };
        rc = leaders_call(&lc);
    }
    int rn = PMPI_Bcast(c->rbuf, c->scount, c->stype, 0, h->node);
    return rc == MPI_SUCCESS ? rn : rc;
}

static int bcast(const struct acis_call *c, const struct acis_comm *cs, const struct acis_hier *h)
{
    int root_leader = h->leader_of[c->root];
    int my_leader = h->leader_of[cs->rank], here = root_leader == my_leader;
    int rc = MPI_SUCCESS;
    if (here)                                         /* the root's node first */
        rc = PMPI_Bcast(c->rbuf, c->scount, c->stype, h->node_rank_of[c->root], h->node);
    if (rc == MPI_SUCCESS && h->node_rank == 0) {
        struct acis_call lc = { .coll = ACIS_COLL_BCAST, .sbuf = c->rbuf, .rbuf = c->rbuf,
                                .scount = c->scount, .stype = c->stype, .root = root_leader,
                                .comm = h->leaders, .inner = 1 };
        rc = leaders_call(&lc);
    }
    if (!here) {
        int rn = PMPI_Bcast(c->rbuf, c->scount, c->stype, 0, h->node);
        rc = rc == MPI_SUCCESS ? rn : rc;
    }
    return rc;
}

static int barrier(const struct acis_call *c, const struct acis_hier *h)
{
    int rc = PMPI_Barrier(h->node);                   /* everyone here has entered */
    if (rc == MPI_SUCCESS && h->node_rank == 0) {
        struct acis_call lc = { .coll = ACIS_COLL_BARRIER, .comm = h->leaders, .inner = 1 };
        rc = leaders_call(&lc);                       /* ... and on every node */
    }
    int rn = PMPI_Barrier(h->node);
    return rc == MPI_SUCCESS ? rn : rc;
}

int acis_hier_run(struct acis_call *c, int *rc)
{
    if (!acis_oc.hier)
        return 0;
    if (c->coll != ACIS_COLL_ALLREDUCE && c->coll != ACIS_COLL_BCAST &&
        c->coll != ACIS_COLL_BARRIER)
        return 0;
    struct acis_hier *h = hier_of(c->cs);
    if (!h || !h->usable)
        return 0;
    ACIS_COUNT(hier_calls, 1);
    *rc = c->coll == ACIS_COLL_ALLREDUCE ? allreduce(c, h)
          : c->coll == ACIS_COLL_BCAST ? bcast(c, c->cs, h) : barrier(c, h);
    if (*rc != MPI_SUCCESS)
        *rc = acis_raise(c->comm, *rc);       /* a step's error, through C's handler */
    return 1;
}
