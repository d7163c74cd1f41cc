package report

import "strings"

// TailLines is how many lines of a failed file's output the run's final
// table and report.html show.
const TailLines = 12

// maxTailScan bounds the bytes of a run.log OutputTail reads back from its
// end: the tail of a file's output is near its status line.
const maxTailScan = 1 << 20

// OutputTail is the last n lines of what file printed in a shard's run.log:
// the lines before its last status line ("[i/n] FILE  FAIL ...", rules §9),
// back to the status line of the file before it or its "::group::" marker;
// the log's last n lines when the file has no status line (one pytest for
// a whole CPU shard, a run that ended early). Each line is Printable: the
// log is the tests' output.
func OutputTail(log, file string, n int) []string {
	if len(log) > maxTailScan {
		log = log[len(log)-maxTailScan:]
	}
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	end := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if st, err := ParseStatusLines(lines[i]); err == nil && len(st) == 1 && st[0].File == file && st[0].Status != Pass {
			end = i
			break
		}
	}
	var section []string
	if end < 0 {
		section = lines
	} else {
		start := 0
		for i := end - 1; i >= 0; i-- {
			if st, err := ParseStatusLines(lines[i]); err == nil && len(st) == 1 {
				start = i + 1
				break
			}
			if strings.HasPrefix(lines[i], "::group::"+file+" ") {
				start = i + 1
				break
			}
		}
		section = lines[start:end]
	}
	var out []string
	for _, l := range section {
		if l == "::endgroup::" || strings.HasPrefix(l, "::group::") {
			continue
		}
		out = append(out, Printable(strings.TrimRight(l, "\r")))
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
