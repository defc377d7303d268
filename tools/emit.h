/* emit.h -- one report, two renderings: nested keys and values written
 * once by acis-info, printed as indented text (YAML-like, for people) or
 * as JSON (for scripts). */
#ifndef ACIS_EMIT_H
#define ACIS_EMIT_H

#include <stdio.h>

#define EMIT_DEPTH 8

struct emit {
    FILE *f;
    int json;
    int depth;
    int items[EMIT_DEPTH];    /* values written at each depth (JSON commas) */
    int in_array[EMIT_DEPTH]; /* the container at each depth is an array */
    int item_open;            /* text: an array item's first line is due */
};

void emit_begin(struct emit *e, FILE *f, int json);
void emit_end(struct emit *e);

/* Open an object or array under key (NULL inside an array); close it. */
void emit_obj(struct emit *e, const char *key);
void emit_arr(struct emit *e, const char *key);
void emit_close(struct emit *e);

void emit_str(struct emit *e, const char *key, const char *value);  /* NULL: null */
void emit_int(struct emit *e, const char *key, long long value);
void emit_num(struct emit *e, const char *key, double value);
void emit_bool(struct emit *e, const char *key, int value);

#endif
