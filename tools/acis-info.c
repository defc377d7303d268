/* acis-info -- answer what a user asks before and while running acis: the
 * version and what this build has (channels, reduction kernels), every
 * CVAR with its value in this environment and where it came from, whether
 * the configured switch answers and its counters (or, for a verbs switch,
 * which device port this process would use), this node's shape and
 * how acis will wait and pick node leaders on it, and what a communicator
 * costs the switch.  Plain text by default, --json for scripts; the older
 * single questions (--version, --cvars, --switch) stay. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "mpid/device.h"
#include "switch/switch.h"
#include "util/util.h"

extern char **environ;

static void usage(FILE *out)
{
    fputs("usage: acis-info [--json] [--comm-size P] [--topology T] [--no-switch]\n"
          "       acis-info --ct-size [--json] [--comm-size P] [--topology T]\n"
          "       acis-info --version | --cvars[=markdown] | --switch HOST:PORT\n"
          "  (no option)        everything below, as text\n"
          "  --json             everything, as JSON\n"
          "  --comm-size P      table cost for a communicator of P ranks (default\n"
          "                     2, 16, 256, 4096, 65536)\n"
          "  --topology T       the cost on each switch of a fabric: star (default),\n"
          "                     fattree:leaves=L,spines=S,radix=R or torus:XxYxZ\n"
          "                     (ranks on the first host ports)\n"
          "  --ct-size          only that table\n"
          "  --no-switch        do not query the configured switch\n"
          "  --version          acis and MPICH versions\n"
          "  --cvars            every MPIR_CVAR_OFFLOAD_* variable, as text\n"
          "  --cvars=markdown   the same as the Markdown of docs/cvars.md\n"
          "  --switch ADDR      the counters of the switch at ADDR\n", out);
}

static void build(struct emit *e)
{
    char devs[256] = "";
    int ndev = acis_verbs_devices(devs, sizeof devs);
    emit_obj(e, "build");
    emit_str(e, "version", PACKAGE_VERSION);
    emit_str(e, "mpich", ACIS_MPICH_VERSION);
    emit_arr(e, "channels");
    emit_str(e, NULL, "udp");
    emit_str(e, NULL, "shm");
    if (ndev >= 0)
        emit_str(e, NULL, "verbs");
    emit_close(e);
    emit_str(e, "reduction_kernels", acis_reduce_isa_name(acis_reduce_isa()));
    emit_str(e, "rdma_devices", ndev < 0 ? "not built (--with-verbs)" : ndev ? devs : "none");
    emit_close(e);
}

/* Every CVAR in this environment; 0, or -1 if one is malformed. */
static int cvars(struct emit *e, struct acis_cvars *cv)
{
    char err[512] = "";
    int rc = acis_cvars_parse(environ, cv, err, sizeof err);
    if (rc != 0)
        emit_str(e, "cvar_error", err);       /* MPI_Init would stop with it */
    emit_arr(e, "cvars");
    for (int i = 0; i < ACIS_CV_COUNT && rc == 0; i++) {
        const struct acis_cvar *d = &acis_cvar_table[i];
        char name[96], from[96], value[ACIS_CVAR_STRLEN];
        snprintf(name, sizeof name, "MPIR_CVAR_%s", d->name);
        snprintf(from, sizeof from, "%s%s", cv->source[i] ? cv->source[i] : "", d->name);
        acis_cvar_format((enum acis_cvar_id)i, cv, value, sizeof value);
        emit_obj(e, NULL);
        emit_str(e, "name", name);
        emit_str(e, "value", value);
        emit_str(e, "default", d->defval);
        emit_str(e, "from", cv->source[i] ? from : "default");   /* the variable read */
        emit_str(e, "scope", d->all_eq ? "all ranks" : "local");
        emit_close(e);
    }
    emit_close(e);
    return rc;
}

