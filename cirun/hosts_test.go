package cirun

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/hostgpu"
	"github.com/radixark/miles-ci/policy"
)

// kindsPR is a PR workflow with a stage of each GPU kind of Miles' fleet
// (rules §14.2): H200 2- and 4-GPU stages, the H100 8-GPU stage and the
// MI350 stage, each naming its runners as Miles' jobs do.
const kindsPR = `
on:
  pull_request:
jobs:
  resolve-ci-policy:
    runs-on: ubuntu-latest
    steps:
      - run: python -m tests.ci.ci_policy
  stage-a-cpu:
    needs: [resolve-ci-policy]
    uses: ./.github/workflows/_run-cpu-ci.yml
    with:
      execute_command: python tests/ci/run_suite.py --hw cpu --suite stage-a-cpu
  stage-c-2-gpu-h200:
    needs: [resolve-ci-policy]
    strategy:
      matrix:
        partition_id: [0, 1]
    uses: ./.github/workflows/_run-ci.yml
    with:
      runs_on: '["h200", "2gpu"]'
      execute_command: >-
        python tests/ci/run_suite.py --hw cuda --suite stage-c-2-gpu-h200
        --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size 2
  stage-c-4-gpu-h200:
    needs: [resolve-ci-policy]
    uses: ./.github/workflows/_run-ci.yml
    with:
      runs_on: '["h200", "4gpu"]'
      execute_command: python tests/ci/run_suite.py --hw cuda --suite stage-c-4-gpu-h200
  stage-c-8-gpu-h100:
    needs: [resolve-ci-policy]
    uses: ./.github/workflows/_run-ci.yml
    with:
      runs_on: '["h100", "8gpu"]'
      execute_command: python tests/ci/run_suite.py --hw cuda --suite stage-c-8-gpu-h100
  stage-c-4-gpu-mi350:
    needs: [resolve-ci-policy]
    uses: ./.github/workflows/_run-ci-rocm.yml
    with:
      execute_command: python tests/ci/run_suite.py --hw rocm --suite stage-c-4-gpu-mi350
`

func kindsRoster() []policy.Stage {
	return []policy.Stage{
		{Name: "stage-a-cpu", Job: "stage-a-cpu", Backend: policy.CPU, RunsOn: []string{"ubuntu-latest"}, Shards: 1, MaxParallel: 1},
		{Name: "stage-c-2-gpu-h200", Job: "stage-c-2-gpu-h200", Backend: policy.CUDA, RunsOn: []string{"h200", "2gpu"}, Shards: 2, MaxParallel: 2},
		{Name: "stage-c-4-gpu-h200", Job: "stage-c-4-gpu-h200", Backend: policy.CUDA, RunsOn: []string{"h200", "4gpu"}, Shards: 1, MaxParallel: 1},
		{Name: "stage-c-8-gpu-h100", Job: "stage-c-8-gpu-h100", Backend: policy.CUDA, RunsOn: []string{"h100", "8gpu"}, Shards: 1, MaxParallel: 1},
		{Name: "stage-c-4-gpu-mi350", Job: "stage-c-4-gpu-mi350", Backend: policy.ROCM, RunsOn: []string{"self-hosted", "amd", "mi350", "4gpu"}, Shards: 1, MaxParallel: 1},
	}
}

func stageModel(st policy.Stage) (string, error) {
	return policy.ModelOfRunsOn(st.Name, st.RunsOn, st.Backend)
}

// hostsFake is an executor that records where each shard ran, and can
// report a host's engine down once.
type hostsFake struct {
	fake
	mu   sync.Mutex
	down map[string]bool
	on   map[string]string
}

func (f *hostsFake) Run(ctx context.Context, u *Unit) Outcome {
	if u.Stage != nil {
		f.mu.Lock()
		if f.on == nil {
			f.on = map[string]string{}
		}
		if f.down[u.Placement.Host] {
			f.mu.Unlock()
			return Outcome{Result: ResultFailure, HostDown: true, Reason: "cannot reach its engine"}
		}
		f.on[u.Node.Key+"/"+fmt.Sprint(u.Shard)] = u.Placement.Host + "[" + u.Placement.Devices.String() + "]" + u.Placement.Substituted
		f.mu.Unlock()
	}
	return f.fake.Run(ctx, u)
}

