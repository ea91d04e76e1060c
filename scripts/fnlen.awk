# fnlen.awk: the length of every function of the C files given, one line each:
# "LINES FILE NAME".  A function starts at a line that is '{' in column 0 after
# its signature and ends at the next '}' in column 0; its count includes both
# braces (the kvx style: the brace of a function body alone on its line).  NAME
# is the identifier before the first '(' of the signature's first line.
/^\{/ { start = FNR; name = prev; next }
/^\}/ { if (start) { print FNR - start + 1, FILENAME, name; start = 0 } }
{
    if ($0 ~ /^[A-Za-z_].*\(/) {
        prev = $0
        sub(/\(.*/, "", prev)
        n = split(prev, w, /[ \t*]+/)
        prev = w[n]
    }
}
