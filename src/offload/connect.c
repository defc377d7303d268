/* connect.c -- joining the switch at MPI_Init and leaving it at
 * MPI_Finalize, the same on every rank: rank 0 draws the job key and,
 * with MPIR_CVAR_OFFLOAD_SWITCH=auto, starts the embedded switch; every
 * rank opens its device and its peer service (recovery); one allreduce
 * tells all whether every rank made it, so either all offload or none
 * does.  After a switch failure, new communicators join it again here
 * (acis_rejoin). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpid/device.h"
#include "switch/switch.h"
#include "offload/offload.h"
#include "util/util.h"

#define ADDR_LEN ACIS_CVAR_STRLEN

/* Where the embedded switch listens, any free port: loopback when the
 * whole job is on this node, else the address other nodes reach this one
 * at (acis_host_address: what its name resolves to, else its first
 * interface's), so that the address announced is the one its answers
 * come from (a wildcard 0.0.0.0 announced sent other nodes' HELLOs to
 * their own loopback).  0, or -1 with why. */
static int embed_listen(int local_ranks, char *out, size_t outlen, char *why, size_t whylen)
{
    struct sockaddr_storage a;
    socklen_t len;
    if (local_ranks == acis_oc.world_size) {
        snprintf(out, outlen, "127.0.0.1:0");
        return 0;
    }
    if (acis_host_address(&a, &len) != 0) {
        snprintf(why, whylen, "the job spans nodes, but rank 0's host has no address "
                 "but loopback for the embedded switch");
        return -1;
    }
    if (a.ss_family == AF_INET)
        ((struct sockaddr_in *)&a)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&a)->sin6_port = 0;
    acis_addr_format((struct sockaddr *)&a, len, out, outlen);
    return 0;
}

/* A rank waits spinning while every rank on this node has a core. */
static int decide_spin(int local_ranks)
{
    long long w = ACIS_CV(OFFLOAD_WAIT);
    if (w != ACIS_WAIT_AUTO)
        return w == ACIS_WAIT_SPIN;
    return local_ranks <= acis_cores();
}

/* The embedded switch's thread spins after traffic only with a core of
 * its own: when the ranks fill the node's cores it sleeps in the kernel
 * between packets, so it never takes a computing rank's core (rank 0's
 * waits drive the switch themselves, the thread parked meanwhile). */
static int decide_switch_spin(int local_ranks)
{
    long long w = ACIS_CV(OFFLOAD_WAIT);
    if (w != ACIS_WAIT_AUTO)
        return w == ACIS_WAIT_SPIN;
    return local_ranks < acis_cores();
}

/* Fault injection from the FAULT CVARs (tests), for this process's
 * device and, on rank 0, the embedded switch. */
static struct acis_fault_rates fault_rates(void)
{
    struct acis_fault_rates r = {
        .drop = (uint64_t)ACIS_CV(OFFLOAD_FAULT_DROP),
        .dup = (uint64_t)ACIS_CV(OFFLOAD_FAULT_DUP),
        .reorder = (uint64_t)ACIS_CV(OFFLOAD_FAULT_REORDER),
        .delay = (uint64_t)ACIS_CV(OFFLOAD_FAULT_DELAY),
        .corrupt = (uint64_t)ACIS_CV(OFFLOAD_FAULT_CORRUPT),
        .delay_ns = (uint64_t)ACIS_CV(OFFLOAD_FAULT_DELAY_US) * 1000,
    };
    return r;
}

/* The lowest rank that failed says why (rank 0 of MPI_COMM_WORLD reports
 * for everyone when the failure is its own): always when offload or the
 * verbs channel was asked for by name, else with VERBOSE. */
static void report_failure(int failed, const char *why)
{
    int me = failed ? acis_oc.world_rank : acis_oc.world_size, first;
    PMPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int level = ACIS_CV(OFFLOAD) == ACIS_ON || ACIS_CV(OFFLOAD_DEVICE) == ACIS_DEV_VERBS
                    ? 0 : 1;                   /* asked for: say so without VERBOSE */
    if (first == acis_oc.world_rank)
        acis_log(level, "collectives run in MPICH: %s", why);
}