func runKinds(t *testing.T, f Executor, opt Options) *Report {
	t.Helper()
	g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: parseWorkflows(t, map[string]string{policy.PRTestWorkflow: kindsPR}), Roster: kindsRoster()})
	if err != nil {
		t.Fatal(err)
	}
	opt.StageModel = stageModel
	return Schedule(context.Background(), g, f, opt)
}

func jobByTitle(r *Report) map[string]JobReport {
	out := map[string]JobReport{}
	for _, j := range r.Jobs {
		out[j.Title()] = j
	}
	return out
}

func mustHost(t *testing.T, s string) Host {
	t.Helper()
	h, err := ParseHost(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestShardsRunOnDevicesOfTheirKind(t *testing.T) {
	type want struct {
		state  State
		reason string
		model  string
		subst  string
	}
	tests := []struct {
		name string
		gpus string
		subs []Substitute
		want map[string]want
	}{
		{name: "an 8-GPU H200 host runs the H200 stages only", gpus: "h200:0-7", want: map[string]want{
			"pr-test/stage-c-2-gpu-h200 shard 1/2": {state: Passed, model: "h200"},
			"pr-test/stage-c-4-gpu-h200":           {state: Passed, model: "h200"},
			"pr-test/stage-c-8-gpu-h100":           {state: NotRun, model: "h100", reason: "needs 8 H100 GPUs; this host has 8 H200 (--gpus h200:0-7)"},
			"pr-test/stage-c-4-gpu-mi350":          {state: NotRun, model: "mi350", reason: "needs 4 MI350 GPUs; this host has 8 H200 (--gpus h200:0-7)"},
			"pr-test/stage-a-cpu":                  {state: Passed},
		}},
		{name: "a host of two kinds: each stage on its own half", gpus: "h200:0-3,h100:4-7", want: map[string]want{
			"pr-test/stage-c-4-gpu-h200":  {state: Passed, model: "h200"},
			"pr-test/stage-c-8-gpu-h100":  {state: NotRun, model: "h100", reason: "needs 8 H100 GPUs; this host has 4 H200, 4 H100 (--gpus h200:0-3,h100:4-7)"},
			"pr-test/stage-c-4-gpu-mi350": {state: NotRun, model: "mi350"},
		}},
		{name: "--substitute h100=h200 runs the H100 stage on H200 devices, and says so", gpus: "h200:0-7", subs: []Substitute{{From: "h100", To: "h200"}}, want: map[string]want{
			"pr-test/stage-c-8-gpu-h100":  {state: Passed, model: "h100", subst: "h100=h200"},
			"pr-test/stage-c-4-gpu-h200":  {state: Passed, model: "h200"},
			"pr-test/stage-c-4-gpu-mi350": {state: NotRun, model: "mi350", reason: "needs 4 MI350 GPUs; this host has 8 H200 (--gpus h200:0-7)"},
		}},
		{name: "an MI350 host runs the ROCm stage only", gpus: "mi350:0-3", want: map[string]want{
			"pr-test/stage-c-4-gpu-mi350": {state: Passed, model: "mi350"},
			"pr-test/stage-c-4-gpu-h200":  {state: NotRun, model: "h200", reason: "needs 4 H200 GPUs; this host has 4 MI350 (--gpus mi350:0-3)"},
		}},
		{name: "stand-ins scheduled as on an H200 host", gpus: "none:h200:0-3", want: map[string]want{
			"pr-test/stage-c-4-gpu-h200":  {state: Passed, model: "h200"},
			"pr-test/stage-c-4-gpu-mi350": {state: NotRun, model: "mi350", reason: "needs 4 MI350 GPUs; this host has 4 H200 (--gpus none:h200:0-3)"},
		}},
		{name: "bare ids keep today's meaning: kinds are not checked", gpus: "0-7", want: map[string]want{
			"pr-test/stage-c-4-gpu-mi350": {state: Passed},
			"pr-test/stage-c-8-gpu-h100":  {state: Passed},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &hostsFake{}
			r := runKinds(t, f, Options{Host: mustHost(t, tt.gpus), Substitutes: tt.subs})
			got := jobByTitle(r)
			for title, w := range tt.want {
				j, ok := got[title]
				if !ok {
					t.Fatalf("no job %s in %v", title, states(r))
				}
				if j.State != w.state || (w.reason != "" && j.Reason != w.reason) || string(j.Model) != w.model || j.Substituted != w.subst {
					t.Errorf("%s: wanted %s %q model %q substituted %q, got %s %q model %q substituted %q", title, w.state, w.reason, w.model, w.subst, j.State, j.Reason, j.Model, j.Substituted)
				}
			}
			// No shard ran on a device of another model than its own
			// (or its substitute's).
			h := mustHost(t, tt.gpus)
			for _, j := range r.Jobs {
				for _, d := range j.Devices {
					if m := h.modelOf(d); h.Kinded() && m != j.Model && j.Substituted != string(j.Model)+"="+string(m) {
						t.Errorf("%s (%s) ran on device %s, a %s", j.Title(), j.Model, d, m)
					}
				}
			}
		})
	}
}

// scitix is a fleet modelled on Miles' own (tests/ci/README.md at
// 31f1ca9): scitix-73 split 4+2+2, an H100 host with one runner of all 8
// GPUs, and an MI350 host of two 4-GPU runners that takes no CPU work.
const scitix = `
- name: scitix-73
  gpus: h200:0-7
  runners:
    - {name: 4gpu-0, labels: [h200, 4gpu], gpus: 0-3}
    - {name: 2gpu-0, labels: [h200, 2gpu], gpus: "4,5"}
    - {name: 2gpu-1, labels: [h200, 2gpu], gpus: "6,7"}
- name: novita-host2
  engine: tcp://novita-host2:1234
  gpus: h100:0-7
  runners:
    - {name: all, labels: [h100, 8gpu], gpus: 0-7}
- name: mi350-a
  engine: unix:///run/dagger/mi350.sock
  gpus: mi350:0-7
  cpu: false
  runners:
    - {name: a, labels: [amd, mi350, 4gpu], gpus: 0-3}
    - {name: b, labels: [amd, mi350, 4gpu], gpus: 4-7}
`

func TestFleetPlacesEachShardOnAHostOfItsKind(t *testing.T) {
	hosts, err := ParseHosts("hosts.yml", []byte(scitix), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &hostsFake{}
	r := runKinds(t, f, Options{Hosts: hosts})
	want := map[string]string{
		"pr-test/stage-c-2-gpu-h200/0":  "scitix-73[4,5]",
		"pr-test/stage-c-2-gpu-h200/1":  "scitix-73[6,7]",
		"pr-test/stage-c-4-gpu-h200/0":  "scitix-73[0,1,2,3]",
		"pr-test/stage-c-8-gpu-h100/0":  "novita-host2[0,1,2,3,4,5,6,7]",
		"pr-test/stage-c-4-gpu-mi350/0": "mi350-a[0,1,2,3]",
		"pr-test/stage-a-cpu/0":         "scitix-73[]",
	}
	for k, w := range want {
		if f.on[k] != w {
			t.Errorf("%s: wanted on %s, got %q", k, w, f.on[k])
		}
	}
	if r.ExitStatus() != ExitPassed {
		t.Errorf("wanted every shard to pass, got exit %d: %v", r.ExitStatus(), states(r))
	}
	for _, j := range r.Jobs {
		if j.Stage != "" && j.Host == "" {
			t.Errorf("%s carries no host", j.Title())
		}
	}
}

func TestFleetRunnerLabelsFollowGitHub(t *testing.T) {
	// A 2-GPU job does not take the 4gpu runner: GitHub puts a job on a
	// runner that carries every label of its runs_on.
	hosts, err := ParseHosts("hosts.yml", []byte(`
- name: a
  gpus: h200:0-3
  runners: [{name: r, labels: [h200, 4gpu], gpus: 0-3}]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := runKinds(t, &hostsFake{}, Options{Hosts: hosts})
	j := jobByTitle(r)["pr-test/stage-c-2-gpu-h200 shard 1/2"]
	want := "needs 2 H200 GPUs on a runner labelled h200,2gpu; the hosts have a: 4 H200 (runners r [h200,4gpu] on 0,1,2,3)"
	if j.State != NotRun || j.Reason != want {
		t.Errorf("wanted not-run %q, got %s %q", want, j.State, j.Reason)
	}
}

func TestFleetHostDown(t *testing.T) {
	hosts, err := ParseHosts("hosts.yml", []byte(`
- {name: a, gpus: "h200:0-3"}
- {name: b, gpus: "h200:0-3"}
- {name: c, gpus: "mi350:0-3"}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &hostsFake{down: map[string]bool{"a": true, "c": true}}
	r := runKinds(t, f, Options{Hosts: hosts})
	got := jobByTitle(r)
	for _, title := range []string{"pr-test/stage-c-4-gpu-h200", "pr-test/stage-c-2-gpu-h200 shard 1/2", "pr-test/stage-a-cpu"} {
		if j := got[title]; j.State != Passed || j.Host != "b" {
			t.Errorf("%s: wanted passed on b (a is down), got %s on %q: %s", title, j.State, j.Host, j.Reason)
		}
	}
	mi := got["pr-test/stage-c-4-gpu-mi350"]
	if mi.State != NotRun || !strings.Contains(mi.Reason, "c: 4 MI350 (down: cannot reach its engine)") {
		t.Errorf("the MI350 shard: wanted not-run naming the down host, got %s %q", mi.State, mi.Reason)
	}
	// It never ran on c: it shows no host or devices there.
	if mi.Host != "" || len(mi.Devices) != 0 {
		t.Errorf("the MI350 shard: wanted no host or devices (it never ran), got %q %v", mi.Host, mi.Devices)
	}
}

// lockFake is a host lock in which another process holds some devices
// until released.
type lockFake struct {
	mu    sync.Mutex
	held  map[device.ID]bool
	taken map[device.ID]bool
	tries int
}

func (l *lockFake) TryLease(h Host, devs device.Set) (func(), Held, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tries++
	var busy device.Set
	for _, d := range devs {
		if l.held[d] || l.taken[d] {
			busy = append(busy, d)
		}
	}
	if len(busy) > 0 {
		return nil, Held{Devices: busy, By: "pid 4242 (miles-ci ci) since 13:45:01"}, false, nil
	}
	for _, d := range devs {
		l.taken[d] = true
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, d := range devs {
			delete(l.taken, d)
		}
	}, Held{}, true, nil
}

func TestShardsWaitForDevicesAnotherProcessHolds(t *testing.T) {
	lock := &lockFake{held: map[device.ID]bool{"0": true, "1": true, "2": true}, taken: map[device.ID]bool{}}
	retry := make(chan time.Time)
	var mu sync.Mutex
	var waits []string
	opt := Options{Host: mustHost(t, "none:h200:0-3"), Leaser: lock, Retry: retry, Only: []string{"stage-c-2-gpu-h200"},
		Notify: func(j JobReport) {
			if j.State == Queued && strings.HasPrefix(j.Reason, "waiting") {
				mu.Lock()
				waits = append(waits, j.Reason)
				mu.Unlock()
			}
		}}
	go func() {
		// The other process lets devices 0-2 go a moment later.
		time.Sleep(50 * time.Millisecond)
		lock.mu.Lock()
		clear(lock.held)
		lock.mu.Unlock()
		for range 20 {
			retry <- time.Now()
		}
	}()
	f := &hostsFake{}
	r := runKinds(t, f, opt)
	got := jobByTitle(r)
	for _, title := range []string{"pr-test/stage-c-2-gpu-h200 shard 1/2", "pr-test/stage-c-2-gpu-h200 shard 2/2"} {
		if got[title].State != Passed {
			t.Errorf("%s: wanted passed once the devices were free, got %s %q", title, got[title].State, got[title].Reason)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(waits, "waiting for GPUs 0,1, held by pid 4242 (miles-ci ci) since 13:45:01") {
		t.Errorf("wanted a live line naming the held devices and who holds them, got %q", waits)
	}
	if len(lock.taken) != 0 {
		t.Errorf("wanted every lease let go at the end, got %v held", lock.taken)
	}
}

func TestParseKindedHost(t *testing.T) {
	tests := []struct{ in, want, have, err string }{
		{in: "h200:0-7", want: "h200:0-7", have: "8 H200"},
		{in: "H200:0-3,h100:4-7", want: "h200:0-3,h100:4-7", have: "4 H200, 4 H100"},
		{in: "h200:0,1,2,3", want: "h200:0-3", have: "4 H200"},
		{in: "mi350:0-3", want: "mi350:0-3", have: "4 MI350"},
		{in: "none:h200:0-3", want: "none:h200:0-3", have: "4 H200"},
		{in: "0-3,h100:4-7", err: `--gpus "0-3,h100:4-7": a model is given to some devices only; give one to every device (h200:0-3,h100:4-7) or to none`},
		{in: "h 2:0", err: `--gpus "h 2:0": "h 2" is not a GPU model; write the model as its runner label, such as h200 or mi350`},
		{in: "h200:0-3,h100:3", err: `--gpus "h200:0-3,h100:3": device 3 is named twice`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			h, err := ParseHost(tt.in, nil)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("wanted %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil || h.String() != tt.want || h.Have() != tt.have {
				t.Errorf("wanted %q (%s), got %q (%s), %v", tt.want, tt.have, h.String(), h.Have(), err)
			}
		})
	}
}

func TestParseHostDetected(t *testing.T) {
	h, err := ParseHost("all", func() ([]hostgpu.Device, error) {
		return []hostgpu.Device{{ID: "0", Model: "h200"}, {ID: "1", Model: "h200"}}, nil
	})
	if err != nil || h.String() != "h200:0-1" {
		t.Errorf("wanted the detected kinds h200:0-1, got %q %v", h.String(), err)
	}
	h, err = ParseHost("all", func() ([]hostgpu.Device, error) { return []hostgpu.Device{{ID: "0", Model: "h200"}, {ID: "1"}}, nil })
	if err != nil || h.Kinded() {
		t.Errorf("a device of no known model: wanted bare ids (kinds not checked), got %q %v", h.String(), err)
	}
}

func TestParseHostsErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"not a list", "name: a\n", "hosts.yml: a hosts file is a YAML list of hosts, each with a name and gpus (- name: h200-a\\n  gpus: h200:0-7)"},
		{"empty", "[]\n", "hosts.yml lists no host; give at least one (- name: h200-a\\n  gpus: h200:0-7)"},
		{"a typo", "- {name: a, gpu: h200:0-7}\n", `hosts.yml:1: a host has no key "gpu" (line 1); its keys are name, engine, gpus, cpu, runners`},
		{"no gpus", "- {name: a}\n", "hosts.yml:1 (host a): give its gpus as --gpus takes them (h200:0-7, none:h100:0-7, none)"},
		{"twice", "- {name: a, gpus: none}\n- {name: a, gpus: none}\n", "hosts.yml:2: host a is listed twice; give each host one entry"},
		{"engine", "- {name: a, gpus: none, engine: 'http://x'}\n", `hosts.yml:1 (host a): engine "http://x" is not an address Dagger connects to; give one of unix://, tcp://, docker-container://, podman-container://, kube-pod://, ssh:// followed by the address (tcp://gpu-a:1234)`},
		{"remote all", "- {name: a, gpus: all, engine: 'tcp://x:1'}\n", "hosts.yml:1 (host a): gpus: all reads this machine's GPUs, not those of engine tcp://x:1; give them (h200:0-7)"},
		{"runner device", "- name: a\n  gpus: h200:0-3\n  runners: [{name: r, labels: [h200], gpus: 4-7}]\n", "hosts.yml:1 (host a) runner r: device 4 is not one of the host's gpus (h200:0-3)"},
		{"bad gpus", "- {name: a, gpus: 'x:y'}\n", `hosts.yml:1 (host a): --gpus "x:y": "y" is not a device id (an index such as 0, or a uuid GPU-...); give all, none, ids such as 0,1,2,3, a range such as 0-7, or ids of a kind such as h200:0-7`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHosts("hosts.yml", []byte(tt.text), nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("wanted %q, got %v", tt.want, err)
			}
		})
	}
}

func FuzzParseHosts(f *testing.F) {
	f.Add([]byte(scitix))
	f.Add([]byte("- {name: a, gpus: none:h200:0-3, cpu: false}\n"))
	f.Add([]byte("- &a {name: a, gpus: none}\n- *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		hosts, err := ParseHosts("hosts.yml", data, func() ([]hostgpu.Device, error) { return nil, fmt.Errorf("none") })
		if err != nil {
			return
		}
		for _, h := range hosts {
			if len(h.Devices) > maxHostGPUs || (h.Kinded() && len(h.Models) != len(h.Devices)) {
				t.Fatalf("host %s: %d devices, %d models", h.Name, len(h.Devices), len(h.Models))
			}
			for _, r := range h.Runners {
				for _, d := range r.Devices {
					if !slices.Contains(h.Devices, d) {
						t.Fatalf("runner %s pins %s, not a device of host %s", r.Name, d, h.Name)
					}
				}
			}
		}
	})
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"none", "h200:0-7", "none:h200:0-3,h100:4-7", "0-3,6", "all"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHost(s, func() ([]hostgpu.Device, error) { return []hostgpu.Device{{ID: "0", Model: "h200"}}, nil })
		if err != nil {
			return
		}
		back, err := ParseHost(h.String(), nil)
		if h.String() != "none" && (err != nil || back.String() != h.String()) {
			t.Fatalf("%q: %q does not read back (%q, %v)", s, h.String(), back.String(), err)
		}
	})
}
