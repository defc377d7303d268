/* switchd.c -- acis-switchd: a standalone emulated switch serving jobs
 * across hosts and several jobs at once, alone or linked under a parent
 * switch in a fabric, or (--fabric) every switch of a fabric at once.
 *
 * usage: acis-switchd [--listen HOST:PORT | --verbs DEV[:PORT]]
 *                     [--uplink HOST:PORT | --fabric TOPOLOGY] [--ports N]
 *                     [--tables N] [--slots N] [--pool BYTES] [--payload BYTES]
 *                     [--hold N] [--setups N] [--job-rows N] [--job-ports N] [--fault-KIND RATE ...]
 *                     [--threads N] [--spin] [--verbose]
 * Prints "acis-switchd: listening on HOST:PORT" once bound (port 0 picks
 * one) and linked, or "acis-switchd: listening on verbs LID/QPN (DEV:PORT)"
 * on an RDMA queue pair.  SIGINT/SIGTERM stop it; --verbose then prints
 * its counters. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "switch.h"

static volatile sig_atomic_t stop_flag;
static atomic_int stop_run;             /* read by every serving thread */

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
    atomic_store(&stop_run, 1);         /* lock-free: safe in a handler */
}

static void usage(FILE *out)
{
    fputs("usage: acis-switchd [--listen HOST:PORT | --verbs DEV[:PORT]] [--uplink HOST:PORT]\n"
          "                    [--ports N] [--tables N] [--slots N] [--pool BYTES]\n"
          "                    [--payload BYTES] [--hold N] [--setups N]\n"
          "                    [--job-rows N] [--job-ports N] [--fault-KIND RATE ...]\n"
          "                    [--threads N] [--spin] [--verbose]\n"
          "  --listen    service address (default 127.0.0.1:0: loopback, any free port)\n"
          "  --uplink    join the switch at HOST:PORT as its child in a fabric: segments\n"
          "              are combined here and sent up, rows come from the top; give\n"
          "              every switch of a fabric the same --tables and --payload (a\n"
          "              link is refused otherwise); a row serves the smallest window\n"
          "              of its switches\n"
          "  --links     switches that may link below this one with --uplink (default 0)\n"
          "  --jobs      jobs this switch tracks, its own and those below (default\n"
          "              --ports, at least 256)\n"
          "  --link-ns, --link-mbps, --hop-ns  the timing model (counter model_ns): link\n"
          "              latency and bandwidth, a switch's delay per hop (default 440,\n"
          "              95900, 52: seed 000 tables 3.2 and 5.2)\n"
          "  --fabric    serve every switch of TOPOLOGY (fattree:leaves=L,spines=S,radix=R\n"
          "              or torus:XxYxZ) in this process, each on its own UDP port of\n"
          "              the --listen host (the top on --listen itself), linked as\n"
          "              --uplink links them; prints 'switch I listening on ADDR' for\n"
          "              each switch with host ports\n"
          "  --verbs     serve RDMA hosts (MPIR_CVAR_OFFLOAD_DEVICE=verbs) on a UD queue\n"
          "              pair of device DEV (auto: the nearest active) port PORT\n"
          "              (default its first active); prints the endpoint for\n"
          "              MPIR_CVAR_OFFLOAD_SWITCH; payload shrinks to the MTU\n"
          "  --ports     host ports, the switch radix (default 256)\n"
          "  --tables    communicator table rows (default 32)\n"
          "  --slots     aggregation slots, shared out per row (default 1024)\n"
          "  --pool      bytes of the aggregation pool, allocated once: every row's\n"
          "              window of slots (at most --slots / --tables each) and the\n"
          "              hold buffers (default 8388608)\n"
          "  --hold      pool buffers for floating-point pieces ahead of their turn\n"
          "              (default an eighth of the pool; with --threads, at least one\n"
          "              for each worker that serves rows)\n"
          "  --setups    communicator set-ups in progress at once (default 16)\n"
          "  --payload   data bytes per packet (default 16384)\n"
          "  --job-rows  table rows one job may hold (default 3/4 of --tables)\n"
          "  --job-ports host ports one job may hold (default all)\n"
          "  --fault-drop, -dup, -reorder, -delay, -corrupt RATE (0.01 or 1%),\n"
          "  --fault-delay-us US, --fault-seed N: inject faults into what it sends (UDP)\n"
          "  --threads   workers, each with its own socket on the service port and the\n"
          "              table rows r with r modulo N its number; the kernel steers each\n"
          "              datagram to its row's worker (default 1; UDP, without --uplink,\n"
          "              --links or --fault-*)\n"
          "  --spin      poll without sleeping while traffic flows\n"
          "  --verbose   log joins and table rows; print counters at exit\n", out);
}

