/* wr.c -- work requests for unreliable datagrams: a send of a header and
 * a payload as one datagram, a receive into one buffer, and how much
 * payload a datagram holds.  Pure functions: unit tests check them
 * without a device. */
#include "config.h"

#include <string.h>

#include "verbs.h"

void acis_ud_build_send(struct ibv_send_wr *wr, struct ibv_sge sge[2],
                        const struct acis_ud_dest *d, uint64_t wr_id,
                        const void *hdr, uint32_t hlen, uint32_t hkey,
                        const void *p, uint32_t plen, uint32_t pkey,
                        uint32_t max_inline, int signaled)
{
    memset(wr, 0, sizeof *wr);
    sge[0] = (struct ibv_sge){ .addr = (uintptr_t)hdr, .length = hlen, .lkey = hkey };
    sge[1] = (struct ibv_sge){ .addr = (uintptr_t)p, .length = plen, .lkey = pkey };
    wr->wr_id = wr_id;
    wr->sg_list = sge;
    wr->num_sge = plen ? 2 : 1;
    wr->opcode = IBV_WR_SEND;
    wr->send_flags = (signaled ? IBV_SEND_SIGNALED : 0) |
                     ((uint64_t)hlen + plen <= max_inline ? IBV_SEND_INLINE : 0);
    wr->wr.ud.ah = d->ah;
    wr->wr.ud.remote_qpn = d->qpn;
    wr->wr.ud.remote_qkey = ACIS_UD_QKEY;
}

void acis_ud_build_recv(struct ibv_recv_wr *wr, struct ibv_sge *sge, uint64_t wr_id,
                        void *buf, uint32_t len, uint32_t lkey)
{
    memset(wr, 0, sizeof *wr);
    *sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
    wr->wr_id = wr_id;
    wr->sg_list = sge;
    wr->num_sge = 1;
}

uint32_t acis_ud_payload(uint32_t mtu, uint32_t hdr)
{
    return mtu > hdr ? (mtu - hdr) / 8 * 8 : 0;
}
