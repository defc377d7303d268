#!/bin/sh
# docs_cvars.sh -- docs/cvars.md must be exactly what the CVAR table
# generates (run `make cvars-doc` after changing src/util/cvars.def).
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
"$top_builddir/tools/acis-info" --cvars=markdown | diff -u "$top_srcdir/docs/cvars.md" - ||
    { echo "FAIL: docs/cvars.md is stale; run make cvars-doc" >&2; exit 1; }
echo "ok: docs/cvars.md matches the CVAR table"
