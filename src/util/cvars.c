/* cvars.c -- the CVAR table (expanded from cvars.def), its parser and its
 * printer.  Parsing reads a NULL-terminated environment array so that unit
 * tests can hand it any environment they like. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

#define ACIS_SCOPE_ALL_EQ 1
#define ACIS_SCOPE_LOCAL 0

const struct acis_cvar acis_cvar_table[ACIS_CV_COUNT] = {
#define ACIS_CVAR(id, type, scope, def, allowed, desc) \
    { #id, ACIS_CVAR_##type, ACIS_SCOPE_##scope, def, allowed, desc },
#include "cvars.def"
#undef ACIS_CVAR
};

/* Prefixes in increasing precedence, as MPICH reads its own CVARs. */
static const char *const prefixes[] = { "MPICH_", "MPIR_PARAM_", "MPIR_CVAR_" };
#define NPREFIX (sizeof prefixes / sizeof prefixes[0])

static const char *type_name(enum acis_cvar_type t)
{
    switch (t) {
    case ACIS_CVAR_ENUM: return "enum";
    case ACIS_CVAR_BOOL: return "boolean";
    case ACIS_CVAR_INT:  return "integer";
    case ACIS_CVAR_SIZE: return "size";
    case ACIS_CVAR_ADDR: return "address";
    case ACIS_CVAR_RATE: return "rate";
    case ACIS_CVAR_NAME: return "name";
    }
    return "?";
}

/* Copy text without leading and trailing blanks into buf. */
static void trim(const char *text, char *buf, size_t len)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = strlen(text);
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        n--;
    if (n >= len)
        n = len - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
}

static int parse_enum(const char *allowed, const char *v, long long *num)
{
    size_t vlen = strlen(v);
    long long idx = 0;
    for (const char *w = allowed; *w; idx++) {
        const char *bar = strchr(w, '|');
        size_t wlen = bar ? (size_t)(bar - w) : strlen(w);
        if (wlen == vlen && strncasecmp(w, v, vlen) == 0) {
            *num = idx;
            return 0;
        }
        if (!bar)
            break;
        w = bar + 1;
    }
    return -1;
}

static int parse_bool(const char *v, long long *num)
{
    static const char *const yes[] = { "1", "yes", "true", "on" };
    static const char *const no[] = { "0", "no", "false", "off" };
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) { *num = 1; return 0; }
        if (strcasecmp(v, no[i]) == 0)  { *num = 0; return 0; }
    }
    return -1;
}

/* Parse a plain decimal integer; with sizes, one of K M G T (any case,
 * optionally followed by B or iB) multiplies by a power of 1024. */
static int parse_number(const char *v, int size, long long *num)
{
    if (!isdigit((unsigned char)v[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0)
        return -1;
    if (size && *end) {
        static const char units[] = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u)
            return -1;
        int shift = 10 * (int)(u - units + 1);
        if (n > (~0ULL >> (shift + 1)))
            return -1;
        n <<= shift;
        end++;
        if (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0)
            end += strlen(end);
    }
    if (*end || n > (unsigned long long)LLONG_MAX)
        return -1;
    *num = (long long)n;
    return 0;
}

/* The allowed text of a number that may be auto ("auto|LO..HI"): auto
 * is 0, below the range.  The prefix's length, else 0. */
static size_t auto_prefix(const char *allowed)
{
    return strncmp(allowed, "auto|", 5) == 0 ? 5 : 0;
}

/* A number's range "LO..HI", after an "auto|" that allows auto. */
static int parse_range(const char *allowed, long long *lo, long long *hi)
{
    char a[64], *dots;
    allowed += auto_prefix(allowed);
    trim(allowed, a, sizeof a);
    dots = strstr(a, "..");
    if (!dots)
        return -1;
    *dots = '\0';
    return parse_number(a, 1, lo) || parse_number(dots + 2, 1, hi) ? -1 : 0;
}

int acis_rate_parse(const char *text, long long *ppb)
{
    char *end;
    if (!isdigit((unsigned char)text[0]) && text[0] != '.')
        return -1;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text)
        return -1;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end || v < 0 || v > 1)
        return -1;
    *ppb = (long long)(v * (double)ACIS_RATE_ONE + 0.5);
    return 0;
}

/* auto, HOST:PORT (host may be [v6]), an absolute path, or an RDMA
 * endpoint (LID/QPN, GID/QPN). */
