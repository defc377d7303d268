/* sender.c -- who sent a datagram: whether two endpoints are the same
 * port or queue pair, and which datagrams of a batch a host's channel
 * takes: those from the one endpoint it listens to (the switch's service
 * endpoint before it joined, its host port after), and before it joined
 * those from other queue pairs at the service endpoint's port, where a
 * switch with a queue pair per host port answers HELLO from (the device
 * takes only that WELCOME from them).  Pure functions: unit tests check
 * them without a device. */
#include "config.h"

#include <string.h>

#include "verbs.h"

int acis_ud_same_port(const struct acis_ib_addr *a, const struct acis_ib_addr *b)
{
    return a->has_gid == b->has_gid &&
           (a->has_gid ? memcmp(a->gid, b->gid, sizeof a->gid) == 0 : a->lid == b->lid);
}

int acis_ud_same_sender(const struct acis_ib_addr *a, const struct acis_ib_addr *b)
{
    return a->qpn == b->qpn && acis_ud_same_port(a, b);
}

int acis_ud_keep(const struct acis_ud_msg *m, int n, const struct acis_ib_addr *peer,
                 int joined, int *keep, int *exact)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int same = acis_ud_same_sender(&m[i].from, peer);
        if (same || (!joined && acis_ud_same_port(&m[i].from, peer))) {
            exact[k] = same;
            keep[k++] = i;
        }
    }
    return k;
}
