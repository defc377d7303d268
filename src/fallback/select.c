/* select.c -- acis_select(), the one place every intercepted collective
 * passes through: work out what the call moves, apply the policy, make
 * sure the communicator can be offloaded, count and report the decision. */
#include "config.h"

#include "commtable/commtable.h"
#include "fallback.h"
#include "util/util.h"

struct acis_fallback_ctx acis_fb;

static const int coll_cvar[ACIS_COLL_COUNT] = {
#define ACIS_COLL(id, name, blocking, cvar, form) ACIS_CV_OFFLOAD_##cvar,
#include "acis/colls.h"
#undef ACIS_COLL
};

static int base_kind(acis_coll_t base)
{
    switch (base) {
    case ACIS_COLL_BARRIER:              return ACIS_K_BARRIER;
    case ACIS_COLL_BCAST:                return ACIS_K_BCAST;
    case ACIS_COLL_REDUCE:               return ACIS_K_REDUCE;
    case ACIS_COLL_ALLREDUCE:            return ACIS_K_ALLREDUCE;
    case ACIS_COLL_GATHER:
    case ACIS_COLL_GATHERV:              return ACIS_K_GATHER;
    case ACIS_COLL_SCATTER:
    case ACIS_COLL_SCATTERV:             return ACIS_K_SCATTER;
    case ACIS_COLL_ALLGATHER:
    case ACIS_COLL_ALLGATHERV:           return ACIS_K_ALLGATHER;
    case ACIS_COLL_REDUCE_SCATTER:
    case ACIS_COLL_REDUCE_SCATTER_BLOCK: return ACIS_K_REDUCE_SCATTER;
    case ACIS_COLL_SCAN:                 return ACIS_K_SCAN;
    case ACIS_COLL_EXSCAN:               return ACIS_K_EXSCAN;
    default:                             return ACIS_K_NONE;
    }
}

/* Sum of n counts (64 bits: a sum beyond INT32_MAX is valid MPI, and
 * only the root of gatherv/scatterv sees it, so it must not change the
 * decision), -1 if any is negative. */
static int64_t count_sum(const int *counts, int n)
{
    int64_t sum = 0;
    if (!counts)
        return -1;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return -1;
        sum += counts[i];
    }
    return sum;
}

static int is_reduction(int kind)
{
    return kind == ACIS_K_REDUCE || kind == ACIS_K_ALLREDUCE ||
           kind == ACIS_K_REDUCE_SCATTER || kind == ACIS_K_SCAN ||
           kind == ACIS_K_EXSCAN;
}

/* Pick the (count, type) that describes one rank's share of the data, the
 * same on every rank by MPI's type-signature rules, and derive the message
 * size.  Returns -1 for arguments MPICH should reject itself. */
static int classify(struct acis_call *c, const struct acis_comm *cs)
{
    acis_coll_t base = acis_coll_blocking(c->coll);
    int rooted = base == ACIS_COLL_BCAST || base == ACIS_COLL_REDUCE ||
                 base == ACIS_COLL_GATHER || base == ACIS_COLL_SCATTER ||
                 base == ACIS_COLL_GATHERV || base == ACIS_COLL_SCATTERV;
    int is_root = rooted && cs->rank == c->root;
    int64_t count = c->scount, sum;
    uint64_t blocks = 1;

    c->kind = base_kind(base);
    c->dtype = c->stype;
    if (rooted && (c->root < 0 || c->root >= cs->size))
        return -1;
    if (c->sbuf == MPI_IN_PLACE && !is_root &&
        (base == ACIS_COLL_REDUCE || base == ACIS_COLL_GATHER || base == ACIS_COLL_GATHERV))
        return -1;                         /* only the root may be in place */
    switch (base) {
    case ACIS_COLL_BARRIER:
        c->dtype = MPI_DATATYPE_NULL;
        c->bytes = c->elems = 0;
        c->wop = ACIS_OP_NONE;
        return 0;
    case ACIS_COLL_GATHER:
    case ACIS_COLL_ALLGATHER:
        if (c->sbuf == MPI_IN_PLACE && (is_root || base == ACIS_COLL_ALLGATHER)) {
            count = c->rcount;
            c->dtype = c->rtype;
        }
        blocks = (uint64_t)cs->size;
        break;
    case ACIS_COLL_SCATTER:
        if (!is_root) {
            count = c->rcount;
            c->dtype = c->rtype;
        }
        blocks = (uint64_t)cs->size;
        break;
    case ACIS_COLL_REDUCE_SCATTER_BLOCK:
        count = c->rcount;
        blocks = (uint64_t)cs->size;
        break;
    case ACIS_COLL_REDUCE_SCATTER:
        if ((sum = count_sum(c->rcounts, cs->size)) < 0)
            return -1;
        count = sum;
        break;
    /* The v-variants: only the root of gatherv/scatterv knows every count,
     * so message bytes here are this rank's view (for the counters only;
     * the size limit does not apply to them). */
    case ACIS_COLL_ALLGATHERV:
    case ACIS_COLL_GATHERV:
        if (is_root || base == ACIS_COLL_ALLGATHERV) {
            if ((sum = count_sum(c->rcounts, cs->size)) < 0 || !c->rdispls)
                return -1;
            if (c->sbuf == MPI_IN_PLACE) {
                count = c->rcounts[cs->rank];
                c->dtype = c->rtype;
            }
            if (acis_dtype_info(c->rtype, &c->dt) != 0)
                return -1;
            c->bytes = (uint64_t)sum * (uint64_t)c->dt.size;
        }
        break;
    case ACIS_COLL_SCATTERV:
        if (is_root) {
            if ((sum = count_sum(c->scounts, cs->size)) < 0 || !c->sdispls)
                return -1;
            count = c->scounts[cs->rank];
        } else {
            count = c->rcount;
            c->dtype = c->rtype;
        }
        break;
    default:
        break;
    }
    if (count < 0 || c->dtype == MPI_DATATYPE_NULL)
        return -1;
    if (is_reduction(c->kind) && c->op == MPI_OP_NULL)
        return -1;
    if (acis_dtype_info(c->dtype, &c->dt) != 0)
        return -1;
    c->wop = is_reduction(c->kind) ? acis_op_wire(c->op) : ACIS_OP_NONE;
    c->elems = (uint64_t)count * c->dt.nprim;
    if (!c->bytes)
        c->bytes = (uint64_t)count * (uint64_t)c->dt.size * blocks;
    return 0;
}

