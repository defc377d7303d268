/* shmsw.c -- the shared-memory switch: a switch whose ports are memory.
 *
 * One segment per job and node (POSIX shared memory, mapped by every
 * process of the job there) holds the communicator table rows.  A row has
 * a window of aggregation slots; a slot has a result line, an arrival
 * count, two result buffers used in turn (use parity, the ROUND bit of the
 * network protocol) and one port per member: a 64-byte line saying what
 * the member posted, written last with a release store, followed by the
 * member's piece when the collective reduces.
 *
 * There is no switch process.  The member whose post completes a segment
 * (the last to arrive, found by an atomic count) does the switch's work:
 * checks that every member posted the same collective, folds the pieces
 * in rank order -- the order the network switch folds in, so results are
 * bitwise the same on every rank and every run -- and publishes the result
 * once for every member to read (a multicast that costs one write).
 * Data-movement collectives write their pieces straight into the result
 * buffer, so each byte is copied once in and once out per reader.  A post
 * with ACIS_F_ABSTAIN (a member without memory for its data) carries no
 * piece: nothing is folded and every member is answered ERROR | ABSTAIN.
 *
 * Why two result buffers suffice: a member posts use u+1 of a slot only
 * after it has read use u's answer, so when use u+1 completes every member
 * has read use u, and when a member writes use u+2 into use u's buffer,
 * use u+1 is complete.  Waiting members spin, then sleep on a futex that
 * the publisher wakes only when somebody sleeps.  The control plane (join,
 * table rows, counters) runs in the calling process under a spinlock in
 * the segment; answers are ordinary wire packets (docs/protocol.md).
 *
 * Counters: the data plane counts in a block of lines per process (its
 * global rank's), so completing a segment touches no line another process
 * writes; a read sums the head's counters (control plane, rare drops) and
 * every block. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sw.h"

#define SHM_MAGIC 0x324d485353494341ull /* "ACISSHM2" */
#define LINE 64
#define ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

struct shm_row {                 /* a table row's bookkeeping (in the head) */
    uint32_t in_use, gen, size, creator, creator_req;
};

struct shm_head {
    uint64_t magic, key;
    uint32_t ranks, rows, window, payload, boot, pad;
    uint64_t size, rows_off, row_bytes, slot_bytes, port_bytes, buf_bytes;
    uint64_t ctr_off, ctr_bytes; /* per-rank counter blocks */
    _Atomic uint32_t lock;       /* control plane */
    _Atomic uint64_t c[ACIS_SWC_COUNT];
    /* then uint8_t joined[ranks], struct shm_row row[rows] and, from
     * ctr_off, a counter block per rank */
};

struct shm_port {                /* one member's post; its piece follows */
    _Alignas(LINE) _Atomic uint64_t use;    /* use + 1 posted, stored last */
    uint32_t seq, seg;
    uint8_t kind, alg, op, dtype;
    uint32_t root;
    uint64_t total, off;         /* result-space bytes; the piece's offset */
    uint32_t len, rx_off, rx_len;
    uint8_t abstain;             /* ACIS_F_ABSTAIN: no piece, the use fails */
};

_Static_assert(sizeof(struct shm_port) == LINE, "a port is one cache line");
/* Slot line 0 is the result doorbell, struct acis_shm_res (switch.h). */
_Static_assert(sizeof(struct acis_shm_res) <= LINE, "a slot's result head is in its first line");
_Static_assert(offsetof(struct acis_shm_res, done) == 0, "a wait's done is its result line");

struct acis_shmsw {
    struct shm_head *h;
    size_t size;
    uint32_t rank;               /* global rank of this process (HELLO) */
    uint32_t *uses;              /* rows x window: my posts per slot */
    uint32_t *gen;               /* rows: the row generation uses/member are for */
    uint32_t *member;            /* rows: my index among the row's members */
};

/* What a failed use publishes in its result line's error: the values
 * acis_shmsw_result() returns for it. */
enum { RES_OK, RES_MISMATCH = ACIS_SHM_MISMATCH, RES_ABSTAINED = ACIS_SHM_ABSTAINED };

/* Count n in a block of counters: a process's own (mine()), or the
 * head's (C, CN). */
#define CM(ctr, name, n) atomic_fetch_add_explicit(&(ctr)[ACIS_SWC_##name], (n), \
                                                   memory_order_relaxed)
