/* check_verbs.c -- what the verbs channel does without a device: work
 * requests (one datagram of header and payload, inline when small),
 * payload per MTU, device, port and GID choice from stubbed lists, the
 * registration cache with stubbed registration, which datagrams a host
 * takes (only its switch's), the switch's cache of address handles for
 * service answers (never waits, never drops a handle a send uses),
 * credits from posted receive buffers, the recovery service for a switch
 * with no IP address,
 * and the switch with simulated hosts at verbs packet
 * sizes (odd segments, 16-byte elements, loss) through the same
 * segmentation and windows the UDP channel uses. */
#include "config.h"

#include <check.h>
#include <complex.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "mpid/device.h"
#include "simhost.h"
#include "verbs/verbs.h"

/* ------------------------------------------------------- work requests */

START_TEST(send_wr)
{
    uint8_t hdr[ACIS_HDR_LEN] = { 0 }, pl[1000] = { 0 };
    struct ibv_ah *ah = (struct ibv_ah *)(uintptr_t)0x1000;  /* never dereferenced */
    struct acis_ud_dest d = { ah, 0x123456 };
    struct ibv_send_wr wr;
    struct ibv_sge sge[2];

    acis_ud_build_send(&wr, sge, &d, 7, hdr, ACIS_HDR_LEN, 11, pl, sizeof pl, 22, 128, 1);
    ck_assert_uint_eq(wr.wr_id, 7);
    ck_assert_int_eq(wr.opcode, IBV_WR_SEND);
    ck_assert_int_eq(wr.num_sge, 2);
    ck_assert_ptr_eq(wr.sg_list, sge);
    ck_assert_ptr_null(wr.next);
    ck_assert_uint_eq(sge[0].addr, (uintptr_t)hdr);
    ck_assert_uint_eq(sge[0].length, ACIS_HDR_LEN);
    ck_assert_uint_eq(sge[0].lkey, 11);
    ck_assert_uint_eq(sge[1].addr, (uintptr_t)pl);
    ck_assert_uint_eq(sge[1].length, sizeof pl);
    ck_assert_uint_eq(sge[1].lkey, 22);
    ck_assert_uint_eq(wr.send_flags, IBV_SEND_SIGNALED);           /* too big to inline */
    ck_assert_ptr_eq(wr.wr.ud.ah, ah);
    ck_assert_uint_eq(wr.wr.ud.remote_qpn, 0x123456);
    ck_assert_uint_eq(wr.wr.ud.remote_qkey, ACIS_UD_QKEY);

    /* header only, fits inline exactly; unsignaled */
    acis_ud_build_send(&wr, sge, &d, 8, hdr, ACIS_HDR_LEN, 11, NULL, 0, 0, ACIS_HDR_LEN, 0);
    ck_assert_int_eq(wr.num_sge, 1);
    ck_assert_uint_eq(wr.send_flags, IBV_SEND_INLINE);
    /* one byte over the inline limit */
    acis_ud_build_send(&wr, sge, &d, 9, hdr, ACIS_HDR_LEN, 11, pl, 1, 22, ACIS_HDR_LEN, 1);
    ck_assert_int_eq(wr.num_sge, 2);
    ck_assert_uint_eq(wr.send_flags, IBV_SEND_SIGNALED);
    /* a device without inline sends */
    acis_ud_build_send(&wr, sge, &d, 9, hdr, ACIS_HDR_LEN, 11, NULL, 0, 0, 0, 1);
    ck_assert_uint_eq(wr.send_flags, IBV_SEND_SIGNALED);

    struct ibv_recv_wr rw;
    struct ibv_sge rs;
    acis_ud_build_recv(&rw, &rs, 5, pl, 4136, 33);
    ck_assert_uint_eq(rw.wr_id, 5);
    ck_assert_int_eq(rw.num_sge, 1);
    ck_assert_ptr_eq(rw.sg_list, &rs);
    ck_assert_uint_eq(rs.addr, (uintptr_t)pl);
    ck_assert_uint_eq(rs.length, 4136);
    ck_assert_uint_eq(rs.lkey, 33);
}
END_TEST

