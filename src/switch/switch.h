/* switch.h -- the one header of src/switch: an emulated in-network
 * collective switch.
 *
 * Two levels.  The *core* (struct acis_sw) is a pure state machine: packets
 * go in with the port they arrived on, packets come out through the
 * callbacks of struct acis_sw_io.  Unit tests drive it with simulated hosts
 * and no sockets.  The *UDP switch* (struct acis_udpsw) gives the core one
 * socket for the service address and every host port, and runs it in a
 * loop, in acis-switchd or in a thread of the job (the embedded switch). */
#ifndef ACIS_SWITCH_H
#define ACIS_SWITCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "acis/wire.h"
#include "util/util.h"

#define ACIS_PORT_SERVICE 0xffffffffu   /* the well-known address */
#define ACIS_PORT_UPLINK  0xfffffffeu   /* the link to the parent switch */

struct acis_sw_opts {
    uint32_t ports;          /* host ports (radix) */
    uint32_t tables;         /* communicator table rows */
    uint32_t slots;          /* aggregation slots, shared out per row: at
                                most slots / tables per row (the pool may
                                hold fewer) */
    uint32_t pool;           /* bytes of the aggregation pool, allocated once
                                and shared by every row and job: the rows'
                                slots (two buffers each, with their
                                bookkeeping) and the hold buffers; 0: what
                                slots ask for */
    uint32_t hold;           /* pool buffers for floating-point pieces that
                                arrive before their turn; 0: an eighth of
                                the pool (at least 4); with workers, at
                                least one per worker that owns rows */
    uint32_t setups;         /* communicator set-ups in progress at once;
                                0: 16 */
    uint32_t payload;        /* bytes of data per network packet */
    uint32_t credits;        /* packets a host may have in flight (what
                                the switch's receive buffer holds; on UDP
                                all hosts share it); 0: unlimited */
    uint32_t job_rows;       /* table rows one job may hold; 0: three
                                quarters of tables, leaving at least one
                                to other jobs when there are two or more */
    uint32_t job_ports;      /* host ports one job may hold; 0: all */
    uint32_t links;          /* ports switches below may take (link
                                HELLO); 0: none, a switch at the edge */
    uint32_t jobs;           /* jobs tracked (here and below); 0: the
                                ports, at least 256 */
    uint32_t threads;        /* workers, each serving the rows r with r
                                modulo threads its number (acis_sw_worker);
                                0 or 1: one.  At most ACIS_SW_MAX_THREADS,
                                and only on a switch with no links */
    /* The timing model (counter model_ns): what a link takes (latency,
       and bandwidth in Mb/s; 0: no serialization) and a switch adds per
       hop.  Defaults from seed 000, tables 3.2 and 5.2. */
    uint32_t link_ns, link_mbps, hop_ns;
    int verbose;             /* log control-plane events to stderr */
    int full_path;           /* every packet through the full checks, none
                                through quick.c's (tests and bench/swcore
                                compare the two) */
    struct acis_fault_rates faults;   /* injected on what the switch sends */
    uint64_t fault_seed;
};

#define ACIS_SW_DEFAULT_POOL (8u << 20)
/* The embedded switch's pool when MPIR_CVAR_OFFLOAD_SWITCH_POOL is auto:
 * the default for every 16384 bytes of payload, so rows get the same
 * window of slots whatever the packet size. */
static inline uint32_t acis_sw_auto_pool(uint32_t payload)
{
    return (uint32_t)((uint64_t)ACIS_SW_DEFAULT_POOL * ((payload + 16383) / 16384));
}
#define ACIS_SW_DEFAULT_OPTS                                             \
    { .ports = 256, .tables = 32, .slots = 1024, .pool = ACIS_SW_DEFAULT_POOL, \
      .payload = 16384, .link_ns = 440, .link_mbps = 95900, .hop_ns = 52 }

/* Packets of payload bytes a socket buffer of rcvbuf bytes holds for sure
 * (the kernel charges up to about twice the datagram plus a page). */
#define ACIS_BUF_PACKETS(rcvbuf, payload) \
    ((uint32_t)((rcvbuf) / (2 * ((payload) + ACIS_HDR_LEN + 1024))))

/* What the core needs from its transport.  peer identifies the sender of
 * the packet being handled on the service port (opaque to the core). */
