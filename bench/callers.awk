# callers.awk -- from `callgrind_annotate --tree=caller --inclusive=yes`,
# the inclusive instructions of function fn summed over its callers, and
# its calls: prints "instructions calls".  For bench/swcore.sh and
# bench/callcost.sh.   awk -v fn=NAME -f bench/callers.awk
/^[ \t]*$/ { blk = ""; next }
{ blk = blk $0 "\n" }
/ \*  / {
    if ($0 !~ (":" fn "( |$)")) { blk = ""; next }
    n = split(blk, line, "\n")
    for (i = 1; i < n; i++) {
        if (line[i] !~ / < /) continue
        ir = line[i]; sub(/^ */, "", ir); sub(/ .*/, "", ir); gsub(",", "", ir)
        c = line[i]; sub(/.*\(/, "", c); sub(/x\).*/, "", c); gsub(",", "", c)
        tot += ir; calls += c
    }
    blk = ""
}
END { printf "%d %d\n", tot, calls }
