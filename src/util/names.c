/* names.c -- names of entry points and reasons, from the X-macro lists in
 * acis/colls.h and acis/reasons.h (public API functions of acis.h). */
#include "config.h"

#include <ctype.h>

#include "util.h"

#define ACIS_API __attribute__((visibility("default")))

static const char *const coll_names[ACIS_COLL_COUNT] = {
#define ACIS_COLL(id, name, blocking, cvar, form) name,
#include "acis/colls.h"
#undef ACIS_COLL
};

static const acis_coll_t coll_blocking[ACIS_COLL_COUNT] = {
#define ACIS_COLL(id, name, blocking, cvar, form) ACIS_COLL_##blocking,
#include "acis/colls.h"
#undef ACIS_COLL
};

static const uint8_t coll_form[ACIS_COLL_COUNT] = {
#define ACIS_COLL(id, name, blocking, cvar, form) ACIS_FORM_##form,
#include "acis/colls.h"
#undef ACIS_COLL
};

static const char *const reason_ids[ACIS_REASON_COUNT] = {
#define ACIS_REASON(id, text) #id,
#include "acis/reasons.h"
#undef ACIS_REASON
};

static const char *const reason_texts[ACIS_REASON_COUNT] = {
#define ACIS_REASON(id, text) text,
#include "acis/reasons.h"
#undef ACIS_REASON
};

/* Lower-case stable identifiers, made once from the enum names. */
static char reason_lower[ACIS_REASON_COUNT][32];

__attribute__((constructor))
static void names_init(void)
{
    for (int r = 0; r < ACIS_REASON_COUNT; r++) {
        size_t i = 0;
        for (; reason_ids[r][i] && i + 1 < sizeof reason_lower[r]; i++)
            reason_lower[r][i] = (char)tolower((unsigned char)reason_ids[r][i]);
        reason_lower[r][i] = '\0';
    }
}

ACIS_API const char *acis_coll_name(acis_coll_t coll)
{
    return (unsigned)coll < ACIS_COLL_COUNT ? coll_names[coll] : NULL;
}

ACIS_API acis_coll_t acis_coll_blocking(acis_coll_t coll)
{
    return (unsigned)coll < ACIS_COLL_COUNT ? coll_blocking[coll] : coll;
}

ACIS_API int acis_coll_form(acis_coll_t coll)
{
    return (unsigned)coll < ACIS_COLL_COUNT ? coll_form[coll] : -1;
}

ACIS_API const char *acis_reason_name(acis_reason_t reason)
{
    return (unsigned)reason < ACIS_REASON_COUNT ? reason_lower[reason] : NULL;
}

ACIS_API const char *acis_reason_text(acis_reason_t reason)
{
    return (unsigned)reason < ACIS_REASON_COUNT ? reason_texts[reason] : NULL;
}