struct acis_sw_io {
    void *ctx;
    /* A host joined: bind a port for it; reply goes out through the port. */
    int (*port_open)(void *ctx, uint32_t port, const void *peer);
    void (*port_close)(void *ctx, uint32_t port);
    /* Send the same packet (iov) to each of n ports. */
    void (*send)(void *ctx, const uint32_t *ports, uint32_t n,
                 const struct iovec *iov, int iovcnt);
    /* Answer the sender of the current service-port packet. */
    void (*reply)(void *ctx, const void *peer, const struct iovec *iov, int iovcnt);
    /* Optional: 1 if datagrams from and to peer never leave memory (a
     * loopback address): a host there whose HELLO offers it exchanges
     * its data packets unsealed (ACIS_F_UNSEALED). */
    int (*memory)(void *ctx, const void *peer);
};

struct acis_sw;

/* Check options (ranges) and build a core.  NULL with err filled. */
struct acis_sw *acis_sw_create(const struct acis_sw_opts *o,
                               const struct acis_sw_io *io,
                               char *err, size_t errlen);
void acis_sw_destroy(struct acis_sw *sw);

/* Handle one datagram that arrived on port (ACIS_PORT_SERVICE for the
 * service address; peer is then the sender, for port_open/reply). */
void acis_sw_input(struct acis_sw *sw, uint32_t port, const void *peer,
                   const uint8_t *pkt, size_t len);
/* The same for a packet of len >= ACIS_HDR_LEN bytes in two pieces: the
 * header's ACIS_HDR_LEN bytes at hdr, the payload at payload (one the
 * hosting process hands over without copying it; read only during the
 * call). */
void acis_sw_input_split(struct acis_sw *sw, uint32_t port, const void *peer,
                         const uint8_t *hdr, const uint8_t *payload, size_t len);

/* A switch built with o.threads = N > 1 has N workers.  Worker w's
 * handle (w = 0 is sw itself) takes packets like sw, from one thread at a
 * time, between acis_sw_enter and acis_sw_leave (a batch of packets, or
 * one); its sends go through its own io (acis_sw_worker_io, before any
 * packet; default sw's).  Each worker serves the rows r with
 * r % N == w; a packet of another worker's row, and every control packet,
 * is handled with every worker paused (counter crossed for the first),
 * so any packet may go to any worker: steering by row only saves the
 * pause.  acis_sw_counters sums the workers'.  With one worker, enter and
 * leave do nothing.  acis_sw_row_worker: the worker of row ctx's row. */
#define ACIS_SW_MAX_THREADS 64
struct acis_sw *acis_sw_worker(struct acis_sw *sw, uint32_t w);
void acis_sw_worker_io(struct acis_sw *worker, const struct acis_sw_io *io);
uint32_t acis_sw_workers(const struct acis_sw *sw);
uint32_t acis_sw_row_worker(const struct acis_sw *sw, uint32_t ctx);
void acis_sw_enter(struct acis_sw *worker);
void acis_sw_leave(struct acis_sw *worker);

/* This switch has a parent, on ACIS_PORT_UPLINK: rows come from it and
 * segments complete there.  Its boot id becomes the parent's (a fabric
 * names its contexts by the top's).  acis_sw_boot: the id in WELCOMEs. */
void acis_sw_set_parent(struct acis_sw *sw, uint32_t boot);
uint32_t acis_sw_boot(const struct acis_sw *sw);

/* Housekeeping, called now and then by the transport (at most every
 * 100 ms acts): a switch with a parent tells it again the joins and
 * leaves it has not confirmed. */
void acis_sw_tick(struct acis_sw *sw, uint64_t now_ns);

/* Copy the counters (ACIS_SWC_COUNT values, enum acis_switch_counter). */
void acis_sw_counters(const struct acis_sw *sw, uint64_t *out);

/* Rows in use that port is not a member of (O(tables)). */
uint32_t acis_sw_rows_without(const struct acis_sw *sw, uint32_t port);

/* Everything a switch built with o holds, allocated once when it is
 * created and never grown (acis-info --ct-size; a unit test compares it
 * with the heap acis_sw_create takes): per table row, per job, per
 * set-up in progress, the ports, the pool (the rows' slots with their
 * buffers and bookkeeping, the hold buffers) and the total.  window is
 * the slots each row gets, hold the hold buffers; window 0 (err says
 * why) when o cannot be built. */
struct acis_sw_size {
    uint32_t window, hold, jobs, setups;
    uint64_t row, job, setup, port;       /* bytes of one entry */
    uint64_t rows, jobs_bytes, setups_bytes, ports_bytes;
    uint64_t pool;                        /* slots and hold buffers */
    uint64_t other;                       /* the core itself, scratch, lists */
    uint64_t total;
};
void acis_sw_size(const struct acis_sw_opts *o, struct acis_sw_size *out,
                  char *err, size_t errlen);