/* A process's own counter block: only its posts write it, and they do
 * not overlap (switch.h), so a plain add -- a load and a store, no locked
 * instruction -- counts right; readers load each word whole. */
static inline void mine_add(_Atomic uint64_t *ctr, unsigned i, uint64_t n)
{
    atomic_store_explicit(&ctr[i], atomic_load_explicit(&ctr[i], memory_order_relaxed) + n,
                          memory_order_relaxed);
}
#define MINE(ctr, name, n) mine_add((ctr), ACIS_SWC_##name, (n))
#define C(h, name) CM((h)->c, name, 1)
#define CN(h, name, n) CM((h)->c, name, n)

static uint8_t *joined(struct shm_head *h)
{
    return (uint8_t *)(h + 1);
}

static struct shm_row *rows(struct shm_head *h)
{
    return (struct shm_row *)(joined(h) + ROUND_UP(h->ranks, 8));
}

static _Atomic uint64_t *rank_ctr(const struct shm_head *h, uint32_t rank)
{
    return (_Atomic uint64_t *)((uint8_t *)h + h->ctr_off + (uint64_t)rank * h->ctr_bytes);
}

/* This process's counter block (it posts only after HELLO set its rank). */
static _Atomic uint64_t *mine(const struct acis_shmsw *s)
{
    return rank_ctr(s->h, s->rank);
}

/* Counter i over the head and every process's block. */
static uint64_t total(const struct shm_head *h, int i)
{
    uint64_t v = atomic_load_explicit(&((struct shm_head *)h)->c[i], memory_order_relaxed);
    for (uint32_t k = 0; k < h->ranks; k++)
        v += atomic_load_explicit(&rank_ctr(h, k)[i], memory_order_relaxed);
    return v;
}

static uint8_t *row_base(struct shm_head *h, uint32_t r)
{
    return (uint8_t *)h + h->rows_off + (uint64_t)r * h->row_bytes;
}

static uint32_t *row_ranks(struct shm_head *h, uint32_t r)
{
    return (uint32_t *)row_base(h, r);
}

static uint8_t *slot_base(struct shm_head *h, uint32_t r, uint32_t s)
{
    return row_base(h, r) + ROUND_UP(4 * (uint64_t)h->ranks, LINE) + (uint64_t)s * h->slot_bytes;
}

/* The parts of the slot at b (slot_base): its result line, arrival
 * count, result buffers and ports. */
static struct acis_shm_res *slot_res(uint8_t *b)
{
    return (struct acis_shm_res *)b;
}

static _Atomic uint32_t *slot_arrived(uint8_t *b)
{
    return (_Atomic uint32_t *)(b + LINE);
}

static uint8_t *slot_buf(const struct shm_head *h, uint8_t *b, unsigned parity)
{
    return b + 2 * LINE + parity * h->buf_bytes;
}

static struct shm_port *slot_port(const struct shm_head *h, uint8_t *b, uint32_t m)
{
    return (struct shm_port *)(b + 2 * LINE + 2 * h->buf_bytes + (uint64_t)m * h->port_bytes);
}

/* memcpy, without a call for the 8 to 16 bytes of a small post. */
static inline void copy(uint8_t *d, const uint8_t *src, size_t n)
{
    if (n < 8 || n > 16) {
        memcpy(d, src, n);
        return;
    }
    uint64_t a, z;
    memcpy(&a, src, 8);
    memcpy(&z, src + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &z, 8);
}

static uint8_t *port_piece(struct shm_port *p)
{
    return (uint8_t *)(p + 1);
}

static void lock(struct shm_head *h)
{
    while (atomic_exchange_explicit(&h->lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&h->lock, memory_order_relaxed))
            sched_yield();
}

