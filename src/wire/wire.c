/* wire.c -- encode, seal and validate acis packets (include/acis/wire.h).
 * Hosts and switches link the same code, so both sides agree on what a
 * valid packet is.  Layout and rules: docs/protocol.md. */
#include "config.h"

#include <string.h>

#include "acis/wire.h"

static const uint8_t dt_size[ACIS_DT_COUNT] = {
#define ACIS_X(name, size) size,
    ACIS_WIRE_DTYPES(ACIS_X)
#undef ACIS_X
};

static const char *const dt_names[ACIS_DT_COUNT] = {
#define ACIS_X(name, size) #name,
    ACIS_WIRE_DTYPES(ACIS_X)
#undef ACIS_X
};

static const char *const op_names[ACIS_OP_COUNT] = {
    "none", "sum", "prod", "min", "max", "land", "lor", "lxor",
    "band", "bor", "bxor", "minloc", "maxloc"
};

static const char *const err_texts[ACIS_WERR_COUNT] = {
#define ACIS_X(name, text) text,
    ACIS_WIRE_ERRORS(ACIS_X)
#undef ACIS_X
};

static const char *const counter_names[ACIS_SWC_COUNT] = {
#define ACIS_X(name, text) #name,
    ACIS_SWITCH_COUNTERS(ACIS_X)
#undef ACIS_X
};

static const char *const counter_texts[ACIS_SWC_COUNT] = {
#define ACIS_X(name, text) text,
    ACIS_SWITCH_COUNTERS(ACIS_X)
#undef ACIS_X
};

size_t acis_wire_dt_size(unsigned dt)
{
    return dt < ACIS_DT_COUNT ? dt_size[dt] : 0;
}

const char *acis_wire_dt_name(unsigned dt)
{
    return dt < ACIS_DT_COUNT ? dt_names[dt] : "?";
}

const char *acis_wire_op_name(unsigned op)
{
    return op < ACIS_OP_COUNT ? op_names[op] : "?";
}

const char *acis_wire_kind_name(unsigned kind)
{
    static const char *const names[] = {
        "none", "barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
        "allgather", "reduce_scatter", "scan", "exscan", "?", "?", "?", "?", "?",
        "hello", "welcome", "ct_create", "ct_reply", "ct_free", "ct_freed",
        "stats_req", "stats_reply", "bye", "peer_ask", "link_join", "link_leave",
        "ct_install", "ct_join"
    };
    return kind <= ACIS_K_LAST ? names[kind] : "?";
}

const char *acis_wire_err_text(unsigned err)
{
    return err < ACIS_WERR_COUNT ? err_texts[err] : "?";
}

const char *acis_wire_counter_name(unsigned c)
{
    return c < ACIS_SWC_COUNT ? counter_names[c] : "?";
}

const char *acis_wire_counter_text(unsigned c)
{
    return c < ACIS_SWC_COUNT ? counter_texts[c] : "?";
}

/* Classes of element types for the validity rules. */
enum { C_INT = 1, C_FLOAT = 2, C_COMPLEX = 4, C_BOOL = 8, C_BYTE = 16, C_PAIR = 32 };

static unsigned dt_class(unsigned dt)
{
    switch (dt) {
    case ACIS_DT_I8: case ACIS_DT_U8: case ACIS_DT_I16: case ACIS_DT_U16:
    case ACIS_DT_I32: case ACIS_DT_U32: case ACIS_DT_I64: case ACIS_DT_U64:
        return C_INT;
    case ACIS_DT_F32: case ACIS_DT_F64: case ACIS_DT_F80:
        return C_FLOAT;
    case ACIS_DT_C32: case ACIS_DT_C64: case ACIS_DT_C80:
        return C_COMPLEX;
    case ACIS_DT_BOOL:
        return C_BOOL;
    case ACIS_DT_BYTE:
        return C_BYTE;
    case ACIS_DT_FLOAT_INT: case ACIS_DT_DOUBLE_INT: case ACIS_DT_LONG_INT:
    case ACIS_DT_2INT: case ACIS_DT_SHORT_INT: case ACIS_DT_LONG_DOUBLE_INT:
        return C_PAIR;
    default:
        return 0;
    }
}

int acis_wire_op_valid(unsigned op, unsigned dt)
{
    unsigned c = dt_class(dt), ok;
    switch (op) {
    case ACIS_OP_SUM: case ACIS_OP_PROD:
        ok = C_INT | C_FLOAT | C_COMPLEX; break;
    case ACIS_OP_MIN: case ACIS_OP_MAX:
        ok = C_INT | C_FLOAT; break;
    case ACIS_OP_LAND: case ACIS_OP_LOR: case ACIS_OP_LXOR:
        ok = C_INT | C_BOOL; break;
    case ACIS_OP_BAND: case ACIS_OP_BOR: case ACIS_OP_BXOR:
        ok = C_INT | C_BYTE; break;
    case ACIS_OP_MINLOC: case ACIS_OP_MAXLOC:
        ok = C_PAIR; break;
    default:
        return 0;
    }
    return (c & ok) != 0;
}

