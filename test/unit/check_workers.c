/* check_workers.c -- a switch core of three workers (acis-switchd
 * --threads) driven by three threads at once, as its UDP lanes would:
 * two feed small allreduces on rows their own workers serve, the third
 * feeds a row the first worker serves (every packet crosses: handled with
 * all workers paused) and sends control packets (STATS, a host joining
 * and leaving) between them.  Every answer must carry the right sum, the
 * counters must add up, and ThreadSanitizer (scripts/test --tsan and
 * --without-verbs run this) must find no race. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simhost.h"
#include "switch/switch.h"

#define P 4                       /* members of each communicator */
#define ITERS 3000                /* collectives each feeder runs */
#define ELEMS 4
#define KEY 0x5ca1ab1eULL

/* Answers seen for one communicator: by whichever thread runs its
 * worker's view, one at a time (its own, or one pausing every worker). */
struct seen {
    uint32_t ctx;
    uint64_t answers, wrong;
    uint32_t last;                /* sequence number of the last answer */
};

static struct sim s;
static struct seen seen[3];
static struct sim_comm *comm[3]; /* fed by threads 0, 1, 2 */
static struct acis_sw *view[3];

/* An answer: to every member at once, the sum of what they sent. */
static void send_ports(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                       int iovcnt)
{
    (void)ctx, (void)ports;
    uint8_t pkt[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    size_t len = 0;
    for (int k = 0; k < iovcnt && len + iov[k].iov_len <= sizeof pkt; k++) {
        memcpy(pkt + len, iov[k].iov_base, iov[k].iov_len);
        len += iov[k].iov_len;
    }
    struct acis_hdr h;
    if (acis_wire_decode(pkt, len, ACIS_MAX_PAYLOAD, &h) != ACIS_WERR_OK ||
        ACIS_OPC_KIND(h.opcode) != ACIS_K_ALLREDUCE)
        return;                   /* a control answer */
    for (int c = 0; c < 3; c++) {
        if (seen[c].ctx != h.ctx)
            continue;
        int ok = n == P && h.payload_len == 4 * ELEMS;
        for (uint32_t e = 0; ok && e < ELEMS; e++) {
            uint32_t i = h.seq - 1;
            int32_t want = (int32_t)(P * (P - 1) / 2 + P * (i + e));
            ok = (int32_t)acis_get32(pkt + ACIS_HDR_LEN + 4 * e) == want;
        }
        seen[c].answers++;
        seen[c].wrong += !ok;
        seen[c].last = h.seq;
    }
}

/* Thread t: its communicator's collectives through its worker's view;
 * thread 2 sends control packets too. */
static void *feed(void *arg)
{
    int t = (int)(intptr_t)arg;
    struct sim_comm *c = comm[t];
    _Alignas(16) uint8_t pkt[ACIS_HDR_LEN + 4 * ELEMS], ctl[ACIS_HDR_LEN + ACIS_HELLO_LEN];
    int32_t data[ELEMS];
    for (uint32_t i = 0; i < ITERS; i++) {
        acis_sw_enter(view[t]);
        for (int m = 0; m < P; m++) {
            for (int e = 0; e < ELEMS; e++)
                data[e] = (int32_t)(m + (int)i + e);
            size_t len = sim_piece(pkt, &s, c, m, i, ACIS_DT_I32, data, ELEMS);
            acis_sw_input(view[t], s.hosts[c->host[m]].port, NULL, pkt, len);
        }
        if (t == 2 && i % 50 == 0) {  /* control between the data */
            static const int peer = 999;
            uint8_t pl[ACIS_HELLO_LEN] = { 0 };
            acis_put32(pl, 3 * P + 1);
            size_t len = i % 100 ? sim_control(ctl, ACIS_K_STATS_REQ, KEY, 0, 0, i, NULL, 0)
                                 : sim_control(ctl, ACIS_K_HELLO, KEY, 3 * P, 0, i + 1, pl,
                                               sizeof pl);
            acis_sw_input(view[t], ACIS_PORT_SERVICE, &peer, ctl, len);
        }
        acis_sw_leave(view[t]);
    }
    return NULL;
}

START_TEST(three_workers)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.threads = 3;
    o.ports = 64;
    o.tables = 8;
    o.slots = 64;
    o.pool = 0;
    ck_assert_int_eq(sim_init(&s, &o), 0);
    ck_assert_uint_eq(acis_sw_workers(s.sw), 3);
    for (int r = 0; r < 3 * P; r++) {
        uint32_t st;
        ck_assert_int_eq(sim_join(&s, KEY, (uint32_t)r, 3 * P + 1, &st), r);
    }
    /* rows 0, 1, 2, 3 in turn: workers 0, 1, 2, 0.  Thread 0 feeds row 0,
     * thread 1 row 1, thread 2 row 3 through worker 2: its packets cross. */
    struct sim_comm *all[4];
    for (int k = 0; k < 4; k++) {
        all[k] = sim_comm_new(P);
        for (int m = 0; m < P; m++)
            all[k]->host[m] = (k == 3 ? 2 : k % 3) * P + m;
        ck_assert_uint_eq(sim_ct_create(&s, all[k], (uint32_t)k + 1), ACIS_ST_OK);
        ck_assert_uint_eq(acis_sw_row_worker(s.sw, all[k]->ctx), (uint32_t)k % 3);
    }
    comm[0] = all[0];
    comm[1] = all[1];
    comm[2] = all[3];
    for (int t = 0; t < 3; t++) {
        seen[t].ctx = comm[t]->ctx;
        view[t] = acis_sw_worker(s.sw, (uint32_t)t);
        struct acis_sw_io io = sim_send_only_io(NULL, send_ports);
        acis_sw_worker_io(view[t], &io);
    }
    ck_assert_ptr_eq(view[0], s.sw);
    ck_assert_ptr_null(acis_sw_worker(s.sw, 3));
    sim_counters(&s);
    uint64_t c0[ACIS_SWC_COUNT];
    memcpy(c0, s.c, sizeof c0);

    pthread_t th[3];
    for (int t = 0; t < 3; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, feed, (void *)(intptr_t)t), 0);
    for (int t = 0; t < 3; t++)
        pthread_join(th[t], NULL);

    sim_counters(&s);
    for (int t = 0; t < 3; t++) {
        ck_assert_uint_eq(seen[t].answers, ITERS);
        ck_assert_uint_eq(seen[t].wrong, 0);
        ck_assert_uint_eq(seen[t].last, ITERS);
    }
    ck_assert_uint_eq(s.c[ACIS_SWC_segments] - c0[ACIS_SWC_segments], 3 * ITERS);
    ck_assert_uint_eq(s.c[ACIS_SWC_crossed] - c0[ACIS_SWC_crossed], (uint64_t)ITERS * P);
    /* all but the first piece of each slot's first use, on the two rows
     * served by their own worker; none of the crossed ones */
    ck_assert_uint_eq(s.c[ACIS_SWC_quick] - c0[ACIS_SWC_quick],
                      2ull * ((uint64_t)ITERS * P - comm[0]->window));
    ck_assert_uint_eq(s.c[ACIS_SWC_ports_in_use], 3 * P + 1);   /* the host that joined */
    ck_assert_uint_eq(s.c[ACIS_SWC_drop_slot] + s.c[ACIS_SWC_drop_foreign] +
                      s.c[ACIS_SWC_drop_malformed] + s.c[ACIS_SWC_drop_duplicate], 0);
    for (int k = 0; k < 4; k++)
        sim_comm_free(all[k]);
    sim_fini(&s);
}
END_TEST