static void unlock(struct shm_head *h)
{
    atomic_store_explicit(&h->lock, 0, memory_order_release);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* ------------------------------------------------------------ segment */

/* The segment's layout for ranks processes, o's rows and window, and
 * payload bytes per port. */
static void geometry(struct shm_head *g, uint32_t ranks, const struct acis_sw_opts *o,
                     uint32_t window, uint32_t payload)
{
    *g = (struct shm_head){ .magic = SHM_MAGIC, .ranks = ranks, .rows = o->tables,
                            .window = window, .payload = payload };
    g->buf_bytes = ROUND_UP((uint64_t)payload, LINE);
    g->port_bytes = LINE + g->buf_bytes;
    g->slot_bytes = 2 * LINE + 2 * g->buf_bytes + (uint64_t)ranks * g->port_bytes;
    g->row_bytes = ROUND_UP(4 * (uint64_t)ranks, LINE) + (uint64_t)window * g->slot_bytes;
    g->ctr_bytes = ROUND_UP(ACIS_SWC_COUNT * sizeof(uint64_t), LINE);
    g->ctr_off = ROUND_UP(sizeof *g + ROUND_UP(ranks, 8) + o->tables * sizeof(struct shm_row),
                          LINE);
    g->rows_off = ROUND_UP(g->ctr_off + (uint64_t)ranks * g->ctr_bytes, 4096);
    g->size = g->rows_off + (uint64_t)o->tables * g->row_bytes;
}

uint32_t acis_shmsw_fit(uint32_t ranks, const struct acis_sw_opts *o, uint64_t room)
{
    uint32_t window = o->tables ? o->slots / o->tables : 0;
    struct shm_head g;
    if (ranks < 1 || window < 1 || o->payload < ACIS_MIN_PAYLOAD)
        return 0;
    geometry(&g, ranks, o, window, o->payload);
    if (g.size <= room)
        return o->payload;
    /* The size grows by (ranks + 2) buffers per slot with the payload. */
    geometry(&g, ranks, o, window, 0);
    uint64_t per = (uint64_t)o->tables * window * (ranks + 2);
    uint64_t buf = room > g.size ? (room - g.size) / per / LINE * LINE : 0;
    return buf >= ACIS_MIN_PAYLOAD ? (uint32_t)buf : 0;
}

/* Free bytes where shm_open puts segments; UINT64_MAX if unknown or
 * unlimited (a tmpfs without a size, ramfs: no blocks reported). */
static uint64_t shm_room(void)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0 || v.f_blocks == 0)
        return UINT64_MAX;
    return (uint64_t)v.f_bavail * v.f_frsize;
}

int acis_shmsw_create(const char *name, uint64_t key, uint32_t ranks,
                      const struct acis_sw_opts *o, char *why, size_t whylen)
{
    uint32_t window = o->tables ? o->slots / o->tables : 0;
    if (ranks < 1 || window < 1 || o->tables < 1 || o->payload < ACIS_MIN_PAYLOAD) {
        snprintf(why, whylen, "shared-memory switch: bad geometry (%u ranks, %u slots "
                 "per row)", ranks, window);
        return -1;
    }
    /* A tmpfs page that cannot be had is a SIGBUS when first touched:
     * the whole segment must fit in /dev/shm, with smaller segments if
     * need be. */
    uint64_t room = shm_room();
    uint32_t payload = acis_shmsw_fit(ranks, o, room);
    if (!payload) {
        struct shm_head least;
        geometry(&least, ranks, o, window, ACIS_MIN_PAYLOAD);
        snprintf(why, whylen, "shared-memory switch: /dev/shm has %llu MiB free, %u ranks "
                 "need %llu MiB at least (fewer MPIR_CVAR_OFFLOAD_SWITCH_SLOTS, or a larger "
                 "/dev/shm)", (unsigned long long)(room >> 20), ranks,
                 (unsigned long long)((least.size + (1 << 20) - 1) >> 20));
        return -1;
    }
    struct shm_head g;
    geometry(&g, ranks, o, window, payload);
    g.key = key;
    if (getrandom(&g.boot, sizeof g.boot, 0) != sizeof g.boot)
        g.boot = (uint32_t)acis_now_ns();
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "cannot create shared memory %s: %s", name, strerror(errno));
        return -1;
    }
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)g.size) != 0 ||
        (p = mmap(NULL, g.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        snprintf(why, whylen, "cannot size shared memory %s (%llu bytes): %s", name,
                 (unsigned long long)g.size, strerror(errno));
        close(fd);
        shm_unlink(name);
        return -1;
    }
    close(fd);
    memcpy(p, &g, sizeof g);                 /* the rest is zero (a new file) */
    struct shm_head *h = p;
    atomic_store(&h->c[ACIS_SWC_tables_capacity], o->tables);
    atomic_store(&h->c[ACIS_SWC_slots_capacity], (uint64_t)window * o->tables);
    munmap(p, g.size);
    return 0;
}

int acis_shmsw_unlink(const char *name)
{
    return shm_unlink(name);
}