int acis_wire_order_sensitive(unsigned op, unsigned dt)
{
    (void)op;
    switch (dt) {
    case ACIS_DT_F32: case ACIS_DT_F64: case ACIS_DT_F80:
    case ACIS_DT_C32: case ACIS_DT_C64: case ACIS_DT_C80:
    case ACIS_DT_FLOAT_INT: case ACIS_DT_DOUBLE_INT:
    case ACIS_DT_LONG_DOUBLE_INT:
        return 1;     /* signed zeros, NaNs and rounding depend on order */
    default:
        return 0;
    }
}

/* ------------------------------------------------------------ header */

void acis_hdr_encode(const struct acis_hdr *h, uint8_t *out)
{
    acis_put32(out + 0, h->magic);
    out[4] = h->version;
    out[5] = h->opcode;
    out[6] = h->op;
    out[7] = h->dtype;
    acis_put16(out + 8, h->flags);
    acis_put16(out + 10, h->slot);
    acis_put32(out + 12, h->payload_len);
    acis_put64(out + 16, h->job_key);
    acis_put32(out + 24, h->ctx);
    acis_put32(out + 28, h->seq);
    acis_put32(out + 32, h->src);
    acis_put32(out + 36, h->root);
    acis_put32(out + 40, h->seg_index);
    acis_put32(out + ACIS_HDR_CHECKSUM, h->checksum);
    acis_put64(out + 48, h->seg_offset);
    acis_put64(out + 56, h->total_len);
    acis_put32(out + 64, h->rx_off);
    acis_put32(out + 68, h->rx_len);
    acis_put32(out + 72, h->member);
    acis_put32(out + 76, h->reserved);
}

void acis_hdr_decode(const uint8_t *in, struct acis_hdr *h)
{
    h->magic = acis_get32(in + 0);
    h->version = in[4];
    h->opcode = in[5];
    h->op = in[6];
    h->dtype = in[7];
    h->flags = acis_get16(in + 8);
    h->slot = acis_get16(in + 10);
    h->payload_len = acis_get32(in + 12);
    h->job_key = acis_get64(in + 16);
    h->ctx = acis_get32(in + 24);
    h->seq = acis_get32(in + 28);
    h->src = acis_get32(in + 32);
    h->root = acis_get32(in + 36);
    h->seg_index = acis_get32(in + 40);
    h->checksum = acis_get32(in + ACIS_HDR_CHECKSUM);
    h->seg_offset = acis_get64(in + 48);
    h->total_len = acis_get64(in + 56);
    h->rx_off = acis_get32(in + 64);
    h->rx_len = acis_get32(in + 68);
    h->member = acis_get32(in + 72);
    h->reserved = acis_get32(in + 76);
}

void acis_hdr_seal2(uint8_t *hdr, const void *p1, size_t l1,
                    const void *p2, size_t l2)
{
    uint32_t crc = acis_crc32c_hole2(0, hdr, ACIS_HDR_LEN, ACIS_HDR_CHECKSUM, p1, l1);
    if (l2)
        crc = acis_crc32c(crc, p2, l2);
    acis_put32(hdr + ACIS_HDR_CHECKSUM, crc);
}

void acis_hdr_seal(uint8_t *hdr, const void *payload, size_t len)
{
    acis_hdr_seal2(hdr, payload, len, NULL, 0);
}

void acis_hdr_unsealed(uint8_t *hdr)
{
    acis_put16(hdr + 8, (uint16_t)(acis_get16(hdr + 8) | ACIS_F_UNSEALED));
    acis_put32(hdr + ACIS_HDR_CHECKSUM, 0);
}

static int is_reduction(unsigned kind)
{
    return (1u << kind) & (1u << ACIS_K_REDUCE | 1u << ACIS_K_ALLREDUCE |
                           1u << ACIS_K_REDUCE_SCATTER | 1u << ACIS_K_SCAN |
                           1u << ACIS_K_EXSCAN);
}

/* Is any of a, b, c not a multiple of the element size es?  Every wire
 * type's size is a power of two but the check does not rely on it. */
static int misaligned(uint64_t a, uint64_t b, uint64_t c, size_t es)
{
    if ((es & (es - 1)) == 0)
        return ((a | b | c) & (es - 1)) != 0;
    return a % es || b % es || c % es;
}

