/* acis-info -- tell what this acis build offers: its version, the MPICH it
 * was built against, and the CVAR table (--cvars, or --cvars=markdown for
 * docs/cvars.md). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "mpid/device.h"
#include "util/util.h"

static void usage(FILE *out)
{
    fputs("usage: acis-info [--version] [--cvars[=markdown]] [--switch HOST:PORT]\n"
          "  --version          acis and MPICH versions\n"
          "  --cvars            every MPIR_CVAR_OFFLOAD_* variable, as text\n"
          "  --cvars=markdown   the same as the Markdown of docs/cvars.md\n"
          "  --switch ADDR      the counters of the switch at ADDR\n", out);
}

static int show_switch(const char *addr)
{
    uint64_t c[ACIS_SWC_COUNT];
    char why[256];
    int n = acis_dev_query_stats(addr, c, ACIS_SWC_COUNT, 2000, why, sizeof why);
    if (n < 0) {
        fprintf(stderr, "acis-info: %s\n", why);
        return 1;
    }
    printf("switch %s\n", addr);
    for (int i = 0; i < n; i++)
        printf("  %-20s %20llu  %s\n", acis_wire_counter_name((unsigned)i),
               (unsigned long long)c[i], acis_wire_counter_text((unsigned)i));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("acis %s (built against MPICH %s)\n", PACKAGE_VERSION,
                   ACIS_MPICH_VERSION);
        } else if (strcmp(argv[i], "--cvars") == 0 ||
                   strcmp(argv[i], "--cvars=text") == 0) {
            acis_cvars_print(stdout, 0);
        } else if (strcmp(argv[i], "--cvars=markdown") == 0) {
            acis_cvars_print(stdout, 1);
        } else if (strcmp(argv[i], "--switch") == 0 && i + 1 < argc) {
            if (show_switch(argv[++i]) != 0)
                return 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
        } else {
            fprintf(stderr, "acis-info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    return 0;
}
