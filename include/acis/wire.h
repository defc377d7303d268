/* wire.h -- the acis wire protocol, shared by hosts and switches and nothing
 * else.  docs/protocol.md is the byte-level specification; this header is
 * its C form: opcodes, the datatype and operation codes, the 80-byte packet
 * header, control payloads, switch counters, and the encode/decode functions
 * (src/wire) that both sides use to build and validate packets.
 *
 * Every multi-byte field is little-endian on the wire.  A receiver trusts
 * nothing: acis_wire_decode() checks every field and returns a reason code
 * that the receiver counts before dropping the packet. */
#ifndef ACIS_WIRE_H
#define ACIS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACIS_WIRE_MAGIC    0x53494341u   /* bytes 'A' 'C' 'I' 'S' */
#define ACIS_WIRE_VERSION  2
#define ACIS_HDR_LEN       80
#define ACIS_HDR_CHECKSUM  44     /* offset of the checksum field */
#define ACIS_MAX_PAYLOAD   65000         /* fits one UDP datagram with header */
#define ACIS_MIN_PAYLOAD   64            /* smallest segment a switch may ask for */
#define ACIS_NO_RANK       0xffffffffu   /* src of packets sent by a switch */

/* Opcode byte: kind in bits 0-4, algorithm in bits 5-7. */
#define ACIS_OPC_KIND(opc)  ((opc) & 0x1f)
#define ACIS_OPC_ALG(opc)   (((opc) >> 5) & 0x7)
#define ACIS_OPC(kind, alg) ((uint8_t)(((alg) << 5) | (kind)))

enum acis_kind {
    ACIS_K_NONE = 0,
    /* collectives (data packets) */
    ACIS_K_BARRIER = 1,
    ACIS_K_BCAST = 2,
    ACIS_K_REDUCE = 3,
    ACIS_K_ALLREDUCE = 4,
    ACIS_K_GATHER = 5,
    ACIS_K_SCATTER = 6,
    ACIS_K_ALLGATHER = 7,
    ACIS_K_REDUCE_SCATTER = 8,
    ACIS_K_SCAN = 9,
    ACIS_K_EXSCAN = 10,
    ACIS_K_COLL_LAST = ACIS_K_EXSCAN,
    /* control */
    ACIS_K_HELLO = 16,        /* host -> switch service port: join a job */
    ACIS_K_WELCOME = 17,      /* switch -> host, from the host's own port */
    ACIS_K_CT_CREATE = 18,    /* leader -> switch: table entry for a communicator */
    ACIS_K_CT_REPLY = 19,     /* switch -> leader */
    ACIS_K_CT_FREE = 20,      /* leader -> switch */
    ACIS_K_CT_FREED = 21,     /* switch -> leader */
    ACIS_K_STATS_REQ = 22,    /* anyone -> switch service port */
    ACIS_K_STATS_REPLY = 23,
    ACIS_K_BYE = 24,          /* host -> switch: release my port */
    /* between hosts, after a switch failure (recovery) */
    ACIS_K_PEER_ASK = 25,     /* host -> host: your packet of a segment, please */
    /* between switches of a fabric (child -> parent: up; parent -> child: down) */
    ACIS_K_LINK_JOIN = 26,    /* up: rank src of job_key is below me */
    ACIS_K_LINK_LEAVE = 27,   /* up: rank src left */
    ACIS_K_CT_INSTALL = 28,   /* down: hold row ctx for the members counted here */
    /* communicator set-up on a network switch (no member list anywhere) */
    ACIS_K_CT_JOIN = 29,      /* member -> switch: I am in the communicator being
                                 set up; child switch -> parent: members below */
    ACIS_K_LAST = ACIS_K_CT_JOIN
};

/* Algorithm bits.  FLAT: every member sends one packet per segment and gets
 * one back (data or acknowledgement); the switch aggregates in one step.
 * VAR: the same for gather and allgather with blocks of different sizes
 * (the v-variants); the switch then checks that pieces tile the segment
 * instead of checking each member's block. */
enum acis_alg { ACIS_ALG_FLAT = 0, ACIS_ALG_VAR = 1 };

/* Reduction operations. */
enum acis_wop {
    ACIS_OP_NONE = 0, ACIS_OP_SUM, ACIS_OP_PROD, ACIS_OP_MIN, ACIS_OP_MAX,
    ACIS_OP_LAND, ACIS_OP_LOR, ACIS_OP_LXOR, ACIS_OP_BAND, ACIS_OP_BOR,
    ACIS_OP_BXOR, ACIS_OP_MINLOC, ACIS_OP_MAXLOC,
    ACIS_OP_COUNT
};

