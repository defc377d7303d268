/* emit.c -- the two renderings of an acis-info report (emit.h).  JSON
 * strings are escaped (quotes, backslashes, control characters). */
#include "config.h"

#include "emit.h"

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Start a value under key: JSON comma and key; text indentation, key, and
 * the "- " of an array item's first line. */
static void lead(struct emit *e, const char *key)
{
    if (e->json) {
        if (e->items[e->depth]++)
            fputc(',', e->f);
        fprintf(e->f, "\n%*s", 2 * e->depth, "");
        if (key) {
            json_string(e->f, key);
            fputs(": ", e->f);
        }
        return;
    }
    int indent = 2 * (e->depth - 1);
    if (e->item_open) {                   /* first field of an array item */
        fprintf(e->f, "%*s- ", indent - 2, "");
        e->item_open = 0;
    } else {
        fprintf(e->f, "%*s", indent, "");
    }
    if (key)
        fprintf(e->f, "%s:", key);
    else if (e->in_array[e->depth])
        fputs("-", e->f);                 /* a scalar item */
}

void emit_begin(struct emit *e, FILE *f, int json)
{
    *e = (struct emit){ .f = f, .json = json, .depth = 1 };
    if (json)
        fputc('{', f);
}

void emit_end(struct emit *e)
{
    if (e->json)
        fputs("\n}\n", e->f);
}

static void open_container(struct emit *e, const char *key, int array)
{
    int item = !key && e->in_array[e->depth];
    if (e->json) {
        lead(e, key);
        fputc(array ? '[' : '{', e->f);
    } else if (item) {
        e->item_open = 1;                 /* "- " goes before its first field */
    } else {
        lead(e, key);
        fputc('\n', e->f);
    }
    if (e->depth + 1 < EMIT_DEPTH) {
        e->depth++;
        e->items[e->depth] = 0;
        e->in_array[e->depth] = array;
    }
}

void emit_obj(struct emit *e, const char *key)
{
    open_container(e, key, 0);
}

void emit_arr(struct emit *e, const char *key)
{
    open_container(e, key, 1);
}

void emit_close(struct emit *e)
{
    int array = e->in_array[e->depth], any = e->items[e->depth];
    if (e->depth > 1)
        e->depth--;
    e->item_open = 0;
    if (e->json) {
        if (any)
            fprintf(e->f, "\n%*s", 2 * e->depth, "");
        fputc(array ? ']' : '}', e->f);
    }
}

void emit_str(struct emit *e, const char *key, const char *value)
{
    lead(e, key);
    if (e->json) {
        if (value)
            json_string(e->f, value);
        else
            fputs("null", e->f);
    } else {
        fprintf(e->f, " %s\n", value ? value : "-");
    }
}

void emit_int(struct emit *e, const char *key, long long value)
{
    lead(e, key);
    fprintf(e->f, e->json ? "%lld" : " %lld\n", value);
}

void emit_num(struct emit *e, const char *key, double value)
{
    lead(e, key);
    fprintf(e->f, e->json ? "%.9g" : " %.9g\n", value);
}

void emit_bool(struct emit *e, const char *key, int value)
{
    lead(e, key);
    fprintf(e->f, e->json ? "%s" : " %s\n", value ? "true" : "false");
}