START_TEST(payload_per_mtu)
{
    ck_assert_uint_eq(acis_ud_payload(4096, ACIS_HDR_LEN), 4016);
    ck_assert_uint_eq(acis_ud_payload(2048, ACIS_HDR_LEN), 1968);
    ck_assert_uint_eq(acis_ud_payload(1024, ACIS_HDR_LEN), 944);
    ck_assert_uint_eq(acis_ud_payload(256, ACIS_HDR_LEN), 176);
    ck_assert_uint_eq(acis_ud_payload(ACIS_HDR_LEN, ACIS_HDR_LEN), 0);
    ck_assert_uint_eq(acis_ud_payload(10, ACIS_HDR_LEN), 0);
    for (uint32_t mtu = 256; mtu <= 4096; mtu *= 2)
        ck_assert_uint_le(acis_ud_payload(mtu, ACIS_HDR_LEN) + ACIS_HDR_LEN, mtu);
}
END_TEST

/* --------------------------------------------------------- device choice */

START_TEST(choose_device)
{
    char why[256];
    struct acis_ud_cand c[] = {
        { "mlx5_0", 1, 1, 0 },       /* active, far */
        { "mlx5_0", 2, 0, 0 },       /* down */
        { "mlx5_1", 1, 1, 1 },       /* active, near */
        { "rxe0", 1, 1, -1 },        /* active, locality unknown */
    };
    int n = 4;
    ck_assert_int_eq(acis_ud_choose(c, 0, "auto", 0, why, sizeof why), -1);
    ck_assert_str_eq(why, "verbs: no RDMA device found");
    ck_assert_int_eq(acis_ud_choose(c, n, "auto", 0, why, sizeof why), 2);
    ck_assert_int_eq(acis_ud_choose(c, n, NULL, 0, why, sizeof why), 2);
    ck_assert_int_eq(acis_ud_choose(c, n, "mlx5_0", 0, why, sizeof why), 0);
    ck_assert_int_eq(acis_ud_choose(c, n, "rxe0", 0, why, sizeof why), 3);
    ck_assert_int_eq(acis_ud_choose(c, n, "auto", 1, why, sizeof why), 2);
    /* the only port 2 is down */
    ck_assert_int_eq(acis_ud_choose(c, n, "auto", 2, why, sizeof why), -1);
    ck_assert_str_eq(why, "verbs: port 2 of mlx5_0,mlx5_1,rxe0 is not active");
    ck_assert_int_eq(acis_ud_choose(c, n, "mlx5_0", 2, why, sizeof why), -1);
    ck_assert_str_eq(why, "verbs: port 2 of mlx5_0 is not active");
    ck_assert_int_eq(acis_ud_choose(c, n, "mlx5_1", 2, why, sizeof why), -1);
    ck_assert_str_eq(why, "verbs: mlx5_1 has no port 2");
    ck_assert_int_eq(acis_ud_choose(c, n, "hfi1_0", 0, why, sizeof why), -1);
    ck_assert_str_eq(why, "verbs: no RDMA device named hfi1_0 (present: mlx5_0,mlx5_1,rxe0)");
    /* unknown locality beats far; the first wins among equals */
    ck_assert_int_eq(acis_ud_choose(c, 1, "auto", 0, why, sizeof why), 0);
    struct acis_ud_cand far_unknown[] = { c[0], c[3] }, equal[] = { c[3], c[3] };
    ck_assert_int_eq(acis_ud_choose(far_unknown, 2, "auto", 0, why, sizeof why), 1);
    ck_assert_int_eq(acis_ud_choose(equal, 2, "auto", 0, why, sizeof why), 0);
    /* every port down */
    struct acis_ud_cand down[] = { c[1] };
    ck_assert_int_eq(acis_ud_choose(down, 1, "auto", 0, why, sizeof why), -1);
    ck_assert_str_eq(why, "verbs: no active port on mlx5_0");
}
END_TEST

static struct ibv_gid_entry gid(uint32_t index, uint32_t type, uint8_t first, int v4)
{
    struct ibv_gid_entry e;
    memset(&e, 0, sizeof e);
    e.gid_index = index;
    e.gid_type = type;
    e.gid.raw[0] = first;
    if (v4) {
        e.gid.raw[10] = e.gid.raw[11] = 0xff;
        e.gid.raw[12] = 10;
        e.gid.raw[15] = (uint8_t)index;
    }
    return e;
}

