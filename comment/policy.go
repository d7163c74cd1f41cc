package comment

import (
	"fmt"
	"math/big"
	"regexp"

	"github.com/radixark/miles-ci/pyjson"
)

// MaxPolicySize bounds the policy file (Miles' is under 2 KiB).
const MaxPolicySize = 1 << 20

// command is one command of the script's static registry (COMMAND_REGISTRY):
// its policy key and everything the gateway does with it.
type command struct {
	// policyKey names the command in the policy's commands.
	policyKey string
	// capability is the App token the workflow mints for it.
	capability string
	// labels: the command reads allowed_labels and may be granted by user id.
	labels bool
	// auditKey is the preflight's key for the command's value.
	auditKey string
	// reaction is the success reaction (run-details form).
	reaction string
}

var (
	addLabel     = command{policyKey: "add_label", capability: "issues", labels: true, auditKey: "label", reaction: "none"}
	clearLabels  = command{policyKey: "clear_labels", capability: "issues", auditKey: "command", reaction: "none"}
	rerunFailed  = command{policyKey: "rerun_failed_ci", capability: "actions", auditKey: "command", reaction: "none"}
	runTestFile  = command{policyKey: "run_test_file", capability: "actions", auditKey: "test_file", reaction: "+1"}
	allowedPerms = []string{"write", "admin"}
)

// registry is the form's COMMAND_REGISTRY, in its order.
func (f Form) registry() []command {
	if f.RunFile {
		return []command{addLabel, clearLabels, rerunFailed, runTestFile}
	}
	return []command{addLabel, clearLabels, rerunFailed}
}

// Policy is a loaded access policy: each command's group and labels.
type Policy struct {
	groups   map[string]group
	commands map[string]commandPolicy
}

type group struct {
	permissions map[string]bool
	userIDs     []*big.Int
}

type commandPolicy struct {
	group  string
	labels map[string]bool
}

// refusal is the script's CommentCommandError: it prints ::error::MSG and exits 1.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// crash is input on which the script stops with a Python traceback.
type crash struct{ msg string }

func (c *crash) Error() string { return c.msg }

// ParsePolicy is load_policy's checks on a decoded policy, in its order
// and with its messages.
func (g Gateway) ParsePolicy(raw pyjson.Value) (*Policy, error) {
	if raw.Kind != pyjson.Dict || !sameKeys(raw.Dict, "version", "groups", "commands") {
		return nil, refuse("policy must contain only version, groups, and commands")
	}
	if v, _ := raw.Dict.Get("version"); v.Kind != pyjson.Int || !v.EqualInt(big.NewInt(2)) {
		return nil, refuse("policy version must be 2")
	}
	rawGroups, _ := raw.Dict.Get("groups")
	if rawGroups.Kind != pyjson.Dict || !sameKeys(rawGroups.Dict, "add_label_access", "repo_write_access") {
		return nil, refuse("policy groups must contain only add_label_access and repo_write_access")
	}
	p := &Policy{groups: map[string]group{}, commands: map[string]commandPolicy{}}
	for i, name := range rawGroups.Dict.Keys {
		rg := rawGroups.Dict.Vals[i]
		want := []string{"repository_permissions"}
		if name == "add_label_access" {
			want = append(want, "user_ids")
		}
		if rg.Kind != pyjson.Dict || !sameKeys(rg.Dict, want...) {
			return nil, refuse("invalid fields for policy group %s", name)
		}
		perms, _ := rg.Dict.Get("repository_permissions")
		gr, err := permissionsOf("groups."+name+".repository_permissions", perms)
		if err != nil {
			return nil, err
		}
		ids, ok := rg.Dict.Get("user_ids")
		if !ok {
			ids = pyjson.ListValue()
		}
		if gr.userIDs, err = userIDsOf("groups."+name+".user_ids", ids); err != nil {
			return nil, err
		}
		p.groups[name] = gr
	}
	reg := g.registry()
	rawCommands, _ := raw.Dict.Get("commands")
	keys := make([]string, len(reg))
	for i, c := range reg {
		keys[i] = c.policyKey
	}
	if rawCommands.Kind != pyjson.Dict || !sameKeys(rawCommands.Dict, keys...) {
		return nil, refuse("policy commands do not match the static command registry")
	}
	for _, c := range reg {
		rc, _ := rawCommands.Dict.Get(c.policyKey)
		want := []string{"group"}
		if c.labels {
			want = append(want, "allowed_labels")
		}
		if rc.Kind != pyjson.Dict || !sameKeys(rc.Dict, want...) {
			return nil, refuse("invalid fields for policy command %s", c.policyKey)
		}
		gv, _ := rc.Dict.Get("group")
		gr, known := p.groups[gv.Str]
		if gv.Kind != pyjson.Str || !known {
			return nil, refuse("policy command %s references an unknown group", c.policyKey)
		}
		if !c.labels && len(gr.userIDs) > 0 {
			return nil, refuse("policy command %s cannot grant access by user ID", c.policyKey)
		}
		cp := commandPolicy{group: gv.Str}
		if c.labels {
			lv, _ := rc.Dict.Get("allowed_labels")
			labels, err := g.labelsOf("commands."+c.policyKey+".allowed_labels", lv)
			if err != nil {
				return nil, err
			}
			cp.labels = labels
		}
		p.commands[c.policyKey] = cp
	}
	return p, nil
}

