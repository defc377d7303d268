/* check_device.c -- the device against a real UDP switch in this
 * process.  Its clock for a dead switch: the switch is silent only when a
 * repeat has gone unanswered for the timeout.  A waiter whose own wait is
 * older than the timeout is not told the switch is dead while another
 * thread hears it (MPI_THREAD_MULTIPLE: any thread may take the switch's
 * answers); time spent not asking is not silence; a repeat nobody answers
 * is.  Its join: a WELCOME forged from another socket, valid in all but
 * its sender and there before the real one, is counted and dropped, and
 * the device attaches to the switch that answered; with only such a
 * WELCOME the join fails saying so; a switch given as a wildcard address
 * (0.0.0.0) is joined where its answers come from.  Its control round
 * trips: joins that wait leave room for one that holds the lock, and a
 * join's answer is matched by its leader too.  The switch takes the
 * requests of the process that hosts it in place, as its port's. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mpid/device.h"
#include "switch/switch.h"
#include "util/util.h"

#define TIMEOUT_MS 1000
#define MS 1000000ull

static struct acis_udpsw *sw;

static void nap_ms(unsigned ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void setup(void)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    char why[160];
    o.ports = 4;
    o.tables = 2;
    o.slots = 8;
    sw = acis_udpsw_create("127.0.0.1:0", &o, why, sizeof why);
    ck_assert_msg(sw != NULL, "switch: %s", why);
    ck_assert_int_eq(acis_udpsw_start(sw, 0), 0);
    acis_dev_set_wait(0, 50, TIMEOUT_MS);
    ck_assert_msg(acis_dev_open(ACIS_DEV_UDP, acis_udpsw_address(sw), 42, 0, 1, 5000, why,
                                sizeof why) == 0,
                  "device: %s", why);
    acis_dev_set_threaded(1);
}

static void teardown(void)
{
    acis_dev_close();
    acis_udpsw_stop(sw);
    acis_udpsw_destroy(sw);
}

/* One repeat and its answer, as a waiter in another thread would see it:
 * the engine marks the repeat, the switch's packet (here the answer to a
 * STATS request) clears the mark. */
static int ask_and_hear(void)
{
    uint64_t st[8];
    acis_dev_lock();
    acis_dev_asked();
    int r = acis_dev_switch_stats(st, 8);
    acis_dev_unlock();
    return r < 0 ? -1 : 0;
}

static atomic_int stop;

/* A packet of kind of this device's job, rank src, for context ctx. */
static void header(uint8_t *hdr, unsigned kind, uint32_t src, uint32_t ctx)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .flags = ACIS_F_UNSEALED,
        .job_key = 42, .ctx = ctx, .src = src,
    };
    acis_hdr_encode(&h, hdr);
}

/* Until the switch knows the hosting process's port it takes nothing in
 * place; then a data packet is handled at once as that port's (checked
 * as one from its rank: a foreign context and a spoofed rank are counted
 * as such), its payload read where it lies, apart from its header (a
 * sealed one's checksum holds over both), a control packet is left to be
 * sent. */
