package usecase

import "testing"

func TestBranchCutRequest(t *testing.T) {
	tests := []struct {
		name        string
		req         BranchCutRequest
		tag, errMsg string
	}{
		{"the default tag", BranchCutRequest{Branch: "release/v0.3.0"}, "release-v0.3.0-ci", ""},
		{"a given tag", BranchCutRequest{Branch: "release/v0.3.0", ImageTag: "dev"}, "dev", ""},
		{"not a release branch", BranchCutRequest{Branch: "main"}, "", `--branch "main": a release branch is release/vX.Y.Z`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.errMsg != "" {
				if err == nil || err.Error() != tt.errMsg {
					t.Errorf("wanted %q, got %v", tt.errMsg, err)
				}
				return
			}
			if err != nil || tt.req.ImageTag != tt.tag {
				t.Errorf("wanted tag %q, got %q (%v)", tt.tag, tt.req.ImageTag, err)
			}
		})
	}
}
