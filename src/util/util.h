/* util.h -- the one header of src/util: the CVAR table and its parser,
 * logging, per-collective counters and a monotonic clock.
 *
 * State of this layer lives in one context, acis_util (see struct
 * acis_util_ctx below): parsed CVAR values, the process's rank for log
 * prefixes, and the counters.  Nothing here needs MPI. */
#ifndef ACIS_UTIL_H
#define ACIS_UTIL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "acis/acis.h"

/* ---------------------------------------------------------------- CVARs */

enum acis_cvar_type { ACIS_CVAR_ENUM, ACIS_CVAR_BOOL, ACIS_CVAR_INT,
                      ACIS_CVAR_SIZE, ACIS_CVAR_ADDR, ACIS_CVAR_RATE, ACIS_CVAR_NAME };

/* RATE values are stored in parts per billion. */
#define ACIS_RATE_ONE 1000000000LL

/* Parse a rate: a fraction in [0, 1] ("0.05") or a percentage ("5%").
 * 0 and *ppb, or -1. */
int acis_rate_parse(const char *text, long long *ppb);

enum acis_cvar_id {
#define ACIS_CVAR(id, type, scope, def, allowed, desc) ACIS_CV_##id,
#include "cvars.def"
#undef ACIS_CVAR
    ACIS_CV_COUNT
};

/* Values of enum CVARs, by position in their allowed list. */
enum { ACIS_AUTO = 0, ACIS_ON = 1, ACIS_OFF = 2 };                 /* auto|on|off */
enum { ACIS_DEV_UDP, ACIS_DEV_SHM, ACIS_DEV_VERBS, ACIS_DEV_NONE, ACIS_DEV_AUTO }; /* DEVICE */
enum { ACIS_SETUP_LAZY, ACIS_SETUP_EAGER };                         /* COMM_SETUP */
enum { ACIS_PERS_ANY, ACIS_PERS_STRICT };                      /* PERSISTENT_ORDER */
enum { ACIS_WAIT_AUTO, ACIS_WAIT_SPIN, ACIS_WAIT_BLOCK };           /* WAIT */
enum { ACIS_REJOIN_NEW, ACIS_REJOIN_NEVER };                           /* REJOIN */
enum { ACIS_HIER_AUTO, ACIS_HIER_FLAT, ACIS_HIER_NODE };               /* HIERARCHY */
enum { ACIS_FAULT_INIT_NONE, ACIS_FAULT_INIT_TABLES, ACIS_FAULT_INIT_HIER,
       ACIS_FAULT_INIT_NB };                                           /* FAULT_INIT */

struct acis_cvar {
    const char *name;            /* after the MPIR_CVAR_ prefix */
    enum acis_cvar_type type;
    int all_eq;                  /* must be equal on all ranks */
    const char *defval;
    const char *allowed;         /* enum words, or "MIN..MAX" for numbers */
    const char *desc;
};

extern const struct acis_cvar acis_cvar_table[ACIS_CV_COUNT];

#define ACIS_CVAR_STRLEN 256

/* Parsed values: num holds enum positions, booleans and numbers; str holds
 * the ADDR and NAME text ("auto" for the default). */
struct acis_cvars {
    long long num[ACIS_CV_COUNT];
    char str[ACIS_CV_COUNT][ACIS_CVAR_STRLEN];
    const char *source[ACIS_CV_COUNT];   /* env name used, NULL for default */
};

/* Parse every CVAR from env (a NULL-terminated "NAME=value" array, normally
 * environ).  Returns 0, or -1 with one line in err naming the variable, the
 * value and what is allowed.  A variable with our prefix that is not in the
 * table is an error too (a typo must not pass silently). */
int acis_cvars_parse(char *const *env, struct acis_cvars *out,
                     char *err, size_t errlen);

/* Parse one value of one CVAR; used by acis_cvars_parse and the tests.
 * Returns 0 or -1 with err filled ("allowed: ..."). */
int acis_cvar_parse_value(enum acis_cvar_id id, const char *text,
                          long long *num, char *str, size_t strlen_,
                          char *err, size_t errlen);

/* The value of one parsed CVAR as text (enum word, number, address,
 * fraction). */
void acis_cvar_format(enum acis_cvar_id id, const struct acis_cvars *cv, char *buf,
                      size_t len);