START_TEST(home_requests_in_place)
{
    uint8_t hdr[ACIS_HDR_LEN];
    uint64_t before[ACIS_SWC_COUNT], after[ACIS_SWC_COUNT];
    ck_assert_int_eq(acis_udpsw_take_begin(sw), 0);
    acis_udpsw_set_home(sw, acis_dev_info()->port);
    acis_udpsw_counters(sw, before);
    int began = 0;
    for (int i = 0; i < 1000 && !(began = acis_udpsw_take_begin(sw)); i++)
        nap_ms(1);                                /* the switch's thread is at it */
    ck_assert(began);
    header(hdr, ACIS_K_BARRIER, 0, 0x7777);
    ck_assert_int_eq(acis_udpsw_take(sw, hdr, NULL, 0), 1);
    header(hdr, ACIS_K_BARRIER, 1, 0x7777);
    ck_assert_int_eq(acis_udpsw_take(sw, hdr, NULL, 0), 1);
    uint8_t payload[16] = { 1, 2, 3 };
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_BCAST, ACIS_ALG_FLAT), .dtype = ACIS_DT_BYTE,
        .payload_len = sizeof payload, .total_len = sizeof payload, .job_key = 42,
        .ctx = 0x7777, .src = 0,
    };
    acis_hdr_encode(&h, hdr);
    acis_hdr_seal(hdr, payload, sizeof payload);
    ck_assert_int_eq(acis_udpsw_take(sw, hdr, payload, sizeof payload), 1);
    header(hdr, ACIS_K_STATS_REQ, 0, 0);
    ck_assert_int_eq(acis_udpsw_take(sw, hdr, NULL, 0), 0);
    acis_udpsw_take_end(sw);
    acis_udpsw_counters(sw, after);
    ck_assert_uint_eq(after[ACIS_SWC_packets_in] - before[ACIS_SWC_packets_in], 3);
    ck_assert_uint_eq(after[ACIS_SWC_drop_malformed] - before[ACIS_SWC_drop_malformed], 0);
    ck_assert_uint_eq(after[ACIS_SWC_drop_foreign] - before[ACIS_SWC_drop_foreign], 2);
    ck_assert_uint_eq(after[ACIS_SWC_drop_spoofed] - before[ACIS_SWC_drop_spoofed], 1);
}
END_TEST

static void *hearer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (ask_and_hear() < 0)
            return (void *)1;
        nap_ms(10);
    }
    return NULL;
}

/* A waiter in this thread waits for three timeouts and takes no packet
 * itself; another thread repeats and is answered all along. */
START_TEST(another_thread_hears)
{
    pthread_t t;
    atomic_store(&stop, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, hearer, NULL), 0);
    uint64_t since = acis_now_ns();
    int dead = 0, looks = 0;
    while (acis_now_ns() - since < 3 * TIMEOUT_MS * MS) {
        dead |= acis_dev_wait(since) < 0 || acis_dev_silent(since);
        looks++;
    }
    atomic_store(&stop, 1);
    void *failed;
    pthread_join(t, &failed);
    ck_assert_msg(failed == NULL, "a STATS round trip went unanswered");
    ck_assert_msg(!dead, "a live switch was called silent (%d looks)", looks);
}
END_TEST

/* Away from the switch for longer than the timeout without asking: not
 * silence.  The first repeat after it starts the clock afresh. */
START_TEST(away_is_not_silence)
{
    uint64_t since = acis_now_ns();
    nap_ms(TIMEOUT_MS + 100);
    ck_assert_int_eq(acis_dev_silent(since), 0);
    ck_assert_int_eq(acis_dev_wait(since), 0);
    acis_dev_asked();
    ck_assert_int_eq(acis_dev_silent(since), 0);
    ck_assert_int_eq(ask_and_hear(), 0);
    ck_assert_int_eq(acis_dev_asking(), 0);
}
END_TEST

/* A repeat nobody answers is silence once the timeout has passed since
 * it, or since the waiter began if that is later; any packet ends it. */
START_TEST(unanswered_repeat_is_silence)
{
    uint64_t asked = acis_now_ns();
    acis_dev_asked();
    ck_assert_int_eq(acis_dev_asking(), 1);
    nap_ms(TIMEOUT_MS + 100);
    ck_assert_int_eq(acis_dev_silent(acis_now_ns()), 0);   /* a wait that began just now */
    ck_assert_int_eq(acis_dev_silent(asked), 1);
    ck_assert_int_eq(acis_dev_wait(asked), -1);
    acis_dev_lock();
    ck_assert_int_eq(acis_dev_still_silent(asked), 1);      /* nothing was sent to us */
    acis_dev_unlock();
    ck_assert_int_eq(ask_and_hear(), 0);
    ck_assert_int_eq(acis_dev_silent(asked), 0);
    ck_assert_int_eq(acis_dev_wait(asked), 0);
}
END_TEST

/* ------------------------------------------------------------- joining */

static struct acis_udpsw *new_switch(const char *listen)
{
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    char why[160];
    o.ports = 4;
    o.tables = 2;
    o.slots = 8;
    o.payload = 2048;
    struct acis_udpsw *u = acis_udpsw_create(listen, &o, why, sizeof why);
    ck_assert_msg(u != NULL, "switch: %s", why);
    ck_assert_int_eq(acis_udpsw_start(u, 0), 0);
    return u;
}

