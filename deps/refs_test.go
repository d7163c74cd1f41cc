package deps

import (
	"reflect"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

var testLock = &Lock{
	SGLangCommit:   "cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6",
	MegatronCommit: "37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
}

func TestResolve(t *testing.T) {
	const sgl, meg = "cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6", "37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"
	defaultSGL := Ref{Ref: "sglang-miles", Fetch: "sglang-miles", Source: FromDefault}
	defaultMeg := Ref{Ref: "miles-main", Fetch: "miles-main", Source: FromDefault}
	baked := Ref{Source: FromBaked}
	tests := []struct {
		name    string
		in      Inputs
		want    Decision
		wantErr string
	}{
		// CPU and CUDA precedence: input > directive > lockfile > default.
		{name: "cuda defaults", in: Inputs{Backend: policy.CUDA},
			want: Decision{Install: true, SGLang: defaultSGL, Megatron: defaultMeg}},
		{name: "cpu defaults", in: Inputs{Backend: policy.CPU},
			want: Decision{Install: true, SGLang: defaultSGL, Megatron: defaultMeg}},
		{name: "cuda lockfile beats default", in: Inputs{Backend: policy.CUDA, Lock: testLock},
			want: Decision{Install: true,
				SGLang:   Ref{Ref: sgl, Fetch: sgl, Source: FromLockfile},
				Megatron: Ref{Ref: meg, Fetch: meg, Source: FromLockfile}}},
		{name: "cuda directive beats lockfile", in: Inputs{Backend: policy.CUDA, Lock: testLock,
			PRBody: "ci-sglang-pr: #1234\n"},
			want: Decision{Install: true,
				SGLang:   Ref{Ref: "#1234", Fetch: "refs/pull/1234/head", Source: FromPRBody, Line: 1},
				Megatron: Ref{Ref: meg, Fetch: meg, Source: FromLockfile}}},
		{name: "cpu input beats directive", in: Inputs{Backend: policy.CPU, Lock: testLock,
			PRBody: "x\nci-megatron-pr: #82", MegatronInput: "miles-dev"},
			want: Decision{Install: true,
				SGLang:   Ref{Ref: sgl, Fetch: sgl, Source: FromLockfile},
				Megatron: Ref{Ref: "miles-dev", Fetch: "miles-dev", Source: FromInput}}},
		{name: "cuda input #N", in: Inputs{Backend: policy.CUDA, SGLangInput: "#27110"},
			want: Decision{Install: true,
				SGLang:   Ref{Ref: "#27110", Fetch: "refs/pull/27110/head", Source: FromInput},
				Megatron: defaultMeg}},
		// ROCm: install only when named, the unnamed side stays baked.
		{name: "rocm nothing named keeps both baked", in: Inputs{Backend: policy.ROCM, Lock: testLock, PRBody: "no directives"},
			want: Decision{Install: false, SGLang: baked, Megatron: baked}},
		{name: "rocm sglang directive only", in: Inputs{Backend: policy.ROCM,
			PRBody: "ci-sglang-pr: c447264eba460045e6e961fd7cf1bfbaf038db6b"},
			want: Decision{Install: true,
				SGLang: Ref{Ref: "c447264eba460045e6e961fd7cf1bfbaf038db6b", Fetch: "c447264eba460045e6e961fd7cf1bfbaf038db6b",
					Source: FromPRBody, Line: 1},
				Megatron: baked}},
		{name: "rocm megatron input only ignores lockfile", in: Inputs{Backend: policy.ROCM, Lock: testLock, MegatronInput: "#82"},
			want: Decision{Install: true, SGLang: baked,
				Megatron: Ref{Ref: "#82", Fetch: "refs/pull/82/head", Source: FromInput}}},
		{name: "rocm both named", in: Inputs{Backend: policy.ROCM, SGLangInput: "sglang-miles", PRBody: "ci-megatron-pr: miles-main"},
			want: Decision{Install: true,
				SGLang:   Ref{Ref: "sglang-miles", Fetch: "sglang-miles", Source: FromInput},
				Megatron: Ref{Ref: "miles-main", Fetch: "miles-main", Source: FromPRBody, Line: 1}}},
		// Warnings.
		{name: "repeated directive warns, first wins", in: Inputs{Backend: policy.CUDA,
			PRBody: "ci-sglang-pr: a\nci-sglang-pr: a\nci-sglang-pr: b\n"},
			want: Decision{Install: true, Megatron: defaultMeg,
				SGLang:   Ref{Ref: "a", Fetch: "a", Source: FromPRBody, Line: 1},
				Warnings: []string{"pr-body line 3: ci-sglang-pr: b is ignored; line 1 already set a (the first directive wins; remove the other line)"}}},
		{name: "shadowed invalid directive warns", in: Inputs{Backend: policy.CUDA, SGLangInput: "sglang-miles",
			PRBody: "ci-sglang-pr: a..b"},
			want: Decision{Install: true, Megatron: defaultMeg,
				SGLang:   Ref{Ref: "sglang-miles", Fetch: "sglang-miles", Source: FromInput},
				Warnings: []string{`pr-body line 1: ci-sglang-pr: value "a..b" contains '..', which git does not allow in a ref name; it is ignored because the dispatch input ci_sglang_pr wins, but fix the line`}}},
		// Errors name the source and line and show an example.
		{name: "invalid directive", in: Inputs{Backend: policy.CUDA, PRBody: "hi\n\nci-megatron-pr: ../../etc/passwd\n"},
			wantErr: `pr-body line 3: ci-megatron-pr: value "../../etc/passwd" is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -; write a branch, tag, commit or PR number, e.g. "ci-megatron-pr: #1234" or "ci-megatron-pr: miles-main"`},
		{name: "invalid directive on rocm", in: Inputs{Backend: policy.ROCM, PRBody: "ci-sglang-pr: feature/"},
			wantErr: `pr-body line 1: ci-sglang-pr: value "feature/" ends with '/', which git does not allow in a ref name; write a branch, tag, commit or PR number, e.g. "ci-sglang-pr: #1234" or "ci-sglang-pr: sglang-miles"`},
		{name: "option-like input", in: Inputs{Backend: policy.CUDA, SGLangInput: "--upload-pack=x"},
			wantErr: `dispatch input ci_sglang_pr: value "--upload-pack=x" starts with '-', which git would read as an option; give a branch, tag, commit or PR number, e.g. ci_sglang_pr=#1234 or ci_sglang_pr=sglang-miles`},
		{name: "lock suffix input", in: Inputs{Backend: policy.ROCM, MegatronInput: "main.lock"},
			wantErr: `dispatch input ci_megatron_pr: value "main.lock" has a path component ending in '.lock', which git does not allow in a ref name; give a branch, tag, commit or PR number, e.g. ci_megatron_pr=#1234 or ci_megatron_pr=miles-main`},
		{name: "unknown backend", in: Inputs{Backend: "tpu"},
			wantErr: `unknown backend "tpu" for dependency refs; use cpu, cuda or rocm`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.in)
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != "" {
				return
			}
			if tt.want.Warnings == nil {
				tt.want.Warnings = []string{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("wanted %+v, got %+v", tt.want, got)
			}
		})
	}
}

