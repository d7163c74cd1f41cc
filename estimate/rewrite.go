package estimate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy"
)

// Change is one est_time literal the calibration replaces.
type Change struct {
	TestPath string  `json:"test_path"`
	Suite    string  `json:"suite"`
	Backend  string  `json:"backend"`
	Old      float64 `json:"old_est_time"`
	New      int     `json:"new_est_time"`
	Estimate
}

// Scope is which registrations the calibration may edit: Miles' is the
// active CUDA registrations under tests/e2e/ (DefaultScope); more backends
// are miles-ci's extension, asked for explicitly.
type Scope struct {
	Backends []policy.Backend
}

// DefaultScope is Miles' scope: CUDA only.
var DefaultScope = Scope{Backends: []policy.Backend{policy.CUDA}}

// e2eRoot is the only folder whose registrations are calibrated.
const e2eRoot = "tests/e2e/"

// BackendName is a backend as Miles' table spells it (HWBackend.name).
func BackendName(b policy.Backend) string { return strings.ToUpper(string(b)) }

func (s Scope) active(r policy.Registration) bool {
	return slices.Contains(s.Backends, r.Backend) && r.Disabled == nil && !r.Implicit
}

// identity is a registration's runtime identity.
func identity(r policy.Registration) Identity {
	return Identity{TestPath: r.File, Backend: BackendName(r.Backend), Suite: r.Suite}
}

// Targets are the files to edit, sorted, and the estimates of their active
// registrations in scope under tests/e2e/ (update_est_time.py's eligible
// estimates; RewriteFile takes only these). Two active registrations with
// one identity are an error (its _active_cuda_e2e_registrations).
func Targets(regs []policy.Registration, estimates map[Identity]Estimate, scope Scope) (files []string, eligible map[Identity]Estimate, err error) {
	seen := map[Identity]bool{}
	byFile := map[string]bool{}
	eligible = map[Identity]Estimate{}
	for _, r := range regs {
		if !scope.active(r) || !strings.HasPrefix(r.File, e2eRoot) {
			continue
		}
		id := identity(r)
		if seen[id] {
			return nil, nil, fmt.Errorf("duplicate active %s CI runtime identity: %s suite %s is registered twice; remove or disable one registration", id.Backend, id.TestPath, id.Suite)
		}
		seen[id] = true
		if e, ok := estimates[id]; ok {
			byFile[r.File] = true
			eligible[id] = e
		}
	}
	for f := range byFile {
		files = append(files, f)
	}
	slices.Sort(files)
	return files, eligible, nil
}

// RewriteFile replaces, in one file's bytes, the est_time literal of each
// active registration in scope whose estimate differs from it, and leaves
// every other byte as it was. sites are the file's registrations in call
// order (policy.Tables.EstTimeSites); estimates are Targets' eligible ones.
// A literal that spans lines is an error, as is an estimate of the file
// with no single active registration.
func RewriteFile(rel string, src []byte, sites []policy.EstTimeSite, estimates map[Identity]Estimate, scope Scope) ([]byte, []Change, error) {
	var targets []Identity
	for id := range estimates {
		if id.TestPath == rel && slices.ContainsFunc(scope.Backends, func(b policy.Backend) bool { return BackendName(b) == id.Backend }) {
			targets = append(targets, id)
		}
	}
	slices.SortFunc(targets, func(a, b Identity) int { return strings.Compare(a.Backend+"\x00"+a.Suite, b.Backend+"\x00"+b.Suite) })
	for _, id := range targets {
		n := 0
		for _, s := range sites {
			if scope.active(s.Registration) && identity(s.Registration) == id {
				n++
			}
		}
		if n != 1 {
			return nil, nil, fmt.Errorf("%s: expected exactly one active %s registration for suite %s; found %d", rel, id.Backend, id.Suite, n)
		}
	}
	var changes []Change
	var edits []policy.EstTimeSite
	for _, s := range sites {
		if !scope.active(s.Registration) {
			continue
		}
		est, ok := estimates[identity(s.Registration)]
		if !ok || s.EstTime == float64(est.EstTime) {
			continue
		}
		if s.MultiLine {
			return nil, nil, fmt.Errorf("%s:%d: est_time literal spans multiple lines; write it on one line", rel, s.Line)
		}
		edits = append(edits, s)
		changes = append(changes, Change{TestPath: rel, Suite: s.Suite, Backend: BackendName(s.Backend), Old: s.EstTime, New: est.EstTime, Estimate: est})
	}
	out := slices.Clone(src)
	// From the last edit to the first, so each offset still holds.
	for i := len(edits) - 1; i >= 0; i-- {
		out = slices.Concat(out[:edits[i].Start], []byte(strconv.Itoa(changes[i].New)), out[edits[i].End:])
	}
	return out, changes, nil
}
