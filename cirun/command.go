package cirun

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
	// TestFile is --test-file: one file of the suite (a B200 pool job).
	TestFile string
}

// ParseRunSuite reads an evaluated run_suite.py command line (through
// policy.ParseRunSuiteCommand, the one reader of such a line) into its typed
// flags.
func ParseRunSuite(cmd string) (RunSuiteArgs, error) {
	c, err := policy.ParseRunSuiteCommand(cmd)
	if err != nil {
		return RunSuiteArgs{}, fmt.Errorf("its command cannot be read: %v: %q", err, cmd)
	}
	if !c.Found {
		return RunSuiteArgs{}, fmt.Errorf("its command runs no tests/ci/run_suite.py: %q", cmd)
	}
	var a RunSuiteArgs
	id, size := -1, -1
	for _, f := range c.Flags {
		value := func() (string, error) {
			if len(f.Values) == 0 {
				return "", fmt.Errorf("run_suite.py %s needs a value in %q", f.Name, cmd)
			}
			return f.Values[0], nil
		}
		var err error
		var v string
		switch f.Name {
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
					err = fmt.Errorf("run_suite.py %s %s is not a shard number", f.Name, v)
				} else if f.Name == "--auto-partition-id" {
					id = n
				} else {
					size = n
				}
			}
		case "--labels":
			a.Labels = f.Values
		case "--match-all-labels":
			a.MatchAllLabels = true
		case "--test-file":
			a.TestFile, err = value()
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

// ParsePoolPlan reads the pool planner's step, its expressions evaluated:
// the b200_plan command line (its lines joined where they end in a
// backslash) as a pool request. --suites with no suite plans none, as
// b200_plan.py's nargs="*" does.
func ParsePoolPlan(script string) (policy.PoolRequest, error) {
	joined := strings.ReplaceAll(script, "\\\n", " ")
	var line string
	for _, l := range strings.Split(joined, "\n") {
		if strings.Contains(l, poolPlanner) {
			line = l
			break
		}
	}
	words := strings.Fields(line)
	start := -1
	for i, w := range words {
		if w == poolPlanner {
			start = i
		}
	}
	if start < 0 {
		return policy.PoolRequest{}, fmt.Errorf("its step runs no python -m %s: %q", poolPlanner, script)
	}
	req := policy.PoolRequest{Cadence: policy.Regular, Suites: []string{}}
	suites := false
	list := func(i *int) []string {
		out := []string{}
		for *i+1 < len(words) && !strings.HasPrefix(words[*i+1], "--") {
			*i++
			out = append(out, words[*i])
		}
		return out
	}
	for i := start + 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "--cadence":
			v := list(&i)
			if len(v) != 1 {
				return policy.PoolRequest{}, fmt.Errorf("%s --cadence needs one value in %q", poolPlanner, line)
			}
			c, err := policy.ParseCadence(v[0])
			if err != nil {
				return policy.PoolRequest{}, fmt.Errorf("%s --cadence: %w", poolPlanner, err)
			}
			req.Cadence = c
		case "--labels":
			req.Labels = list(&i)
		case "--suites":
			req.Suites, suites = list(&i), true
		case "--match-all-labels":
			req.MatchAllLabels = true
		case "--source-root":
			list(&i)
		default:
			return policy.PoolRequest{}, fmt.Errorf("%s: unknown argument %s in %q; miles-ci reads --cadence, --labels, --suites, --match-all-labels and --source-root", poolPlanner, w, line)
		}
	}
	if !suites {
		return policy.PoolRequest{}, fmt.Errorf("%s needs --suites (b200_plan.py requires it): %q", poolPlanner, line)
	}
	return req, nil
}
