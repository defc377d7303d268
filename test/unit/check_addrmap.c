/* check_addrmap.c -- the UDP switch's table from source address to host
 * port: every open port is found by its address (IPv4 and IPv6, colliding
 * runs included), closing ports in any order keeps the others findable,
 * an address holds one port, unknown addresses find none. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "switch/sw.h"

static struct sw_peer v4(uint32_t host, uint16_t port)
{
    struct sw_peer p;
    memset(&p, 0, sizeof p);
    struct sockaddr_in *a = (struct sockaddr_in *)&p.a;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(0x7f000000u | host);
    a->sin_port = htons(port);
    p.len = sizeof *a;
    return p;
}

static struct sw_peer v6(uint32_t host, uint16_t port)
{
    struct sw_peer p;
    memset(&p, 0, sizeof p);
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&p.a;
    a->sin6_family = AF_INET6;
    a->sin6_addr.s6_addr[15] = (uint8_t)host;
    a->sin6_addr.s6_addr[14] = (uint8_t)(host >> 8);
    a->sin6_port = htons(port);
    p.len = sizeof *a;
    return p;
}

START_TEST(find_add_delete)
{
    enum { PORTS = 1000 };
    struct sw_addrmap m;
    static struct sw_peer addr[PORTS];
    static int open_[PORTS];
    ck_assert_int_eq(sw_addrmap_init(&m, PORTS), 0);
    for (uint32_t p = 0; p < PORTS; p++) {
        addr[p] = p % 3 ? v4(p % 7, (uint16_t)(40000 + p)) : v6(p, 5000);
        ck_assert_int_eq(sw_addrmap_add(&m, p, &addr[p]), 0);
        open_[p] = 1;
    }
    struct sw_peer other = v4(1, 40001);                   /* port 1's address */
    ck_assert_int_eq(sw_addrmap_add(&m, 0, &other), -1);   /* port in use */
    sw_addrmap_del(&m, 0);
    open_[0] = 0;
    ck_assert_int_eq(sw_addrmap_add(&m, 0, &other), -1);   /* address in use */
    struct sw_peer none = v4(99, 1), v6none = v6(70000, 5000);
    ck_assert_uint_eq(sw_addrmap_find(&m, &none), SW_NONE);
    ck_assert_uint_eq(sw_addrmap_find(&m, &v6none), SW_NONE);
    unsigned seed = 7;
    for (int round = 0; round < 3000; round++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t p = (seed >> 8) % PORTS;
        if (open_[p]) {
            sw_addrmap_del(&m, p);
            open_[p] = 0;
        } else {
            ck_assert_int_eq(sw_addrmap_add(&m, p, &addr[p]), 0);
            open_[p] = 1;
        }
        if (round % 100 == 0)
            for (uint32_t q = 0; q < PORTS; q++)
                ck_assert_uint_eq(sw_addrmap_find(&m, &addr[q]), (open_[q] ? q : SW_NONE));
    }
    for (uint32_t q = 0; q < PORTS; q++)
        ck_assert_uint_eq(sw_addrmap_find(&m, &addr[q]), (open_[q] ? q : SW_NONE));
    sw_addrmap_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("addrmap");
    TCase *t = tcase_create("addrmap");
    tcase_add_test(t, find_add_delete);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
