/* fuzz.h -- what the libFuzzer harnesses of test/fuzz share: the entry
 * point libFuzzer calls, a check that stops the run (libFuzzer then saves
 * the input) when an invariant fails, and cutting the input into packets. */
#ifndef ACIS_FUZZ_H
#define ACIS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond) \
    do {                 \
        if (!(cond))     \
            __builtin_trap(); \
    } while (0)

/* Copy the next want bytes of the input (fewer at its end) to out and
 * advance past them; returns how many were copied. */
static inline size_t fuzz_take(const uint8_t **data, size_t *size, void *out, size_t want)
{
    if (want > *size)
        want = *size;
    memcpy(out, *data, want);
    *data += want;
    *size -= want;
    return want;
}

#endif
