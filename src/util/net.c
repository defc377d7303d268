/* net.c -- "HOST:PORT" addresses (IPv4, [IPv6] or names) to socket
 * addresses and back, socket buffer sizing, and the text form of RDMA
 * endpoints ("LID/QPN", "GID/QPN"), and the address by which other hosts
 * reach this one; shared by the channels, the switches,
 * the CVAR parser and acis-info. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

int acis_addr_parse(const char *text, struct sockaddr_storage *out, socklen_t *len,
                    char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= sizeof host) {
        snprintf(err, errlen, "'%s' is not HOST:PORT", text);
        return -1;
    }
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host) - 2);
        host[strlen(host) - 2] = '\0';
    }
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM }, *res;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve '%s': %s", text, gai_strerror(rc));
        return -1;
    }
    memcpy(out, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int acis_addr_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (a->ss_family != AF_INET6)
        return 0;
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port &&
           memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

void acis_addr_format(const struct sockaddr *a, socklen_t len, char *out, size_t outlen)
{
    char host[128], port[16];
    if (getnameinfo(a, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(out, outlen, "?");
        return;
    }
    snprintf(out, outlen, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
}

int acis_addr_loopback(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
    const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(x) ||
           (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
}

int acis_host_address(struct sockaddr_storage *out, socklen_t *len)
{
    char host[256];
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM }, *res, *r;
    if (gethostname(host, sizeof host) == 0 && getaddrinfo(host, "9", &hints, &res) == 0) {
        for (r = res; r; r = r->ai_next)
            if ((r->ai_family == AF_INET || r->ai_family == AF_INET6) && !acis_addr_loopback(r->ai_addr))
                break;
        if (r) {
            memcpy(out, r->ai_addr, r->ai_addrlen);
            *len = r->ai_addrlen;
        }
        freeaddrinfo(res);
        if (r)
            return 0;
    }
    struct ifaddrs *ifs, *i;                 /* the name says loopback: any interface */
    if (getifaddrs(&ifs) != 0)
        return -1;
    for (i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && (i->ifa_flags & IFF_UP) && i->ifa_addr->sa_family == AF_INET &&
            !acis_addr_loopback(i->ifa_addr))
            break;
    if (i) {
        memcpy(out, i->ifa_addr, sizeof(struct sockaddr_in));
        ((struct sockaddr_in *)out)->sin_port = htons(9);
        *len = sizeof(struct sockaddr_in);
    }
    freeifaddrs(ifs);
    return i ? 0 : -1;
}

int acis_sock_buffers(int fd, int bytes)
{
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    int got = 0;
    socklen_t l = sizeof got;
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &l);
    return got;
}

/* A decimal or 0x-hex number up to max; 0, or -1. */
static int ib_number(const char *text, size_t len, unsigned long max, unsigned long *v)
{
    char buf[16], *end;
    if (len == 0 || len >= sizeof buf || text[0] == '-' || text[0] == '+')
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    errno = 0;
    *v = strtoul(buf, &end, 0);
    return *end || errno || *v > max ? -1 : 0;
}

int acis_ib_addr_parse(const char *text, struct acis_ib_addr *a)
{
    const char *slash = strrchr(text, '/');
    unsigned long qpn, lid;
    memset(a, 0, sizeof *a);
    if (!slash || slash == text || ib_number(slash + 1, strlen(slash + 1), 0xffffff, &qpn) ||
        qpn == 0)
        return -1;
    a->qpn = (uint32_t)qpn;
    size_t hl = (size_t)(slash - text);
    if (ib_number(text, hl, 0xffff, &lid) == 0) {
        if (lid == 0)
            return -1;
        a->lid = (uint16_t)lid;
        return 0;
    }
    char gid[INET6_ADDRSTRLEN];
    if (hl >= sizeof gid)
        return -1;
    memcpy(gid, text, hl);
    gid[hl] = '\0';
    if (inet_pton(AF_INET6, gid, a->gid) != 1)
        return -1;
    a->has_gid = 1;
    return 0;
}

void acis_ib_addr_format(const struct acis_ib_addr *a, char *out, size_t outlen)
{
    char gid[INET6_ADDRSTRLEN];
    if (a->has_gid && inet_ntop(AF_INET6, a->gid, gid, sizeof gid))
        snprintf(out, outlen, "%s/%u", gid, (unsigned)a->qpn);
    else
        snprintf(out, outlen, "%u/%u", (unsigned)a->lid, (unsigned)a->qpn);
}
