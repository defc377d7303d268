/* net.c -- "HOST:PORT" addresses (IPv4, [IPv6] or names) to socket
 * addresses and back, and socket buffer sizing; shared by the UDP channel,
 * the UDP switch and acis-info. */
#include "config.h"

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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

int acis_sock_buffers(int fd, int bytes)
{
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    int got = 0;
    socklen_t l = sizeof got;
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &l);
    return got;
}
