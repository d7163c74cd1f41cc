package graph

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy"
)

// RunSuiteArgs are the flags of a stage job's run_suite.py command, as its
// execute_command reads once its expressions are evaluated.
type RunSuiteArgs struct {
	HW             policy.Backend
	Suite, Cadence string
	Labels         []string
	MatchAllLabels bool
	Partition      *policy.Partition
}

// ParseRunSuite reads an evaluated run_suite.py command line.
func ParseRunSuite(cmd string) (RunSuiteArgs, error) {
	words := strings.Fields(cmd)
	start := -1
	for i, w := range words {
		if strings.HasSuffix(w, "run_suite.py") {
			start = i
			break
		}
	}
	if start < 0 {
		return RunSuiteArgs{}, fmt.Errorf("its command runs no tests/ci/run_suite.py: %q", cmd)
	}
	var a RunSuiteArgs
	id, size := -1, -1
	for i := start + 1; i < len(words); i++ {
		w := words[i]
		value := func() (string, error) {
			if i+1 >= len(words) || strings.HasPrefix(words[i+1], "--") {
				return "", fmt.Errorf("run_suite.py %s needs a value in %q", w, cmd)
			}
			i++
			return words[i], nil
		}
		var err error
		var v string
		switch w {
		case "--hw":
			if v, err = value(); err == nil {
				a.HW, err = policy.ParseBackend(v)
			}
		case "--suite":
			a.Suite, err = value()
		case "--cadence":
			a.Cadence, err = value()
		case "--auto-partition-id", "--auto-partition-size":
			if v, err = value(); err == nil {
				n, cerr := strconv.Atoi(v)
				if cerr != nil || n < 0 || n > policy.MaxShards {
					err = fmt.Errorf("run_suite.py %s %s is not a shard number", w, v)
				} else if w == "--auto-partition-id" {
					id = n
				} else {
					size = n
				}
			}
		case "--labels":
			a.Labels = []string{}
			for i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
				i++
				a.Labels = append(a.Labels, words[i])
			}
		case "--match-all-labels":
			a.MatchAllLabels = true
		}
		if err != nil {
			return RunSuiteArgs{}, err
		}
	}
	if a.Suite == "" || a.HW == "" {
		return RunSuiteArgs{}, fmt.Errorf("its run_suite.py command names no --hw and --suite: %q", cmd)
	}
	if (id < 0) != (size < 0) {
		return RunSuiteArgs{}, fmt.Errorf("its run_suite.py command gives only one of --auto-partition-id and --auto-partition-size: %q", cmd)
	}
	if size > 1 {
		if id >= size {
			return RunSuiteArgs{}, fmt.Errorf("its run_suite.py command runs shard %d of %d: %q", id, size, cmd)
		}
		a.Partition = &policy.Partition{ID: id, Size: size}
	}
	return a, nil
}

// PlanRequest is the plan the command asks for.
func (a RunSuiteArgs) PlanRequest() policy.PlanRequest {
	c := policy.Cadence(a.Cadence)
	if c == "" {
		c = policy.Regular
	}
	return policy.PlanRequest{HW: a.HW, Suite: a.Suite, Cadence: c, Labels: a.Labels, MatchAllLabels: a.MatchAllLabels, Partition: a.Partition}
}