static void counters(struct emit *e, const uint64_t *c, int n)
{
    emit_obj(e, "counters");
    for (int i = 0; i < n; i++)
        emit_int(e, acis_wire_counter_name((unsigned)i), (long long)c[i]);
    emit_close(e);
}

/* The configured switch: what kind, and whether it answers. */
static void switch_status(struct emit *e, const struct acis_cvars *cv, int query)
{
    const char *addr = cv->str[ACIS_CV_OFFLOAD_SWITCH];
    struct acis_ib_addr ib;
    int rdma = acis_ib_addr_parse(addr, &ib) == 0;
    emit_obj(e, "switch");
    emit_str(e, "address", addr);
    if (strcmp(addr, "auto") == 0) {
        emit_str(e, "kind", "embedded");
        emit_str(e, "note", "started inside each job at MPI_Init (a shared-memory switch "
                            "for a job on one node, else a switch thread in rank 0)");
    } else if (addr[0] == '/') {
        emit_str(e, "kind", "shared-memory");
        emit_str(e, "note", "a segment made by the job; nothing to query from outside");
    } else if (rdma) {
        emit_str(e, "kind", "verbs");
        emit_str(e, "note", "an RDMA endpoint; acis-switchd --verbs prints its counters "
                            "at exit with --verbose");
    } else {
        emit_str(e, "kind", "acis-switchd");
        uint64_t c[ACIS_SWC_COUNT];
        char why[256] = "";
        int n = query ? acis_dev_query_stats(addr, c, ACIS_SWC_COUNT,
                                             (int)cv->num[ACIS_CV_OFFLOAD_CONNECT_MS], why,
                                             sizeof why)
                      : -1;
        if (!query)
            emit_str(e, "reachable", NULL);
        else
            emit_bool(e, "reachable", n >= 0);
        if (n < 0 && query)
            emit_str(e, "error", why);
        if (n >= 0)
            counters(e, c, n);
    }
    if (cv->num[ACIS_CV_OFFLOAD_DEVICE] == ACIS_DEV_VERBS || rdma) {
        char port[256];                       /* where the verbs channel would open */
        int ok = acis_verbs_choice(cv->str[ACIS_CV_OFFLOAD_VERBS_DEVICE],
                                   (int)cv->num[ACIS_CV_OFFLOAD_VERBS_PORT], port,
                                   sizeof port) == 0;
        emit_str(e, ok ? "verbs_port" : "verbs_error", port);
    }
    emit_close(e);
}

/* The node, and the choices acis makes from it. */
static void node(struct emit *e, const struct acis_cvars *cv)
{
    struct acis_node_topo t = { 0 };
    int cores = acis_cores();
    emit_obj(e, "node");
    if (acis_node_topo(&t) == 0) {
        emit_int(e, "packages", t.packages);
        emit_int(e, "numa_nodes", t.numa_nodes);
        emit_int(e, "cores", t.cores);
        emit_int(e, "pus", t.pus);
        emit_int(e, "pus_allowed", t.allowed_pus);
    } else {
        emit_str(e, "error", "hwloc could not load the topology");
    }
    char wait[160];
    long long w = cv->num[ACIS_CV_OFFLOAD_WAIT];
    if (w == ACIS_WAIT_AUTO)
        snprintf(wait, sizeof wait, "auto: spin while this node runs at most %d ranks of "
                                    "the job, else block", cores);
    else
        snprintf(wait, sizeof wait, "%s", w == ACIS_WAIT_SPIN ? "spin" : "block");
    emit_str(e, "wait", wait);
    long long h = cv->num[ACIS_CV_OFFLOAD_HIERARCHY];
    emit_str(e, "hierarchy", h == ACIS_HIER_FLAT   ? "flat: every rank uses the switch"
                             : h == ACIS_HIER_NODE ? "node: ranks of a node combine in "
                                                     "shared memory, leaders use the switch"
                                                   : "auto: node when the job spans several "
                                                     "nodes with several ranks on one and the "
                                                     "switch is not shared memory, else flat");
    emit_str(e, "leader", "in each communicator, its lowest rank on each node (rank 0 of "
                          "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))");
    emit_close(e);
}

