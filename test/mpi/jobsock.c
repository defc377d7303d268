/* jobsock.c -- the IPv4 UDP sockets of a process tree: its processes from
 * /proc/PID/task/TID/children, their sockets' inodes from /proc/PID/fd,
 * and addresses of those inodes from /proc/net/udp.  What a hostile
 * process of the same user can learn about a job's sockets. */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobsock.h"

#define MAX_PROCS 256
#define MAX_INODES 1024

/* pids[0..n) and their descendants appended; the new count. */
static int descendants(int *pids, int n)
{
    for (int i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", pids[i]);
        DIR *d = opendir(path);
        struct dirent *t;
        while (d && (t = readdir(d))) {
            if (t->d_name[0] == '.')
                continue;
            char cpath[128];
            snprintf(cpath, sizeof cpath, "/proc/%d/task/%.20s/children", pids[i], t->d_name);
            FILE *f = fopen(cpath, "r");
            int c;
            while (f && n < MAX_PROCS && fscanf(f, "%d", &c) == 1)
                pids[n++] = c;
            if (f)
                fclose(f);
        }
        if (d)
            closedir(d);
    }
    return n;
}

/* Socket inodes of pids[0..n) into ino; their count. */
static int socket_inodes(const int *pids, int n, unsigned long *ino)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd", pids[i]);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && k < MAX_INODES && (e = readdir(d))) {
            char fpath[128], link[64];
            snprintf(fpath, sizeof fpath, "%s/%.20s", path, e->d_name);
            ssize_t l = readlink(fpath, link, sizeof link - 1);
            if (l <= 0)
                continue;
            link[l] = '\0';
            if (sscanf(link, "socket:[%lu]", &ino[k]) == 1)
                k++;
        }
        if (d)
            closedir(d);
    }
    return k;
}

int jobsock_list(int pid, struct jobsock *s, int max)
{
    int pids[MAX_PROCS] = { pid };
    unsigned long ino[MAX_INODES];
    int np = descendants(pids, 1), ni = socket_inodes(pids, np, ino), k = 0;
    FILE *f = fopen("/proc/net/udp", "r");
    char line[512];
    if (!f)
        return -1;
    if (!fgets(line, sizeof line, f)) {           /* the heading */
        fclose(f);
        return -1;
    }
    while (k < max && fgets(line, sizeof line, f)) {
        unsigned lip, lport, rip, rport;
        unsigned long inode;
        if (sscanf(line, " %*d: %x:%x %x:%x %*x %*x:%*x %*x:%*x %*x %*u %*d %lu", &lip,
                   &lport, &rip, &rport, &inode) != 5)
            continue;
        for (int i = 0; i < ni; i++)
            if (ino[i] == inode) {
                /* /proc prints the address as the host reads the 32 bits */
                s[k++] = (struct jobsock){ .local_ip = lip, .remote_ip = rip,
                                           .local_port = (uint16_t)lport,
                                           .remote_port = (uint16_t)rport };
                break;
            }
    }
    fclose(f);
    return k;
}