// sameKeys is set(d) == set(keys).
func sameKeys(d *pyjson.Object, keys ...string) bool {
	if d.Len() != len(keys) {
		return false
	}
	for _, k := range keys {
		if _, ok := d.Get(k); !ok {
			return false
		}
	}
	return true
}

func permissionsOf(name string, v pyjson.Value) (group, error) {
	if v.Kind != pyjson.List || len(v.List) == 0 {
		return group{}, refuse("%s must be a non-empty array", name)
	}
	perms := map[string]bool{}
	for _, e := range v.List {
		if e.Kind != pyjson.Str || !(e.Str == allowedPerms[0] || e.Str == allowedPerms[1]) {
			return group{}, refuse("%s must contain only write or admin", name)
		}
	}
	for _, e := range v.List {
		perms[e.Str] = true
	}
	if len(perms) != len(v.List) {
		return group{}, refuse("%s contains duplicate permissions", name)
	}
	return group{permissions: perms}, nil
}

func userIDsOf(name string, v pyjson.Value) ([]*big.Int, error) {
	if v.Kind != pyjson.List {
		return nil, refuse("%s must be an array", name)
	}
	var ids []*big.Int
	for _, e := range v.List {
		if !e.PositiveInt() {
			return nil, refuse("%s must contain only positive integers", name)
		}
	}
	for _, e := range v.List {
		for _, id := range ids {
			if id.Cmp(e.Int) == 0 {
				return nil, refuse("%s contains duplicate user IDs", name)
			}
		}
		ids = append(ids, e.Int)
	}
	return ids, nil
}

func (g Gateway) labelsOf(name string, v pyjson.Value) (map[string]bool, error) {
	if v.Kind != pyjson.List || len(v.List) == 0 {
		return nil, refuse("%s must be a non-empty array", name)
	}
	shape := shapes[g.LabelPattern]
	labels := map[string]bool{}
	for _, e := range v.List {
		if e.Kind != pyjson.Str || !shape.MatchString(e.Str) {
			return nil, refuse("invalid exact CI label: %s", pyjson.Repr(e))
		}
	}
	for _, e := range v.List {
		labels[e.Str] = true
	}
	if len(labels) != len(v.List) {
		return nil, refuse("%s contains duplicate labels", name)
	}
	return labels, nil
}

// fullMatch is re.fullmatch of an ASCII pattern as a Go expression.
func fullMatch(pattern string) *regexp.Regexp {
	return regexp.MustCompile(`\A(?:` + pattern + `)\z`)
}
