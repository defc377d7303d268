/* init.c -- MPI_Init, MPI_Init_thread and MPI_Finalize of libacis: parse the
 * CVARs (a bad one stops the job with one line), initialise MPICH, bring
 * every layer up in order -- a step that fails on one rank is agreed on by
 * all before any acts on it, so every rank ends in the same mode -- and
 * take them down again before MPICH goes. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commtable/commtable.h"
#include "mpid/device.h"
#include "offload.h"
#include "util/util.h"

extern char **environ;

struct acis_offload_ctx acis_oc;

/* All ranks learn whether any rank failed; the lowest failing rank prints
 * its one line, then every rank leaves MPI and exits. */
static void stop_if_any(int failed, const char *line)
{
    int me = failed ? acis_oc.world_rank : acis_oc.world_size, first;
    PMPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == acis_oc.world_size)
        return;
    if (first == acis_oc.world_rank)
        fprintf(stderr, "acis: %s\n", line);
    PMPI_Finalize();
    exit(EXIT_FAILURE);
}

/* ALL_EQ CVARs must agree, or ranks could decide differently and wait for
 * each other forever. */
static void check_same_cvars(void)
{
    uint64_t h = acis_cvars_hash(&acis_util.cv), both[2] = { h, ~h }, agg[2];
    PMPI_Allreduce(both, agg, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    stop_if_any(agg[0] != h || agg[1] != ~h,
                "MPIR_CVAR_OFFLOAD_* variables of scope 'all ranks' differ between "
                "ranks; give every rank the same values (acis-info --cvars shows scopes)");
}

/* Steps of the start that can fail on one rank alone: memory, an MPI
 * attribute keyval or MPICH's generalized request class refused (or
 * MPIR_CVAR_OFFLOAD_FAULT_INIT, for tests). */
enum { FAILED_TABLES = 1, FAILED_HIER = 2, FAILED_NB = 4 };

/* The steps that failed on any rank (one allreduce): every rank acts on
 * the same outcome, so all end in the same mode and every collective one
 * of them makes (acis_disconnect's barriers, a set-up) has all of them.
 * A rank that failed says which step and what every rank does now. */
static int agree(int mine)
{
    static const char *const what[] = {
        "cannot create the communicator table or its MPI attribute keyvals; no rank "
        "offloads",
        "cannot create the node hierarchy's MPI attribute keyval; every rank runs flat",
        "cannot create MPICH's generalized request class or a private dup of "
        "MPI_COMM_SELF; every rank runs nonblocking and persistent collectives in MPICH",
    };
    for (int i = 0; i < 3; i++)
        if (mine & 1 << i && (i != 1 || acis_oc.hier))
            acis_log(0, "%s", what[i]);
    int any = mine;
    PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    return any;
}

static int start(void)
{
    char err[512] = "";
    int bad = acis_cvars_parse(environ, &acis_util.cv, err, sizeof err) != 0;

    PMPI_Comm_rank(MPI_COMM_WORLD, &acis_oc.world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &acis_oc.world_size);
    acis_util.rank = acis_oc.world_rank;
    acis_util.threaded = acis_oc.thread_level == MPI_THREAD_MULTIPLE;
    stop_if_any(bad, err);
    check_same_cvars();
    acis_util.verbose = (int)ACIS_CV(OFFLOAD_VERBOSE);
    acis_oc.fault_seed = (uint64_t)ACIS_CV(OFFLOAD_FAULT_SEED) << 32 ^
                         (uint64_t)acis_oc.world_rank;

    acis_fb.device_ok = 0;
    if (ACIS_CV(OFFLOAD) != ACIS_OFF && ACIS_CV(OFFLOAD_DEVICE) != ACIS_DEV_NONE)
        acis_fb.device_ok = acis_connect() == 0;
    /* Only a job that may offload (every rank agrees) waits in acis: a
     * communicator no message uses, probing it only drives MPICH. */
    acis_oc.poke_comm = MPI_COMM_WORLD;
    if (acis_fb.device_ok && PMPI_Comm_dup(MPI_COMM_WORLD, &acis_oc.poke_comm) != MPI_SUCCESS)
        acis_oc.poke_comm = MPI_COMM_WORLD;
    acis_ct.threaded = acis_oc.thread_level == MPI_THREAD_MULTIPLE;

    long long fault = ACIS_CV(OFFLOAD_FAULT_INIT);
    int failed = 0;
    if (acis_commtable_init(acis_fb.device_ok ? acis_dev_info()->tables : 0) != 0 ||
        acis_fallback_init() != 0 || fault == ACIS_FAULT_INIT_TABLES)
        failed |= FAILED_TABLES;
    if (acis_hier_init() != 0 || fault == ACIS_FAULT_INIT_HIER)
        failed |= FAILED_HIER;
    acis_oc.pers.comm = MPI_COMM_NULL;
    acis_nbreg_setup();
    if (acis_nb_init() != 0 || acis_pers_setup() != 0 || fault == ACIS_FAULT_INIT_NB)
        failed |= FAILED_NB;
    failed = agree(failed);
    if (failed & FAILED_TABLES) {
        if (acis_fb.device_ok)
            acis_disconnect();              /* every rank: its barriers meet */
        acis_fb.device_ok = 0;
        acis_oc.mode = ACIS_MODE_OFF;
        return MPI_SUCCESS;
    }
    acis_engine_init();
    acis_helper_init();
    acis_run_init();
    if (failed & FAILED_HIER)
        acis_oc.hier = 0;
    acis_fb.rejoin = ACIS_CV(OFFLOAD_REJOIN) == ACIS_REJOIN_NEW ? acis_rejoin : NULL;
    if (failed & FAILED_NB) {               /* no generalized requests: blocking only */
        for (int i = 0; i < ACIS_COLL_COUNT; i++)
            if (acis_coll_form((acis_coll_t)i) != ACIS_FORM_BLOCKING)
                acis_fb.implemented[i] = 0;
    }
    acis_oc.mode = ACIS_CV(OFFLOAD) == ACIS_OFF && acis_util.verbose == 0
                       ? ACIS_MODE_OFF : ACIS_MODE_ACTIVE;
    acis_oc.eager = acis_fb.device_ok && acis_oc.mode == ACIS_MODE_ACTIVE &&
                    ACIS_CV(OFFLOAD_COMM_SETUP) == ACIS_SETUP_EAGER;
    acis_oc.quick = acis_fb.device_ok && acis_dev_can_post() && ACIS_CV(OFFLOAD_SHORT_PATH) &&
                    !acis_oc.hier && acis_util.verbose == 0;
    /* MPI_COMM_WORLD's row now, lazy or not: every rank is here, and a
     * program whose first collective on it is nonblocking offloads it
     * (only blocking calls set communicators up, select.c). */
    if (acis_fb.device_ok && acis_oc.mode == ACIS_MODE_ACTIVE)
        acis_comm_reason(MPI_COMM_WORLD);
    return MPI_SUCCESS;
}

ACIS_API int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc != MPI_SUCCESS)
        return rc;
    acis_oc.thread_level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&acis_oc.thread_level);
    return start();
}