/* A UDP socket on 127.0.0.1, any port; its address into a. */
static int local_socket(struct sockaddr_storage *a, socklen_t *len)
{
    char why[160];
    ck_assert_int_eq(acis_addr_parse("127.0.0.1:0", a, len, why, sizeof why), 0);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)a, *len), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)a, len), 0);
    return fd;
}

struct opener {
    char addr[80], why[200];
    int rc;
};

static void *open_device(void *arg)
{
    struct opener *o = arg;
    o->rc = acis_dev_open(ACIS_DEV_UDP, o->addr, 42, 0, 1, 5000, o->why, sizeof o->why);
    return NULL;
}

/* The switch as the device sees it: a relay at one address passing
 * datagrams between the device and the real switch, so the test reads
 * the HELLO (its request id) before the switch answers it. */
struct relay {
    int fd;
    struct sockaddr_storage host, sw;
    socklen_t host_len, sw_len;
    atomic_int stop;
};

static void *relay_run(void *arg)
{
    struct relay *r = arg;
    uint8_t buf[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    while (!atomic_load(&r->stop)) {
        struct pollfd pf = { r->fd, POLLIN, 0 };
        if (poll(&pf, 1, 10) <= 0)
            continue;
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(r->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        if (n < 0)
            continue;
        if (acis_addr_same(&from, &r->sw))
            sendto(r->fd, buf, (size_t)n, 0, (struct sockaddr *)&r->host, r->host_len);
        else if (acis_addr_same(&from, &r->host))
            sendto(r->fd, buf, (size_t)n, 0, (struct sockaddr *)&r->sw, r->sw_len);
    }
    return NULL;
}

/* A WELCOME to request seq of job 42, valid in all but its sender, naming
 * port 3 and 512-byte packets (the switch gives port 0 and 2048). */
static size_t forged_welcome(uint8_t *pkt, uint32_t seq)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_WELCOME, ACIS_ALG_FLAT), .flags = ACIS_F_RESULT,
        .payload_len = ACIS_WELCOME_LEN, .job_key = 42, .seq = seq, .src = ACIS_NO_RANK,
    };
    uint8_t *p = pkt + ACIS_HDR_LEN;
    uint32_t fields[8] = { ACIS_ST_OK, 3, 512, 2, 2, 4, 8, 0xbad };
    for (int i = 0; i < 8; i++)
        acis_put32(p + 4 * i, fields[i]);
    acis_hdr_encode(&h, pkt);
    acis_hdr_seal(pkt, p, ACIS_WELCOME_LEN);
    return ACIS_HDR_LEN + ACIS_WELCOME_LEN;
}

