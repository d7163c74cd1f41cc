package engine

import (
	"strings"
	"testing"
)

func TestConnectHint(t *testing.T) {
	for _, tc := range []struct {
		host string
		cli  bool
		want string
	}{
		{"", false, `run eval "$(bash hack/engine/engine.sh env)"`},
		{"unix:///x.sock", false, "the engine at _EXPERIMENTAL_DAGGER_RUNNER_HOST=unix:///x.sock does not answer"},
		{"", true, "the dagger CLI on PATH could not start its engine"},
	} {
		if got := ConnectHint(tc.host, tc.cli); !strings.Contains(got, tc.want) {
			t.Errorf("host %q, cli %t: wanted %q in %q", tc.host, tc.cli, tc.want, got)
		}
	}
}
