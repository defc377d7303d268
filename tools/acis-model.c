/* acis-model -- what in-switch collectives would give on a real fabric:
 * the LogGP model of model.h swept over collectives, process counts and
 * message sizes, written as CSV, as a table of geometric-mean speedups
 * (the form of seed 000 fig. 3-9) and as a PNG plot drawn by gnuplot. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MAX_LIST 64
#define SMALL_MAX 4096          /* seed 000: "small" is 4 B to 4 KB */

struct list {
    unsigned long v[MAX_LIST];
    int n;
};

struct run {
    struct model_params m;
    struct model_topo topo;
    struct list procs, sizes;
    int colls[MODEL_COLL_COUNT], ncolls;
    int procs_given;
};

static void usage(FILE *out)
{
    fputs("usage: acis-model [options]\n"
          "  --colls LIST        collectives (default: all of allreduce, reduce, bcast,\n"
          "                      barrier, allgather, gather, scatter, reduce_scatter)\n"
          "  --procs LIST        process counts: N,N,... or MIN:MAX (powers of two);\n"
          "                      default 2:65536, for --table 32,64,128\n"
          "  --sizes LIST        bytes per process (reduce_scatter: the whole vector),\n"
          "                      same forms; default 4:4194304\n"
          "  --topology T        star, fattree[:R] (radix R, default 32),\n"
          "                      torus[:XxYxZ] (default fattree:32)\n"
          "  --latency NS        link latency (default 440, seed 000 table 3.2)\n"
          "  --bandwidth GBIT    link bandwidth in Gb/s (default 95.9, table 3.2)\n"
          "  --hop NS            switch port-to-port delay (default 52, table 5.2)\n"
          "  --overhead US       host overhead per message, send and receive\n"
          "                      (default 14.8, table 5.2); --o-send, --o-recv apart\n"
          "  --gap US            LogGP g between two sends of a host (default 0)\n"
          "  --host-bandwidth GBIT  the software path's per-byte cost (default: link)\n"
          "  --host-reduce GBYTE host fold rate, GB/s (default 10)\n"
          "  --type-size BYTES   bytes of one element (default 8, doubles as in the\n"
          "                      seed); MPICH's reductions choose by element count\n"
          "  --csv FILE          write the CSV to FILE (default: stdout, unless\n"
          "                      --table or --plot is given)\n"
          "  --table             geometric-mean speedups per collective and P, for\n"
          "                      4 B-4 KB and above 4 KB, as Markdown\n"
          "  --plot FILE.png     speedup against size, one panel per collective\n",
          out);
}

static int parse_list(const char *opt, const char *s, unsigned long max, struct list *l)
{
    char *end;
    l->n = 0;
    const char *colon = strchr(s, ':');
    if (colon) {
        unsigned long lo = strtoul(s, &end, 10);
        if (end != colon)
            goto bad;
        unsigned long hi = strtoul(colon + 1, &end, 10);
        if (*end || lo < 1 || hi < lo || hi > max)
            goto bad;
        for (unsigned long v = lo; v <= hi && l->n < MAX_LIST; v *= 2)
            l->v[l->n++] = v;
        return 0;
    }
    for (const char *p = s; *p; p = *end ? end + 1 : end) {
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || errno || v < 1 || v > max || (*end && *end != ',') || l->n == MAX_LIST)
            goto bad;
        l->v[l->n++] = v;
    }
    if (l->n)
        return 0;
bad:
    fprintf(stderr, "acis-model: bad %s '%s' (allowed: N,N,... or MIN:MAX, 1..%lu, "
            "at most %d values)\n", opt, s, max, MAX_LIST);
    return -1;
}

/* A positive number for opt, scaled into out. */
static int parse_num(const char *opt, const char *s, int zero_ok, double scale, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < 0 || (!zero_ok && v == 0)) {
        fprintf(stderr, "acis-model: bad %s '%s' (allowed: a number %s 0)\n", opt, s,
                zero_ok ? ">=" : ">");
        return -1;
    }
    *out = v * scale;
    return 0;
}