static int parse_addr(const char *v)
{
    struct acis_ib_addr ib;
    if (strcasecmp(v, "auto") == 0 || v[0] == '/' || acis_ib_addr_parse(v, &ib) == 0)
        return 0;
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v)
        return -1;
    for (const char *p = v; p < colon; p++)
        if (isspace((unsigned char)*p))
            return -1;
    long long port;
    if (parse_number(colon + 1, 0, &port) || port < 1 || port > 65535)
        return -1;
    return 0;
}

/* auto, or a device name: letters, digits, '_', '-', '.'. */
static int parse_name(const char *v)
{
    if (!*v || strlen(v) > 63)
        return -1;
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
            return -1;
    return 0;
}

int acis_cvar_parse_value(enum acis_cvar_id id, const char *text,
                          long long *num, char *str, size_t strlen_,
                          char *err, size_t errlen)
{
    const struct acis_cvar *cv = &acis_cvar_table[id];
    char v[ACIS_CVAR_STRLEN];
    long long lo, hi;
    int rc = -1;

    if (strlen(text) >= sizeof v) {
        snprintf(err, errlen, "value longer than %zu characters", sizeof v - 1);
        return -1;
    }
    trim(text, v, sizeof v);
    switch (cv->type) {
    case ACIS_CVAR_ENUM:
        rc = parse_enum(cv->allowed, v, num);
        break;
    case ACIS_CVAR_BOOL:
        rc = parse_bool(v, num);
        break;
    case ACIS_CVAR_INT:
    case ACIS_CVAR_SIZE:
        if (auto_prefix(cv->allowed) && strcasecmp(v, "auto") == 0) {
            *num = 0;
            rc = 0;
            break;
        }
        rc = parse_number(v, cv->type == ACIS_CVAR_SIZE, num);
        if (rc == 0 && parse_range(cv->allowed, &lo, &hi) == 0 &&
            (*num < lo || *num > hi))
            rc = -1;
        break;
    case ACIS_CVAR_ADDR:
        rc = parse_addr(v);
        *num = 0;
        break;
    case ACIS_CVAR_RATE:
        rc = acis_rate_parse(v, num);
        break;
    case ACIS_CVAR_NAME:
        rc = parse_name(v);
        *num = 0;
        break;
    }
#ifndef ACIS_HAVE_VERBS
    if (rc == 0 && id == ACIS_CV_OFFLOAD_DEVICE && *num == ACIS_DEV_VERBS) {
        snprintf(err, errlen, "allowed in this build: udp|shm|none|auto (verbs needs acis "
                              "configured with libibverbs-dev installed, --with-verbs)");
        return -1;
    }
#endif
    if (rc != 0) {
        const char *how = cv->type == ACIS_CVAR_SIZE ? "a size in bytes (K, M, G suffixes) in "
                        : cv->type == ACIS_CVAR_INT ? "an integer in "
                        : cv->type == ACIS_CVAR_RATE ? "a fraction or percentage in " : "";
        size_t skip = *how ? auto_prefix(cv->allowed) : 0;
        snprintf(err, errlen, "allowed: %s%s%s", skip ? "auto, or " : "", how,
                 cv->type == ACIS_CVAR_BOOL ? "0|1 (or yes|no, true|false, on|off)"
                                            : cv->allowed + skip);
        return -1;
    }
    if (str && strlen_ > 0)
        snprintf(str, strlen_, "%s", v);
    return 0;
}

