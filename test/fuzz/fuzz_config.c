/* fuzz_config.c -- libFuzzer harness for every parser of configuration
 * text a user or launcher hands acis: CVAR values of every variable, whole
 * environments (acis_cvars_parse), rates, acis-switchd and fault options,
 * and HOST:PORT addresses.  The first byte picks the parser, the rest is
 * the text.  A parser must accept or refuse with a message, never crash or
 * read past the string; accepted rates and switch options must be in
 * range. */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "switch/switch.h"
#include "util/util.h"

/* No name lookups: a fuzzer must not wait on DNS (or send anything).  Only
 * texts whose host part is a numeric IPv4 or IPv6 literal, or that the
 * parser refuses before looking anything up, reach acis_addr_parse. */
static int numeric_host(const char *t)
{
    const char *colon = strrchr(t, ':');
    char host[256];
    if (!colon || colon == t || (size_t)(colon - t) >= sizeof host)
        return 1;
    size_t n = (size_t)(colon - t);
    memcpy(host, t, n);
    host[n] = '\0';
    char *h = host;
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h[n - 1] = '\0';
        h++;
    }
    unsigned char bin[16];
    return inet_pton(AF_INET, h, bin) == 1 || inet_pton(AF_INET6, h, bin) == 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    char *text = malloc(size), err[512] = "";
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    unsigned pick = data[0];
    long long num;
    char str[ACIS_CVAR_STRLEN];

    switch (pick % 6) {
    case 0: {                  /* one value of one variable */
        enum acis_cvar_id id = (enum acis_cvar_id)(pick / 6 % ACIS_CV_COUNT);
        if (acis_cvar_parse_value(id, text, &num, str, sizeof str, err, sizeof err) == 0)
            FUZZ_CHECK(strlen(str) < sizeof str);
        else
            FUZZ_CHECK(err[0] != '\0');
        break;
    }
    case 1: {                  /* an environment: one NAME=value per line */
        char *env[64];
        int n = 0;
        for (char *line = strtok(text, "\n"); line && n < 63; line = strtok(NULL, "\n"))
            env[n++] = line;
        env[n] = NULL;
        struct acis_cvars cv;
        if (acis_cvars_parse(env, &cv, err, sizeof err) != 0)
            FUZZ_CHECK(err[0] != '\0');
        break;
    }
    case 2:
        if (acis_rate_parse(text, &num) == 0)
            FUZZ_CHECK(num >= 0 && num <= 1000000000LL);
        break;
    case 3: {                  /* acis-switchd --name value */
        struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
        char *eq = strchr(text, '=');
        if (eq) {
            *eq = '\0';
            if (acis_sw_opt_set(&o, text, eq + 1, err, sizeof err) != 0)
                FUZZ_CHECK(err[0] != '\0');
            else
                FUZZ_CHECK(o.ports >= 1 && o.tables >= 1 && o.slots >= 1 &&
                           o.payload >= ACIS_MIN_PAYLOAD && o.payload <= ACIS_MAX_PAYLOAD);
        }
        break;
    }
    case 4: {
        struct acis_fault_rates r = { 0 };
        char *eq = strchr(text, '=');
        if (eq) {
            *eq = '\0';
            if (acis_fault_opt(&r, text, eq + 1) == 0)
                FUZZ_CHECK(r.drop <= 1000000000ull && r.dup <= 1000000000ull &&
                           r.reorder <= 1000000000ull && r.delay <= 1000000000ull &&
                           r.corrupt <= 1000000000ull);
        }
        break;
    }
    default: {
        struct sockaddr_storage a;
        unsigned int len;
        if (numeric_host(text) &&
            acis_addr_parse(text, &a, &len, err, sizeof err) == 0)
            FUZZ_CHECK(len <= sizeof a);
        break;
    }
    }
    free(text);
    return 0;
}