/* One communicator of p ranks, on the first host ports of the tree: what
 * each switch that holds its row allocates (acis_sw_size: everything a
 * switch holds is allocated once, when it starts), the most of any, and
 * its rows all together.  It fits where every such switch can be built
 * and the hosts are enough. */
static void row_cost(struct emit *e, const struct acis_sw_opts *o, const uint32_t *parent,
                     const uint32_t *hosts, uint32_t n, long long p)
{
    uint32_t *kids = malloc(sizeof(uint32_t) * n), *links = calloc(n, sizeof(uint32_t));
    int fits = kids && links && acis_fabric_row_children(parent, hosts, n, (uint64_t)p, kids) == 0;
    if (n == 1 && kids && links) {
        kids[0] = (uint32_t)p;                   /* a star: one port per rank */
        fits = p <= o->ports;
    }
    struct acis_sw_size most = { 0 }, one;
    long long held = 0, widest = 0, all = 0, window = -1;
    char err[256];
    for (uint32_t i = 0; kids && links && i < n; i++)
        if (parent[i] != UINT32_MAX)
            links[parent[i]]++;
    for (uint32_t i = 0; (fits || n == 1) && kids && links && i < n; i++) {
        if (!kids[i])
            continue;
        struct acis_sw_opts so = *o;
        so.ports = n == 1 ? o->ports : hosts[i] + links[i];
        so.links = n == 1 ? 0 : links[i];
        acis_sw_size(&so, &one, err, sizeof err);
        held++;
        widest = kids[i] > widest ? kids[i] : widest;
        all += (long long)one.row;
        if (one.window == 0)
            fits = 0;
        if (window < 0 || one.window < window)
            window = one.window;
        if (one.total > most.total)
            most = one;
    }
    emit_obj(e, NULL);
    emit_int(e, "ranks", p);
    emit_bool(e, "fits", fits);
    emit_int(e, "switches", held);
    emit_int(e, "max_children", widest);
    emit_int(e, "window", window < 0 ? 0 : window);
    emit_int(e, "state_bytes", (long long)most.row);
    emit_int(e, "state_bytes_all", all);
    emit_int(e, "job_bytes", (long long)most.job);
    emit_int(e, "setup_bytes", (long long)most.setup);
    emit_int(e, "buffer_bytes", (long long)most.pool);
    emit_int(e, "buffer_bytes_worst", (long long)most.pool);
    emit_int(e, "switch_bytes", (long long)most.total);
    emit_close(e);
    free(kids);
    free(links);
}

/* What communicators of the given sizes cost the switches of topology
 * topo built as the embedded one would be (MPIR_CVAR_OFFLOAD_SWITCH_*):
 * per switch holding the row (state_bytes, the most of any) and over the
 * whole fabric.  0, or -1 if topo is not one. */