/* Hold buffers are shared out among the workers that serve rows: with
 * --threads 64 and the defaults (63 of them, 32 rows) the first worker
 * got none, and half went to workers without a row -- a float sum on the
 * first row could never hold a piece.  Each gets one at least; an
 * explicit --hold too small for that is refused. */
START_TEST(hold_for_every_worker)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.threads = 64;
    struct sim x;
    memset(&x, 0, sizeof x);
    ck_assert_int_eq(sim_init(&x, &o), 0);
    for (int r = 0; r < 2; r++) {
        uint32_t st;
        ck_assert_int_eq(sim_join(&x, KEY, (uint32_t)r, 2, &st), r);
    }
    struct sim_comm *c = sim_comm_new(2);
    c->host[0] = 0;
    c->host[1] = 1;
    ck_assert_uint_eq(sim_ct_create(&x, c, 1), ACIS_ST_OK);
    ck_assert_uint_eq(acis_sw_row_worker(x.sw, c->ctx), 0);
    sim_counters(&x);
    uint64_t seg = x.c[ACIS_SWC_segments];
    _Alignas(16) uint8_t pkt[ACIS_HDR_LEN + 16];
    float d[4] = { 1, 2, 3, 4 };
    for (int m = 1; m >= 0; m--)                 /* the second first: held */
        sim_input(x.sw, x.hosts[c->host[m]].port, NULL, pkt,
                  sim_piece(pkt, &x, c, m, 0, ACIS_DT_F32, d, 4));
    sim_counters(&x);
    ck_assert_uint_eq(x.c[ACIS_SWC_hold_full], 0);
    ck_assert_uint_eq(x.c[ACIS_SWC_segments], seg + 1);
    ck_assert_uint_eq(x.c[ACIS_SWC_held], 0);
    sim_comm_free(c);
    sim_fini(&x);

    o = (struct acis_sw_opts)ACIS_SW_DEFAULT_OPTS;
    o.threads = 4;
    o.tables = 8;
    o.hold = 2;
    char err[200];
    struct acis_sw_io io = { 0 };
    struct acis_sw *sw = acis_sw_create(&o, &io, err, sizeof err);
    ck_assert_msg(sw == NULL, "4 workers with 2 hold buffers");
    ck_assert_msg(strstr(err, "--hold") != NULL, "%s", err);
    o.hold = 4;
    sw = acis_sw_create(&o, &io, err, sizeof err);
    ck_assert_msg(sw != NULL, "%s", err);
    acis_sw_destroy(sw);

    o.threads = ACIS_SW_MAX_THREADS + 1;         /* the bound switch.h states */
    ck_assert_ptr_null(acis_sw_create(&o, &io, err, sizeof err));
    ck_assert_msg(strstr(err, "threads") != NULL, "%s", err);
    o.threads = 2;                               /* workers take no links */
    o.links = 1;
    ck_assert_ptr_null(acis_sw_create(&o, &io, err, sizeof err));
    ck_assert_msg(strstr(err, "links") != NULL, "%s", err);
}
END_TEST