struct acis_shmsw *acis_shmsw_attach(const char *name, char *why, size_t whylen)
{
    struct acis_shmsw *s = calloc(1, sizeof *s);
    struct stat st;
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (!s || fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof *s->h) {
        snprintf(why, whylen, "cannot open shared memory %s: %s", name,
                 s ? strerror(errno) : "out of memory");
        goto fail;
    }
    s->size = (size_t)st.st_size;
    s->h = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->h == MAP_FAILED) {
        s->h = NULL;
        snprintf(why, whylen, "cannot map shared memory %s: %s", name, strerror(errno));
        goto fail;
    }
    if (s->h->magic != SHM_MAGIC || s->h->size != s->size) {
        snprintf(why, whylen, "%s is not an acis shared-memory switch", name);
        goto fail;
    }
    s->uses = calloc((size_t)s->h->rows * s->h->window, sizeof *s->uses);
    s->gen = calloc(s->h->rows, sizeof *s->gen);
    s->member = calloc(s->h->rows, sizeof *s->member);
    if (!s->uses || !s->gen || !s->member) {
        snprintf(why, whylen, "out of memory");
        goto fail;
    }
    s->rank = ACIS_NO_RANK;
    close(fd);
    return s;
fail:
    if (fd >= 0)
        close(fd);
    acis_shmsw_detach(s);
    return NULL;
}

void acis_shmsw_detach(struct acis_shmsw *s)
{
    if (!s)
        return;
    if (s->h)
        munmap(s->h, s->size);
    free(s->uses);
    free(s->gen);
    free(s->member);
    free(s);
}

void acis_shmsw_counters(const struct acis_shmsw *s, uint64_t *out)
{
    for (int i = 0; i < ACIS_SWC_COUNT; i++)
        out[i] = total(s->h, i);
}

uint32_t acis_shmsw_capacity(const struct acis_shmsw *s)
{
    return s->h->rows * s->h->window;
}

/* ------------------------------------------------------ control plane */

/* Encode and seal a control answer to request q into out; its length. */
static size_t answer(const struct shm_head *sh, const struct acis_hdr *q, unsigned kind,
                     const uint8_t *payload, size_t len, uint8_t *out)
{
    struct acis_hdr r = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .flags = ACIS_F_RESULT,
        .payload_len = (uint32_t)len, .job_key = sh->key, .ctx = q->ctx, .seq = q->seq,
        .src = ACIS_NO_RANK,
    };
    acis_hdr_encode(&r, out);
    if (len)
        memcpy(out + ACIS_HDR_LEN, payload, len);
    acis_hdr_seal(out, out + ACIS_HDR_LEN, len);
    return ACIS_HDR_LEN + len;
}

static uint32_t ct_create(struct acis_shmsw *s, const struct acis_hdr *q,
                          const uint8_t *pl, uint32_t *ctx)
{
    struct shm_head *h = s->h;
    struct shm_row *rw = rows(h);
    uint32_t n = q->payload_len >= 4 ? acis_get32(pl) : 0, r;
    if (n < 1 || n > h->ranks || q->payload_len != 4 + 4 * (uint64_t)n)
        return ACIS_ST_BAD_REQUEST;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = acis_get32(pl + 4 + 4 * i);
        if (g >= h->ranks || !joined(h)[g])
            return ACIS_ST_UNKNOWN_RANK;
        for (uint32_t k = 0; k < i; k++)
            if (acis_get32(pl + 4 + 4 * k) == g)
                return ACIS_ST_BAD_REQUEST;
    }
    for (r = 0; r < h->rows; r++)            /* a repeated request */
        if (rw[r].in_use && rw[r].creator == q->src && rw[r].creator_req == q->seq) {
            *ctx = rw[r].gen << 16 | (r + 1);
            return ACIS_ST_OK;
        }
    for (r = 0; r < h->rows && rw[r].in_use; r++)
        ;
    if (r == h->rows)
        return ACIS_ST_TABLE_FULL;
    uint32_t *ranks = row_ranks(h, r);
    for (uint32_t i = 0; i < n; i++)
        ranks[i] = acis_get32(pl + 4 + 4 * i);
    for (uint32_t sl = 0; sl < h->window; sl++) {
        uint8_t *b = slot_base(h, r, sl);
        struct acis_shm_res *res = slot_res(b);
        atomic_store(&res->done, 0);
        atomic_store(&res->sleepers, 0);
        res->error = 0;
        atomic_store(slot_arrived(b), 0);
        for (uint32_t m = 0; m < n; m++)
            atomic_store(&slot_port(h, b, m)->use, 0);
    }
    rw[r].gen = (rw[r].gen + 1) & 0xffff ? (rw[r].gen + 1) & 0xffff : 1;
    rw[r].size = n;
    rw[r].creator = q->src;
    rw[r].creator_req = q->seq;
    atomic_store_explicit((_Atomic uint32_t *)&rw[r].in_use, 1, memory_order_release);
    *ctx = rw[r].gen << 16 | (r + 1);
    C(h, tables_in_use);
    C(h, tables_created);
    CN(h, slots_in_use, h->window);
    CN(h, buffer_bytes, h->row_bytes);
    return ACIS_ST_OK;
}

