/* jobsock.h -- the IPv4 UDP sockets of a process and its descendants, as
 * /proc shows them to a process of the same user (test/mpi/rogue). */
#ifndef ACIS_TEST_JOBSOCK_H
#define ACIS_TEST_JOBSOCK_H

#include <stdint.h>

struct jobsock {
    uint32_t local_ip, remote_ip;   /* network order; remote 0: not connected */
    uint16_t local_port, remote_port;  /* host order */
};

/* The UDP sockets of pid and every process below it, up to max into s:
 * their count, or -1 if /proc could not be read. */
int jobsock_list(int pid, struct jobsock *s, int max);

#endif
