/* addrmap.c -- which host port a datagram belongs to, by its source
 * address: the UDP switch serves every port on one socket, so a port is
 * the address its host said HELLO from.  An open-addressing hash table
 * (linear probing, backward-shift deletion) from address to port, and the
 * address of every open port for sending to it. */
#include "config.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "sw.h"

static uint32_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* Only what identifies a sender: family, address, port (and scope). */
static uint32_t hash(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)a;
        return mix((uint64_t)s->sin_addr.s_addr << 16 | s->sin_port);
    }
    const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)a;
    uint64_t w[2];
    memcpy(w, &s->sin6_addr, sizeof w);
    return mix(w[0] ^ mix(w[1]) ^ ((uint64_t)s->sin6_port << 32) ^ s->sin6_scope_id);
}

static int same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const struct sockaddr_in *)a,
                                 *y = (const struct sockaddr_in *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a,
                              *y = (const struct sockaddr_in6 *)b;
    return x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id &&
           memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

int sw_peer_same(const struct sw_peer *a, const struct sw_peer *b)
{
    return a->len && b->len && same(&a->a, &b->a);
}

int sw_addrmap_init(struct sw_addrmap *m, uint32_t ports)
{
    uint32_t cap = 16;
    while (cap < 2 * ports)
        cap *= 2;
    memset(m, 0, sizeof *m);
    m->ports = ports;
    m->mask = cap - 1;
    m->table = calloc(cap, sizeof *m->table);
    m->addr = calloc(ports, sizeof *m->addr);
    if (!m->table || !m->addr) {
        sw_addrmap_free(m);
        return -1;
    }
    return 0;
}

void sw_addrmap_free(struct sw_addrmap *m)
{
    free(m->table);
    free(m->addr);
    memset(m, 0, sizeof *m);
}

/* The table's index holding port p + 1, or of the empty entry where a
 * would go. */
static uint32_t probe(const struct sw_addrmap *m, const struct sockaddr_storage *a)
{
    uint32_t i = hash(a) & m->mask;
    while (m->table[i] && !same(&m->addr[m->table[i] - 1].a, a))
        i = (i + 1) & m->mask;
    return i;
}

uint32_t sw_addrmap_find(const struct sw_addrmap *m, const struct sw_peer *p)
{
    if (p->a.ss_family != AF_INET && p->a.ss_family != AF_INET6)
        return SW_NONE;
    uint32_t v = m->table[probe(m, &p->a)];
    return v ? v - 1 : SW_NONE;
}

int sw_addrmap_add(struct sw_addrmap *m, uint32_t port, const struct sw_peer *p)
{
    if (port >= m->ports || m->addr[port].len ||
        (p->a.ss_family != AF_INET && p->a.ss_family != AF_INET6))
        return -1;
    uint32_t i = probe(m, &p->a);
    if (m->table[i])
        return -1;                        /* that address holds a port already */
    m->addr[port] = *p;
    m->table[i] = port + 1;
    return 0;
}

void sw_addrmap_del(struct sw_addrmap *m, uint32_t port)
{
    if (port >= m->ports || !m->addr[port].len)
        return;
    uint32_t i = probe(m, &m->addr[port].a);
    m->table[i] = 0;
    /* Backward shift: move up later entries of the run that hashed at or
     * before the hole, so every probe still finds its entry. */
    for (uint32_t j = (i + 1) & m->mask; m->table[j]; j = (j + 1) & m->mask) {
        uint32_t home = hash(&m->addr[m->table[j] - 1].a) & m->mask;
        if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
            m->table[i] = m->table[j];
            m->table[j] = 0;
            i = j;
        }
    }
    memset(&m->addr[port], 0, sizeof m->addr[port]);
}
