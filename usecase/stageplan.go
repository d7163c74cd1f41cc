package usecase

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
)

// plannings counts the stage plannings of this process (planStage and
// PlanFile calls): the module's tests count the plans of one chain with it.
var plannings atomic.Int64

// Plannings is how many times this process has planned a stage or a file
// run (read the checkout's tables and registry for one).
func Plannings() int64 { return plannings.Load() }

// CountPlanning counts one planning made outside this package (a ci run's
// B200 pool, planned once for all its files).
func CountPlanning() { plannings.Add(1) }

// StagePlan is a stage planned once for every shard: what the module's stage
// keeps (Encode) so that its shard, plan, spec and test plan nothing again.
type StagePlan struct {
	// Stage is the roster entry of the stage.
	Stage policy.Stage `json:"stage"`
	// Count is the stage's shard count under the run's cadence (0 or 1: unsharded).
	Count int `json:"count"`
	// Shards are the requests of every shard, in order (one when unsharded).
	Shards []stagerun.Request `json:"-"`
	// Wire is Shards as Encode writes them.
	Wire []wireRequest `json:"shards"`
}

// PlanStage plans every shard of the stage in.Stage at once (in.Shard is
// ignored).
func PlanStage(in Inputs) (StagePlan, error) {
	var p StagePlan
	count, reqs, err := planStage(in, func(st policy.Stage, shards int) ([]int, error) {
		p.Stage = st
		ids := make([]int, max(shards, 1))
		for i := range ids {
			ids[i] = i
		}
		return ids, nil
	})
	if err != nil {
		return StagePlan{}, err
	}
	p.Count, p.Shards = count, reqs
	return p, nil
}

// Shard is the request of shard n, numbered as every output prints it
// (shard 2/4 is 2), checked against the stage's shard count as Stage checks it.
func (p StagePlan) Shard(n int) (stagerun.Request, error) {
	if err := CheckShard(p.Stage, p.Count, &n); err != nil {
		return stagerun.Request{}, err
	}
	return p.Shards[n-1], nil
}

// Plans are miles-ci's plans of every shard; a checkout miles-ci cannot plan
// offline has none (the error says why).
func (p StagePlan) Plans() ([]*policy.Plan, error) {
	var out []*policy.Plan
	for _, r := range p.Shards {
		if r.PlanUnavailable != "" {
			return nil, errors.New(r.PlanUnavailable)
		}
		out = append(out, r.Plan)
	}
	return out, nil
}

// Encode is the plan as a string for an object's field; DecodeStagePlan reads it back.
func (p StagePlan) Encode() (string, error) {
	p.Wire = nil
	for _, r := range p.Shards {
		p.Wire = append(p.Wire, toWire(r))
	}
	return encodeJSON(p)
}

// DecodeStagePlan reads a StagePlan that Encode wrote.
func DecodeStagePlan(s string) (StagePlan, error) {
	var p StagePlan
	if err := decodeJSON(s, &p); err != nil {
		return p, err
	}
	for _, w := range p.Wire {
		p.Shards = append(p.Shards, w.request())
	}
	p.Wire = nil
	return p, nil
}

// PlanFile builds the request of a single-file run (File), as a string for an
// object's field; DecodeRequest reads it back.
func PlanFile(in Inputs) (stagerun.Request, string, error) {
	req, err := File(in)
	if err != nil {
		return req, "", err
	}
	s, err := encodeJSON(toWire(req))
	return req, s, err
}

// DecodeRequest reads a request that PlanFile encoded.
func DecodeRequest(s string) (stagerun.Request, error) {
	var w wireRequest
	err := decodeJSON(s, &w)
	return w.request(), err
}

// wireRequest is a request as an object's field holds it: its JSON, and
// the fields miles-ci's --json output leaves out (tagged "-"), so that the
// request read back is the one built (TestPlanStageIsStage holds the two equal).
type wireRequest struct {
	Request stagerun.Request `json:"request"`
	// Implicit is, for each enabled test of the plan, whether it is
	// registered by convention (policy.PlannedTest.Implicit).
	Implicit       []bool         `json:"implicit"`
	BypassFastfail bool           `json:"bypass_fastfail"`
	Warnings       []string       `json:"warnings"`
	Unmodeled      []policy.Drift `json:"unmodeled"`
}

func toWire(r stagerun.Request) wireRequest {
	w := wireRequest{Request: r, Unmodeled: r.Steps.Unmodeled}
	if p := r.Plan; p != nil {
		w.BypassFastfail, w.Warnings = p.BypassFastfail, p.Warnings
		for _, t := range p.Enabled {
			w.Implicit = append(w.Implicit, t.Implicit)
		}
	}
	return w
}

func (w wireRequest) request() stagerun.Request {
	r := w.Request
	r.Steps.Unmodeled = w.Unmodeled
	if p := r.Plan; p != nil {
		p.BypassFastfail, p.Warnings = w.BypassFastfail, w.Warnings
		for i := range p.Enabled {
			if i < len(w.Implicit) {
				p.Enabled[i].Implicit = w.Implicit[i]
			}
		}
	}
	return r
}

func encodeJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func decodeJSON(s string, v any) error {
	if s == "" {
		return errors.New("no planned request: the object was not built by its parent's call")
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("reading the planned request back: %w", err)
	}
	return nil
}

// The bounds of a stage run's --timeout-minutes: at least a minute, at most
// five days, when GitHub Actions ends a self-hosted job (and the most
// seconds the runtime history takes for one attempt, estimate.MaxSeconds).
const (
	MinTimeoutMinutes = 1
	MaxTimeoutMinutes = 5 * 24 * 60
)

// CheckTimeoutMinutes checks a stage run's --timeout-minutes; 0 is none (the
// stage job's own), as the module's optional argument leaves it.
func CheckTimeoutMinutes(n int) error {
	if n != 0 && (n < MinTimeoutMinutes || n > MaxTimeoutMinutes) {
		return fmt.Errorf("--timeout-minutes must be in %d..%d, got %d", MinTimeoutMinutes, MaxTimeoutMinutes, n)
	}
	return nil
}