static int parse_colls(const char *s, struct run *r)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    r->ncolls = 0;
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int c = model_coll_lookup(t);
        if (c < 0 || r->ncolls == MODEL_COLL_COUNT) {
            fprintf(stderr, "acis-model: bad --colls '%s' (allowed: a list of allreduce, "
                    "reduce, bcast, barrier, allgather, gather, scatter, reduce_scatter)\n", s);
            return -1;
        }
        r->colls[r->ncolls++] = c;
    }
    return r->ncolls ? 0 : -1;
}

/* The time of every (collective, P, size) point, in that order; every P
 * fits the topology. */
static struct model_result *sweep(const struct run *r)
{
    struct model_result *res = calloc((size_t)r->ncolls * r->procs.n * r->sizes.n, sizeof *res);
    if (!res) {
        fprintf(stderr, "acis-model: out of memory\n");
        return NULL;
    }
    struct model_result *p = res;
    for (int c = 0; c < r->ncolls; c++) {
        for (int i = 0; i < r->procs.n; i++) {
            struct model_path path;
            model_path(&r->topo, r->procs.v[i], &path);     /* checked by parse_args */
            for (int j = 0; j < r->sizes.n; j++)
                model_coll(&r->m, &path, r->colls[c], r->procs.v[i], (double)r->sizes.v[j], p++);
        }
    }
    return res;
}

static const struct model_result *at(const struct run *r, const struct model_result *res,
                                     int c, int i, int j)
{
    return &res[((size_t)c * r->procs.n + i) * r->sizes.n + j];
}

static int write_csv(const struct run *r, const struct model_result *res, FILE *f)
{
    char topo[64];
    model_topo_name(&r->topo, topo, sizeof topo);
    fprintf(f, "collective,ranks,bytes,topology,software_algorithm,software_us,"
            "inswitch_us,speedup\n");
    for (int c = 0; c < r->ncolls; c++)
        for (int i = 0; i < r->procs.n; i++)
            for (int j = 0; j < r->sizes.n; j++) {
                const struct model_result *x = at(r, res, c, i, j);
                fprintf(f, "%s,%lu,%lu,%s,%s,%.4f,%.4f,%.3f\n", model_coll_name(r->colls[c]),
                        r->procs.v[i], r->sizes.v[j], topo, x->algorithm, x->software * 1e6,
                        x->inswitch * 1e6, x->software / x->inswitch);
            }
    return ferror(f) ? -1 : 0;
}

/* Geometric mean of the speedups of collective c at P index i over the
 * sizes in the small (<= 4 KB) or the large range; 0 if none. */
static double geomean(const struct run *r, const struct model_result *res, int c, int i,
                      int large)
{
    double logs = 0;
    int n = 0;
    for (int j = 0; j < r->sizes.n; j++) {
        if ((r->sizes.v[j] > SMALL_MAX) != large)
            continue;
        const struct model_result *x = at(r, res, c, i, j);
        logs += log(x->software / x->inswitch);
        n++;
    }
    return n ? exp(logs / n) : 0;
}

static void write_table(const struct run *r, const struct model_result *res)
{
    char topo[64];
    model_topo_name(&r->topo, topo, sizeof topo);
    printf("| collective |");
    for (int i = 0; i < r->procs.n; i++)
        printf(" P=%lu, <=4 KB | P=%lu, >4 KB |", r->procs.v[i], r->procs.v[i]);
    printf("\n|---|");
    for (int i = 0; i < r->procs.n; i++)
        printf("---|---|");
    printf("\n");
    double lo = 0, hi = 0;
    for (int c = 0; c < r->ncolls; c++) {
        printf("| %s |", model_coll_name(r->colls[c]));
        for (int i = 0; i < r->procs.n; i++)
            for (int large = 0; large < 2; large++) {
                double g = geomean(r, res, c, i, large);
                if (g == 0) {
                    printf(" - |");
                    continue;
                }
                printf(" %.1fx |", g);
                lo = lo == 0 || g < lo ? g : lo;
                hi = g > hi ? g : hi;
            }
        printf("\n");
    }
    printf("\nGeometric mean of software / in-switch time over the sizes in each range, "
           "%s; range %.1fx-%.1fx (seed 000 fig. 3-9: 2.0x-32.6x).\n", topo, lo, hi);
}

