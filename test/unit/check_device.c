/* check_device.c -- the device's clock for a dead switch, against a real
 * UDP switch in this process: the switch is silent only when a repeat has
 * gone unanswered for the timeout.  A waiter whose own wait is older than
 * the timeout is not told the switch is dead while another thread hears it
 * (MPI_THREAD_MULTIPLE: any thread may take the switch's answers); time
 * spent not asking is not silence; a repeat nobody answers is. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

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

int main(void)
{
    Suite *s = suite_create("device");
    TCase *t = tcase_create("silence");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 30);
    tcase_add_test(t, another_thread_hears);
    tcase_add_test(t, away_is_not_silence);
    tcase_add_test(t, unanswered_repeat_is_silence);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
