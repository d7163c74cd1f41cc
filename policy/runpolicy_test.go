package policy

import (
	"reflect"
	"slices"
	"testing"
)

func TestResolveRunPolicy(t *testing.T) {
	all := builtin.sortedKnownLabels()
	nightlyScope := without(all, "long", "ft-long")
	imageScope := without(all, "long", "ft-short", "ft-long")
	tests := []struct {
		name     string
		cadence  Cadence
		raw      []string
		matchAll bool
		include  []string
		admit    bool
		bypass   bool
		baseline bool
		warnings int
	}{
		{name: "regular, no labels", cadence: Regular, include: []string{}},
		{name: "regular requests", cadence: Regular, raw: []string{"run-ci-megatron", "run-ci-fsdp"}, include: []string{"fsdp", "megatron"}},
		{name: "unknown run-ci label ignored", cadence: Regular, raw: []string{"run-ci-h200", "run-ci-megatron"}, include: []string{"megatron"}},
		{name: "label without prefix warns", cadence: Regular, raw: []string{"megatron", "run-ci-lora"}, include: []string{"lora"}, warnings: 1},
		{name: "workflow-only labels are silent", cadence: Regular, raw: []string{"bypass-fastfail", ""}, include: []string{}, bypass: true},
		{name: "run-ci-all", cadence: Regular, raw: []string{"run-ci-all"}, include: all},
		{name: "run-ci-image", cadence: Regular, raw: []string{"run-ci-image"}, include: imageScope},
		{name: "run-ci-image plus explicit long", cadence: Regular, raw: []string{"run-ci-image", "run-ci-long"}, include: union(imageScope, []string{"long"})},
		{name: "nightly", cadence: Nightly, raw: []string{"nightly"}, include: nightlyScope, admit: true, bypass: true, baseline: true},
		{name: "nightly beats run-ci-image", cadence: Nightly, raw: []string{"run-ci-image"}, include: nightlyScope, admit: true, bypass: true, baseline: true},
		{name: "run-ci-all beats nightly", cadence: Nightly, raw: []string{"run-ci-all"}, include: all, admit: true, bypass: true, baseline: true},
		{name: "weekly", cadence: Weekly, include: all, admit: true, bypass: true, baseline: true},
		{name: "release never writes baseline", cadence: Release, include: all, admit: true, bypass: true},
		{name: "match-all-labels", cadence: Regular, matchAll: true, include: all},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ResolveRunPolicy(tc.cadence, tc.raw, tc.matchAll)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.IncludeLabels, tc.include) {
				t.Errorf("include: wanted %v, got %v", tc.include, p.IncludeLabels)
			}
			if p.AdmitNightly != tc.admit || p.BypassFastfail != tc.bypass || p.WriteBaseline != tc.baseline {
				t.Errorf("wanted admit=%t bypass=%t baseline=%t, got %t %t %t", tc.admit, tc.bypass, tc.baseline, p.AdmitNightly, p.BypassFastfail, p.WriteBaseline)
			}
			if len(p.Warnings) != tc.warnings {
				t.Errorf("wanted %d warnings, got %q", tc.warnings, p.Warnings)
			}
		})
	}
}

func TestResolveRunPolicyErrors(t *testing.T) {
	tests := []struct {
		cadence Cadence
		raw     []string
		want    string
	}{
		{"hourly", nil, "Unknown CI cadence 'hourly'; expected one of ['nightly', 'regular', 'release', 'weekly']"},
		{Regular, []string{"nightly"}, "The nightly workflow label requires cadence='nightly' (got 'regular'); drop the nightly label or pass --cadence nightly"},
		{Weekly, []string{"nightly"}, "The nightly workflow label requires cadence='nightly' (got 'weekly'); drop the nightly label or pass --cadence nightly"},
	}
	for _, tc := range tests {
		_, err := ResolveRunPolicy(tc.cadence, tc.raw, false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %v: wanted %q, got %v", tc.cadence, tc.raw, tc.want, err)
		}
	}
}

func reason(s string) *string { return &s }

func TestSelect(t *testing.T) {
	regs := []Registration{
		{File: "a", Backend: CUDA, Suite: "stage-c-2-gpu-h200", Labels: []string{"megatron"}},
		{File: "b", Backend: CUDA, Suite: "stage-c-2-gpu-h200", Labels: []string{"long"}},
		{File: "c", Backend: CUDA, Suite: "stage-c-2-gpu-h200", Labels: []string{"long", "sglang"}},
		{File: "d", Backend: CUDA, Suite: "stage-c-2-gpu-h200", Labels: []string{"megatron"}, Nightly: true},
		{File: "e", Backend: CUDA, Suite: "stage-c-2-gpu-h200", Labels: []string{"megatron"}, Disabled: reason("flaky")},
		{File: "f", Backend: CUDA, Suite: "stage-c-4-gpu-h200", Labels: []string{"megatron"}},
		{File: "g", Backend: ROCM, Suite: "stage-c-2-gpu-h200", Labels: []string{"megatron"}},
		{File: "h", Backend: CUDA, Suite: "stage-c-2-gpu-h200", Labels: []string{"fsdp"}, Disabled: reason("")},
	}
	files := func(rs []Registration) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.File)
		}
		return out
	}
	tests := []struct {
		name             string
		cadence          Cadence
		raw              []string
		enabled, skipped []string
	}{
		{"megatron only", Regular, []string{"run-ci-megatron"}, []string{"a"}, []string{"e"}},
		{"nothing requested", Regular, nil, []string{}, []string{}},
		{"a subtracted label is no veto", Nightly, []string{"nightly"}, []string{"a", "c", "d"}, []string{"e", "h"}},
		{"weekly selects all", Weekly, nil, []string{"a", "b", "c", "d"}, []string{"e", "h"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ResolveRunPolicy(tc.cadence, tc.raw, false)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Select(regs, CUDA, "stage-c-2-gpu-h200", p)
			if err != nil {
				t.Fatal(err)
			}
			if got := files(s.Enabled); !slices.Equal(got, tc.enabled) {
				t.Errorf("enabled: wanted %v, got %v", tc.enabled, got)
			}
			if got := files(s.Skipped); !slices.Equal(got, tc.skipped) {
				t.Errorf("skipped: wanted %v, got %v", tc.skipped, got)
			}
		})
	}
	if _, err := Select(regs, CPU, "stage-c-2-gpu-h200", RunPolicy{}); err == nil || err.Error() != "Unknown suite stage-c-2-gpu-h200 for backend CPU; the cpu suites are stage-a-cpu, stage-b-cpu" {
		t.Errorf("wanted the unknown-suite error, got %v", err)
	}
}
