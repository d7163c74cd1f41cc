package stagerun_test

import (
	"maps"
	"testing"

	. "github.com/radixark/miles-ci/stagerun"
)

func TestHandedSecrets(t *testing.T) {
	have := map[string]string{SecretWandb: "wandb-value", SecretHF: "hf-token-value", "OTHER": "x"}
	tests := []struct {
		name string
		fork bool
		want map[string]string
	}{
		{name: "a trusted run holds each secret given", want: map[string]string{SecretWandb: "wandb-value", SecretHF: "hf-token-value"}},
		{name: "a fork's run holds none", fork: true, want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := 0
			got := HandedSecrets(tt.fork, func(name string) (string, bool) {
				read++
				v, ok := have[name]
				return v, ok
			})
			if !maps.Equal(got, tt.want) {
				t.Errorf("wanted %q, got %q", tt.want, got)
			}
			if tt.fork && read != 0 {
				t.Errorf("wanted no secret read for a fork, got %d read", read)
			}
		})
	}
}