static struct shm_row *row_of(struct shm_head *h, uint32_t ctx, uint32_t *r)
{
    *r = (ctx & 0xffff) - 1;
    if (*r >= h->rows)
        return NULL;
    struct shm_row *rw = &rows(h)[*r];
    if (!atomic_load_explicit((_Atomic uint32_t *)&rw->in_use, memory_order_acquire) ||
        rw->gen != ctx >> 16)
        return NULL;
    return rw;
}

size_t acis_shmsw_control(struct acis_shmsw *s, const struct acis_hdr *q,
                          const uint8_t *pl, uint8_t *out)
{
    struct shm_head *h = s->h;
    uint8_t p[4 + 8 * ACIS_SWC_COUNT];
    uint32_t r, ctx = 0, st;
    switch (ACIS_OPC_KIND(q->opcode)) {
    case ACIS_K_HELLO:
        st = q->job_key != h->key ? ACIS_ST_JOB_MISMATCH
             : q->payload_len < 4 || acis_get32(pl) != h->ranks || q->src >= h->ranks
                 ? ACIS_ST_BAD_REQUEST : ACIS_ST_OK;
        if (st == ACIS_ST_OK) {
            s->rank = q->src;
            lock(h);
            if (!joined(h)[q->src]) {
                joined(h)[q->src] = 1;
                C(h, ports_in_use);
            }
            unlock(h);
        }
        acis_put32(p, st);
        acis_put32(p + 4, q->src);
        acis_put32(p + 8, h->payload);
        acis_put32(p + 12, h->window);
        acis_put32(p + 16, h->rows);
        acis_put32(p + 20, h->ranks);
        acis_put32(p + 24, h->rows * h->window);
        acis_put32(p + 28, h->boot);
        return answer(h, q, ACIS_K_WELCOME, p, ACIS_WELCOME_LEN, out);
    case ACIS_K_CT_CREATE:
        lock(h);
        st = q->src == s->rank ? ct_create(s, q, pl, &ctx) : ACIS_ST_BAD_REQUEST;
        if (st != ACIS_ST_OK)
            C(h, tables_refused);
        unlock(h);
        acis_put32(p, st);
        acis_put32(p + 4, ctx);
        acis_put32(p + 8, st == ACIS_ST_OK ? h->window : 0);
        acis_put32(p + 12, h->payload);
        acis_put32(p + 16, ACIS_CT_OWN_BLOCK);   /* one switch: every kind */
        return answer(h, q, ACIS_K_CT_REPLY, p, ACIS_CT_REPLY_LEN, out);
    case ACIS_K_CT_FREE: {
        lock(h);
        struct shm_row *rw = row_of(h, q->ctx, &r);
        st = rw ? ACIS_ST_OK : ACIS_ST_NO_CTX;
        if (rw) {
            atomic_store_explicit((_Atomic uint32_t *)&rw->in_use, 0, memory_order_release);
            atomic_fetch_sub(&h->c[ACIS_SWC_tables_in_use], 1);
            atomic_fetch_sub(&h->c[ACIS_SWC_slots_in_use], h->window);
            atomic_fetch_sub(&h->c[ACIS_SWC_buffer_bytes], h->row_bytes);
        }
        unlock(h);
        acis_put32(p, st);
        return answer(h, q, ACIS_K_CT_FREED, p, ACIS_STATUS_LEN, out);
    }
    case ACIS_K_STATS_REQ:
        acis_put32(p, ACIS_SWC_COUNT);
        for (int i = 0; i < ACIS_SWC_COUNT; i++)
            acis_put64(p + 4 + 8 * i, total(h, i));
        return answer(h, q, ACIS_K_STATS_REPLY, p, sizeof p, out);
    case ACIS_K_BYE:
        if (q->src < h->ranks && q->src == s->rank) {
            lock(h);
            if (joined(h)[q->src]) {
                joined(h)[q->src] = 0;
                atomic_fetch_sub(&h->c[ACIS_SWC_ports_in_use], 1);
            }
            unlock(h);
        }
        return 0;
    default:
        C(h, drop_foreign);
        return 0;
    }
}