/* The size limit of the forms whose message bytes every member knows
 * alike: the CVAR, whatever it is.  Nothing on the way is int-sized any
 * more (plans and images count in 64 bits and pack in pieces, image.c),
 * so a limit past INT32_MAX means what it says. */
static uint64_t max_bytes(void)
{
    return (uint64_t)ACIS_CV(OFFLOAD_MAX_MSG_SIZE);
}

acis_reason_t acis_select(struct acis_call *c)
{
    struct acis_comm *cs = NULL;
    acis_reason_t r;
    int mode = (int)acis_util.cv.num[coll_cvar[c->coll]];

    c->cs = NULL;
    c->failed_over = 0;
    c->bytes = 0;
    c->kind = base_kind(acis_coll_blocking(c->coll));
    c->wop = ACIS_OP_NONE;
    c->dt.prim = ACIS_DT_NONE;
    if (c->comm == MPI_COMM_NULL || !(cs = acis_comm_get(c->comm)) ||
        (!cs->inter && classify(c, cs) != 0)) {
        r = ACIS_REASON_INVALID;
    } else {
        acis_coll_t base = acis_coll_blocking(c->coll);
        int vform = base == ACIS_COLL_GATHERV || base == ACIS_COLL_SCATTERV ||
                    base == ACIS_COLL_ALLGATHERV;
        struct acis_policy_in in = {
            .master = (int)ACIS_CV(OFFLOAD),
            .coll_mode = mode,
            .device_ok = acis_fb.device_ok,
            .implemented = acis_fb.implemented[c->coll],
            .base_implemented = acis_fb.implemented[base],
            .form = acis_coll_form(c->coll),
            .intercomm = cs->inter,
            .comm_size = cs->size,
            .reduction = is_reduction(c->kind),
            .wop = c->wop,
            .prim = c->dt.prim,
            .bytes = c->bytes,
            .max_bytes = vform ? UINT64_MAX : max_bytes(),
        };
        r = acis_policy(&in);
        if (r == ACIS_REASON_NONE && in.form == ACIS_FORM_PERSISTENT && !cs->strict_order &&
            ACIS_CV(OFFLOAD_PERSISTENT_ORDER) != ACIS_PERS_STRICT)
            r = ACIS_REASON_PERSISTENT;        /* the switch numbers calls as they
                                                  start: docs/cvars.md */
        if (r == ACIS_REASON_NONE) {
            /* The set-up is a blocking collective: a nonblocking call must
             * return without waiting for the others, so only a blocking
             * one sets a communicator up (or its creation, when eager).
             * The state changes only there, so every member agrees. */
            if (cs->state == ACIS_CT_UNKNOWN && in.form != ACIS_FORM_BLOCKING)
                r = ACIS_REASON_NOT_SET_UP;
            else
                r = acis_comm_ready(cs);       /* collective the first time */
            if (cs->no_scan && (c->kind == ACIS_K_SCAN || c->kind == ACIS_K_EXSCAN))
                r = ACIS_REASON_NOT_OFFLOADABLE; /* no switch of a fabric has prefixes,
                                                    whatever became of the row since */
            else if (r == ACIS_REASON_DEVICE_FAILED && cs->state == ACIS_CT_FAILED)
                c->failed_over = 1;            /* would have been offloaded */
        }
    }
    if (!c->inner)
        acis_count_call(&acis_util.coll[c->coll], r, c->bytes);
    if (cs && !c->inner && (acis_util.verbose > 0 || (r != ACIS_REASON_NONE && mode == ACIS_ON)))
        acis_report(c, cs, r);
    if (r == ACIS_REASON_NONE || c->failed_over)
        c->cs = cs;
    return r;
}

acis_reason_t acis_comm_reason(MPI_Comm comm)
{
    struct acis_comm *cs;
    if (comm == MPI_COMM_NULL || !(cs = acis_comm_get(comm)))
        return ACIS_REASON_INVALID;
    struct acis_policy_in in = {
        .master = (int)ACIS_CV(OFFLOAD),
        .coll_mode = ACIS_AUTO,
        .max_bytes = 1,
        .bytes = 1,
        .device_ok = acis_fb.device_ok,
        .implemented = 1,
        .intercomm = cs->inter,
        .comm_size = cs->size,
    };
    acis_reason_t r = acis_policy(&in);
    return r == ACIS_REASON_NONE ? acis_comm_ready(cs) : r;
}

acis_reason_t acis_comm_ready(struct acis_comm *cs)
{
    if (cs->state == ACIS_CT_UNKNOWN)
        acis_comm_reap(0);             /* rows of communicators freed since */
    return acis_comm_setup(cs, acis_fb.rejoin);
}

int acis_fallback_init(void)
{
    if (acis_dtype_init() != 0)
        return -1;
    acis_fb.ready = 1;
    return 0;
}

void acis_fallback_finalize(void)
{
    if (!acis_fb.ready)
        return;
    acis_dtype_finalize();
    acis_fb.ready = 0;
}