/* Element types.  Pair types use the C struct layout of the x86-64 / LP64
 * little-endian ABI: value at offset 0, int index after it, padding to the
 * struct's alignment (its size is the MPI extent). */
#define ACIS_WIRE_DTYPES(X)                                  \
    X(NONE, 0)                                               \
    X(I8, 1) X(U8, 1) X(I16, 2) X(U16, 2)                    \
    X(I32, 4) X(U32, 4) X(I64, 8) X(U64, 8)                  \
    X(F32, 4) X(F64, 8) X(F80, 16)                           \
    X(C32, 8) X(C64, 16) X(C80, 32)                          \
    X(BOOL, 1) X(BYTE, 1)                                    \
    X(FLOAT_INT, 8) X(DOUBLE_INT, 16) X(LONG_INT, 16)        \
    X(2INT, 8) X(SHORT_INT, 8) X(LONG_DOUBLE_INT, 32)

enum acis_wdt {
#define ACIS_X(name, size) ACIS_DT_##name,
    ACIS_WIRE_DTYPES(ACIS_X)
#undef ACIS_X
    ACIS_DT_COUNT
};

/* Flags. */
#define ACIS_F_RESULT  0x0001   /* switch -> host */
#define ACIS_F_ACK     0x0002   /* result without data: segment complete */
#define ACIS_F_ROUND   0x0004   /* slot round bit */
#define ACIS_F_ERROR   0x0008   /* switch could not serve; see payload */
#define ACIS_F_PENDING 0x0010   /* switch -> host: your repeat is counted, the
                                   segment waits for other members (alive) */
#define ACIS_F_LOST    0x0020   /* host packet: the sender had lost its switch
                                   when it started the collective (recovery) */
#define ACIS_F_ABSTAIN 0x0040   /* host packet: the sender cannot take part (no
                                   memory for its data) and sends none; switch
                                   answer (with ERROR): a member abstained, every
                                   member redoes the collective in MPICH */
#define ACIS_F_UNSEALED 0x0080  /* data packet with checksum 0, sent where the
                                   path never leaves memory (loopback) between
                                   a switch and a host whose HELLO offered it
                                   (ACIS_HELLO_UNSEALED); taken without its
                                   CRC only there (acis_wire_decode_from) */
#define ACIS_F_KNOWN   0x00ff

/* The header, decoded.  Field order and widths are those on the wire. */
struct acis_hdr {
    uint32_t magic;          /*  0 */
    uint8_t  version;        /*  4 */
    uint8_t  opcode;         /*  5 kind | algorithm << 5 */
    uint8_t  op;             /*  6 enum acis_wop */
    uint8_t  dtype;          /*  7 enum acis_wdt */
    uint16_t flags;          /*  8 */
    uint16_t slot;           /* 10 aggregation slot within the context's window */
    uint32_t payload_len;    /* 12 bytes after the header */
    uint64_t job_key;        /* 16 random per job, chosen at MPI_Init */
    uint32_t ctx;            /* 24 context id given by the switch (0: none) */
    uint32_t seq;            /* 28 collective sequence number on ctx; control: request id */
    uint32_t src;            /* 32 sender's global rank, ACIS_NO_RANK from a switch */
    uint32_t root;           /* 36 root, as a rank of the communicator */
    uint32_t seg_index;      /* 40 segment of the result space */
    uint32_t checksum;       /* 44 CRC-32C of header (this field 0) and payload */
    uint64_t seg_offset;     /* 48 where the payload sits in the result space */
    uint64_t total_len;      /* 56 bytes of the result space */
    uint32_t rx_off;         /* 64 part of the segment the sender wants back */
    uint32_t rx_len;         /* 68 */
    uint32_t member;         /* 72 data packets from a host: the sender's rank in
                                the communicator (the fold order of floating-point
                                reductions, a scan's prefix); else 0 */
    uint32_t reserved;       /* 76 zero */
};

/* Why a packet was rejected.  X(name, text). */
#define ACIS_WIRE_ERRORS(X)                                         \
    X(OK, "valid")                                                  \
    X(SHORT, "shorter than the header")                             \
    X(MAGIC, "bad magic")                                           \
    X(VERSION, "unsupported version")                               \
    X(LENGTH, "payload length disagrees with datagram length")      \
    X(TOO_BIG, "payload larger than allowed")                       \
    X(OPCODE, "unknown opcode")                                     \
    X(OP, "unknown reduction operation")                            \
    X(DTYPE, "unknown datatype")                                    \
    X(OP_DTYPE, "operation not defined for the datatype")           \
    X(FLAGS, "unknown flags")                                       \
    X(RANGE, "segment or receive range outside the result space")   \
    X(ALIGN, "length not a multiple of the element size")           \
    X(CHECKSUM, "checksum mismatch")                                \
    X(RESERVED, "reserved field not zero")