START_TEST(choose_gid)
{
    struct ibv_gid_entry t[] = {
        gid(0, IBV_GID_TYPE_ROCE_V1, 0xfe, 0),     /* link-local, v1 */
        gid(1, IBV_GID_TYPE_ROCE_V2, 0xfe, 0),     /* link-local, v2 */
        gid(2, IBV_GID_TYPE_ROCE_V1, 0, 1),        /* IPv4, v1 */
        gid(3, IBV_GID_TYPE_ROCE_V2, 0, 1),        /* IPv4, v2: the one */
        gid(4, IBV_GID_TYPE_ROCE_V2, 0, 0),        /* all zero: unused entry */
    };
    ck_assert_int_eq(acis_ud_pick_gid(t, 5), 3);
    ck_assert_int_eq(acis_ud_pick_gid(t, 3), 1);    /* v2 beats v1 */
    ck_assert_int_eq(acis_ud_pick_gid(t, 1), 0);    /* anything beats nothing */
    ck_assert_int_eq(acis_ud_pick_gid(t + 4, 1), -1);
    ck_assert_int_eq(acis_ud_pick_gid(t, 0), -1);
}
END_TEST

/* -------------------------------------------------- registration cache */

struct stub {
    int live, calls, fail;
    uint32_t next_key;
    struct { uintptr_t lo; size_t len; } last;
};

static void *stub_reg(void *arg, void *addr, size_t len, uint32_t *lkey)
{
    struct stub *s = arg;
    s->calls++;
    if (s->fail)
        return NULL;
    s->live++;
    s->last.lo = (uintptr_t)addr;
    s->last.len = len;
    *lkey = ++s->next_key;
    return malloc(1);
}

static void stub_dereg(void *arg, void *handle)
{
    struct stub *s = arg;
    s->live--;
    free(handle);
}