ACIS_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc != MPI_SUCCESS)
        return rc;
    acis_oc.thread_level = *provided;
    return start();
}

ACIS_API int MPI_Finalize(void)
{
    if (acis_oc.mode != ACIS_MODE_PASS) {
        acis_nb_orphans(1);                 /* nonblocking calls freed running */
        acis_pers_finalize();               /* persistent requests not freed */
        acis_helper_stop();                 /* every request is complete by now */
        if (ACIS_CV(OFFLOAD_STATS))
            acis_summary_print();
        if (acis_fb.device_ok)
            PMPI_Barrier(MPI_COMM_WORLD);   /* every rank has every answer it needs */
        acis_hier_release(MPI_COMM_WORLD);
        acis_comm_release(MPI_COMM_WORLD);
        acis_comm_release(MPI_COMM_SELF);
        acis_comm_reap(1);                  /* rows of freed communicators, while the
                                               device is up */
        acis_hier_finalize();
        if (acis_fb.device_ok)
            acis_disconnect();
        acis_fb.device_ok = 0;
        acis_fallback_finalize();
        acis_commtable_finalize();
        if (acis_oc.poke_comm != MPI_COMM_WORLD)
            PMPI_Comm_free(&acis_oc.poke_comm);
        acis_oc.mode = ACIS_MODE_PASS;
        acis_oc.eager = 0;
        acis_oc.quick = 0;
    }
    return PMPI_Finalize();
}