static int table(struct emit *e, const struct acis_cvars *cv, const char *topo,
                 long long only)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.ports = (uint32_t)cv->num[ACIS_CV_OFFLOAD_SWITCH_PORTS];
    o.tables = (uint32_t)cv->num[ACIS_CV_OFFLOAD_SWITCH_TABLES];
    o.slots = (uint32_t)cv->num[ACIS_CV_OFFLOAD_SWITCH_SLOTS];
    if (cv->num[ACIS_CV_OFFLOAD_SWITCH_PAYLOAD])   /* auto: a fabric is not loopback */
        o.payload = (uint32_t)cv->num[ACIS_CV_OFFLOAD_SWITCH_PAYLOAD];
    o.pool = cv->num[ACIS_CV_OFFLOAD_SWITCH_POOL] ? (uint32_t)cv->num[ACIS_CV_OFFLOAD_SWITCH_POOL]
                                                  : acis_sw_auto_pool(o.payload);
    uint32_t n, *parent, *hosts;
    char err[256];
    if (acis_fabric_plan(topo, o.ports, &n, &parent, &hosts, err, sizeof err) != 0) {
        fprintf(stderr, "acis-info: --topology: %s\n", err);
        return -1;
    }
    long long sizes[] = { 2, 16, 256, 4096, 65536 }, nhosts = 0;
    for (uint32_t i = 0; i < n; i++)
        nhosts += hosts[i];
    emit_obj(e, "table");
    emit_str(e, "topology", topo);
    emit_int(e, "switches", n);
    emit_int(e, "host_ports", nhosts);
    emit_int(e, "rows", o.tables);
    emit_int(e, "ports", o.ports);
    emit_int(e, "payload", o.payload);
    emit_int(e, "pool", o.pool);
    emit_arr(e, "per_communicator");
    for (int i = 0; i < (only ? 1 : 5); i++)
        row_cost(e, &o, parent, hosts, n, only ? only : sizes[i]);
    emit_close(e);
    emit_close(e);
    free(parent);
    free(hosts);
    return 0;
}

static int report(int json, long long comm_size, int query, const char *topo, int only_table)
{
    struct emit e;
    struct acis_cvars cv;
    emit_begin(&e, stdout, json);
    if (!only_table)
        build(&e);
    char err[512] = "";
    int rc = only_table ? acis_cvars_parse(environ, &cv, err, sizeof err) : cvars(&e, &cv);
    if (rc != 0 && only_table)
        fprintf(stderr, "acis-info: %s\n", err);
    if (rc == 0 && !only_table) {
        switch_status(&e, &cv, query);
        node(&e, &cv);
    }
    if (rc == 0)
        rc = table(&e, &cv, topo, comm_size);
    emit_end(&e);
    return rc == 0 ? 0 : 1;
}

static int show_switch(const char *addr)
{
    uint64_t c[ACIS_SWC_COUNT];
    char why[256];
    int n = acis_dev_query_stats(addr, c, ACIS_SWC_COUNT, 2000, why, sizeof why);
    if (n < 0) {
        fprintf(stderr, "acis-info: %s\n", why);
        return 1;
    }
    printf("switch %s\n", addr);
    for (int i = 0; i < n; i++)
        printf("  %-20s %20llu  %s\n", acis_wire_counter_name((unsigned)i),
               (unsigned long long)c[i], acis_wire_counter_text((unsigned)i));
    return 0;
}

int main(int argc, char **argv)
{
    int json = 0, query = 1, single = 0, only_table = 0;
    long long comm_size = 0;
    const char *topo = "star";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("acis %s (built against MPICH %s)\n", PACKAGE_VERSION,
                   ACIS_MPICH_VERSION);
            single = 1;
        } else if (strcmp(argv[i], "--cvars") == 0 || strcmp(argv[i], "--cvars=text") == 0) {
            acis_cvars_print(stdout, 0);
            single = 1;
        } else if (strcmp(argv[i], "--cvars=markdown") == 0) {
            acis_cvars_print(stdout, 1);
            single = 1;
        } else if (strcmp(argv[i], "--switch") == 0 && i + 1 < argc) {
            if (show_switch(argv[++i]) != 0)
                return 1;
            single = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--no-switch") == 0) {
            query = 0;
        } else if (strcmp(argv[i], "--ct-size") == 0) {
            only_table = 1;
        } else if (strcmp(argv[i], "--topology") == 0 && i + 1 < argc) {
            topo = argv[++i];
        } else if (strcmp(argv[i], "--comm-size") == 0 && i + 1 < argc) {
            char *end;
            comm_size = strtoll(argv[++i], &end, 10);
            if (*end || comm_size < 1 || comm_size > 65536) {
                fprintf(stderr, "acis-info: --comm-size takes 1..65536, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "acis-info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    return single ? 0 : report(json, comm_size, query, topo, only_table);
}