START_TEST(regcache)
{
    struct stub st = { 0 };
    const size_t pg = 4096;
    uint8_t *mem = aligned_alloc(pg, 64 * pg);
    struct acis_regcache *rc = acis_regcache_new(4, 16 * pg, stub_reg, stub_dereg, &st);
    struct acis_regcache_stats s;
    uint32_t k1, k2, k;
    ck_assert_ptr_nonnull(rc);

    /* whole pages are registered; anything inside them hits */
    ck_assert_int_eq(acis_regcache_get(rc, mem + 100, 200, &k1), 0);
    ck_assert_uint_eq(st.last.lo, (uintptr_t)mem);
    ck_assert_uint_eq(st.last.len, pg);
    ck_assert_int_eq(acis_regcache_get(rc, mem + 4000, 96, &k), 0);
    ck_assert_uint_eq(k, k1);
    ck_assert_int_eq(st.calls, 1);
    /* crossing into the next page: one region covering both replaces it */
    ck_assert_int_eq(acis_regcache_get(rc, mem + 4000, 200, &k2), 0);
    ck_assert_uint_ne(k2, k1);
    ck_assert_uint_eq(st.last.lo, (uintptr_t)mem);
    ck_assert_uint_eq(st.last.len, 2 * pg);
    ck_assert_int_eq(st.live, 1);
    acis_regcache_stats(rc, &s);
    ck_assert_uint_eq(s.hits, 1);
    ck_assert_uint_eq(s.misses, 2);
    ck_assert_uint_eq(s.entries, 1);
    ck_assert_uint_eq(s.bytes, 2 * pg);

    /* four entries at most: the least recently used goes */
    ck_assert_int_eq(acis_regcache_get(rc, mem + 10 * pg, 1, &k), 0);
    ck_assert_int_eq(acis_regcache_get(rc, mem + 12 * pg, 1, &k), 0);
    ck_assert_int_eq(acis_regcache_get(rc, mem + 14 * pg, 1, &k), 0);
    ck_assert_int_eq(acis_regcache_get(rc, mem + 100, 1, &k), 0);        /* touch the first */
    ck_assert_uint_eq(k, k2);
    ck_assert_int_eq(acis_regcache_get(rc, mem + 16 * pg, 1, &k), 0);    /* evicts 10 */
    acis_regcache_stats(rc, &s);
    ck_assert_uint_eq(s.entries, 4);
    ck_assert_uint_eq(s.evictions, 1);
    ck_assert_int_eq(st.live, 4);
    int calls = st.calls;
    ck_assert_int_eq(acis_regcache_get(rc, mem + 100, 1, &k), 0);        /* still there */
    ck_assert_int_eq(st.calls, calls);
    ck_assert_int_eq(acis_regcache_get(rc, mem + 10 * pg, 1, &k), 0);    /* gone: again */
    ck_assert_int_eq(st.calls, calls + 1);

    /* the byte limit: a 15-page region leaves room for one page more, the
     * most recently used (10) */
    ck_assert_int_eq(acis_regcache_get(rc, mem + 30 * pg, 15 * pg, &k), 0);
    acis_regcache_stats(rc, &s);
    ck_assert_uint_eq(s.bytes, 16 * pg);
    ck_assert_uint_eq(s.entries, 2);
    ck_assert_int_eq(st.live, 2);
    calls = st.calls;
    ck_assert_int_eq(acis_regcache_get(rc, mem + 10 * pg, 1, &k), 0);
    ck_assert_int_eq(st.calls, calls);
    /* larger than the cache: refused (the caller copies), nothing dropped */
    ck_assert_int_eq(acis_regcache_get(rc, mem, 17 * pg, &k), -1);
    acis_regcache_stats(rc, &s);
    ck_assert_uint_eq(s.entries, 2);
    /* a failing registration is refused and counted */
    st.fail = 1;
    ck_assert_int_eq(acis_regcache_get(rc, mem + 50 * pg, 1, &k), -1);
    st.fail = 0;
    acis_regcache_stats(rc, &s);
    ck_assert_uint_eq(s.failures, 2);
    ck_assert_int_eq(st.live, (int)s.entries);
    ck_assert_uint_eq(s.entries, 1);            /* room was made first */

    /* invalidation drops what overlaps, nothing else */
    ck_assert_int_eq(acis_regcache_get(rc, mem + 30 * pg, 15 * pg, &k), 0);
    ck_assert_int_eq(st.live, 2);
    acis_regcache_invalidate(rc, mem + 44 * pg, 1);
    acis_regcache_stats(rc, &s);
    ck_assert_uint_eq(s.entries, 1);
    ck_assert_int_eq(st.live, 1);
    acis_regcache_invalidate(rc, mem, 64 * pg);
    ck_assert_int_eq(st.live, 0);

    ck_assert_int_eq(acis_regcache_get(rc, mem, 1, &k), 0);
    acis_regcache_free(rc);
    ck_assert_int_eq(st.live, 0);                 /* freeing deregisters all */
    free(mem);
}
END_TEST

/* -------------------------------------------------------------- senders */

static struct acis_ib_addr lid_qp(uint16_t lid, uint32_t qpn)
{
    return (struct acis_ib_addr){ .lid = lid, .qpn = qpn };
}

static struct acis_ib_addr gid_qp(uint8_t last, uint32_t qpn)
{
    struct acis_ib_addr a = { .has_gid = 1, .qpn = qpn };
    a.gid[0] = 0xfe;
    a.gid[1] = 0x80;
    a.gid[15] = last;
    return a;
}

/* A host takes datagrams from the endpoint it listens to (the switch's
 * service endpoint, then its port): the same queue pair at the same LID,
 * or GID.  Before it joined, also from other queue pairs at that LID or
 * GID (a switch may answer HELLO from a queue pair per port), marked not
 * exact; after, never.  The switch's queue pair number from another
 * port is someone else. */
