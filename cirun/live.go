package cirun

import (
	"fmt"
	"strings"
	"time"

	"github.com/radixark/miles-ci/internal/printable"
)

// Board is the live table of a run on a terminal: the latest state of
// every job (shard) the scheduler has told of, in the order it first did.
// It renders text only; the front end decides where and whether to draw it.
type Board struct {
	order []string
	jobs  map[string]JobReport
}

// Update takes one state change (Options.Notify).
func (b *Board) Update(j JobReport) {
	if b.jobs == nil {
		b.jobs = map[string]JobReport{}
	}
	t := j.Title()
	if _, seen := b.jobs[t]; !seen {
		b.order = append(b.order, t)
	}
	b.jobs[t] = j
}

// boardRows bounds the table's rows so that it fits a terminal: the jobs
// that run or wait come first, then those that went wrong; finished ones
// that passed or were skipped are only counted.
const boardRows = 24

// boardOrder is the order of a table's rows by state.
var boardOrder = []State{Running, Queued, Failed, NotRun, Cancelled}

// Table is the board as text, one line per running, queued or failed job
// under a line of counts, each line cut to width characters (0: no cut).
func (b *Board) Table(elapsed time.Duration, width int) string {
	count := map[State]int{}
	for _, t := range b.order {
		count[b.jobs[t].State]++
	}
	var parts []string
	for _, s := range []State{Running, Queued, Passed, Failed, NotRun, Cancelled, Skipped, Excluded, NotModelled, WouldRun} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	lines := []string{fmt.Sprintf("miles-ci ci [%4.0fs] %d jobs: %s", elapsed.Seconds(), len(b.order), strings.Join(parts, ", "))}
	var rows []JobReport
	for _, s := range boardOrder {
		for _, t := range b.order {
			if j := b.jobs[t]; j.State == s {
				rows = append(rows, j)
			}
		}
	}
	titleW := 0
	for _, j := range rows[:min(len(rows), boardRows)] {
		titleW = max(titleW, len(j.Title()))
	}
	for i, j := range rows {
		if i == boardRows {
			lines = append(lines, fmt.Sprintf("  ... and %d more", len(rows)-boardRows))
			break
		}
		gpus := ""
		if len(j.Devices) > 0 {
			gpus = "GPUs " + j.Devices.String()
		} else if j.GPUs > 0 {
			gpus = fmt.Sprintf("%d GPUs", j.GPUs)
		}
		if j.Host != "" {
			gpus = j.Host + " " + gpus
		}
		line := fmt.Sprintf("  %-*s  %-9s %-12s", titleW, j.Title(), j.State, printable.Line(gpus))
		if j.State != Running {
			line += " " + printable.Line(j.Reason) // a queued shard's says which devices it waits for
		}
		lines = append(lines, strings.TrimRight(line, " "))
	}
	for i, l := range lines {
		if r := []rune(l); width > 0 && len(r) > width {
			lines[i] = string(r[:max(width-1, 0)]) + "…" // a wrapped line would break the redraw
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// Redraw is the terminal text that replaces a table of prev lines with the
// board's table (the cursor moved up over it, the rest of the screen
// cleared), and the new table's line count.
func (b *Board) Redraw(prev int, elapsed time.Duration, width int) (string, int) {
	t := b.Table(elapsed, width)
	return Erase(prev) + t, strings.Count(t, "\n")
}

// Erase is the terminal text that removes the last n lines written.
func Erase(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("\x1b[%dA\r\x1b[J", n)
}
