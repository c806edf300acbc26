package rmacheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Verdict checks a job's output under --check=warn against the source
// lines of file that a labelled case marks as its race (none: a race-free
// case): every report must name exactly those lines, and a racy case must
// get one. It returns what is wrong, or "". The corpora's tests (Go's and
// C's) share it.
func Verdict(out, file string, marked []int) string {
	var reports []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "are not ordered by any synchronization") || strings.Contains(l, "before the call completes") {
			reports = append(reports, l)
		}
	}
	if len(marked) == 0 {
		if len(reports) > 0 {
			return "a race-free case reported:\n" + strings.Join(reports, "\n")
		}
		return ""
	}
	if len(reports) == 0 {
		return fmt.Sprintf("no report; want lines %v\n%s", marked, out)
	}
	lineRE := regexp.MustCompile(regexp.QuoteMeta(file) + `:(\d+)`)
	var wrong []string
	for _, r := range reports {
		var lines []int
		for _, m := range lineRE.FindAllStringSubmatch(r, -1) {
			var l int
			fmt.Sscan(m[1], &l)
			lines = append(lines, l)
		}
		slices.Sort(lines)
		lines = slices.Compact(lines)
		if !slices.Equal(lines, marked) {
			wrong = append(wrong, fmt.Sprintf("report names lines %v, want %v:\n%s", lines, marked, r))
		}
	}
	return strings.Join(wrong, "\n")
}