START_TEST(sender_filter)
{
    struct acis_ib_addr svc = lid_qp(7, 0x1a2b), g = gid_qp(1, 0x1a2b);
    struct acis_ud_msg m[7];
    memset(m, 0, sizeof m);
    m[0].from = lid_qp(9, 0x1a2b);        /* the switch's qpn, another port */
    m[1].from = svc;
    m[2].from = lid_qp(7, 0x1a2c);        /* another queue pair on its port */
    m[3].from = gid_qp(1, 0x1a2b);        /* a GID where a LID is expected */
    m[4].from = svc;
    m[5].from = lid_qp(7, 0x11a2b);       /* qpn differs above 16 bits */
    m[6].from = svc;
    int keep[7], exact[7];
    ck_assert_int_eq(acis_ud_keep(m, 7, &svc, 1, keep, exact), 3);     /* joined */
    ck_assert_int_eq(keep[0], 1);
    ck_assert_int_eq(keep[1], 4);
    ck_assert_int_eq(keep[2], 6);
    ck_assert(exact[0] && exact[1] && exact[2]);
    ck_assert_int_eq(acis_ud_keep(m, 7, &svc, 0, keep, exact), 5);     /* joining */
    int want_keep[5] = { 1, 2, 4, 5, 6 }, want_exact[5] = { 1, 0, 1, 0, 1 };
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(keep[i], want_keep[i]);
        ck_assert_int_eq(exact[i], want_exact[i]);
    }
    ck_assert_int_eq(acis_ud_keep(m, 0, &svc, 0, keep, exact), 0);

    ck_assert(acis_ud_same_sender(&g, &g));
    struct acis_ib_addr g2 = gid_qp(2, 0x1a2b), gl = g, gq = g;
    gl.lid = 99;                          /* the LID does not count beside a GID */
    gq.qpn = 5;
    ck_assert(!acis_ud_same_sender(&g, &g2));
    ck_assert(acis_ud_same_sender(&g, &gl));
    ck_assert(!acis_ud_same_sender(&g, &gq));
    ck_assert(acis_ud_same_port(&g, &gq));
    ck_assert(!acis_ud_same_port(&g, &g2));
    ck_assert(!acis_ud_same_port(&svc, &g));
    m[0].from = g;
    m[1].from = g2;
    m[2].from = gq;
    ck_assert_int_eq(acis_ud_keep(m, 3, &g, 1, keep, exact), 1);
    ck_assert_int_eq(keep[0], 0);
    ck_assert_int_eq(acis_ud_keep(m, 3, &g, 0, keep, exact), 2);
    ck_assert_int_eq(keep[1], 2);
    ck_assert_int_eq(exact[1], 0);
}
END_TEST

/* ---------------------------------------------- service answers' handles */

static int ah_made, ah_dropped;
static uintptr_t ah_last_dropped;

static struct ibv_ah *fake_make(void *arg, const void *src)
{
    (void)arg;
    if (!src)
        return NULL;                      /* make fails */
    ah_made++;
    return (struct ibv_ah *)(uintptr_t)(0x1000 * (uintptr_t)ah_made);  /* never used */
}

static void fake_drop(void *arg, struct ibv_ah *ah)
{
    (void)arg;
    ah_dropped++;
    ah_last_dropped = (uintptr_t)ah;
}

/* Two entries.  A port asked for again gets its handle (any queue pair
 * on it); a third port replaces the least recently asked for entry that
 * no send in flight uses, and gets none -- at once, nothing made or
 * dropped -- while both are in use. */