/* Value of NAME in env, or NULL. */
static const char *env_lookup(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

/* Reject variables with our prefix that the table does not know. */
static int check_unknown(char *const *env, char *err, size_t errlen)
{
    for (; env && *env; env++) {
        for (size_t p = 0; p < NPREFIX; p++) {
            size_t plen = strlen(prefixes[p]);
            if (strncmp(*env, prefixes[p], plen) != 0 ||
                strncmp(*env + plen, "OFFLOAD", 7) != 0)
                continue;
            const char *name = *env + plen;
            size_t nlen = strcspn(name, "=");
            int known = 0;
            for (int i = 0; i < ACIS_CV_COUNT && !known; i++)
                known = strlen(acis_cvar_table[i].name) == nlen &&
                        strncmp(acis_cvar_table[i].name, name, nlen) == 0;
            if (!known) {
                snprintf(err, errlen,
                         "%.*s is not an acis variable (acis-info --cvars lists them)",
                         (int)(plen + nlen), *env);
                return -1;
            }
        }
    }
    return 0;
}

int acis_cvars_parse(char *const *env, struct acis_cvars *out,
                     char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (check_unknown(env, err, errlen))
        return -1;
    for (int i = 0; i < ACIS_CV_COUNT; i++) {
        const struct acis_cvar *cv = &acis_cvar_table[i];
        char why[160], full[128];
        const char *text = cv->defval;
        out->source[i] = NULL;
        /* Every prefix that is set must be valid; the last one wins. */
        for (size_t p = 0; p < NPREFIX; p++) {
            snprintf(full, sizeof full, "%s%s", prefixes[p], cv->name);
            const char *v = env_lookup(env, full);
            if (!v)
                continue;
            if (acis_cvar_parse_value(i, v, &out->num[i], out->str[i], sizeof out->str[i],
                                      why, sizeof why)) {
                snprintf(err, errlen, "%s=\"%.80s%s\" is not valid; %s", full, v,
                         strlen(v) > 80 ? "..." : "", why);
                return -1;
            }
            text = v;
            out->source[i] = prefixes[p];
        }
        if (!out->source[i] &&
            acis_cvar_parse_value(i, text, &out->num[i], out->str[i], sizeof out->str[i],
                                  why, sizeof why)) {
            snprintf(err, errlen, "default of MPIR_CVAR_%s is not valid; %s", cv->name, why);
            return -1;
        }
    }
    return 0;
}

uint64_t acis_cvars_hash(const struct acis_cvars *cv)
{
    uint64_t h = 1469598103934665603ULL;               /* FNV-1a */
    for (int i = 0; i < ACIS_CV_COUNT; i++) {
        if (!acis_cvar_table[i].all_eq)
            continue;
        const unsigned char *p = (const unsigned char *)&cv->num[i];
        for (size_t k = 0; k < sizeof cv->num[i]; k++)
            h = (h ^ p[k]) * 1099511628211ULL;
        for (const char *s = cv->str[i]; *s; s++)
            h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    }
    return h;
}

void acis_cvar_format(enum acis_cvar_id id, const struct acis_cvars *cv, char *buf,
                      size_t len)
{
    const struct acis_cvar *d = &acis_cvar_table[id];
    long long v = cv->num[id];
    if (d->type == ACIS_CVAR_ENUM) {            /* the v-th word of allowed */
        const char *w = d->allowed;
        for (long long i = 0; i < v && strchr(w, '|'); i++)
            w = strchr(w, '|') + 1;
        size_t n = strcspn(w, "|");
        snprintf(buf, len, "%.*s", (int)n, w);
    } else if (d->type == ACIS_CVAR_ADDR || d->type == ACIS_CVAR_NAME) {
        snprintf(buf, len, "%s", cv->str[id]);
    } else if (d->type == ACIS_CVAR_RATE) {
        snprintf(buf, len, "%g", (double)v / (double)ACIS_RATE_ONE);
    } else if (v == 0 && auto_prefix(d->allowed)) {
        snprintf(buf, len, "auto");
    } else {
        snprintf(buf, len, "%lld", v);
    }
}

/* Write text, escaping '|' so it stays inside one Markdown table cell. */
static void put_cell(FILE *out, const char *text)
{
    for (; *text; text++) {
        if (*text == '|')
            fputc('\\', out);
        fputc(*text, out);
    }
}

void acis_cvars_print(FILE *out, int markdown)
{
    if (markdown) {
        fputs("# acis configuration variables\n\n"
              "Generated by `acis-info --cvars=markdown` from `src/util/cvars.def`;\n"
              "do not edit by hand.  Every variable is also read with the `MPICH_`\n"
              "and `MPIR_PARAM_` prefixes; `MPIR_CVAR_` wins.  A malformed value stops\n"
              "`MPI_Init` with one line naming the variable and what is allowed, and so\n"
              "does an unknown `MPIR_CVAR_OFFLOAD*` name.\n\n"
              "Scope *all ranks* means every rank must see the same value (`MPI_Init`\n"
              "checks); *local* may differ per rank.\n\n"
              "| Variable | Type | Scope | Default | Allowed | Description |\n"
              "|---|---|---|---|---|---|\n", out);
    }
    for (int i = 0; i < ACIS_CV_COUNT; i++) {
        const struct acis_cvar *cv = &acis_cvar_table[i];
        if (markdown) {
            fprintf(out, "| `MPIR_CVAR_%s` | %s | %s | `%s` | ", cv->name,
                    type_name(cv->type), cv->all_eq ? "all ranks" : "local",
                    cv->defval);
            put_cell(out, cv->allowed);
            fputs(" | ", out);
            put_cell(out, cv->desc);
            fputs(" |\n", out);
        } else
            fprintf(out, "MPIR_CVAR_%s\n    %s, %s, default %s, allowed %s\n    %s\n\n",
                    cv->name, type_name(cv->type),
                    cv->all_eq ? "same on all ranks" : "per rank", cv->defval,
                    cv->allowed, cv->desc);
    }
}