/* 64-bit hash of the ALL_EQ values, to check that all ranks agree. */
uint64_t acis_cvars_hash(const struct acis_cvars *cv);

/* Print the table: format 0 = plain text (acis-info --cvars), 1 = Markdown
 * (docs/cvars.md). */
void acis_cvars_print(FILE *out, int markdown);

/* -------------------------------------------------------------- logging */

/* Print "acis[rank]: message" to stderr if level <= the VERBOSE CVAR; level
 * 0 always prints. */
void acis_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------- counters */

/* Calls are not counted separately: calls = offloaded + sum(by_reason). */
struct acis_coll_counters {
    atomic_uint_fast64_t offloaded, bytes, offloaded_bytes;
    atomic_uint_fast64_t by_reason[ACIS_REASON_COUNT];
};

struct acis_host_counters {
    atomic_uint_fast64_t packets_sent, packets_received;
    atomic_uint_fast64_t bytes_sent, bytes_received, packets_dropped;
    atomic_uint_fast64_t comms_offloaded, comms_refused;
    atomic_uint_fast64_t retransmits, switch_failures, recovered;
    atomic_uint_fast64_t peer_segments, peer_served, redone;
    atomic_uint_fast64_t hier_calls, helper_rounds, abstained, recovery_failed;
    atomic_uint_fast64_t short_path, early_return, own_block, packets_foreign;
    atomic_uint_fast64_t persistent_starts, quick_path, home_answers;
    atomic_uint_fast64_t home_requests;
};

/* Add v to a counter.  Single-threaded processes (the common case) use a
 * plain load and store, which costs nothing extra; MPI_THREAD_MULTIPLE
 * processes use an atomic add so no count is lost. */
static inline void acis_add(atomic_uint_fast64_t *c, uint64_t v);

/* Count one call of coll; reason NONE means offloaded. */
static inline void acis_count_call(struct acis_coll_counters *c,
                                   acis_reason_t reason, uint64_t bytes)
{
    if (bytes)
        acis_add(&c->bytes, bytes);
    if (reason == ACIS_REASON_NONE) {
        acis_add(&c->offloaded, 1);
        acis_add(&c->offloaded_bytes, bytes);
    } else {
        acis_add(&c->by_reason[reason], 1);
    }
}

#define ACIS_COUNT(field, n) acis_add(&acis_util.host.field, (n))

/* Snapshot counters into the public structs. */
void acis_stats_snapshot(acis_coll_t coll, struct acis_coll_stats *out);
void acis_host_snapshot(struct acis_host_stats *out);
void acis_stats_zero(void);

/* ------------------------------------------------------------- network */

struct sockaddr;
struct sockaddr_storage;

/* Resolve "HOST:PORT" ([v6]:port allowed).  0, or -1 with err filled. */
int acis_addr_parse(const char *text, struct sockaddr_storage *out,
                    unsigned int *len, char *err, size_t errlen);

/* 1 if a and b are the same IPv4 or IPv6 address and port. */
int acis_addr_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b);

/* "HOST:PORT" of a socket address. */
void acis_addr_format(const struct sockaddr *a, unsigned int len, char *out,
                      size_t outlen);

/* 1 if a is a loopback address (127/8, ::1, ::ffff:127.x). */
int acis_addr_loopback(const struct sockaddr *a);

/* This host's first address other hosts may reach: what its name resolves
 * to, else the first up IPv4 interface's; never loopback.  Port 9 (set
 * the one you need).  0, or -1 if the host has only loopback. */
int acis_host_address(struct sockaddr_storage *out, unsigned int *len);

/* Ask for bytes of send and receive buffer; returns the receive buffer the
 * kernel granted (its accounting size). */
int acis_sock_buffers(int fd, int bytes);

/* An RDMA unreliable-datagram endpoint: a queue pair on a port reached by
 * its LID (InfiniBand) or its GID (RoCE, or InfiniBand across subnets).
 * Written "LID/QPN" or "GID/QPN", GID in IPv6 notation, numbers decimal
 * or 0x-hex: "7/0x1a2b", "fe80::1e34:daff:fe5a:1234/291". */
struct acis_ib_addr {
    uint8_t gid[16];
    int has_gid;                 /* else lid */
    uint16_t lid;
    uint32_t qpn;                /* 24 bits */
};