START_TEST(reply_handles)
{
    static const int src = 1;
    struct acis_ib_addr a = lid_qp(7, 1), a2 = lid_qp(7, 2), b = gid_qp(3, 1),
                        c = lid_qp(8, 1);
    struct acis_ahcache_stats st;
    ah_made = ah_dropped = 0;
    struct acis_ahcache *ac = acis_ahcache_new(2, fake_make, fake_drop, NULL);
    ck_assert_ptr_nonnull(ac);

    struct ibv_ah *ha = acis_ahcache_get(ac, &a, &src, 0);
    ck_assert_ptr_nonnull(ha);
    acis_ahcache_used(ac, 1);                            /* send 1 */
    ck_assert_ptr_eq(acis_ahcache_get(ac, &a2, &src, 0), ha);  /* same port */
    acis_ahcache_used(ac, 3);                            /* send 3 */
    struct ibv_ah *hb = acis_ahcache_get(ac, &b, &src, 0);
    ck_assert_ptr_nonnull(hb);
    ck_assert_ptr_ne(hb, ha);
    acis_ahcache_used(ac, 4);                            /* send 4 */
    ck_assert_int_eq(ah_made, 2);

    /* sends 3 and 4 in flight: no room for c, and no wait */
    ck_assert_ptr_null(acis_ahcache_get(ac, &c, &src, 2));
    ck_assert_int_eq(ah_made, 2);
    ck_assert_int_eq(ah_dropped, 0);
    /* send 3 done: a's entry (asked for before b's) goes */
    struct ibv_ah *hc = acis_ahcache_get(ac, &c, &src, 3);
    ck_assert_ptr_nonnull(hc);
    ck_assert_int_eq(ah_dropped, 1);
    ck_assert_uint_eq(ah_last_dropped, (uintptr_t)ha);
    acis_ahcache_used(ac, 5);
    ck_assert_ptr_eq(acis_ahcache_get(ac, &b, &src, 3), hb);   /* b is still there */
    /* both in use again (4 and 5): a cannot come back */
    ck_assert_ptr_null(acis_ahcache_get(ac, &a, &src, 3));
    /* all done, but making one fails: nothing is dropped for it */
    ck_assert_ptr_null(acis_ahcache_get(ac, &a, NULL, 5));
    ck_assert_int_eq(ah_dropped, 1);
    /* b was asked for after c: c goes */
    ck_assert_ptr_nonnull(acis_ahcache_get(ac, &a, &src, 5));
    ck_assert_uint_eq(ah_last_dropped, (uintptr_t)hc);

    acis_ahcache_stats(ac, &st);
    ck_assert_uint_eq(st.hits, 2);
    ck_assert_uint_eq(st.made, 4);
    ck_assert_uint_eq(st.evicted, 2);
    ck_assert_uint_eq(st.full, 2);
    ck_assert_uint_eq(st.failed, 1);
    acis_ahcache_free(ac);                               /* drops the two left */
    ck_assert_int_eq(ah_dropped, 4);
}
END_TEST

/* ---------------------------------------------------------------- credits */

START_TEST(credits)
{
    /* verbs: half the posted receive buffers, whatever the packet size */
    ck_assert_uint_eq(acis_dev_credits(0, 0, 256, 184), 256);
    ck_assert_uint_eq(acis_dev_credits(0, 0, 256, 4024), 256);
    ck_assert_uint_eq(acis_dev_credits(100, 0, 256, 4024), 100);     /* the switch's is less */
    ck_assert_uint_eq(acis_dev_credits(2048, 0, 256, 4024), 256);
    /* udp: bytes of socket buffer */
    ck_assert_uint_eq(acis_dev_credits(0, 4 << 20, 0, 16384),
                      ACIS_BUF_PACKETS(4 << 20, 16384));
    ck_assert_uint_eq(acis_dev_credits(0, 0, 0, 16384), 1);          /* never zero */
}
END_TEST

/* ------------------------------------------------ recovery service */

static size_t no_serve(void *arg, const struct acis_hdr *ask, uint8_t *reply)
{
    (void)arg;
    (void)ask;
    (void)reply;
    return 0;
}

/* Ranks on the verbs channel still help each other after a switch
 * failure over UDP: the service binds to an address of this host, since
 * the switch's endpoint has none. */
START_TEST(peer_service_for_verbs)
{
    struct sockaddr_storage mine;
    char why[256] = "";
    ck_assert_msg(acis_peer_start("7/0x1a2b", 1, 0, 2, no_serve, NULL, &mine, why,
                                  sizeof why) == 0, "%s", why);
    ck_assert(mine.ss_family == AF_INET || mine.ss_family == AF_INET6);
    /* not loopback when this host has another address up (here the host
     * name resolves to 127.0.0.1, as on many Debian machines) */
    struct ifaddrs *ifs, *i;
    int other = 0;
    ck_assert_int_eq(getifaddrs(&ifs), 0);
    for (i = ifs; i; i = i->ifa_next)
        other |= i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                 (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK);
    freeifaddrs(ifs);
    if (other && mine.ss_family == AF_INET)
        ck_assert_uint_ne(ntohl(((struct sockaddr_in *)&mine)->sin_addr.s_addr) >> 24, 127);
    acis_peer_stop();
    ck_assert_int_eq(acis_peer_start("nowhere", 1, 0, 2, no_serve, NULL, &mine, why,
                                     sizeof why), -1);
}
END_TEST