/* Up to six process counts to draw, spread over the list. */
static int plot_procs(const struct run *r, int *idx)
{
    int n = r->procs.n < 6 ? r->procs.n : 6;
    for (int k = 0; k < n; k++)
        idx[k] = n == 1 ? 0 : k * (r->procs.n - 1) / (n - 1);
    return n;
}

static int write_plot(const struct run *r, const struct model_result *res, const char *file)
{
    if (strchr(file, '\'') || strchr(file, '\\')) {
        fprintf(stderr, "acis-model: --plot file name must not hold quotes or backslashes\n");
        return -1;
    }
    const char *term = system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") == 0
                       ? "pngcairo" : "png";
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "acis-model: cannot run gnuplot (Debian: gnuplot-nox)\n");
        return -1;
    }
    char topo[64];
    model_topo_name(&r->topo, topo, sizeof topo);
    int cols = r->ncolls < 4 ? r->ncolls : 4, rows = (r->ncolls + cols - 1) / cols;
    fprintf(g, "set terminal %s noenhanced size %d,%d\nset output '%s'\n", term, 520 * cols,
            340 * rows + 40, file);
    fprintf(g, "set multiplot layout %d,%d title 'acis-model: software / in-switch time, %s'\n",
            rows, cols, topo);
    fprintf(g, "set logscale x 2\nset logscale y 10\n"
            "set xtics ('4' 4, '64' 64, '1K' 1024, '16K' 16384, '256K' 262144, '4M' 4194304)\n"
            "set xlabel 'bytes per process'\nset ylabel 'speedup'\n"
            "set key outside right top font ',8'\nset grid\n");
    int idx[6], n = plot_procs(r, idx);
    for (int c = 0; c < r->ncolls; c++) {
        fprintf(g, "set title '%s'\nplot 1 notitle with lines dt 2 lc 'black', ",
                model_coll_name(r->colls[c]));
        for (int k = 0; k < n; k++)
            fprintf(g, "%s'-' using 1:2 with linespoints title 'P=%lu'", k ? ", " : "",
                    r->procs.v[idx[k]]);
        fprintf(g, "\n");
        for (int k = 0; k < n; k++) {
            for (int j = 0; j < r->sizes.n; j++) {
                const struct model_result *x = at(r, res, c, idx[k], j);
                fprintf(g, "%lu %g\n", r->sizes.v[j], x->software / x->inswitch);
            }
            fprintf(g, "e\n");
        }
    }
    fprintf(g, "unset multiplot\n");
    int rc = pclose(g);
    if (rc != 0) {
        fprintf(stderr, "acis-model: gnuplot failed (status %d)\n", rc);
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct run *r, const char **csv, int *table,
                      const char **plot)
{
    model_defaults(&r->m);
    r->topo = (struct model_topo){ .kind = MODEL_FATTREE, .radix = 32 };
    parse_list("--procs", "2:65536", 1ul << 20, &r->procs);
    parse_list("--sizes", "4:4194304", 1ul << 30, &r->sizes);
    for (int c = 0; c < MODEL_COLL_COUNT; c++)
        r->colls[c] = c;
    r->ncolls = MODEL_COLL_COUNT;
    int host_bw = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(o, "--table") == 0) {
            *table = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "acis-model: unknown option or missing value: %s\n", o);
            usage(stderr);
            return -1;
        }
        i++;
        if (strcmp(o, "--colls") == 0)
            rc = parse_colls(v, r);
        else if (strcmp(o, "--procs") == 0)
            rc = parse_list(o, v, 1ul << 20, &r->procs), r->procs_given = 1;
        else if (strcmp(o, "--sizes") == 0)
            rc = parse_list(o, v, 1ul << 30, &r->sizes);
        else if (strcmp(o, "--topology") == 0) {
            char err[200];
            if ((rc = model_topo_parse(v, &r->topo, err, sizeof err)) != 0)
                fprintf(stderr, "acis-model: %s\n", err);
        } else if (strcmp(o, "--latency") == 0)
            rc = parse_num(o, v, 1, 1e-9, &r->m.latency);
        else if (strcmp(o, "--bandwidth") == 0) {
            double bps;
            if ((rc = parse_num(o, v, 0, 1e9, &bps)) == 0)
                r->m.per_byte = 8.0 / bps;
        } else if (strcmp(o, "--host-bandwidth") == 0) {
            double bps;
            if ((rc = parse_num(o, v, 0, 1e9, &bps)) == 0)
                r->m.host_per_byte = 8.0 / bps, host_bw = 1;
        } else if (strcmp(o, "--host-reduce") == 0) {
            double Bps;
            if ((rc = parse_num(o, v, 0, 1e9, &Bps)) == 0)
                r->m.reduce_per_byte = 1.0 / Bps;
        } else if (strcmp(o, "--type-size") == 0)
            rc = parse_num(o, v, 0, 1, &r->m.type_size);
        else if (strcmp(o, "--hop") == 0)
            rc = parse_num(o, v, 1, 1e-9, &r->m.hop);
        else if (strcmp(o, "--overhead") == 0) {
            if ((rc = parse_num(o, v, 1, 1e-6, &r->m.o_send)) == 0)
                r->m.o_recv = r->m.o_send;
        } else if (strcmp(o, "--o-send") == 0)
            rc = parse_num(o, v, 1, 1e-6, &r->m.o_send);
        else if (strcmp(o, "--o-recv") == 0)
            rc = parse_num(o, v, 1, 1e-6, &r->m.o_recv);
        else if (strcmp(o, "--gap") == 0)
            rc = parse_num(o, v, 1, 1e-6, &r->m.gap);
        else if (strcmp(o, "--csv") == 0)
            *csv = v;
        else if (strcmp(o, "--plot") == 0)
            *plot = v;
        else {
            fprintf(stderr, "acis-model: unknown option %s\n", o);
            usage(stderr);
            return -1;
        }
        if (rc != 0)
            return -1;
    }
    if (!host_bw)
        r->m.host_per_byte = r->m.per_byte;
    if (*table && !r->procs_given)
        parse_list("--procs", "32,64,128", 1ul << 20, &r->procs);
    for (int i = 0; i < r->procs.n; i++) {
        struct model_path path;
        if (model_path(&r->topo, r->procs.v[i], &path) != 0) {
            char name[64];
            model_topo_name(&r->topo, name, sizeof name);
            fprintf(stderr, "acis-model: %s does not hold %lu processes\n", name, r->procs.v[i]);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct run r;
    const char *csv = NULL, *plot = NULL;
    int table = 0, rc = 1;
    if (parse_args(argc, argv, &r, &csv, &table, &plot) != 0)
        return 2;
    struct model_result *res = sweep(&r);
    if (!res)
        return 1;
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (!f) {
            fprintf(stderr, "acis-model: %s: %s\n", csv, strerror(errno));
            goto out;
        }
        int bad = write_csv(&r, res, f);
        if (fclose(f) != 0 || bad) {
            fprintf(stderr, "acis-model: writing %s failed\n", csv);
            goto out;
        }
    } else if (!table && !plot && write_csv(&r, res, stdout) != 0) {
        goto out;
    }
    if (table)
        write_table(&r, res);
    if (plot && write_plot(&r, res, plot) != 0)
        goto out;
    rc = 0;
out:
    free(res);
    return rc;
}