/* Payload length rules of control messages. */
static int control_len_ok(unsigned kind, uint32_t len, const uint8_t *payload)
{
    switch (kind) {
    case ACIS_K_HELLO:       return len == ACIS_HELLO_LEN;
    case ACIS_K_WELCOME:     return len == ACIS_WELCOME_LEN;
    case ACIS_K_CT_REPLY:    /* fields are only ever appended */
        return len >= ACIS_CT_REPLY_MIN && len <= 64 && len % 4 == 0;
    case ACIS_K_CT_FREE:     return len == 0;
    case ACIS_K_CT_FREED:    return len == ACIS_STATUS_LEN;
    case ACIS_K_STATS_REQ:   return len == 0;
    case ACIS_K_BYE:         return len == 0;
    case ACIS_K_PEER_ASK:    return len == 0;
    case ACIS_K_LINK_JOIN:   return len == ACIS_LINK_JOIN_LEN;
    case ACIS_K_LINK_LEAVE:  return len == 0;
    case ACIS_K_CT_JOIN:     return len == ACIS_CT_JOIN_LEN && acis_get32(payload) > 0;
    case ACIS_K_CT_INSTALL:  return len == ACIS_CT_INSTALL_LEN && acis_get32(payload) > 0;
    case ACIS_K_CT_CREATE:
        return len >= 4 && (len - 4) % 4 == 0 &&
               acis_get32(payload) == (len - 4) / 4 && acis_get32(payload) > 0;
    case ACIS_K_STATS_REPLY:
        return len >= 4 && (len - 4) % 8 == 0 &&
               acis_get32(payload) == (len - 4) / 8;
    default:
        return 0;
    }
}

enum acis_wire_err acis_wire_decode(const void *buf, size_t len,
                                    size_t max_payload, struct acis_hdr *h)
{
    return acis_wire_decode_from(buf, len, max_payload, 0, h);
}

enum acis_wire_err acis_wire_decode_from(const void *buf, size_t len, size_t max_payload,
                                         int memory, struct acis_hdr *h)
{
    if (len < ACIS_HDR_LEN)
        return ACIS_WERR_SHORT;
    return acis_wire_decode_split(buf, (const uint8_t *)buf + ACIS_HDR_LEN, len, max_payload,
                                  memory, h);
}

enum acis_wire_err acis_wire_decode_split(const void *hdr, const void *payload, size_t len,
                                          size_t max_payload, int memory, struct acis_hdr *h)
{
    const uint8_t *p = hdr;
    if (len < ACIS_HDR_LEN)
        return ACIS_WERR_SHORT;
    acis_hdr_decode(p, h);
    if (h->magic != ACIS_WIRE_MAGIC)
        return ACIS_WERR_MAGIC;
    if (h->version != ACIS_WIRE_VERSION)
        return ACIS_WERR_VERSION;
    if (h->payload_len != len - ACIS_HDR_LEN)
        return ACIS_WERR_LENGTH;
    unsigned kind = ACIS_OPC_KIND(h->opcode);
    int coll = kind >= ACIS_K_BARRIER && kind <= ACIS_K_COLL_LAST;
    if (coll ? h->payload_len > max_payload : h->payload_len > ACIS_MAX_PAYLOAD)
        return ACIS_WERR_TOO_BIG;
    int unsealed = (h->flags & ACIS_F_UNSEALED) != 0;
    if (unsealed && !coll)
        return ACIS_WERR_FLAGS;
    if (!(memory && unsealed && h->checksum == 0) &&
        acis_crc32c_hole2(0, p, ACIS_HDR_LEN, ACIS_HDR_CHECKSUM, payload,
                          len - ACIS_HDR_LEN) != h->checksum)
        return ACIS_WERR_CHECKSUM;
    unsigned alg = ACIS_OPC_ALG(h->opcode);
    if ((!coll && (kind < ACIS_K_HELLO || kind > ACIS_K_LAST)) ||
        !(alg == ACIS_ALG_FLAT ||
          (alg == ACIS_ALG_VAR && (kind == ACIS_K_GATHER || kind == ACIS_K_ALLGATHER))))
        return ACIS_WERR_OPCODE;
    if (h->op >= ACIS_OP_COUNT)
        return ACIS_WERR_OP;
    if (h->dtype >= ACIS_DT_COUNT)
        return ACIS_WERR_DTYPE;
    if (h->flags & ~ACIS_F_KNOWN)
        return ACIS_WERR_FLAGS;
    if (h->reserved)
        return ACIS_WERR_RESERVED;
    if (coll) {
        int red = is_reduction(kind);
        if (red ? !acis_wire_op_valid(h->op, h->dtype)
                               : h->op != ACIS_OP_NONE)
            return ACIS_WERR_OP_DTYPE;
        if (h->dtype == ACIS_DT_NONE && kind != ACIS_K_BARRIER)
            return ACIS_WERR_DTYPE;
        if (h->seg_offset > h->total_len ||
            h->payload_len > h->total_len - h->seg_offset ||
            (uint64_t)h->rx_off + h->rx_len > max_payload)
            return ACIS_WERR_RANGE;
        if (red && misaligned(h->total_len, h->seg_offset, h->payload_len, dt_size[h->dtype]))
            return ACIS_WERR_ALIGN;
    } else if (!control_len_ok(kind, h->payload_len, payload)) {
        return ACIS_WERR_LENGTH;
    }
    return ACIS_WERR_OK;
}
