/* exec.c -- one offloaded call from start to finish, blocking or not: for
 * gatherv and scatterv first an exchange of block sizes through the switch
 * (only the root knows them all), then the collective itself: plan it, put
 * the data in wire form, run it through the engine, put the answer back.
 * acis_run_init() publishes which entry points have plans to src/fallback,
 * so a call is never selected for offload without a way to run it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload/offload.h"
#include "util/util.h"

enum { PHASE_SIZES, PHASE_MAIN, PHASE_DONE };

void acis_run_init(void)
{
    for (int i = 0; i < ACIS_COLL_COUNT; i++)
        acis_fb.implemented[i] = (uint8_t)acis_has_plan((acis_coll_t)i);
}

static void fatal(const struct acis_exec *x, const char *what)
{
    acis_log(0, "%s: %s; aborting the job", acis_coll_name(x->c.coll), what);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

/* The exchange: an allgather of every rank's 8-byte block size. */
static int start_sizes(struct acis_exec *x)
{
    int size = x->c.cs->size, rank = x->c.cs->rank;
    x->blocks = calloc((size_t)size, sizeof(uint64_t));
    if (!x->blocks)
        return -1;
    memset(&x->op, 0, sizeof x->op);
    x->op.st.kind = ACIS_K_ALLGATHER;
    x->op.st.dtype = ACIS_DT_BYTE;
    x->op.st.total = 8 * (uint64_t)size;
    x->op.st.src_buf = (const uint8_t *)&x->mine;   /* little-endian on x86-64 */
    x->op.st.src_off = 8 * (uint64_t)rank;
    x->op.st.src_len = 8;
    x->op.st.dst_buf = (uint8_t *)x->blocks;
    x->op.st.dst_len = 8 * (uint64_t)size;
    x->phase = PHASE_SIZES;
    return acis_op_start(&x->op, x->c.cs);
}

static int start_main(struct acis_exec *x)
{
    struct acis_plan *p = &x->p;
    if (acis_plan(&x->c, x->blocks, p) != 0)
        fatal(x, "internal error: selected for offload without a plan");
    if (p->has_src && acis_image_in(&x->src, &p->src, p->wire, p->copy_src, x->c.comm) != 0)
        return -1;
    if (p->has_dst && acis_image_out(&x->dst, &p->dst, p->wire) != 0)
        return -1;
    memset(&x->op, 0, sizeof x->op);
    x->op.st.kind = (uint8_t)p->kind;
    x->op.st.alg = (uint8_t)p->alg;
    x->op.st.op = (uint8_t)p->op;
    x->op.st.dtype = (uint8_t)p->dtype;
    x->op.st.root = p->root;
    x->op.st.total = p->total;
    x->op.st.src_buf = x->src.p;
    x->op.st.src_off = p->src_off;
    x->op.st.src_len = p->has_src ? x->src.len : 0;
    x->op.st.dst_buf = x->dst.p;
    x->op.st.dst_off = p->dst_off;
    x->op.st.dst_len = p->has_dst ? x->dst.len : 0;
    x->phase = PHASE_MAIN;
    return acis_op_start(&x->op, x->c.cs);
}

int acis_exec_start(struct acis_exec *x)
{
    x->blocks = NULL;
    memset(&x->src, 0, sizeof x->src);
    memset(&x->dst, 0, sizeof x->dst);
    int rc = acis_plan_needs_sizes(&x->c, &x->mine) ? start_sizes(x) : start_main(x);
    if (rc != 0)
        fatal(x, "out of memory starting the collective");
    return 0;
}

int acis_exec_step(struct acis_exec *x)
{
    if (x->phase == PHASE_SIZES) {
        if (start_main(x) != 0)
            fatal(x, "out of memory starting the collective");
        return 0;
    }
    if (x->phase == PHASE_MAIN) {
        if (x->p.has_dst && acis_image_finish(&x->dst, &x->p.dst, x->p.wire, x->c.comm) != 0)
            fatal(x, "cannot unpack the result");
        acis_image_free(&x->src);
        acis_image_free(&x->dst);
        free(x->blocks);
        x->blocks = NULL;
        x->phase = PHASE_DONE;
    }
    return 1;
}

int acis_exec_complete(const struct acis_exec *x)
{
    return x->phase == PHASE_DONE;
}

int acis_exec_run(struct acis_exec *x)
{
    acis_exec_start(x);
    do
        acis_op_wait(&x->op);
    while (!acis_exec_step(x));
    return MPI_SUCCESS;
}

int acis_offload_run(struct acis_call *c)
{
    if (acis_coll_form(c->coll) == ACIS_FORM_NONBLOCKING)
        return acis_nb_start(c);
    struct acis_exec x = { .c = *c };
    return acis_exec_run(&x);
}