START_TEST(forged_welcome_first)
{
    struct acis_udpsw *u = new_switch("127.0.0.1:0");
    struct relay r = { 0 };
    struct sockaddr_storage forger_at;
    socklen_t forger_len;
    char why[160];
    int forger = local_socket(&forger_at, &forger_len);
    r.fd = local_socket(&r.sw, &r.sw_len);     /* r.sw: the relay's own, for now */
    struct opener o = { .rc = -2 };
    acis_addr_format((struct sockaddr *)&r.sw, r.sw_len, o.addr, sizeof o.addr);
    ck_assert_int_eq(acis_addr_parse(acis_udpsw_address(u), &r.sw, &r.sw_len, why,
                                     sizeof why), 0);
    acis_dev_set_wait(0, 50, TIMEOUT_MS);
    struct acis_host_stats before, after;
    acis_host_snapshot(&before);

    pthread_t opener, relay;
    ck_assert_int_eq(pthread_create(&opener, NULL, open_device, &o), 0);
    uint8_t hello[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD], pkt[ACIS_HDR_LEN + ACIS_WELCOME_LEN];
    struct pollfd pf = { r.fd, POLLIN, 0 };
    ck_assert_int_eq(poll(&pf, 1, 5000), 1);
    r.host_len = sizeof r.host;
    ssize_t n = recvfrom(r.fd, hello, sizeof hello, 0, (struct sockaddr *)&r.host, &r.host_len);
    struct acis_hdr h;
    ck_assert_int_eq(acis_wire_decode(hello, (size_t)n, ACIS_MAX_PAYLOAD, &h), ACIS_WERR_OK);
    ck_assert_uint_eq(ACIS_OPC_KIND(h.opcode), ACIS_K_HELLO);

    /* the forgery first, from another socket; then the real answer */
    size_t len = forged_welcome(pkt, h.seq);
    ck_assert_int_eq(sendto(forger, pkt, len, 0, (struct sockaddr *)&r.host, r.host_len),
                     (ssize_t)len);
    nap_ms(50);                                  /* the device reads it meanwhile */
    sendto(r.fd, hello, (size_t)n, 0, (struct sockaddr *)&r.sw, r.sw_len);
    ck_assert_int_eq(pthread_create(&relay, NULL, relay_run, &r), 0);
    pthread_join(opener, NULL);
    ck_assert_msg(o.rc == 0, "the device did not join: %s", o.why);
    acis_host_snapshot(&after);

    const struct acis_dev_info *in = acis_dev_info();
    ck_assert_uint_eq(in->port, 0);              /* the switch's answer, not the forgery */
    ck_assert_uint_eq(in->max_payload, 2048);
    ck_assert_uint_ge(after.packets_foreign - before.packets_foreign, 1);
    uint64_t st[8];                              /* attached to the switch (via the relay) */
    ck_assert_int_gt(acis_dev_switch_stats(st, 8), 0);
    acis_dev_close();                            /* BYE */
    nap_ms(20);
    ck_assert_msg(recv(forger, pkt, sizeof pkt, MSG_DONTWAIT) < 0,
                  "the device sent a packet (with the job's key) to the forger");
    atomic_store(&r.stop, 1);
    pthread_join(relay, NULL);
    close(forger);
    close(r.fd);
    acis_udpsw_stop(u);
    acis_udpsw_destroy(u);
}
END_TEST

/* On UDP a switch answers HELLO from its service address: a WELCOME
 * from another port, valid in all else, is not taken, and the join's
 * error says datagrams came from elsewhere. */
START_TEST(welcome_from_elsewhere)
{
    struct sockaddr_storage svc, other, host;
    socklen_t svc_len, other_len, host_len = sizeof host;
    int s = local_socket(&svc, &svc_len), f = local_socket(&other, &other_len);
    struct opener o = { .rc = -2 };
    acis_addr_format((struct sockaddr *)&svc, svc_len, o.addr, sizeof o.addr);
    struct acis_host_stats before, after;
    acis_host_snapshot(&before);
    pthread_t opener;
    ck_assert_int_eq(pthread_create(&opener, NULL, open_device, &o), 0);
    uint8_t hello[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD], pkt[ACIS_HDR_LEN + ACIS_WELCOME_LEN];
    struct pollfd pf = { s, POLLIN, 0 };
    ck_assert_int_eq(poll(&pf, 1, 5000), 1);
    ssize_t n = recvfrom(s, hello, sizeof hello, 0, (struct sockaddr *)&host, &host_len);
    struct acis_hdr h;
    ck_assert_int_eq(acis_wire_decode(hello, (size_t)n, ACIS_MAX_PAYLOAD, &h), ACIS_WERR_OK);
    size_t len = forged_welcome(pkt, h.seq);
    ck_assert_int_eq(sendto(f, pkt, len, 0, (struct sockaddr *)&host, host_len), (ssize_t)len);
    pthread_join(opener, NULL);                  /* 5 s: nothing else answers */
    acis_host_snapshot(&after);
    ck_assert_int_eq(o.rc, -1);
    ck_assert_msg(strstr(o.why, "did not answer") &&
                      strstr(o.why, "datagrams from other addresses were dropped"),
                  "%s", o.why);
    ck_assert_uint_ge(after.packets_foreign - before.packets_foreign, 1);
    close(s);
    close(f);
}
END_TEST

/* A switch listening on every address, given as 0.0.0.0:PORT: its
 * answers come from 127.0.0.1:PORT, where the device sends. */