/* --------------------------------------------------------- data plane */

/* Every member posted use `use` of the slot at b: check they agree,
 * fold, publish. */
static void complete(const struct acis_shmsw *s, uint8_t *b, uint32_t n, uint32_t use)
{
    struct shm_head *h = s->h;
    _Atomic uint64_t *ctr = mine(s);
    struct shm_port *p0 = slot_port(h, b, 0);
    struct acis_shm_res *res = slot_res(b);
    uint8_t *out = slot_buf(h, b, use & 1);
    unsigned kind = p0->kind, rooted = sw_rooted(kind);
    uint32_t error = RES_OK, abstained = p0->abstain, lens_differ = 0;
    for (uint32_t m = 1; m < n; m++) {
        const struct shm_port *p = slot_port(h, b, m);
        abstained |= p->abstain;
        lens_differ |= p->len != p0->len;
        if (p->kind != kind || p->alg != p0->alg || p->op != p0->op ||
            p->dtype != p0->dtype || p->total != p0->total || p->seq != p0->seq ||
            p->seg != p0->seg || (rooted && p->root != p0->root))
            error = RES_MISMATCH;
    }
    if (sw_is_reduction(kind) && lens_differ && !abstained)
        error = RES_MISMATCH;                      /* an abstainer posts no piece */
    if (error) {
        MINE(ctr, drop_mismatch, 1);
    } else if (abstained) {
        error = RES_ABSTAINED;                     /* nothing to fold: all redo it */
        MINE(ctr, abstained, 1);
    } else if (sw_is_reduction(kind) && p0->len) {
        size_t ne = p0->len / acis_wire_dt_size(p0->dtype);
        memcpy(out, port_piece(p0), p0->len);
        if (kind == ACIS_K_EXSCAN) {               /* member m gets the fold of 0..m-1 */
            uint8_t *tmp = slot_buf(h, b, (use & 1) ^ 1);
            for (uint32_t m = 1; m < n; m++) {
                uint8_t *x = port_piece(slot_port(h, b, m));
                memcpy(tmp, x, p0->len);
                memcpy(x, out, p0->len);
                acis_reduce(p0->op, p0->dtype, out, tmp, ne);
            }
        } else {
            for (uint32_t m = 1; m < n; m++) {
                uint8_t *x = port_piece(slot_port(h, b, m));
                acis_reduce(p0->op, p0->dtype, out, x, ne);
                if (kind == ACIS_K_SCAN)            /* member m gets the fold of 0..m */
                    memcpy(x, out, p0->len);
            }
        }
        MINE(ctr, elements_reduced, (uint64_t)(n - 1) * ne);
    }
    res->error = error;
    atomic_store_explicit(slot_arrived(b), 0, memory_order_relaxed);
    atomic_store_explicit(&res->done, (uint64_t)use + 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&res->bell, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&res->sleepers, memory_order_seq_cst))
        futex(&res->bell, FUTEX_WAKE, INT_MAX, NULL);
    MINE(ctr, segments, 1);
    if (kind >= ACIS_K_BARRIER && kind <= ACIS_K_COLL_LAST)
        mine_add(ctr, ACIS_SWC_seg_barrier + kind - ACIS_K_BARRIER, 1);
    MINE(ctr, packets_in, n);
    if (n > 1)
        MINE(ctr, multicasts, 1);
}

/* The part of a port after its use word, as a post writes it. */
#define PORT_TAIL (sizeof(struct shm_port) - offsetof(struct shm_port, seq))
_Static_assert(PORT_TAIL == sizeof(((struct acis_shm_prep *)0)->port),
               "a prepared post holds a port's tail");

/* What a post of q needs, checked and worked out into p: 0, or the
 * counter of the drop (an ACIS_SWC_drop_*, never 0).  All but q's round,
 * read at the post: what a post that differs from q only in sequence
 * number, slot and round needs too (the slot is checked again there). */
