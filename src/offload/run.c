/* run.c -- execute an offloaded call: plan it, put its data in wire form,
 * run it through the engine, put the answer back.  acis_run_init()
 * publishes which entry points have plans to src/fallback, so a call is
 * never selected for offload without a way to run it. */
#include "config.h"

#include <stdlib.h>

#include "offload/offload.h"
#include "util/util.h"

void acis_run_init(void)
{
    for (int i = 0; i < ACIS_COLL_COUNT; i++)
        acis_fb.implemented[i] = (uint8_t)acis_has_plan((acis_coll_t)i);
}

static void fatal(const struct acis_call *c, const char *what)
{
    acis_log(0, "%s: %s; aborting the job", acis_coll_name(c->coll), what);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

int acis_offload_run(struct acis_call *c)
{
    struct acis_plan p;
    struct acis_image src = { 0 }, dst = { 0 };
    struct acis_dtinfo sdt, rdt;
    struct acis_op op = { 0 };

    if (acis_plan(c, &p) != 0)
        fatal(c, "internal error: selected for offload without a plan");
    if (p.has_src && (acis_dtype_info(p.stype, &sdt) != 0 ||
                      acis_image_in(&src, p.sbuf, p.scount, p.stype, &sdt, p.wire, c->comm) != 0))
        fatal(c, "out of memory packing the send buffer");
    if (p.has_dst && (acis_dtype_info(p.rtype, &rdt) != 0 ||
                      acis_image_out(&dst, p.rbuf, p.rcount, &rdt, p.wire) != 0))
        fatal(c, "out of memory for the receive buffer");

    op.st.kind = (uint8_t)p.kind;
    op.st.op = (uint8_t)p.op;
    op.st.dtype = (uint8_t)p.dtype;
    op.st.root = p.root;
    op.st.total = p.total;
    op.st.src_buf = src.p;
    op.st.src_off = p.src_off;
    op.st.src_len = p.has_src ? src.len : 0;
    op.st.dst_buf = dst.p;
    op.st.dst_off = p.dst_off;
    op.st.dst_len = p.has_dst ? dst.len : 0;
    if (acis_op_start(&op, c->cs) != 0)
        fatal(c, "out of memory starting the collective");
    acis_op_wait(&op);

    if (p.has_dst && acis_image_finish(&dst, p.rbuf, p.rcount, p.rtype, &rdt, p.wire,
                                       c->comm) != 0)
        fatal(c, "cannot unpack the result");
    acis_image_free(&src);
    acis_image_free(&dst);
    return MPI_SUCCESS;
}