/* ------------------------------- switch and hosts at verbs packet sizes */

static const uint64_t KEY = 0x0123456789abcdefULL;

/* An allreduce of complex doubles (16-byte elements that do not tile the
 * payload) and an allgather on 8 hosts, through a switch whose payload is
 * what a datagram of mtu bytes holds, with the credits a verbs host
 * gets, losing and doubling packets. */
static void at_mtu(uint32_t mtu)
{
    enum { P = 8, N = 1000 };
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.payload = acis_ud_payload(mtu, ACIS_HDR_LEN);
    o.credits = acis_dev_credits(0, 0, 512 / 2, o.payload);
    o.slots = 64;
    struct sim *s = calloc(1, sizeof *s);
    ck_assert_int_eq(sim_init(s, &o), 0);
    s->loss = 3;
    s->dup = 2;
    for (int i = 0; i < P; i++) {
        uint32_t st;
        ck_assert_int_eq(sim_join(s, KEY, (uint32_t)i, P, &st), i);
        ck_assert_uint_eq(s->hosts[i].payload, o.payload);
    }
    struct sim_comm *c = sim_comm_new(P);
    for (int i = 0; i < P; i++)
        c->host[i] = i;
    ck_assert_uint_eq(sim_ct_create(s, c, 77), ACIS_ST_OK);

    static double complex in[P][N], out[P][N];
    static int32_t gin[P][N], gout[P][P * N];
    struct sim_member m[P];
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++)
            in[r][i] = (double)(r + i) + (double)(r * i) * I;
        m[r] = (struct sim_member){ in[r], 0, sizeof in[r], out[r], 0, sizeof out[r] };
    }
    ck_assert_int_eq(sim_collective(s, c, ACIS_K_ALLREDUCE, ACIS_OP_SUM, ACIS_DT_C64, 0,
                                    sizeof in[0], m, mtu), 0);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++) {
            double re = P * i + P * (P - 1) / 2, im = (double)i * P * (P - 1) / 2;
            ck_assert_msg(creal(out[r][i]) == re && cimag(out[r][i]) == im,
                          "mtu %u member %d elem %d", mtu, r, i);
        }

    uint64_t blk = sizeof gin[0];
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++)
            gin[r][i] = r * 100000 + i;
        m[r] = (struct sim_member){ gin[r], r * blk, blk, gout[r], 0, P * blk };
    }
    ck_assert_int_eq(sim_collective(s, c, ACIS_K_ALLGATHER, 0, ACIS_DT_BYTE, 0, P * blk, m,
                                    mtu + 1), 0);
    for (int r = 0; r < P; r++)
        for (int q = 0; q < P; q++)
            for (int i = 0; i < N; i++)
                ck_assert_int_eq(gout[r][q * N + i], q * 100000 + i);
    sim_counters(s);
    ck_assert_uint_gt(s->c[ACIS_SWC_seg_allreduce], sizeof in[0] / o.payload);
    ck_assert_uint_gt(s->c[ACIS_SWC_drop_duplicate], 0);       /* the loss was real */
    sim_comm_free(c);
    sim_fini(s);
    free(s);
}

START_TEST(switch_at_mtu)
{
    at_mtu(256);
    at_mtu(1024);
    at_mtu(4096);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verbs");
    TCase *t = tcase_create("verbs");
    tcase_add_test(t, send_wr);
    tcase_add_test(t, payload_per_mtu);
    tcase_add_test(t, choose_device);
    tcase_add_test(t, choose_gid);
    tcase_add_test(t, regcache);
    tcase_add_test(t, sender_filter);
    tcase_add_test(t, reply_handles);
    tcase_add_test(t, credits);
    tcase_add_test(t, peer_service_for_verbs);
    tcase_add_test(t, switch_at_mtu);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
