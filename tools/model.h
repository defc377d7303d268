/* model.h -- a LogGP model of one collective call, in software (MPICH's
 * own algorithms, chosen as MPICH 4.0.2 chooses them by default for one
 * process per node) and in the switch (acis: each host sends once, switches fold or gather on the
 * way up and multicast on the way down), on a star, a fat tree or a
 * torus (seed 000, eq. 3.2-3.5).  acis-model and its unit test use it. */
#ifndef ACIS_MODEL_H
#define ACIS_MODEL_H

#include <stddef.h>

enum model_coll {
    MODEL_ALLREDUCE, MODEL_REDUCE, MODEL_BCAST, MODEL_BARRIER,
    MODEL_ALLGATHER, MODEL_GATHER, MODEL_SCATTER, MODEL_REDUCE_SCATTER,
    MODEL_COLL_COUNT
};

enum model_topo_kind { MODEL_STAR, MODEL_FATTREE, MODEL_TORUS };

struct model_topo {
    enum model_topo_kind kind;
    unsigned radix;          /* fat tree: ports per switch */
    unsigned dims[3];        /* torus: X, Y, Z; all 0 picks them from P */
};

/* All times in seconds, sizes in bytes. */
struct model_params {
    double latency;          /* L of one link (host-switch or switch-switch) */
    double per_byte;         /* G of a link: 8 / bandwidth in bit/s */
    double hop;              /* pipeline delay of one switch, port to port */
    double o_send, o_recv;   /* O_s, O_r: host overhead per message */
    double gap;              /* g: least time between two sends of a host */
    double host_per_byte;    /* G of the software path (default: the link's) */
    double reduce_per_byte;  /* host time to fold one byte (software only;
                                the switch folds at line rate) */
    double type_size;        /* bytes of one element: MPICH compares the
                                element count with P for reductions */
};

/* Seed 000 table 3.2 (440 ns, 95.9 Gb/s) and table 5.2 (MPI overhead
 * 14.8 us, port-to-port 52 ns); g = 0, so max(g, O_s) = O_s as in eq.
 * 3.4; the host folds 10 GB/s; elements are doubles (8 bytes), as in the
 * seed's OSU runs (§3.6.2). */
void model_defaults(struct model_params *m);

/* Links and switches on a path: one software message between the two
 * farthest hosts, and one offloaded collective (up to the top of the
 * aggregation tree and back down). */
struct model_path {
    unsigned p2p_links, p2p_switches;
    unsigned coll_links, coll_switches;
    unsigned dims[3];        /* the torus used (0 for other topologies) */
};

/* The path for P hosts on t: 0, or -1 if t cannot hold P hosts (a star
 * holds any P; a torus with explicit dims must have X*Y*Z = P). */
int model_path(const struct model_topo *t, unsigned long P, struct model_path *out);

/* Parse "star", "fattree", "fattree:R" (R even, 4..1024; default 32),
 * "torus" or "torus:XxYxZ"; 0, or -1 with err filled. */
int model_topo_parse(const char *s, struct model_topo *t, char *err, size_t errlen);
/* Write t back in the same form. */
void model_topo_name(const struct model_topo *t, char *buf, size_t len);

/* One call of c with k bytes (per rank; for reduce_scatter the whole
 * vector, each rank getting k / P) on P hosts. */
struct model_result {
    double software, inswitch;   /* seconds */
    const char *algorithm;       /* MPICH's algorithm for the software run */
};
void model_coll(const struct model_params *m, const struct model_path *path,
                enum model_coll c, unsigned long P, double k, struct model_result *out);

const char *model_coll_name(enum model_coll c);
/* The collective named s, or -1. */
int model_coll_lookup(const char *s);

#endif
