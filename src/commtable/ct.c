/* ct.c -- the switch table row of a communicator.  On a network switch
 * every member joins (CT_JOIN, with an id rank 0 draws and the members
 * agree on first, with whether each can take part); the switches count
 * members per port, so no switch ever needs the member list.  The
 * shared-memory switch, whose rows live in the job's own memory, takes
 * the members' global ranks from rank 0 (CT_CREATE).  Either way every
 * member then learns the answer and whether any member failed, in one
 * allreduce, so all offload or none does.  The row is claimed at set-up,
 * never in the middle of a collective. */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "commtable.h"
#include "mpid/device.h"
#include "util/util.h"

/* F_MY_WIN and F_MY_WIN_NEG (its complement) carry each member's own
 * window: after the MAX both give the largest and the smallest, so every
 * member sees alike whether all made their state for the same window.
 * The fields are u32 values carried as int64: MPICH 4.0.2's MPI_MAX
 * compares MPI_UINT32_T (and every unsigned type) as signed, so a context
 * id or set-up id of 2^31 or more lost to a 0.  Set-up ids always have
 * their top bit set (acis_dev_request_id), so every set-up on a network
 * switch depends on this: a regression fails every MPI test at once. */
enum { F_STATUS, F_CTX, F_WINDOW, F_PAYLOAD, F_FLAGS, F_LOCAL_FAIL, F_LOST, F_MY_WIN,
       F_MY_WIN_NEG, F_ID, F_COUNT };

/* The switch's answer to this member into mine (status + 1: 0 is "no
 * answer" in the MAX that follows), or a local failure. */
static void ask_switch(const struct acis_comm *cs, uint32_t id, int64_t *mine)
{
    uint32_t st = 0, ctx = 0, win = 0, pl = 0, flags = 0;
    acis_dev_lock();
    int rc = acis_dev_joins()
                 ? acis_dev_ct_join(id, cs->granks[0], (uint32_t)cs->size, (uint32_t)cs->rank,
                                    &st, &ctx, &win, &pl, &flags)
                 : acis_dev_ct_create(cs->granks, (uint32_t)cs->size, &st, &ctx, &win, &pl,
                                      &flags);
    acis_dev_unlock();
    if (rc != 0) {
        mine[F_LOCAL_FAIL] = 1;
        return;
    }
    mine[F_STATUS] = st + 1;
    mine[F_CTX] = ctx;
    mine[F_WINDOW] = win;
    mine[F_PAYLOAD] = pl;
    mine[F_FLAGS] = flags;
}