/* A switch of workers binds its lanes with SO_REUSEPORT: a second switch
 * of workers given the same address must fail as a switch of one does
 * (address in use), not join the first's group and sit there, its
 * datagrams all steered to the first; with port 0 it gets a port no
 * socket has. */
START_TEST(port_in_use)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    char why[200];
    o.threads = 2;
    struct acis_udpsw *a = acis_udpsw_create("127.0.0.1:0", &o, why, sizeof why);
    ck_assert_msg(a != NULL, "first switch: %s", why);
    for (uint32_t t = 1; t <= 2; t++) {
        o.threads = t;
        struct acis_udpsw *b = acis_udpsw_create(acis_udpsw_address(a), &o, why, sizeof why);
        ck_assert_msg(b == NULL, "a switch of %u worker(s) took %s too", t,
                      acis_udpsw_address(a));
        ck_assert_msg(strstr(why, "in use") != NULL, "%s", why);
    }
    acis_udpsw_destroy(a);
}
END_TEST

/* A packet that fails its wire checks is counted by the worker that got
 * it, without pausing the others, even when it claims to be control: a
 * busy worker (its lock held here) does not hold up garbage sent to
 * another.  (A valid control packet waits for every worker, as it must.) */
static struct acis_sw *gsw;
static atomic_int gdone;

static void *garbage(void *arg)
{
    (void)arg;
    static const int peer = 7;
    struct acis_sw *v = acis_sw_worker(gsw, 1);
    uint8_t pkt[ACIS_HDR_LEN];
    size_t len = sim_control(pkt, ACIS_K_STATS_REQ, KEY, 0, 0, 1, NULL, 0);
    pkt[ACIS_HDR_CHECKSUM] ^= 1;                 /* fails its checksum */
    acis_sw_enter(v);
    for (int i = 0; i < 100; i++)
        acis_sw_input(v, ACIS_PORT_SERVICE, &peer, pkt, len);
    acis_sw_leave(v);
    atomic_store(&gdone, 1);
    return NULL;
}

START_TEST(garbage_pauses_nobody)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.threads = 2;
    char err[200];
    struct acis_sw_io io = sim_send_only_io(NULL, send_ports);
    gsw = acis_sw_create(&o, &io, err, sizeof err);
    ck_assert_msg(gsw != NULL, "%s", err);
    atomic_store(&gdone, 0);
    acis_sw_enter(gsw);                           /* worker 0 is busy */
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, garbage, NULL), 0);
    for (int i = 0; i < 5000 && !atomic_load(&gdone); i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    int done = atomic_load(&gdone);
    acis_sw_leave(gsw);
    pthread_join(th, NULL);
    ck_assert_msg(done, "garbage on worker 1 waited for worker 0 (5 s)");
    uint64_t c[ACIS_SWC_COUNT];
    acis_sw_counters(gsw, c);
    ck_assert_uint_eq(c[ACIS_SWC_drop_malformed], 100);
    acis_sw_destroy(gsw);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("workers");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, three_workers);
    tcase_add_test(tc, hold_for_every_worker);
    tcase_add_test(tc, garbage_pauses_nobody);
    suite_add_tcase(su, tc);
    TCase *tu = tcase_create("udp");
    tcase_add_test(tu, port_in_use);
    suite_add_tcase(su, tu);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