/* The aggregation logic: inout[i] = inout[i] op in[i] for n elements of
 * wire type dt (a no-op if op is not defined for dt).  Buffers must be
 * aligned for the element type.  The kernels come in sets by instruction
 * set, chosen once for this CPU; every set gives bitwise the same result. */
void acis_reduce(unsigned op, unsigned dt, void *inout, const void *in, size_t n);

enum acis_isa { ACIS_ISA_BASE, ACIS_ISA_AVX2, ACIS_ISA_AVX512, ACIS_ISA_COUNT };

/* The set acis_reduce uses (the best this CPU runs), and a set's name. */
int acis_reduce_isa(void);
const char *acis_reduce_isa_name(int isa);

/* acis_reduce through the given set: 0, or -1 if this CPU cannot run it
 * (tests and bench/kernels compare the sets). */
int acis_reduce_on(int isa, unsigned op, unsigned dt, void *inout, const void *in, size_t n);

/* Parse one "--name value" switch option into o; shared by acis-switchd
 * and the embedded switch.  Returns 0, or -1 with err filled. */
int acis_sw_opt_set(struct acis_sw_opts *o, const char *name, const char *value,
                    char *err, size_t errlen);

/* -------------------------------------------------------------- fabric
 * (fabric.c) Cores linked into one aggregation tree in this process, for
 * tests and tools without sockets: "star", "fattree:leaves=L,spines=S,
 * radix=R" or "torus:XxYxZ".  Every core gets o but its own port count.
 * Hosts see fabric ports: io's callbacks get them, acis_fabric_input takes
 * them; a host joins through acis_fabric_service of its switch.  Both
 * return once the switches are quiet. */
struct acis_fabric;
/* The tree of topo: n switches, each one's parent (UINT32_MAX at the top)
 * and host ports (a star's: star_ports), in arrays the caller frees.  0,
 * or -1 with err naming the topologies there are. */
int acis_fabric_plan(const char *topo, uint32_t star_ports, uint32_t *n, uint32_t **parent,
                     uint32_t **hosts, char *err, size_t errlen);
/* The children a row of members ranks, placed on the first host ports
 * switch by switch, has on each switch of that tree: out[i] (n entries, 0
 * where the row is not held).  0, or -1 if the hosts are too few. */
int acis_fabric_row_children(const uint32_t *parent, const uint32_t *hosts, uint32_t n,
                             uint64_t members, uint32_t *out);
struct acis_fabric *acis_fabric_create(const char *topo, const struct acis_sw_opts *o,
                                       const struct acis_sw_io *hosts_io,
                                       char *err, size_t errlen);
void acis_fabric_destroy(struct acis_fabric *f);
uint32_t acis_fabric_switches(const struct acis_fabric *f);
/* Host ports of switch sw (0: a switch only switches connect to). */
uint32_t acis_fabric_host_ports(const struct acis_fabric *f, uint32_t sw);
/* The switch above sw, ACIS_PORT_SERVICE at the top. */
uint32_t acis_fabric_parent(const struct acis_fabric *f, uint32_t sw);
/* Bytes switch sw holds (acis_sw_size's total), of them its rows and job
 * entries in use now; the fabric's own bookkeeping around its switches. */
uint64_t acis_fabric_switch_bytes(const struct acis_fabric *f, uint32_t sw);
uint64_t acis_fabric_row_bytes(const struct acis_fabric *f, uint32_t sw);
uint64_t acis_fabric_bytes(const struct acis_fabric *f);
void acis_fabric_counters(const struct acis_fabric *f, uint32_t sw, uint64_t *out);
void acis_fabric_input(struct acis_fabric *f, uint32_t fport, const void *peer,
                       const uint8_t *pkt, size_t len);
void acis_fabric_service(struct acis_fabric *f, uint32_t sw, const void *peer,
                         const uint8_t *pkt, size_t len);

/* ------------------------------------------------------------ emulator */

/* A private core for one communicator (members' global ranks in order, of
 * a job of world ranks with key; slots segments at a time, payload bytes
 * per packet), used to finish open segments in software after the real
 * switch failed.  Feed member i's packet of a segment on the core's slot
 * slot, in that slot's use round (0/1, alternating per use); when every
 * member's packet is in, the answers come out through out(arg, member,
 * packet, len) carrying the core's own context, slot and round. */
