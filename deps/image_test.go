package deps

import (
	"testing"

	"github.com/radixark/miles-ci/policy"
)

func TestResolveImage(t *testing.T) {
	body := "intro\nci-image-tag: dev-202611300915\nci-image-tag: other\n"
	tests := []struct {
		name    string
		in      ImageInputs
		want    Image
		wantErr string
	}{
		{name: "cuda default", in: ImageInputs{Backend: policy.CUDA},
			want: Image{Image: "radixark/miles:dev", Tag: "dev", Source: FromDefault}},
		{name: "cpu is the same workflow", in: ImageInputs{Backend: policy.CPU},
			want: Image{Image: "radixark/miles:dev", Tag: "dev", Source: FromDefault}},
		{name: "pr body first line wins", in: ImageInputs{Backend: policy.CUDA, PRBody: body},
			want: Image{Image: "radixark/miles:dev-202611300915", Tag: "dev-202611300915", Source: FromPRBody, Line: 2}},
		{name: "pr image beats pr body", in: ImageInputs{Backend: policy.CUDA, PRBody: body, PRImageAvailable: true, PRNumber: "2674"},
			want: Image{Image: "radixark/miles:pr-2674", Tag: "pr-2674", Source: FromPRImage}},
		{name: "input beats pr image", in: ImageInputs{Backend: policy.CUDA, PRBody: body, PRImageAvailable: true, PRNumber: "2674", InputTag: "dev-1"},
			want: Image{Image: "radixark/miles:dev-1", Tag: "dev-1", Source: FromInput}},
		{name: "called beats input", in: ImageInputs{Backend: policy.CUDA, CalledTag: "release-v0.3.0-ci", InputTag: "dev-1"},
			want: Image{Image: "radixark/miles:release-v0.3.0-ci", Tag: "release-v0.3.0-ci", Source: FromCalled}},
		{name: "pr image without number", in: ImageInputs{Backend: policy.CUDA, PRImageAvailable: true},
			wantErr: `PR image is available but the PR number "" is not a number; pass the pull request number`},
		{name: "full image name in body", in: ImageInputs{Backend: policy.CUDA, PRBody: "ci-image-tag: radixark/miles:dev"},
			wantErr: "ci-image-tag must be a Docker tag, not a full image name: radixark/miles:dev"},
		{name: "full image name as input", in: ImageInputs{Backend: policy.CUDA, InputTag: "docker.io/radixark/miles:dev"},
			wantErr: "ci-image-tag must be a Docker tag, not a full image name: docker.io/radixark/miles:dev"},
		{name: "tag too long", in: ImageInputs{Backend: policy.CUDA, InputTag: "a" + repeat("b", 128)},
			wantErr: "ci-image-tag must be a Docker tag, not a full image name: a" + repeat("b", 128)},
		{name: "tag of 128", in: ImageInputs{Backend: policy.CUDA, InputTag: repeat("b", 128)},
			want: Image{Image: "radixark/miles:" + repeat("b", 128), Tag: repeat("b", 128), Source: FromInput}},
		{name: "leading dash", in: ImageInputs{Backend: policy.CUDA, InputTag: "-dev"},
			wantErr: "ci-image-tag must be a Docker tag, not a full image name: -dev"},
		{name: "rocm default", in: ImageInputs{Backend: policy.ROCM, PRBody: body},
			want: Image{Image: "rocm/sgl-dev:miles-rocm720-mi35x", Tag: "miles-rocm720-mi35x", Source: FromDefault}},
		{name: "rocm input", in: ImageInputs{Backend: policy.ROCM, InputTag: "miles-rocm720-mi35x-20261130"},
			want: Image{Image: "rocm/sgl-dev:miles-rocm720-mi35x-20261130", Tag: "miles-rocm720-mi35x-20261130", Source: FromInput}},
		{name: "rocm full image", in: ImageInputs{Backend: policy.ROCM, InputTag: "rocm/sgl-dev:x"},
			wantErr: "ci-image-tag must be a Docker tag, not a full image name: rocm/sgl-dev:x"},
		{name: "rocm called tag", in: ImageInputs{Backend: policy.ROCM, CalledTag: "x"},
			wantErr: `called image tag "x": the ROCm workflow has no image_tag input; pass the tag as the dispatch input instead`},
		{name: "rocm pr image", in: ImageInputs{Backend: policy.ROCM, PRImageAvailable: true, PRNumber: "1"},
			wantErr: "a PR image applies to the CUDA/CPU workflow only; the ROCm workflow always runs rocm/sgl-dev"},
		{name: "bad backend", in: ImageInputs{Backend: "tpu"},
			wantErr: `unknown backend "tpu" for an image; use cuda, cpu or rocm`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveImage(tt.in)
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("wanted %+v, got %+v", tt.want, got)
			}
		})
	}
}

func TestReleaseAndFileRunImage(t *testing.T) {
	got, err := ReleaseImage(Lock{CIImageTag: "release-v0.3.0-ci"})
	checkErr(t, err, "")
	if want := (Image{Image: "radixark/miles:release-v0.3.0-ci", Tag: "release-v0.3.0-ci", Source: FromLockfile}); got != want {
		t.Errorf("release: wanted %+v, got %+v", want, got)
	}
	tests := []struct {
		name, input, body string
		want              Image
		wantErr           string
	}{
		{name: "default", want: Image{Image: "radixark/miles:dev", Tag: "dev", Source: FromDefault}},
		{name: "body", body: "ci-image-tag: dev-2", want: Image{Image: "radixark/miles:dev-2", Tag: "dev-2", Source: FromPRBody, Line: 1}},
		{name: "input", input: "dev-3", body: "ci-image-tag: dev-2", want: Image{Image: "radixark/miles:dev-3", Tag: "dev-3", Source: FromInput}},
		{name: "bad", input: "a:b", wantErr: "ci-image-tag must be a Docker tag, not a full image name: a:b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FileRunImageTag(tt.input, tt.body)
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("wanted %+v, got %+v", tt.want, got)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// checkErr fails unless err's text is want ("" = no error).
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	got := ""
	if err != nil {
		got = err.Error()
	}
	if got != want {
		t.Fatalf("error: wanted %q, got %q", want, got)
	}
}