/* Every rank learns every rank's peer service address. */
static int share_peer_addrs(const struct sockaddr_storage *mine)
{
    struct sockaddr_storage *all = malloc((size_t)acis_oc.world_size * sizeof *all);
    int failed = !all, any;
    PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!failed) {
        PMPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE,
                       MPI_COMM_WORLD);
        acis_peer_set_addrs(all);
    }
    any = failed;
    free(all);
    return any ? -1 : 0;
}

/* The embedded switch's resources, from the SWITCH_* CVARs.  A payload
 * of auto is the largest datagram when the switch listens on loopback
 * (embed_listen), which never cuts one into IP fragments; across nodes it
 * stays at the default, since a lost fragment would lose the datagram. */
static struct acis_sw_opts embedded_opts(int local_ranks)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    if (ACIS_CV(OFFLOAD_SWITCH_PAYLOAD))
        o.payload = (uint32_t)ACIS_CV(OFFLOAD_SWITCH_PAYLOAD);
    else if (local_ranks == acis_oc.world_size)
        o.payload = ACIS_MAX_PAYLOAD;
    o.slots = (uint32_t)ACIS_CV(OFFLOAD_SWITCH_SLOTS);
    o.pool = ACIS_CV(OFFLOAD_SWITCH_POOL) ? (uint32_t)ACIS_CV(OFFLOAD_SWITCH_POOL)
                                          : acis_sw_auto_pool(o.payload);
    o.tables = (uint32_t)ACIS_CV(OFFLOAD_SWITCH_TABLES);
    o.ports = (uint32_t)ACIS_CV(OFFLOAD_SWITCH_PORTS);
    o.job_rows = o.tables;               /* the job's own switch */
    return o;
}

/* Rank 0 starts the job's UDP switch in a thread; every rank learns its
 * address.  0, or -1 with why. */
static int start_udp_switch(int local, char *addr, char *why, size_t whylen)
{
    int failed = 0;
    if (acis_oc.world_rank == 0) {
        struct acis_sw_opts o = embedded_opts(local);
        o.faults = fault_rates();
        o.fault_seed = (uint64_t)ACIS_CV(OFFLOAD_FAULT_SEED) * 7919 + 104729;
        char listen[ADDR_LEN];
        int spin = decide_switch_spin(local);
        if (embed_listen(local, listen, sizeof listen, why, whylen) == 0 &&
            acis_dev_embed_start(listen, &o, spin, addr, ADDR_LEN, why, whylen) == 0) {
            acis_oc.embedded = 1;
            acis_log(1, "the embedded switch's thread %s between packets (%d ranks on this "
                        "node, %d cores)", spin ? "spins" : "sleeps", local, acis_cores());
        } else {
            failed = 1;
        }
    }
    PMPI_Bcast(addr, ADDR_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!addr[0] && !failed)
        snprintf(why, whylen, "rank 0 could not start the embedded switch");
    return addr[0] && !failed ? 0 : -1;
}

/* Rank 0 creates the job's shared-memory switch; every rank learns its
 * name (unlinked again once every rank has mapped it, in acis_connect). */
static int start_shm_switch(int local, char *addr, char *why, size_t whylen)
{
    int failed = 0;
    snprintf(addr, ADDR_LEN, "/acis-%016llx", (unsigned long long)acis_oc.job_key);
    if (local != acis_oc.world_size) {
        snprintf(why, whylen, "the shm channel serves jobs on one node (%d of %d ranks "
                 "here); use MPIR_CVAR_OFFLOAD_DEVICE=udp", local, acis_oc.world_size);
        return -1;
    }
    if (acis_oc.world_rank == 0) {
        struct acis_sw_opts o = embedded_opts(local);
        o.payload = (uint32_t)ACIS_CV(OFFLOAD_SHM_PAYLOAD);
        failed = acis_shmsw_create(addr, acis_oc.job_key, (uint32_t)acis_oc.world_size, &o,
                                   why, whylen) != 0;
        acis_oc.embedded = !failed;
    }
    PMPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (failed && acis_oc.world_rank != 0)
        snprintf(why, whylen, "rank 0 could not create the shared-memory switch");
    return failed ? -1 : 0;
}