struct acis_swemu;
typedef void (*acis_swemu_out)(void *arg, uint32_t member, const void *pkt, size_t len);
struct acis_swemu *acis_swemu_create(uint64_t key, const uint32_t *granks, uint32_t n,
                                     uint32_t world, uint32_t slots, uint32_t payload);
int acis_swemu_input(struct acis_swemu *e, uint32_t member, uint32_t slot, int round,
                     const uint8_t *pkt, size_t len, acis_swemu_out out, void *arg);
void acis_swemu_destroy(struct acis_swemu *e);
/* The private core's counters (ACIS_SWC_COUNT values). */
void acis_swemu_counters(const struct acis_swemu *e, uint64_t *out);

/* --------------------------------------------------------- UDP switch */

struct acis_udpsw;

/* Bind the service socket to listen ("HOST:PORT", port 0 picks one) and
 * build the core.  NULL with err filled. */
struct acis_udpsw *acis_udpsw_create(const char *listen,
                                     const struct acis_sw_opts *o,
                                     char *err, size_t errlen);
void acis_udpsw_destroy(struct acis_udpsw *u);

/* The core's counters (not thread-safe against a running thread; stop
 * it first or accept a torn read of a counter being bumped). */
void acis_udpsw_counters(const struct acis_udpsw *u, uint64_t *out);

/* The bound service address, "HOST:PORT". */
const char *acis_udpsw_address(const struct acis_udpsw *u);

/* Join the switch at parent ("HOST:PORT") as its child in a fabric, before
 * serving: a link HELLO, repeated every 100 ms for up to timeout_ms.  Both
 * must have as many table rows (rows are numbered alike); a row serves the
 * smallest payload and window of its switches.  0 with the link port at
 * the parent in *port, or -1 with err filled. */
int acis_udpsw_uplink(struct acis_udpsw *u, const char *parent, int timeout_ms,
                      uint32_t *port, char *err, size_t errlen);

/* Serve until *stop becomes nonzero.  spin: poll without sleeping while
 * traffic flows (1) or sleep in epoll whenever idle (0).  A switch made
 * with o.threads = N > 1 (no uplink, no faults) has a socket per worker
 * in an SO_REUSEPORT group on the service address; this serves worker
 * 0's and runs the others in threads of their own until it returns. */
int acis_udpsw_run(struct acis_udpsw *u, atomic_int *stop, int spin);

/* Embedded switch: serve in a thread of this process.  A thread of the
 * job that waits for the switch anyway may drive it instead: it calls
 * acis_udpsw_drive() in its wait loop (and may sleep in poll() on
 * acis_udpsw_fd()); the serving thread then stays parked until nobody
 * has driven for a couple of milliseconds, so a collective costs no
 * thread wake-up.  While a driver drives, the answers to the home port
 * go to the home function (below), in the driver's thread: it must hold
 * what that function needs. */
int acis_udpsw_start(struct acis_udpsw *u, int spin);
void acis_udpsw_stop(struct acis_udpsw *u);
int acis_udpsw_drive(struct acis_udpsw *u);
void acis_udpsw_release(struct acis_udpsw *u);
/* The port of the process that hosts the switch, once it joined; from
 * then on acis_udpsw_serves_others() says whether some row lacks it (its
 * members need the switch while that process is away from acis). */
void acis_udpsw_set_home(struct acis_udpsw *u, uint32_t port);
int acis_udpsw_serves_others(const struct acis_udpsw *u);
/* The hosting process's answers in place: while it drives the switch
 * (acis_udpsw_drive), each answer the switch sends to the home port
 * (header bytes, payload) goes to fn first; fn returns 1 if it took it, 0
 * to have it sent as a datagram.  Not with an injector of faults on the
 * ports.  Saves the answer's two system calls and two kernel copies on
 * the hosting process's core.  Set once, after acis_udpsw_set_home. */
typedef int (*acis_udpsw_home_fn)(void *arg, const uint8_t *hdr, const uint8_t *payload,
                                  size_t len);
void acis_udpsw_set_home_answers(struct acis_udpsw *u, acis_udpsw_home_fn fn, void *arg);
/* The hosting process's requests in place: a process that holds what its
 * home function needs may hand the switch its own data packets (header
 * bytes, payload) between acis_udpsw_take_begin(), which returns 0 when
 * it cannot now (the serving thread is at it, no home port yet, faults
 * injected, workers), and acis_udpsw_take_end().  acis_udpsw_take()
 * returns 0 for a packet it does not take (a control packet, too long):
 * send it, and those after it, as datagrams.  A taken packet is handled
 * at once as if it came from the home port, read where it is; the
 * answers it makes go out as datagrams, the home port's too (its process
 * is in the middle of a send).  Saves the packet's two system calls and
 * both kernel copies. */