/* 0, or -1 if text is not LID/QPN or GID/QPN. */
int acis_ib_addr_parse(const char *text, struct acis_ib_addr *a);
/* The text form acis_ib_addr_parse reads (GID if has_gid, else LID). */
void acis_ib_addr_format(const struct acis_ib_addr *a, char *out, size_t outlen);

/* ------------------------------------------------------ fault injection */

#define ACIS_FAULT_MAX_PACKET 65536

/* Rates in parts per billion; delay_ns for delayed packets. */
struct acis_fault_rates {
    uint64_t drop, dup, reorder, delay, corrupt;
    uint64_t delay_ns;
};

struct acis_held {
    uint64_t due;
    uint32_t dest;
    size_t len;
    uint8_t *buf;
    int after_next;              /* reordered: goes out after the next send */
};

/* One injector per sender (not thread-safe: the sender's lock covers it). */
struct acis_fault {
    struct acis_fault_rates r;
    int active;                  /* any rate non-zero */
    uint64_t rng;
    struct acis_held *held;
    size_t nheld, cap;
    uint64_t dropped, duplicated, reordered, delayed, corrupted;
};

/* Deliver one packet to dest (the sender's own meaning: a port, or 0). */
typedef void (*acis_fault_sink)(void *ctx, uint32_t dest, const void *buf, size_t len);

void acis_fault_init(struct acis_fault *f, const struct acis_fault_rates *r, uint64_t seed);
void acis_fault_free(struct acis_fault *f);

/* Send through the injector: the sink is called zero, one or two times
 * now, or later from acis_fault_flush(). */
void acis_fault_send(struct acis_fault *f, acis_fault_sink sink, void *ctx, uint32_t dest,
                     const uint8_t *buf, size_t len, uint64_t now);
void acis_fault_flush(struct acis_fault *f, acis_fault_sink sink, void *ctx, uint64_t now);

/* Draw number n of a fault that happens with probability ppb / 1e9, from
 * seed (a pure function: callers number their draws, so threads need no
 * lock).  1 if it happens. */
int acis_fault_pick(uint64_t ppb, uint64_t seed, uint64_t n);

/* Set one rate by name (drop, dup, reorder, delay, corrupt); 0 or -1. */
int acis_fault_opt(struct acis_fault_rates *r, const char *name, const char *value);

/* ---------------------------------------------------------------- cores */

/* Processing units of this node the job may use (hwloc; not this
 * process's binding); at least 1. */
int acis_cores(void);

/* This node as hwloc sees it (acis-info); 0, or -1 if hwloc failed. */
struct acis_node_topo {
    int packages, numa_nodes, cores, pus, allowed_pus;
};
int acis_node_topo(struct acis_node_topo *t);

/* Ask for a short scheduler slice (us) for the calling thread, so it
 * preempts computation when it wakes (Linux EEVDF); 0, or -1 if refused. */
int acis_thread_short_slice(unsigned us);

/* ---------------------------------------------------------------- clock */

/* Monotonic time in nanoseconds. */
uint64_t acis_now_ns(void);

/* --------------------------------------------------------------- context */

/* Lock ownership: cv, rank, verbose and threaded are set in MPI_Init,
 * before any other acis thread starts, and read-only after; the counters
 * are atomic variables, updated as acis_add says, by any thread. */
struct acis_util_ctx {
    struct acis_cvars cv;        /* parsed at MPI_Init */
    int rank;                    /* world rank for log prefixes, -1 before */
    int verbose;                 /* copy of OFFLOAD_VERBOSE for the hot path */
    int threaded;                /* MPI_THREAD_MULTIPLE: counters use atomic adds */
    struct acis_coll_counters coll[ACIS_COLL_COUNT];
    struct acis_host_counters host;
};

extern struct acis_util_ctx acis_util;

static inline void acis_add(atomic_uint_fast64_t *c, uint64_t v)
{
    if (acis_util.threaded)
        atomic_fetch_add_explicit(c, v, memory_order_relaxed);
    else
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                              memory_order_relaxed);
}

/* Shorthand for a parsed numeric CVAR value. */
#define ACIS_CV(id) (acis_util.cv.num[ACIS_CV_##id])

#endif
