/* emit.c -- what the switch sends: a packet sealed and sent to ports
 * (sw_emit), an answer to a host's port or to the sender on the service
 * address, control messages to linked switches, the headers of answers.
 * The bottom of the switch's files: it calls none of the others but the
 * row tables. */
#include "config.h"

#include <string.h>

#include "sw.h"

/* May a collective's packet to ports[0..n) go unsealed?  Only if every
 * one is a host on loopback that offered it, and we corrupt nothing. */
static int unsealed_to(const struct acis_sw *sw, const uint32_t *ports, uint32_t n,
                       const struct acis_hdr *h)
{
    if (!n || sw->o.faults.corrupt || ACIS_OPC_KIND(h->opcode) >= ACIS_K_HELLO)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (ports[i] >= sw->o.ports || !sw->ports[ports[i]].memory)
            return 0;
    return 1;
}

void sw_emit(struct acis_sw *sw, const uint32_t *ports, uint32_t n,
             struct acis_hdr *h, const void *p1, size_t l1)
{
    uint8_t hdr[ACIS_HDR_LEN];
    h->payload_len = (uint32_t)l1;
    h->checksum = 0;
    acis_hdr_encode(h, hdr);
    if (unsealed_to(sw, ports, n, h))
        acis_hdr_unsealed(hdr);                 /* loopback: memory, not a wire */
    else
        acis_hdr_seal(hdr, p1, l1);
    struct iovec iov[2] = { { hdr, ACIS_HDR_LEN }, { (void *)p1, l1 } };
    sw->io.send(sw->io.ctx, ports, n, iov, l1 ? 2 : 1);
    SWC(sw, packets_out) += n;
    SWC(sw, bytes_out) += (uint64_t)n * (ACIS_HDR_LEN + l1);
}

void sw_reply_header(const struct acis_hdr *req, unsigned kind, struct acis_hdr *r)
{
    memset(r, 0, sizeof *r);
    r->magic = ACIS_WIRE_MAGIC;
    r->version = ACIS_WIRE_VERSION;
    r->opcode = ACIS_OPC(kind, ACIS_ALG_FLAT);
    r->flags = ACIS_F_RESULT;
    r->job_key = req->job_key;
    r->ctx = req->ctx;
    r->seq = req->seq;
    r->src = ACIS_NO_RANK;
}

/* Answer on the host's port, or to the peer on the service port. */
void sw_answer(struct acis_sw *sw, uint32_t port, const void *peer,
                   struct acis_hdr *r, const uint8_t *payload, size_t len)
{
    if (port != ACIS_PORT_SERVICE) {
        sw_emit(sw, &port, 1, r, payload, len);
        return;
    }
    uint8_t hdr[ACIS_HDR_LEN];
    r->payload_len = (uint32_t)len;
    acis_hdr_encode(r, hdr);
    acis_hdr_seal(hdr, payload, len);
    struct iovec iov[2] = { { hdr, ACIS_HDR_LEN }, { (void *)payload, len } };
    sw->io.reply(sw->io.ctx, peer, iov, len ? 2 : 1);
    SWC(sw, packets_out)++;
    SWC(sw, bytes_out) += ACIS_HDR_LEN + len;
}

void sw_link_send(struct acis_sw *sw, uint32_t port, struct acis_hdr *h,
                  const uint8_t *payload, size_t len)
{
    sw_emit(sw, &port, 1, h, payload, len);
    SWC(sw, link_control)++;
}

void sw_link_up(struct acis_sw *sw, unsigned kind, const struct acis_hdr *h,
                const uint8_t *payload, size_t len)
{
    struct acis_hdr r = *h;
    r.opcode = ACIS_OPC(kind, ACIS_ALG_FLAT);
    if (kind != ACIS_K_CT_REPLY)
        r.flags = 0;
    sw_link_send(sw, ACIS_PORT_UPLINK, &r, payload, len);
}

void sw_link_free(struct acis_sw *sw, uint32_t row)
{
    const struct sw_ct *ct = &sw->cts[row];
    for (uint32_t q = 0; ct->links && q < sw->o.ports; q++) {
        if (!sw_bit(ct->ports, q) || !sw->ports[q].link)
            continue;
        struct acis_hdr r = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_CT_FREE, ACIS_ALG_FLAT),
            .job_key = sw->jobs[ct->job].key, .ctx = sw_ct_ctx(sw, row), .src = ACIS_NO_RANK,
        };
        sw_link_send(sw, q, &r, NULL, 0);
    }
}