enum acis_wire_err {
#define ACIS_X(name, text) ACIS_WERR_##name,
    ACIS_WIRE_ERRORS(ACIS_X)
#undef ACIS_X
    ACIS_WERR_COUNT
};

/* ---- control payloads (all fields little-endian u32 unless noted) ---- */

/* HELLO: header.src = global rank, header.job_key; payload: */
#define ACIS_HELLO_LEN 8         /* u32 world_size, u32 flags */
#define ACIS_HELLO_UNSEALED 2u   /* flags: a host on loopback that sends and
                                    takes unsealed data packets (ACIS_F_UNSEALED) */
#define ACIS_HELLO_SWITCH 1u     /* flags: a switch asks its parent for a
                                    link port; src is its boot id, world 0 */

/* WELCOME: header.seq echoes the HELLO's; payload: */
#define ACIS_WELCOME_LEN 32      /* u32 status, port, max_payload, window,
                                    table_capacity, radix, credits (packets
                                    a host may have in flight to its port),
                                    boot (random, drawn when the switch
                                    started: names this switch's contexts) */

/* CT_CREATE (the shared-memory switch only, whose rows live in the job's
 * own memory): header.seq = request id; payload u32 comm_size, then
 * comm_size u32 global ranks in communicator rank order. */
#define ACIS_CT_CREATE_MAX ((ACIS_MAX_PAYLOAD - 4) / 4)

/* CT_JOIN (network switches): every member of a communicator being set up
 * sends it, repeated until answered by CT_REPLY.  header.seq = the set-up's
 * id and header.root = the global rank of the communicator's rank 0 (both
 * the same on every member: with the job key they name the set-up),
 * header.src = the sender's global rank; payload u32 comm_size, u32 member
 * (the sender's rank in the communicator).  Between switches (child ->
 * parent, src ACIS_NO_RANK) the second word is the number of members
 * counted at the child and below it.  A switch counts members per port
 * and knows no member list: the top of the tree has them all when its
 * count reaches comm_size. */
#define ACIS_CT_JOIN_LEN 8

/* CT_REPLY: header.seq and header.root echo the request's (a CT_JOIN's
 * answer goes down the tree to every member); payload u32 status, ctx,
 * window, max_payload, flags.  Child -> parent (confirming CT_INSTALL):
 * status, ctx, and the levels of switches from the child down. */
#define ACIS_CT_REPLY_LEN 20
#define ACIS_CT_REPLY_MIN 16     /* what switches before flags sent */
#define ACIS_CT_SPANS 1u         /* flags: the row spans linked switches, which
                                    serve no scans (ACIS_K_SCAN, EXSCAN) */
#define ACIS_CT_OWN_BLOCK 2u     /* flags: the switch takes an empty piece from
                                    a gather or scatter root for a segment
                                    inside the root's own block (switches
                                    before 2026-11-24 refuse it) */
#define ACIS_CT_SCAN_SPLIT 4u    /* flags: scan and exscan segments are
                                    acis_scan_seg_bytes() long (the switch
                                    keeps every member's piece of a segment
                                    in one aggregation buffer) */

/* CT_FREE: header.ctx; CT_FREED: header.ctx, payload u32 status.  A
 * switch with a parent passes CT_FREE up; the top drops the row and sends
 * CT_FREE down every link of the row, and the switch the request came in
 * at answers it once the row is gone there. */
#define ACIS_STATUS_LEN 4

/* LINK_JOIN: child -> parent, job header.job_key has ranks at or below the
 * child (src ACIS_NO_RANK); payload: */
#define ACIS_LINK_JOIN_LEN 4     /* u32 world_size */
/* LINK_LEAVE: the job has no rank there any more, no payload.  The parent
 * confirms either with the same kind and ACIS_F_RESULT (ERROR: it cannot
 * take the job); the child repeats until confirmed.  CT_INSTALL: header.ctx,
 * job_key, seq and root of the set-up (as CT_JOIN's); payload: */
#define ACIS_CT_INSTALL_LEN 4    /* u32 comm_size */