static int plan(const struct acis_shmsw *s, const struct acis_hdr *q, struct acis_shm_prep *p)
{
    struct shm_head *h = s->h;
    uint32_t r, m;
    struct shm_row *rw = row_of(h, q->ctx, &r);
    unsigned kind = ACIS_OPC_KIND(q->opcode);
    if (!rw || q->slot >= h->window || q->src != s->rank || s->rank >= h->ranks ||
        kind < ACIS_K_BARRIER || kind > ACIS_K_COLL_LAST)
        return ACIS_SWC_drop_foreign;
    if (s->gen[r] == rw->gen) {
        m = s->member[r];
    } else {                                        /* a new communicator in this row */
        const uint32_t *ranks = row_ranks(h, r);
        for (m = 0; m < rw->size && ranks[m] != s->rank; m++)
            ;
        if (m == rw->size)
            return ACIS_SWC_drop_not_member;
    }
    uint32_t sb = sw_seg_bytes(h->payload, kind, q->dtype);
    uint64_t base = (uint64_t)q->seg_index * sb;
    uint64_t seg_len = q->total_len > base ? q->total_len - base : 0;
    if (seg_len > sb)
        seg_len = sb;
    int reduction = sw_is_reduction(kind), abstain = (q->flags & ACIS_F_ABSTAIN) != 0;
    if ((abstain ? q->payload_len != 0 : reduction && q->payload_len != seg_len) ||
        (q->payload_len && (q->seg_offset < base ||
                            q->seg_offset + q->payload_len > base + seg_len)) ||
        (uint64_t)q->rx_off + q->rx_len > seg_len)
        return ACIS_SWC_drop_range;
    struct shm_port t = {
        .seg = q->seg_index, .kind = (uint8_t)kind, .alg = (uint8_t)ACIS_OPC_ALG(q->opcode),
        .op = q->op, .dtype = q->dtype, .root = q->root, .total = q->total_len,
        .off = q->seg_offset, .len = q->payload_len, .rx_off = q->rx_off, .rx_len = q->rx_len,
        .abstain = (uint8_t)abstain,
    };
    *p = (struct acis_shm_prep){
        .q = *q, .row = r, .gen = rw->gen, .member = m, .n = rw->size,
        .ans_off = base + q->rx_off,
        .piece_at = q->seg_offset - base, .in_port = (uint8_t)reduction,
        .scan = (uint8_t)sw_is_scan(kind),
    };
    memcpy(p->port, (const uint8_t *)&t + offsetof(struct shm_port, seq), PORT_TAIL);
    return 0;
}

/* Post p's packet with q's sequence number, slot and round (q's slot
 * checked, this process a member of p's row in its generation). */
static int put(struct acis_shmsw *s, const struct acis_shm_prep *p, const struct acis_hdr *q,
               const uint8_t *payload, struct acis_shm_wait *w)
{
    struct shm_head *h = s->h;
    uint32_t *uses = &s->uses[(size_t)p->row * h->window + q->slot], use = *uses;
    if ((uint32_t)((q->flags & ACIS_F_ROUND) != 0) != (use & 1)) {
        C(h, drop_range);
        return -1;
    }
    *uses = use + 1;
    uint8_t *b = slot_base(h, p->row, q->slot);
    struct shm_port *port = slot_port(h, b, p->member);
    uint8_t *buf = slot_buf(h, b, use & 1);
    if (p->q.payload_len)
        copy(p->in_port ? port_piece(port) : buf + p->piece_at, payload, p->q.payload_len);
    memcpy((uint8_t *)port + offsetof(struct shm_port, seq), p->port, PORT_TAIL);
    port->seq = q->seq;
    atomic_store_explicit(&port->use, (uint64_t)use + 1, memory_order_release);
    w->done = &slot_res(b)->done;
    w->ring = (uint64_t)use + 1;
    w->row = p->row;
    w->member = p->member;
    w->slot = q->slot;
    w->len = p->q.rx_len;
    w->off = p->ans_off;
    w->data = (p->scan ? port_piece(port) : buf) + p->q.rx_off;
    if (atomic_fetch_add_explicit(slot_arrived(b), 1, memory_order_acq_rel) == p->n - 1)
        complete(s, b, p->n, use);                  /* the last one does the switch's work */
    return 0;
}