/* Global ranks of comm's members, in comm rank order (local: groups). */
static uint32_t *member_ranks(const struct acis_comm *cs)
{
    MPI_Group g, wg;
    int *in = malloc(sizeof(int) * (size_t)cs->size), *out = malloc(sizeof(int) * (size_t)cs->size);
    uint32_t *r = malloc(sizeof(uint32_t) * (size_t)cs->size);
    if (!in || !out || !r)
        goto fail;
    for (int i = 0; i < cs->size; i++)
        in[i] = i;
    PMPI_Comm_group(cs->comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, cs->size, in, wg, out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    for (int i = 0; i < cs->size; i++)
        r[i] = (uint32_t)out[i];
    free(in);
    free(out);
    return r;
fail:
    free(in);
    free(out);
    free(r);
    return NULL;
}

/* src/offload's state for cs, made before the members agree so that a
 * member short of memory is one more reason to refuse on all: 1 if there
 * is one (or nobody wants one). */
static int make_off(struct acis_comm *cs)
{
    if (cs->off || !acis_ct.off_new)
        return 1;
    return acis_ct.off_new(cs, acis_dev_info()->window) == 0;
}

/* cs's private dup (collective), kept with the row: 1 if there is one.
 * Made before the members agree, so that a member whose MPI_Comm_dup
 * failed (possible only under MPI_ERRORS_RETURN) makes all refuse. */
static int make_shadow(struct acis_comm *cs)
{
    if (cs->shadow == MPI_COMM_NULL && PMPI_Comm_dup(cs->comm, &cs->shadow) != MPI_SUCCESS)
        cs->shadow = MPI_COMM_NULL;
    return cs->shadow != MPI_COMM_NULL;
}

/* MPIR_CVAR_OFFLOAD_FAULT_FREE_MS (tests): a pause right after a
 * communicator's offload state is freed, while other threads go on
 * delivering answers. */
static void free_pause(void)
{
    long long ms = ACIS_CV(OFFLOAD_FAULT_FREE_MS);
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (ms && nanosleep(&ts, &ts) != 0)
        ;
}

void acis_ct_drop_off(struct acis_comm *cs)
{
    /* Out of sight first, under the device lock: a thread that delivers
     * an answer (or the peer service) finds cs by its context id through
     * by_row, and its state through cs->off, both under that lock; once
     * both are cleared and the engine's lists no longer hold the state,
     * nothing can reach it, and it is freed without the lock. */
    acis_dev_lock();
    void *off = cs->off;
    cs->off = NULL;
    uint32_t row = (cs->ctx & 0xffff) - 1;
    if (row < acis_ct.rows && acis_ct.by_row[row] == cs)
        acis_ct.by_row[row] = NULL;
    if (off && acis_ct.off_unhook)
        acis_ct.off_unhook(off);
    acis_dev_unlock();
    if (off && acis_ct.off_free) {
        acis_ct.off_free(off);
        free_pause();
    }
}

acis_reason_t acis_comm_setup(struct acis_comm *cs, int (*rejoin)(MPI_Comm comm))
{
    if (cs->state == ACIS_CT_READY)
        return ACIS_REASON_NONE;
    if (cs->state == ACIS_CT_REFUSED || cs->state == ACIS_CT_FAILED ||
        cs->state == ACIS_CT_BROKEN)
        return cs->refused;
    int lost = atomic_load(&acis_ct.device_lost);
    if (rejoin) {                      /* a switch that failed may be back */
        int any;
        PMPI_Allreduce(&lost, &any, 1, MPI_INT, MPI_MAX, cs->comm);
        if (any && rejoin(cs->comm) != 0) {
            cs->state = ACIS_CT_REFUSED;       /* rejoin() agreed on it */
            cs->refused = ACIS_REASON_DEVICE_FAILED;
            return cs->refused;
        }
        lost = atomic_load(&acis_ct.device_lost);
    }

    /* status is sent +1 so that 0 means "no answer" in the MAX below */
    int64_t mine[F_COUNT] = { 0 }, all[F_COUNT];
    free(cs->granks);
    cs->granks = member_ranks(cs);     /* recovery asks members by global rank */
    int dup_ok = make_shadow(cs);      /* collective: first, on every member */
    mine[F_LOCAL_FAIL] = !dup_ok || !cs->granks || !make_off(cs);
    mine[F_LOST] = (uint32_t)lost;
    mine[F_MY_WIN] = acis_dev_info()->window;
    mine[F_MY_WIN_NEG] = UINT32_MAX - mine[F_MY_WIN];
    if (acis_dev_joins()) {
        /* first agree that every member can join, on rank 0's id */
        if (cs->rank == 0) {
            acis_dev_lock();           /* other threads' set-ups draw ids too */
            mine[F_ID] = acis_dev_request_id();
            acis_dev_unlock();
        }
        PMPI_Allreduce(mine, all, F_COUNT, MPI_INT64_T, MPI_MAX, cs->comm);
        if (!all[F_LOCAL_FAIL] && !all[F_LOST])
            ask_switch(cs, (uint32_t)all[F_ID], mine);
        else
            mine[F_LOCAL_FAIL] = 1;
    } else if (cs->rank == 0 && !lost && !mine[F_LOCAL_FAIL]) {
        ask_switch(cs, 0, mine);
    }
    PMPI_Allreduce(mine, all, F_COUNT, MPI_INT64_T, MPI_MAX, cs->comm);

    uint32_t row = (uint32_t)(all[F_CTX] & 0xffff) - 1;
    int ok = all[F_STATUS] == ACIS_ST_OK + 1 && !all[F_LOCAL_FAIL] && !all[F_LOST] &&
             row < acis_ct.rows && all[F_WINDOW] && all[F_WINDOW] <= all[F_MY_WIN] &&
             UINT32_MAX - all[F_MY_WIN_NEG] == all[F_MY_WIN] &&
             all[F_PAYLOAD] >= ACIS_MIN_PAYLOAD;
    if (!ok) {
        acis_ct_drop_off(cs);
        if (cs->shadow != MPI_COMM_NULL)
            PMPI_Comm_free(&cs->shadow);       /* every member refuses alike */
        if (cs->rank == 0 && all[F_STATUS] == ACIS_ST_OK + 1) {
            acis_dev_lock();
            acis_dev_ct_free((uint32_t)all[F_CTX]);    /* someone else failed */
            acis_dev_unlock();
        }
        cs->state = ACIS_CT_REFUSED;
        cs->refused = all[F_LOST] ? ACIS_REASON_DEVICE_FAILED
                      : all[F_STATUS] == ACIS_ST_TABLE_FULL + 1 ||
                              all[F_STATUS] == ACIS_ST_NO_SLOTS + 1 ||
                              all[F_STATUS] == ACIS_ST_JOB_LIMIT + 1
                          ? ACIS_REASON_TABLE_FULL
                          : ACIS_REASON_COMM_SETUP;
        ACIS_COUNT(comms_refused, 1);
        if (cs->rank == 0)
            acis_log(1, "communicator of %d ranks stays in software: %s", cs->size,
                     acis_reason_text(cs->refused));
        return cs->refused;
    }
    acis_dev_lock();                   /* answers are delivered, and the peer service
                                          finds cs->off by ctx, under the lock */
    cs->ctx = (uint32_t)all[F_CTX];
    cs->window = (uint32_t)all[F_WINDOW];
    if (cs->off && acis_ct.off_window)
        acis_ct.off_window(cs->off, cs->window);
    cs->payload = (uint32_t)all[F_PAYLOAD];
    cs->scan_split = (all[F_FLAGS] & ACIS_CT_SCAN_SPLIT) != 0;
    cs->no_scan = (all[F_FLAGS] & ACIS_CT_SPANS) != 0 ||   /* not even the widest
                                                               element fits a piece */
                  (cs->scan_split && !acis_scan_seg_bytes(cs->payload, (uint32_t)cs->size, 32));
    cs->own_block = (all[F_FLAGS] & ACIS_CT_OWN_BLOCK) != 0;
    cs->epoch = acis_ct.epoch;
    cs->boot = acis_dev_info()->boot;
    cs->state = ACIS_CT_READY;
    acis_ct.by_row[row] = cs;
    acis_dev_unlock();
    ACIS_COUNT(comms_offloaded, 1);
    return ACIS_REASON_NONE;
}

/* Called when the communicator goes away: rank 0 gives the row back. */
void acis_ct_release_row(struct acis_comm *cs)
{
    if (cs->state != ACIS_CT_READY && cs->state != ACIS_CT_FAILED &&
        cs->state != ACIS_CT_BROKEN)
        return;
    uint32_t row = (cs->ctx & 0xffff) - 1;
    acis_dev_lock();
    if (row < acis_ct.rows && acis_ct.by_row[row] == cs)
        acis_ct.by_row[row] = NULL;
    if (cs->rank == 0 && !acis_comm_lost(cs))    /* a failed switch has no row to free */
        acis_dev_ct_free(cs->ctx);
    acis_dev_unlock();
    cs->state = ACIS_CT_UNKNOWN;
}
