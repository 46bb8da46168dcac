# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# One edit of a C file, for mutants.sh and seed.sh: the environment gives
# KIND (line: the lines whose text, without leading and trailing blanks, is
# exactly FIND; text: the lines containing FIND), NTH (only the Nth of them;
# 0: all) and TO (line: the whole line, its indent kept, or empty to delete
# it; text: what replaces FIND).  Prints the edited file; the number of
# lines edited goes to standard error.
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
BEGIN { f = ENVIRON["FIND"]; t = ENVIRON["TO"]; k = ENVIRON["KIND"];
	nth = ENVIRON["NTH"] + 0; n = 0; done = 0 }
{
	hit = k == "line" ? trim($0) == f : index($0, f) > 0
	if (hit) n++
	if (hit && (!nth || n == nth)) {
		done++
		if (k == "line") {
			match($0, /^[ \t]*/)
			if (t != "") print substr($0, 1, RLENGTH) t
			next
		}
		i = index($0, f)
		$0 = substr($0, 1, i - 1) t substr($0, i + length(f))
	}
	print
}
END { print done > "/dev/stderr" }