/* Status codes of WELCOME, CT_REPLY and CT_FREED. */
enum acis_status {
    ACIS_ST_OK = 0,
    ACIS_ST_NO_PORT,          /* switch has no free host port */
    ACIS_ST_JOB_MISMATCH,     /* job known with another size */
    ACIS_ST_TABLE_FULL,       /* no free communicator table row */
    ACIS_ST_NO_SLOTS,         /* not enough aggregation slots */
    ACIS_ST_UNKNOWN_RANK,     /* a member never said HELLO */
    ACIS_ST_BAD_REQUEST,
    ACIS_ST_NO_CTX,           /* no such context (CT_FREE) */
    ACIS_ST_JOB_LIMIT         /* the job holds all the rows or ports one job
                                 may hold */
};

/* Switch counters, in the order of the STATS_REPLY payload (u32 count, then
 * count u64 values).  X(name, text). */
#define ACIS_SWITCH_COUNTERS(X)                                              \
    X(packets_in, "packets received")                                        \
    X(packets_out, "packets sent")                                           \
    X(bytes_in, "bytes received")                                            \
    X(bytes_out, "bytes sent")                                               \
    X(segments, "segments completed (all collectives)")                      \
    X(seg_barrier, "barrier segments completed")                             \
    X(seg_bcast, "bcast segments completed")                                 \
    X(seg_reduce, "reduce segments completed")                               \
    X(seg_allreduce, "allreduce segments completed")                         \
    X(seg_gather, "gather segments completed")                               \
    X(seg_scatter, "scatter segments completed")                             \
    X(seg_allgather, "allgather segments completed")                         \
    X(seg_reduce_scatter, "reduce-scatter segments completed")               \
    X(seg_scan, "scan segments completed")                                   \
    X(seg_exscan, "exscan segments completed")                               \
    X(elements_reduced, "elements combined by reduction units")              \
    X(multicasts, "result packets sent to more than one port")               \
    X(drop_malformed, "dropped: malformed (wire check failed)")              \
    X(drop_foreign, "dropped: unknown job, context or port")                 \
    X(drop_spoofed, "dropped: source rank not the port's rank")              \
    X(drop_not_member, "dropped: sender not in the communicator")            \
    X(drop_slot, "dropped: slot busy or index out of window")                \
    X(drop_mismatch, "dropped: disagrees with the slot's operation")         \
    X(drop_duplicate, "dropped: member already contributed to the segment")  \
    X(drop_range, "dropped: piece outside the sender's part")                \
    X(jobs, "jobs registered")                                               \
    X(ports_in_use, "host ports in use")                                     \
    X(tables_in_use, "communicator table rows in use")                       \
    X(tables_capacity, "communicator table rows")                            \
    X(tables_created, "communicator table rows created")                     \
    X(tables_refused, "communicator table requests refused")                 \
    X(slots_in_use, "aggregation slots claimed by table rows")               \
    X(slots_capacity, "aggregation slots")                                   \
    X(buffer_bytes, "bytes of the aggregation pool (allocated once)")        \
    X(repeats, "answers sent again for repeated packets")                    \
    X(drop_stale, "dropped: a segment older than the slot's last two")      \
    X(pending, "repeats of waiting segments answered 'pending'")            \
    X(abstained, "segments answered with an error: a member abstained")     \
    X(link_up, "segments sent up to the parent switch, combined")            \
    X(link_down, "answers from the parent switch passed down")               \
    X(link_control, "control messages to or from linked switches")           \
    X(model_ns, "modeled in-network time of the segments completed here, ns") \
    X(hold_full, "pieces ahead of their turn not taken: hold buffers full")  \
    X(held, "pieces waiting in hold buffers now")                            \
    X(untiled, "gather segments refused: their pieces did not tile them")    \
    X(state_bytes, "bytes of the switch's tables (ports, jobs, rows, set-ups)") \
    X(quick, "packets taken by the quick path (a piece of a segment in progress, "  \
             "or the first of one shaped as the slot's last)")                \
    X(crossed, "data packets a worker handed to their row's worker, every "   \
               "worker paused (acis-switchd --threads)")                      \
    X(unsealed, "data packets taken without a checksum, from hosts on "       \
                "loopback (flag UNSEALED)")

enum acis_switch_counter {
#define ACIS_X(name, text) ACIS_SWC_##name,
    ACIS_SWITCH_COUNTERS(ACIS_X)
#undef ACIS_X
    ACIS_SWC_COUNT
};

/* ------------------------------------------------------------ functions */

/* Element size in bytes (its extent for pair types); 0 if dt is unknown. */
size_t acis_wire_dt_size(unsigned dt);
const char *acis_wire_dt_name(unsigned dt);
const char *acis_wire_op_name(unsigned op);
const char *acis_wire_kind_name(unsigned kind);
const char *acis_wire_err_text(unsigned err);
const char *acis_wire_counter_name(unsigned c);
const char *acis_wire_counter_text(unsigned c);