START_TEST(wildcard_service_address)
{
    struct acis_udpsw *u = new_switch("0.0.0.0:0");
    char why[200];
    acis_dev_set_wait(0, 50, TIMEOUT_MS);
    ck_assert_msg(strncmp(acis_udpsw_address(u), "0.0.0.0:", 8) == 0, "%s",
                  acis_udpsw_address(u));
    ck_assert_msg(acis_dev_open(ACIS_DEV_UDP, acis_udpsw_address(u), 42, 0, 1, 2000, why,
                                sizeof why) == 0,
                  "device: %s", why);
    uint64_t st[8];
    ck_assert_int_gt(acis_dev_switch_stats(st, 8), 0);
    acis_dev_close();
    acis_udpsw_stop(u);
    acis_udpsw_destroy(u);
}
END_TEST

/* The device again, as rank 0 of a job of two whose rank 1 never joins
 * a communicator: a set-up waits until the timeout. */
static void reopen_as_one_of_two(void)
{
    char why[160];
    acis_dev_close();
    ck_assert_msg(acis_dev_open(ACIS_DEV_UDP, acis_udpsw_address(sw), 43, 0, 2, 5000, why,
                                sizeof why) == 0,
                  "device: %s", why);
}

struct joiner {
    uint32_t id, leader, n;
    int rc;
    uint32_t status, ctx;
};

/* One member's join, under the device lock as commtable/ct.c calls it. */
static void *join(void *arg)
{
    struct joiner *j = arg;
    uint32_t win, pl, flags;
    acis_dev_lock();
    j->rc = acis_dev_ct_join(j->id, j->leader, j->n, 0, &j->status, &j->ctx, &win, &pl, &flags);
    acis_dev_unlock();
    return NULL;
}

/* Nine threads in set-ups that wait (more than there are entries for
 * answers): a round trip that holds the lock throughout, here a read of
 * the switch's counters, still gets its answer.  With every entry open
 * to the joins, it found none free and failed. */
START_TEST(joins_leave_room)
{
    enum { N = 9 };
    reopen_as_one_of_two();
    struct joiner j[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        j[i] = (struct joiner){ .id = 0x80000100u + (uint32_t)i, .leader = 0, .n = 2 };
        ck_assert_int_eq(pthread_create(&t[i], NULL, join, &j[i]), 0);
    }
    nap_ms(200);
    uint64_t st[8];
    acis_dev_lock();
    int got = acis_dev_switch_stats(st, 8);
    acis_dev_unlock();
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_gt(got, 0);
    for (int i = 0; i < N; i++)                 /* rank 1 never joined: each timed
                                                   out, or was refused (job limit) */
        ck_assert_msg(j[i].rc == -1 || j[i].status != ACIS_ST_OK, "join %d: set up", i);
}
END_TEST

/* Two set-ups with one id and different leaders (the switch keys them by
 * both): the answer to one is not taken for the other's. */
START_TEST(join_answer_by_leader)
{
    reopen_as_one_of_two();
    struct joiner waits = { .id = 0x80000200u, .leader = 0, .n = 2 };
    struct joiner alone = { .id = 0x80000200u, .leader = 1, .n = 1 };
    pthread_t a, b;
    ck_assert_int_eq(pthread_create(&a, NULL, join, &waits), 0);
    nap_ms(100);                                /* its entry is the first */
    ck_assert_int_eq(pthread_create(&b, NULL, join, &alone), 0);
    pthread_join(b, NULL);
    pthread_join(a, NULL);
    ck_assert_int_eq(alone.rc, 0);
    ck_assert_uint_eq(alone.status, ACIS_ST_OK);
    ck_assert_int_eq(waits.rc, -1);             /* its rank 1 never joined */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("device");
    TCase *t = tcase_create("silence");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 30);
    tcase_add_test(t, another_thread_hears);
    tcase_add_test(t, away_is_not_silence);
    tcase_add_test(t, unanswered_repeat_is_silence);
    tcase_add_test(t, joins_leave_room);
    tcase_add_test(t, join_answer_by_leader);
    tcase_add_test(t, home_requests_in_place);
    suite_add_tcase(s, t);
    TCase *j = tcase_create("join");
    tcase_set_timeout(j, 30);
    tcase_add_test(j, forged_welcome_first);
    tcase_add_test(j, welcome_from_elsewhere);
    tcase_add_test(j, wildcard_service_address);
    suite_add_tcase(s, j);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