func TestResolveTestdata(t *testing.T) {
	tests := []struct {
		file    string
		backend policy.Backend
		sglang  string
		meg     string
		install bool
		warns   int
		wantErr string
	}{
		{file: "example-line.md", backend: policy.CUDA, sglang: "refs/pull/1234/head", meg: "miles-main", install: true},
		{file: "example-line.md", backend: policy.ROCM, sglang: "refs/pull/1234/head", meg: "", install: true},
		{file: "directive-in-prose.md", backend: policy.CUDA, sglang: "sglang-miles", meg: "miles-main", install: true},
		{file: "directive-in-prose.md", backend: policy.ROCM, install: false},
		{file: "fenced-text-block.md", backend: policy.CPU, sglang: "tom/refactor-miles-repo-sglang/deliver-2", meg: "refs/pull/82/head", install: true},
		{file: "crlf.md", backend: policy.ROCM, sglang: "sglang-miles", meg: "2e64d788b1c4a0f9e8d7c6b5a4f3e2d1c0b9a8f7", install: true},
		{file: "duplicate.md", backend: policy.CUDA, sglang: "c447264eba460045e6e961fd7cf1bfbaf038db6b", meg: "miles-main", install: true, warns: 1},
		{file: "empty.md", backend: policy.ROCM, install: false},
		{file: "invalid-value.md", backend: policy.CUDA,
			wantErr: `pr-body line 5: ci-megatron-pr: value "../../etc/passwd" is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -; write a branch, tag, commit or PR number, e.g. "ci-megatron-pr: #1234" or "ci-megatron-pr: miles-main"`},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+string(tt.backend), func(t *testing.T) {
			got, err := Resolve(Inputs{Backend: tt.backend, PRBody: readBody(t, tt.file)})
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != "" {
				return
			}
			if got.SGLang.Fetch != tt.sglang || got.Megatron.Fetch != tt.meg || got.Install != tt.install || len(got.Warnings) != tt.warns {
				t.Errorf("wanted sglang %q megatron %q install %v warnings %d, got %+v", tt.sglang, tt.meg, tt.install, tt.warns, got)
			}
		})
	}
}

func TestRefOrigin(t *testing.T) {
	tests := []struct {
		ref  Ref
		want string
	}{
		{Ref{Source: FromPRBody, Line: 3}, "pr-body line 3"},
		{Ref{Source: FromLockfile}, "lockfile"},
		{Ref{Source: FromBaked}, "baked"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.ref.Origin(); got != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, got)
			}
		})
	}
}

func TestNeedsROCmPatchAndSyncSteps(t *testing.T) {
	named := Decision{Install: true, Megatron: Ref{Ref: "#82", Fetch: "refs/pull/82/head", Source: FromPRBody, Line: 1}, SGLang: Ref{Source: FromBaked}}
	tests := []struct {
		name    string
		backend policy.Backend
		d       Decision
		want    bool
	}{
		{"rocm named megatron", policy.ROCM, named, true},
		{"rocm baked megatron", policy.ROCM, Decision{Megatron: Ref{Source: FromBaked}}, false},
		{"cuda never", policy.CUDA, named, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NeedsROCmPatch(tt.backend, tt.d); got != tt.want {
				t.Errorf("wanted %v, got %v", tt.want, got)
			}
		})
	}
	want := [][]string{
		{"git", "reset", "--hard", "HEAD"},
		{"git", "clean", "-fd"},
		{"git", "fetch", "origin", "refs/pull/82/head"},
		{"git", "checkout", "-f", "FETCH_HEAD"},
	}
	if got := SyncSteps(named.Megatron); !reflect.DeepEqual(got, want) {
		t.Errorf("wanted %q, got %q", want, got)
	}
	if got := SyncSteps(named.SGLang); got != nil {
		t.Errorf("baked: wanted no steps, got %q", got)
	}
}