/* Serve on UDP until a signal; counters into c.  0, 1 on error, 2 if it
 * could not start. */
static int serve_udp(const char *listen, const char *uplink, const struct acis_sw_opts *o,
                     int spin, uint64_t *c)
{
    char err[256];
    uint32_t port;
    struct acis_udpsw *u = acis_udpsw_create(listen, o, err, sizeof err);
    if (!u) {
        fprintf(stderr, "acis-switchd: %s\n", err);
        return 2;
    }
    if (uplink && acis_udpsw_uplink(u, uplink, 10000, &port, err, sizeof err) != 0) {
        fprintf(stderr, "acis-switchd: --uplink: %s\n", err);
        acis_udpsw_destroy(u);
        return 2;
    }
    if (uplink)
        printf("acis-switchd: linked to %s on its port %u\n", uplink, port);
    printf("acis-switchd: listening on %s\n", acis_udpsw_address(u));
    fflush(stdout);
    int rc = acis_udpsw_run(u, &stop_run, spin);
    acis_udpsw_counters(u, c);
    acis_udpsw_destroy(u);
    return rc == 0 ? 0 : 1;
}

/* --fabric: every switch of topo, the top first so each can link to its
 * parent, each served by a thread until a signal; counters summed. */
static int serve_fabric(const char *topo, const char *listen, const struct acis_sw_opts *o,
                        int spin, uint64_t *c)
{
    char err[256], here[96];
    uint32_t n = 0, *parent = NULL, *hosts = NULL, *order = NULL, *links = NULL, *depth = NULL;
    uint32_t port, deepest = 0;
    struct acis_udpsw **u = NULL;
    int rc = 2;
    if (acis_fabric_plan(topo, o->ports, &n, &parent, &hosts, err, sizeof err) != 0) {
        fprintf(stderr, "acis-switchd: --fabric: %s\n", err);
        return 2;
    }
    const char *colon = strrchr(listen, ':');
    snprintf(here, sizeof here, "%.*s:0", colon ? (int)(colon - listen) : 0, listen);
    u = calloc(n, sizeof *u);
    order = malloc(sizeof(uint32_t) * n);
    links = calloc(n, sizeof *links);
    depth = calloc(n, sizeof *depth);
    if (!u || !order || !links || !depth)
        goto out;
    for (uint32_t i = 0; i < n; i++) {            /* children and levels, in O(n depth) */
        if (parent[i] != UINT32_MAX)
            links[parent[i]]++;
        for (uint32_t j = i; parent[j] != UINT32_MAX; j = parent[j])
            depth[i]++;
        deepest = depth[i] > deepest ? depth[i] : deepest;
    }
    uint32_t k = 0;
    for (uint32_t d = 0; d <= deepest; d++)       /* the top, then level by level */
        for (uint32_t i = 0; i < n; i++)
            if (depth[i] == d)
                order[k++] = i;
    for (uint32_t q = 0; q < k; q++) {
        uint32_t i = order[q];
        if (!hosts[i] && !links[i] && parent[i] == UINT32_MAX)
            continue;                            /* a spine off the tree: idle */
        struct acis_sw_opts so = *o;
        so.ports = hosts[i] + links[i] ? hosts[i] + links[i] : 1;
        so.links = links[i];
        u[i] = acis_udpsw_create(parent[i] == UINT32_MAX ? listen : here, &so, err, sizeof err);
        if (!u[i] ||
            (parent[i] != UINT32_MAX &&
             acis_udpsw_uplink(u[i], acis_udpsw_address(u[parent[i]]), 10000, &port, err,
                               sizeof err) != 0) ||
            acis_udpsw_start(u[i], spin) != 0) {
            fprintf(stderr, "acis-switchd: --fabric: switch %u: %s\n", i,
                    u[i] ? err : err[0] ? err : "cannot start");
            goto out;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        if (hosts[i])
            printf("acis-switchd: switch %u listening on %s (%u host ports)\n", i,
                   acis_udpsw_address(u[i]), hosts[i]);
    printf("acis-switchd: fabric %s of %u switches ready\n", topo, n);
    fflush(stdout);
    while (!stop_flag) {
        struct timespec tick = { 0, 100000000 };
        nanosleep(&tick, NULL);
    }
    rc = 0;
    memset(c, 0, sizeof(uint64_t) * ACIS_SWC_COUNT);
out:
    for (uint32_t q = n; u && order && q-- > 0;) {  /* the leaves first */
        uint32_t i = order[q];
        if (!u[i])
            continue;
        acis_udpsw_stop(u[i]);
        uint64_t one[ACIS_SWC_COUNT];
        acis_udpsw_counters(u[i], one);
        for (int x = 0; rc == 0 && x < ACIS_SWC_COUNT; x++)
            c[x] += one[x];
        acis_udpsw_destroy(u[i]);
    }
    free(u);
    free(order);
    free(links);
    free(depth);
    free(parent);
    free(hosts);
    return rc;
}

/* The same on an RDMA queue pair of DEV[:PORT]. */
static int serve_verbs(const char *spec, const struct acis_sw_opts *o, int spin, uint64_t *c)
{
#ifdef ACIS_HAVE_VERBS
    char dev[64], err[256];
    int port = 0;
    const char *colon = strchr(spec, ':');
    snprintf(dev, sizeof dev, "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
    if (colon && ((port = atoi(colon + 1)) < 1 || port > 255)) {
        fprintf(stderr, "acis-switchd: --verbs takes DEV or DEV:PORT (port 1..255), not '%s'\n",
                spec);
        return 2;
    }
    struct acis_verbsw *v = acis_verbsw_create(dev, port, o, err, sizeof err);
    if (!v) {
        fprintf(stderr, "acis-switchd: %s\n", err);
        return 2;
    }
    printf("acis-switchd: listening on verbs %s (%s)\n", acis_verbsw_address(v),
           acis_verbsw_device(v));
    fflush(stdout);
    int rc = acis_verbsw_run(v, &stop_run, spin);
    acis_verbsw_counters(v, c);
    acis_verbsw_destroy(v);
    return rc == 0 ? 0 : 1;
#else
    (void)spec;
    (void)o;
    (void)spin;
    (void)c;
    fprintf(stderr, "acis-switchd: --verbs: this acis-switchd was built without libibverbs "
                    "(install libibverbs-dev and configure --with-verbs)\n");
    return 2;
#endif
}

int main(int argc, char **argv)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    const char *listen = "127.0.0.1:0", *verbs = NULL, *uplink = NULL, *fabric = NULL;
    int spin = 0;
    char err[256];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--spin") == 0) {
            spin = 1;
        } else if (strcmp(a, "--verbose") == 0) {
            o.verbose = 1;
        } else if (strcmp(a, "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else if (strcmp(a, "--verbs") == 0 && i + 1 < argc) {
            verbs = argv[++i];
        } else if (strcmp(a, "--uplink") == 0 && i + 1 < argc) {
            uplink = argv[++i];
        } else if (strcmp(a, "--fabric") == 0 && i + 1 < argc) {
            fabric = argv[++i];
        } else if (strcmp(a, "--threads") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || n < 1 || n > ACIS_SW_MAX_THREADS) {
                fprintf(stderr, "acis-switchd: --threads takes an integer in 1..%d, not '%s'\n",
                        ACIS_SW_MAX_THREADS, argv[i]);
                return 2;
            }
            o.threads = (uint32_t)n;
        } else if (strncmp(a, "--", 2) == 0 && i + 1 < argc) {
            if (acis_sw_opt_set(&o, a + 2, argv[++i], err, sizeof err) != 0) {
                fprintf(stderr, "acis-switchd: %s\n", err);
                return 2;
            }
        } else {
            fprintf(stderr, "acis-switchd: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if ((verbs != NULL) + (uplink != NULL) + (fabric != NULL) > 1) {
        fprintf(stderr, "acis-switchd: --verbs, --uplink and --fabric exclude each other\n");
        return 2;
    }
    if (o.threads > 1 && (verbs || uplink || fabric)) {
        fprintf(stderr, "acis-switchd: --threads serves UDP alone: not with --%s\n",
                verbs ? "verbs" : uplink ? "uplink" : "fabric");
        return 2;
    }
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    uint64_t c[ACIS_SWC_COUNT];
    int rc = verbs    ? serve_verbs(verbs, &o, spin, c)
             : fabric ? serve_fabric(fabric, listen, &o, spin, c)
                      : serve_udp(listen, uplink, &o, spin, c);
    if (rc == 2)
        return 1;                                 /* could not start: said why */
    if (o.verbose)
        for (int i = 0; i < ACIS_SWC_COUNT; i++)
            fprintf(stderr, "acis-switchd: %-22s %llu\n", acis_wire_counter_name((unsigned)i),
                    (unsigned long long)c[i]);
    return rc == 0 ? 0 : 1;
}
