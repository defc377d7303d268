#!/bin/sh
# layering.sh -- the folders of src/ use one another in one direction only,
# the one written here once: a folder may include the headers of, and call,
# the folders after it in ORDER, never one before it.  Checked on the
# sources' #include lines and on the built objects' symbols (nm: what each
# object defines and what it calls), so a call up a layer fails even
# without an include (an extern declared by hand).  Callbacks handed down
# (acis_ct.off_new, a deliver function) are not symbol references and are
# how a lower layer reports up.  Between folders there can be no call
# cycle, since every folder calls only those after it.  Within a folder
# no file calls another that calls it back, however indirectly (tsort of
# the objects' function calls; each folder's one context struct, acis_oc
# and the like, is data every file reads, not a call).  src/offload's
# files run as one pipeline, in the order src/offload/run.c gives; sw.h
# gives the switch's.  The device's context (src/mpid/dev.h) stays in
# src/mpid.
. "${top_srcdir:-.}/test/mpi/common.sh"

ORDER="offload fallback commtable mpid switch verbs wire util"
rank() {
    i=0
    for f in $ORDER; do
        [ "$f" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}
ranks=$(for f in $ORDER; do echo "$f $(rank $f)"; done)
bad=0

note "includes: a folder includes only its own headers and those of folders after it"
for src in $(cd "$top_srcdir" && find src -name '*.[ch]'); do
    from=$(echo "$src" | cut -d/ -f2)
    for to in $(sed -n 's/^#include "\([a-z]*\)\/.*/\1/p' "$top_srcdir/$src" | sort -u); do
        [ "$to" = acis ] && continue
        rf=$(rank "$from") rt=$(rank "$to")
        if [ "$rt" -lt 0 ] || [ "$rf" -lt 0 ]; then
            echo "$src: includes $to/, which ORDER does not place"; bad=1
        elif [ "$rt" -lt "$rf" ]; then
            echo "$src: includes $to/, a layer above $from/"; bad=1
        fi
    done
done

note "calls: no object calls a function defined in a folder before its own"
# libtool keeps the PIC objects in .libs/ (the only ones with
# --disable-static); each source is read once, under its name without .libs
objs=$(cd "$top_builddir" && find src -name '*.o' | sed 's|/\.libs/|/|' | sort -u)
[ -n "$objs" ] || fail "no objects under $top_builddir/src: build first"
(cd "$top_builddir" && for o in $objs; do
    dir=$(echo "$o" | cut -d/ -f2)
    f=$(dirname "$o")/.libs/$(basename "$o")
    [ -f "$f" ] || f=$o
    nm -P --defined-only "$f" | awk -v d="$dir" -v o="$o" '$2 ~ /^[TDBR]$/ { print "def", $1, d, o, $2 }'
    nm -P -u "$f" | awk -v d="$dir" -v o="$o" '{ print "use", $1, d, o }'
done) >"$TMPD/syms"
{ echo "$ranks" | awk '{ print "rank", $1, $2 }'; grep '^def ' "$TMPD/syms";
  grep '^use ' "$TMPD/syms"; } | awk '
    $1 == "rank" { r[$2] = $3; next }
    $1 == "def" { at[$2] = $3; next }
    $1 == "use" && ($2 in at) && at[$2] != $3 {
        if (!($3 in r) || !(at[$2] in r))
            printf "%s: %s/ or %s/ is not in ORDER\n", $4, $3, at[$2]
        else if (r[at[$2]] < r[$3])
            printf "%s: calls %s, defined in %s/, a layer above %s/\n", $4, $2, at[$2], $3
    }' >"$TMPD/up"
if [ -s "$TMPD/up" ]; then
    sort -u "$TMPD/up"
    bad=1
fi
note "private: src/mpid/dev.h, the device's context, is included in src/mpid alone"
for src in $(cd "$top_srcdir" && grep -rl '#include "mpid/dev.h"' src); do
    case $src in
    src/mpid/*) ;;
    *) echo "$src: includes mpid/dev.h, private to src/mpid"; bad=1 ;;
    esac
done
note "calls within a folder: no circle between its files (functions; each folder's one context struct is data)"
{ grep '^def ' "$TMPD/syms"; grep '^use ' "$TMPD/syms"; } | awk '
    $1 == "def" && $5 == "T" { at[$2] = $4; next }
    $1 == "use" && ($2 in at) && at[$2] != $4 { print $4, at[$2] }' | sort -u >"$TMPD/pairs"
if ! tsort "$TMPD/pairs" >/dev/null 2>"$TMPD/loop"; then
    sed 's/^tsort: //' "$TMPD/loop"
    bad=1
fi
[ $bad = 0 ] || fail "a folder uses one above it, or files of a folder call in a circle (the order: $ORDER)"
echo "ok: $(echo "$objs" | wc -w) objects and the sources of src/ use folders in the order $ORDER"