int acis_shmsw_post(struct acis_shmsw *s, const struct acis_hdr *q, const uint8_t *payload,
                    struct acis_shm_wait *w)
{
    struct acis_shm_prep p;
    int why = plan(s, q, &p);
    if (why) {
        atomic_fetch_add_explicit(&s->h->c[why], 1, memory_order_relaxed);
        return -1;
    }
    if (s->gen[p.row] != p.gen) {                   /* a new communicator in this row */
        s->gen[p.row] = p.gen;
        s->member[p.row] = p.member;
        memset(s->uses + (size_t)p.row * s->h->window, 0, s->h->window * sizeof *s->uses);
    }
    if (put(s, &p, q, payload, w) != 0)
        return -1;
    w->q = *q;                                      /* what acis_shmsw_ready() answers */
    return 0;
}

int acis_shmsw_prepare(const struct acis_shmsw *s, const struct acis_hdr *q,
                       struct acis_shm_prep *p)
{
    return plan(s, q, p) ? -1 : 0;
}

int acis_shmsw_post_like(struct acis_shmsw *s, const struct acis_shm_prep *p,
                         const struct acis_hdr *q, const uint8_t *payload,
                         struct acis_shm_wait *w)
{
    struct shm_head *h = s->h;
    const struct shm_row *rw = &rows(h)[p->row];
    if (q->slot < h->window && s->gen[p->row] == p->gen &&
        atomic_load_explicit((const _Atomic uint32_t *)&rw->in_use, memory_order_acquire) &&
        rw->gen == p->gen)
        return put(s, p, q, payload, w);
    struct acis_hdr full = p->q;                    /* the row changed: check it all */
    full.seq = q->seq;
    full.slot = q->slot;
    full.flags = (uint16_t)((p->q.flags & ~ACIS_F_ROUND) | (q->flags & ACIS_F_ROUND));
    return acis_shmsw_post(s, &full, payload, w);
}

int acis_shmsw_ready(const struct acis_shmsw *s, const struct acis_shm_wait *w,
                     struct acis_hdr *a, const uint8_t **payload)
{
    struct shm_head *h = s->h;
    struct acis_shm_res *res = slot_res(slot_base(h, w->row, w->slot));
    if (atomic_load_explicit(&res->done, memory_order_acquire) != w->ring)
        return 0;
    *a = w->q;
    a->flags = (uint16_t)((w->q.flags & ACIS_F_ROUND) | ACIS_F_RESULT);
    a->src = ACIS_NO_RANK;
    a->checksum = 0;
    if (res->error) {
        a->flags |= ACIS_F_ERROR | ACIS_F_ACK |
                    (res->error == RES_ABSTAINED ? ACIS_F_ABSTAIN : 0);
        a->payload_len = a->rx_off = a->rx_len = 0;
        a->seg_offset = w->off - w->q.rx_off;       /* the segment's first byte */
        *payload = NULL;
        return 1;
    }
    a->payload_len = w->len;
    a->seg_offset = w->off;
    if (!w->len)
        a->flags |= ACIS_F_ACK;
    *payload = w->data;
    return 1;
}

void acis_shmsw_posted(const struct acis_shmsw *s, const struct acis_shm_wait *w,
                       struct acis_hdr *q)
{
    struct shm_head *h = s->h;
    memset(q, 0, sizeof *q);
    if (w->row >= h->rows || w->slot >= h->window || w->member >= h->ranks)
        return;
    const struct shm_port *port = slot_port(h, slot_base(h, w->row, w->slot), w->member);
    q->opcode = ACIS_OPC(port->kind, port->alg);
    q->ctx = (rows(h)[w->row].gen << 16) | (w->row + 1);    /* as row_of() reads it */
    q->seq = port->seq;
    q->seg_index = port->seg;
    q->slot = (uint16_t)w->slot;
}

void acis_shmsw_sleep(const struct acis_shmsw *s, const struct acis_shm_wait *w, int ms)
{
    if (w->row >= s->h->rows || w->slot >= s->h->window)
        return;                  /* a copy torn by another thread: just return */
    struct acis_shm_res *res = slot_res(slot_base(s->h, w->row, w->slot));
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    atomic_fetch_add_explicit(&res->sleepers, 1, memory_order_seq_cst);
    uint32_t bell = atomic_load_explicit(&res->bell, memory_order_seq_cst);
    if (atomic_load_explicit(&res->done, memory_order_seq_cst) != w->ring)
        futex(&res->bell, FUTEX_WAIT, bell, &ts);
    atomic_fetch_sub_explicit(&res->sleepers, 1, memory_order_seq_cst);
}