/* 1 if op is defined for dt (the MPI rules, restricted to what MPICH also
 * accepts), else 0. */
int acis_wire_op_valid(unsigned op, unsigned dt);

/* 1 if reducing dt with op gives a result that depends on the order in
 * which contributions are combined (floating point), else 0. */
int acis_wire_order_sensitive(unsigned op, unsigned dt);

/* Write h into out (ACIS_HDR_LEN bytes), checksum field as given. */
void acis_hdr_encode(const struct acis_hdr *h, uint8_t *out);

/* Read an encoded header into h without any check: for packets a process
 * built itself (an in-process channel); everything from elsewhere goes
 * through acis_wire_decode(). */
void acis_hdr_decode(const uint8_t *in, struct acis_hdr *h);

/* CRC-32C over an encoded header (its checksum field taken as 0) and the
 * payload pieces, and store it into the header. */
void acis_hdr_seal(uint8_t *hdr, const void *payload, size_t len);
void acis_hdr_seal2(uint8_t *hdr, const void *p1, size_t l1,
                    const void *p2, size_t l2);

/* Mark an encoded header unsealed: flag ACIS_F_UNSEALED, checksum 0 (a
 * data packet on a path that never leaves memory; see ACIS_F_UNSEALED). */
void acis_hdr_unsealed(uint8_t *hdr);

/* CRC-32C (Castagnoli), continuing from crc (start with 0). */
uint32_t acis_crc32c(uint32_t crc, const void *buf, size_t len);
/* The same over len bytes whose 4 bytes at hole (hole + 4 <= len) are
 * read as zero: a packet with its checksum field blank, in one pass. */
uint32_t acis_crc32c_hole(uint32_t crc, const void *buf, size_t len, size_t hole);
/* The same, then l2 more bytes at p2, in one call: a header and its
 * payload where it lies. */
uint32_t acis_crc32c_hole2(uint32_t crc, const void *buf, size_t len, size_t hole,
                           const void *p2, size_t l2);

/* Decode and validate one datagram of len bytes.  max_payload bounds the
 * payload.  Returns ACIS_WERR_OK with *h filled, or the first problem. */
enum acis_wire_err acis_wire_decode(const void *buf, size_t len,
                                    size_t max_payload, struct acis_hdr *h);
/* The same for a datagram that came over loopback when memory is 1: a
 * collective's packet marked ACIS_F_UNSEALED with checksum 0 is taken
 * without its CRC (memory never garbles it; the kernel does not checksum
 * loopback either).  Every other packet is checked as by
 * acis_wire_decode, and UNSEALED on a control message is refused. */
enum acis_wire_err acis_wire_decode_from(const void *buf, size_t len, size_t max_payload,
                                         int memory, struct acis_hdr *h);
/* The same for a packet of len bytes in two pieces: its header's
 * ACIS_HDR_LEN bytes at hdr, the rest at payload. */
enum acis_wire_err acis_wire_decode_split(const void *hdr, const void *payload, size_t len,
                                          size_t max_payload, int memory, struct acis_hdr *h);

/* Bytes of one scan or exscan segment on a row of `members` members whose
 * switch keeps every member's piece of a segment in one buffer of payload
 * bytes (ACIS_CT_SCAN_SPLIT): each piece takes a stride of whole units
 * (unit: the element size, at least 8), the last unit of which the switch
 * keeps for itself.  0 when not even one element fits: scans stay in
 * software.  Hosts and switch compute it alike. */
static inline uint32_t acis_scan_seg_bytes(uint32_t payload, uint32_t members, size_t es)
{
    uint32_t unit = es > 8 ? (uint32_t)es : 8;
    uint32_t stride = members ? payload / members / unit * unit : 0;
    return stride > unit ? stride - unit : 0;
}

/* Little-endian helpers for control payloads. */
static inline void acis_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t acis_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static inline void acis_put64(uint8_t *p, uint64_t v)
{
    acis_put32(p, (uint32_t)v);
    acis_put32(p + 4, (uint32_t)(v >> 32));
}
#ifdef __GNUC__
__attribute__((always_inline))
#endif
static inline uint64_t acis_get64(const uint8_t *p)
{
    return (uint64_t)acis_get32(p) | (uint64_t)acis_get32(p + 4) << 32;
}
static inline void acis_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
}
static inline uint16_t acis_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

#ifdef __cplusplus
}
#endif
#endif
