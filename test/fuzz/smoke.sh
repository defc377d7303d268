#!/bin/sh
# smoke.sh -- make check's run of the libFuzzer harnesses (test/fuzz): build
# them with clang and run each for ACIS_FUZZ_SECONDS (default 5).  A crash,
# leak, sanitizer report or timeout fails the test; `make fuzz` runs longer.
set -eu
[ "${ACIS_HAVE_FUZZ:-0}" = 1 ] ||
    { echo "SKIP: configure found no clang with libFuzzer"; exit 77; }
cd "${top_builddir:?}"
make --no-print-directory fuzz FUZZ_SECONDS="${ACIS_FUZZ_SECONDS:-5}"
