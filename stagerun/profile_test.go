package stagerun

import (
	"testing"

	"github.com/radixark/miles-ci/policy"
)

// TestEveryBackendHasContainerSteps holds that a row added to the backend
// profile table comes with its container steps, and no steps without a row.
func TestEveryBackendHasContainerSteps(t *testing.T) {
	for _, b := range policy.Backends() {
		if containerSteps[b] == nil {
			t.Errorf("wanted container steps for backend %s (containerSteps), got none", b)
		}
	}
	if len(containerSteps) != len(policy.Backends()) {
		t.Errorf("wanted container steps for the %d backends of the profile table, got %d", len(policy.Backends()), len(containerSteps))
	}
}