/* Which channel: auto is shm for a job on one node with its own switch,
 * verbs for a switch named by its RDMA endpoint, else udp. */
static int pick_channel(int local, int auto_switch, const char *where)
{
    struct acis_ib_addr ib;
    int chan = (int)ACIS_CV(OFFLOAD_DEVICE);
    if (chan == ACIS_DEV_AUTO)
        chan = auto_switch && local == acis_oc.world_size ? ACIS_DEV_SHM
               : acis_ib_addr_parse(where, &ib) == 0      ? ACIS_DEV_VERBS
                                                          : ACIS_DEV_UDP;
    return chan;
}

static const char *channel_name(int chan)
{
    return chan == ACIS_DEV_SHM ? "shm" : chan == ACIS_DEV_VERBS ? "verbs" : "udp";
}

int acis_connect(void)
{
    char addr[ADDR_LEN] = "", why[256] = "";
    int local, failed = 0, node_rank, shape[2];
    MPI_Comm node;

    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &local);
    PMPI_Comm_rank(node, &node_rank);
    PMPI_Comm_free(&node);
    shape[0] = node_rank == 0;                /* nodes, and the most ranks on one */
    shape[1] = local;
    PMPI_Allreduce(MPI_IN_PLACE, &shape[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(MPI_IN_PLACE, &shape[1], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

    if (acis_oc.world_rank == 0 &&
        getrandom(&acis_oc.job_key, sizeof acis_oc.job_key, 0) != sizeof acis_oc.job_key)
        acis_oc.job_key = acis_now_ns() ^ ((uint64_t)getpid() << 32);
    PMPI_Bcast(&acis_oc.job_key, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    const char *where = acis_util.cv.str[ACIS_CV_OFFLOAD_SWITCH];
    int auto_switch = strcmp(where, "auto") == 0 || strcmp(where, "AUTO") == 0;
    int chan = pick_channel(local, auto_switch, where);
    int mixed[2] = { auto_switch, !auto_switch };  /* each rank may name its own switch */
    PMPI_Allreduce(MPI_IN_PLACE, mixed, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!mixed[0] && !mixed[1]) {
        snprintf(why, sizeof why, "MPIR_CVAR_OFFLOAD_SWITCH is auto on some ranks and an "
                 "address on others; give auto to every rank or to none");
        failed = 1;
        auto_switch = 0;
    } else if (chan == ACIS_DEV_SHM && !auto_switch) {
        snprintf(why, sizeof why, "the shm channel needs MPIR_CVAR_OFFLOAD_SWITCH=auto "
                 "(the job's own shared-memory switch), not %.60s", where);
        failed = 1;
    } else if (chan == ACIS_DEV_SHM) {
        failed = start_shm_switch(local, addr, why, sizeof why) != 0;
    } else if (auto_switch && chan == ACIS_DEV_UDP) {
        failed = start_udp_switch(local, addr, why, sizeof why) != 0;
    } else {
        snprintf(addr, sizeof addr, "%.*s", ADDR_LEN - 1, where);
    }

    snprintf(acis_oc.switch_addr, sizeof acis_oc.switch_addr, "%s", addr);
    acis_oc.chan = chan;
    int peers = chan != ACIS_DEV_SHM;        /* recovery needs peers; shm loses nothing */
    struct sockaddr_storage mine;
    if (addr[0] && !failed) {
        acis_dev_set_wait(decide_spin(local),
                          (int)ACIS_CV(OFFLOAD_SPIN_US), (int)ACIS_CV(OFFLOAD_TIMEOUT_MS));
        /* the peer service thread shares the device */
        acis_dev_set_threaded(peers || acis_oc.thread_level == MPI_THREAD_MULTIPLE);
        struct acis_fault_rates fr = fault_rates();
        acis_dev_set_faults(&fr, (uint64_t)ACIS_CV(OFFLOAD_FAULT_SEED) * 1000003 +
                                     (uint64_t)acis_oc.world_rank);
        failed = acis_dev_open(chan, addr, acis_oc.job_key, (uint32_t)acis_oc.world_rank,
                               (uint32_t)acis_oc.world_size,
                               (int)ACIS_CV(OFFLOAD_CONNECT_MS), why, sizeof why) != 0;
        if (!failed && peers &&
            acis_peer_start(addr, acis_oc.job_key, (uint32_t)acis_oc.world_rank,
                            (uint32_t)acis_oc.world_size, acis_fix_serve, NULL, &mine, why,
                            sizeof why) != 0) {
            acis_dev_close();
            failed = 1;
        }
    } else {
        failed = 1;
    }
    int any;
    PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (chan == ACIS_DEV_SHM && acis_oc.embedded)
        acis_shmsw_unlink(addr);             /* every rank has it mapped, or gave up */
    if (!any && peers)
        any = share_peer_addrs(&mine) != 0;
    if (!any) {
        long long hier = ACIS_CV(OFFLOAD_HIERARCHY);
        acis_oc.hier = hier == ACIS_HIER_NODE ||
                       (hier == ACIS_HIER_AUTO && shape[0] > 1 && shape[1] > 1 &&
                        chan != ACIS_DEV_SHM);
        if (acis_oc.world_rank == 0 && acis_oc.hier)
            acis_log(1, "node hierarchy: %d nodes, up to %d ranks on one; leaders use the "
                        "switch", shape[0], shape[1]);
        if (acis_oc.world_rank == 0)
            acis_log(1, "offloading through the switch at %s (%s channel, %u-byte packets, "
                        "%u slots per communicator)", addr, channel_name(chan),
                     acis_dev_info()->max_payload, acis_dev_info()->window);
        if (acis_oc.world_rank == 0 && chan == ACIS_DEV_SHM && acis_oc.embedded &&
            acis_dev_info()->max_payload < (uint32_t)ACIS_CV(OFFLOAD_SHM_PAYLOAD))
            acis_log(1, "the shared-memory switch has %u-byte segments, not "
                        "MPIR_CVAR_OFFLOAD_SHM_PAYLOAD=%lld: /dev/shm has no room for more",
                     acis_dev_info()->max_payload, ACIS_CV(OFFLOAD_SHM_PAYLOAD));
        return 0;
    }
    report_failure(failed, failed ? why : "");
    if (!failed) {
        acis_peer_stop();
        acis_dev_close();
    }
    if (acis_oc.embedded && chan != ACIS_DEV_SHM)
        acis_dev_embed_stop();
    acis_oc.embedded = 0;
    return -1;
}

int acis_rejoin(MPI_Comm comm)
{
    int failed = 0, any;
    if (atomic_load(&acis_ct.device_lost)) {
        uint64_t now = acis_now_ns();
        long long ms = ACIS_CV(OFFLOAD_CONNECT_MS);
        char why[256] = "not tried again yet";
        acis_dev_lock();
        if (now >= acis_oc.rejoin_after_ns) {
            acis_dev_close();
            failed = acis_dev_open(acis_oc.chan, acis_oc.switch_addr, acis_oc.job_key,
                                   (uint32_t)acis_oc.world_rank, (uint32_t)acis_oc.world_size,
                                   (int)ms, why, sizeof why) != 0 ||
                     acis_commtable_resize(acis_dev_info()->tables) != 0;
        } else {
            failed = 1;
        }
        if (!failed) {
            acis_ct.epoch++;                 /* older rows are on the failed switch */
            atomic_store(&acis_ct.device_lost, 0);
            acis_log(1, "joined the switch at %s again", acis_oc.switch_addr);
        } else {
            if (now >= acis_oc.rejoin_after_ns)
                acis_oc.rejoin_after_ns = now + 10 * (uint64_t)ms * 1000000ull;
            acis_log(1, "the switch at %s is still gone: %s", acis_oc.switch_addr, why);
        }
        acis_dev_unlock();
    }
    PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
    return any ? -1 : 0;
}

void acis_disconnect(void)
{
    PMPI_Barrier(MPI_COMM_WORLD);        /* nobody still needs the switch or a peer */
    acis_peer_stop();
    acis_dev_lock();
    acis_dev_close();
    acis_dev_unlock();
    PMPI_Barrier(MPI_COMM_WORLD);        /* every BYE sent before it stops */
    if (acis_oc.embedded) {
        acis_dev_embed_stop();
        acis_oc.embedded = 0;
    }
}