int acis_udpsw_take_begin(struct acis_udpsw *u);
int acis_udpsw_take(struct acis_udpsw *u, const uint8_t *hdr, const uint8_t *payload,
                    size_t len);
void acis_udpsw_take_end(struct acis_udpsw *u);
int acis_udpsw_fd(const struct acis_udpsw *u);

/* -------------------------------------------------------- verbs switch
 * (verbsw.c) The core on one RDMA unreliable-datagram queue pair, for
 * hosts on the verbs channel: the queue pair is the service endpoint and
 * every host port (a port is the queue pair its host said HELLO from).
 * Packets are at most the port's MTU, so the payload shrinks to fit.
 * Runs in acis-switchd --verbs; only in builds with libibverbs
 * (ACIS_HAVE_VERBS). */

struct acis_verbsw;

/* Open dev ("auto" or a name) port (0: first active) and build the core.
 * NULL with err filled. */
struct acis_verbsw *acis_verbsw_create(const char *dev, int port,
                                       const struct acis_sw_opts *o,
                                       char *err, size_t errlen);
void acis_verbsw_destroy(struct acis_verbsw *v);
/* The service endpoint, "LID/QPN" or "GID/QPN" (MPIR_CVAR_OFFLOAD_SWITCH),
 * and the device port, "mlx5_0:1". */
const char *acis_verbsw_address(const struct acis_verbsw *v);
const char *acis_verbsw_device(const struct acis_verbsw *v);
int acis_verbsw_run(struct acis_verbsw *v, atomic_int *stop, int spin);
void acis_verbsw_counters(const struct acis_verbsw *v, uint64_t *out);

/* ------------------------------------------------ shared-memory switch
 * (shmsw.c) A switch whose ports are memory: one segment per job and node
 * that every process of the job there maps; the member that completes a
 * segment folds it and publishes the result once for all.  The channel
 * src/mpid/shm drives it. */

struct acis_shmsw;

/* One posted segment waiting for its answer: where and when its answer
 * will be, and (acis_shmsw_post's alone) the request as posted.  done
 * and ring come first, in this order: the device's ticket reads them as
 * its bell and ring (src/mpid/device.h). */
struct acis_shm_wait {
    const _Atomic uint64_t *done;   /* the slot's doorbell (the head of its
                                       struct acis_shm_res): ring once
                                       answered (acquire it, then read) */
    uint64_t ring;           /* this use of the slot + 1 */
    uint32_t row, member, slot;
    uint32_t len;            /* answer bytes asked for (the request's rx_len) */
    uint64_t off;            /* result-space byte they start at */
    const uint8_t *data;     /* where they are once answered */
    struct acis_hdr q;       /* the request: acis_shmsw_post fills it, for
                                acis_shmsw_ready; acis_shmsw_post_like
                                does not */
};

/* The head of a slot's result line, where the switch publishes each use
 * of the slot: error (0, ACIS_SHM_MISMATCH or ACIS_SHM_ABSTAINED), then
 * done = use + 1 with a release store, the futex word bell bumped after. */
struct acis_shm_res {
    _Atomic uint64_t done;
    _Atomic uint32_t bell;
    _Atomic uint32_t sleepers;   /* waiters asleep on bell */
    uint32_t error;
};

/* Create the segment name (shm_open) for ranks processes of job key, with
 * o's tables, slots and payload -- a smaller payload if the segment would
 * not fit in /dev/shm's free space (acis_shmsw_fit); 0, or -1 with why.
 * Unlink it once every process has attached. */
int acis_shmsw_create(const char *name, uint64_t key, uint32_t ranks,
                      const struct acis_sw_opts *o, char *why, size_t whylen);
int acis_shmsw_unlink(const char *name);
/* The payload a segment for ranks processes with o's geometry gets in
 * room bytes: o->payload if it fits, else the largest that does, 0 if not
 * even ACIS_MIN_PAYLOAD does. */
uint32_t acis_shmsw_fit(uint32_t ranks, const struct acis_sw_opts *o, uint64_t room);
struct acis_shmsw *acis_shmsw_attach(const char *name, char *why, size_t whylen);
void acis_shmsw_detach(struct acis_shmsw *s);
void acis_shmsw_counters(const struct acis_shmsw *s, uint64_t *out);
/* Segments that may wait for answers at once (rows x window). */
uint32_t acis_shmsw_capacity(const struct acis_shmsw *s);

/* A control request (HELLO, CT_CREATE, CT_FREE, STATS_REQ, BYE) from this
 * process: carried out, its answer packet (sealed) written to out
 * (ACIS_HDR_LEN + 4 + 8 * ACIS_SWC_COUNT bytes); the answer's length, 0
 * for none. */
size_t acis_shmsw_control(struct acis_shmsw *s, const struct acis_hdr *q,
                          const uint8_t *payload, uint8_t *out);

/* Post this process's packet of a segment (q with its payload); if it is
 * the last the segment waited for, fold and publish.  0 with w filled, or
 * -1 (counted) if the packet does not fit its row.  Posts on one handle
 * must not overlap (the caller serializes them: the device lock): the
 * handle's use counts and the process's counter block are written
 * without locked instructions. */
int acis_shmsw_post(struct acis_shmsw *s, const struct acis_hdr *q, const uint8_t *payload,
                    struct acis_shm_wait *w);
/* A post checked and worked out once for the packets that differ from q
 * only in sequence number, slot and round (the short path's calls of one
 * shape): 0 with p filled, or -1 if q would be refused (nothing counted;
 * post it with acis_shmsw_post, which counts it).  acis_shmsw_post_like
 * posts such a packet q as acis_shmsw_post would, reading only those
 * three of q; p stays good while its row is the communicator's (else the
 * post checks q afresh). */
struct acis_shm_prep {
    struct acis_hdr q;       /* the packet prepared */
    uint32_t row, gen, member, n;   /* its row, generation, our place, members */
    uint64_t ans_off;        /* result-space byte the answer starts at */
    uint64_t piece_at;       /* where the payload goes in the result buffer */
    uint8_t in_port;         /* or: in the port (a reduction's piece) */
    uint8_t scan;            /* the answer is in the port (scans) */
    _Alignas(8) uint8_t port[56];   /* the port's line after its use word */
};
int acis_shmsw_prepare(const struct acis_shmsw *s, const struct acis_hdr *q,
                       struct acis_shm_prep *p);
int acis_shmsw_post_like(struct acis_shmsw *s, const struct acis_shm_prep *p,
                         const struct acis_hdr *q, const uint8_t *payload,
                         struct acis_shm_wait *w);
/* 1 with the answer (header and where its payload is, valid until this
 * process posts to the slot again) if w's segment is complete, else 0. */
int acis_shmsw_ready(const struct acis_shmsw *s, const struct acis_shm_wait *w,
                     struct acis_hdr *a, const uint8_t **payload);
/* The answer of w for a poster that knows what it asked (the short
 * path): ACIS_SHM_WAITING while w's segment is not complete; ACIS_SHM_DONE
 * with *data the q.rx_len bytes it asked for (at result-space byte
 * base + q.rx_off; valid until this process posts to the slot again); or
 * ACIS_SHM_MISMATCH (members posted different collectives) or
 * ACIS_SHM_ABSTAINED (a member abstained), with *data NULL.  What
 * acis_shmsw_ready() says, without writing a header. */
enum { ACIS_SHM_WAITING, ACIS_SHM_DONE, ACIS_SHM_MISMATCH, ACIS_SHM_ABSTAINED };
static inline int acis_shmsw_result(const struct acis_shm_wait *w, const uint8_t **data)
{
    const struct acis_shm_res *res = (const struct acis_shm_res *)(const void *)w->done;
    *data = NULL;
    if (atomic_load_explicit(w->done, memory_order_acquire) != w->ring)
        return ACIS_SHM_WAITING;
    if (res->error)                /* written before done's store: its acquire covers it */
        return (int)res->error;    /* ACIS_SHM_MISMATCH or ACIS_SHM_ABSTAINED */
    *data = w->data;
    return ACIS_SHM_DONE;
}
/* The header w's post sent, as far as the slot still shows it (opcode,
 * ctx, seq, seg_index, slot; the rest 0), for a report: valid until this
 * process posts to the slot again. */
void acis_shmsw_posted(const struct acis_shmsw *s, const struct acis_shm_wait *w,
                       struct acis_hdr *q);
/* Sleep until w's slot publishes or ms pass. */
void acis_shmsw_sleep(const struct acis_shmsw *s, const struct acis_shm_wait *w, int ms);

#endif
