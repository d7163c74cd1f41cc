package cirun

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/internal/yamlnode"
)

// Bounds of a --hosts file: a fleet is a few dozen hosts.
const (
	maxHosts   = 64
	maxRunners = 64
	maxLabels  = 32
)

var (
	hostName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)
	// engineSchemes are the addresses Dagger's client connects to
	// (_EXPERIMENTAL_DAGGER_RUNNER_HOST).
	engineSchemes = []string{"unix://", "tcp://", "docker-container://", "podman-container://", "kube-pod://", "ssh://"}
	hostKeys      = []string{"name", "engine", "gpus", "cpu", "runners"}
	runnerKeys    = []string{"name", "labels", "gpus"}
)

// ParseHosts reads a --hosts file (rules §14): a YAML list of hosts, each
// with a name, an engine address (the local engine when absent), its GPUs
// as --gpus gives them, whether it takes CPU work (cpu: false keeps CPU
// shards off it), and optionally the runners that split its GPUs, each
// with its labels and devices. file names the file in errors; detect
// reads this machine's GPUs for a local host's gpus: all.
func ParseHosts(file string, data []byte, detect Detect) ([]Host, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not YAML: %v", file, err)
	}
	if len(doc.Content) == 0 || yamlnode.Deref(doc.Content[0]).Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: a hosts file is a YAML list of hosts, each with a name and gpus (- name: h200-a\\n  gpus: h200:0-7)", file)
	}
	list := yamlnode.Deref(doc.Content[0])
	if len(list.Content) == 0 {
		return nil, fmt.Errorf("%s lists no host; give at least one (- name: h200-a\\n  gpus: h200:0-7)", file)
	}
	if len(list.Content) > maxHosts {
		return nil, fmt.Errorf("%s lists %d hosts; miles-ci schedules at most %d", file, len(list.Content), maxHosts)
	}
	var hosts []Host
	for _, n := range list.Content {
		h, err := parseHostEntry(file, yamlnode.Deref(n), detect)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(hosts, func(o Host) bool { return o.Name == h.Name }) {
			return nil, fmt.Errorf("%s:%d: host %s is listed twice; give each host one entry", file, n.Line, h.Name)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

func parseHostEntry(file string, n *yaml.Node, detect Detect) (Host, error) {
	at := fmt.Sprintf("%s:%d", file, n.Line)
	if err := onlyKeys(at, "a host", n, hostKeys); err != nil {
		return Host{}, err
	}
	name, _ := yamlnode.Scalar(yamlnode.Get(n, "name"))
	if !hostName.MatchString(name) {
		return Host{}, fmt.Errorf("%s: a host needs a name of letters, digits, '.', '_' and '-' (name: scitix-72), not %q", at, name)
	}
	at += " (host " + name + ")"
	engine, _ := yamlnode.Scalar(yamlnode.Get(n, "engine"))
	if engine != "" && !slices.ContainsFunc(engineSchemes, func(s string) bool { return strings.HasPrefix(engine, s) && len(engine) > len(s) }) {
		return Host{}, fmt.Errorf("%s: engine %q is not an address Dagger connects to; give one of %s followed by the address (tcp://gpu-a:1234)", at, engine, strings.Join(engineSchemes, ", "))
	}
	gpus, ok := yamlnode.Scalar(yamlnode.Get(n, "gpus"))
	if !ok {
		return Host{}, fmt.Errorf("%s: give its gpus as --gpus takes them (h200:0-7, none:h100:0-7, none)", at)
	}
	if (gpus == "all" || gpus == "") && engine != "" && !strings.HasPrefix(engine, "unix://") {
		return Host{}, fmt.Errorf("%s: gpus: all reads this machine's GPUs, not those of engine %s; give them (h200:0-7)", at, engine)
	}
	h, err := ParseHost(gpus, detect)
	if err != nil {
		return Host{}, fmt.Errorf("%s: %v", at, err)
	}
	h.Name, h.Engine = name, engine
	if cpu := yamlnode.Get(n, "cpu"); cpu != nil {
		v, ok := yamlnode.Scalar(cpu)
		if !ok || (v != "true" && v != "false") {
			return Host{}, fmt.Errorf("%s: cpu is true or false (false keeps CPU shards off the host)", at)
		}
		h.NoCPU = v == "false"
	}
	if rs := yamlnode.Get(n, "runners"); rs != nil {
		if rs.Kind != yaml.SequenceNode || len(rs.Content) == 0 || len(rs.Content) > maxRunners {
			return Host{}, fmt.Errorf("%s: runners is a list of 1 to %d runners, each with a name, labels and gpus", at, maxRunners)
		}
		for _, rn := range rs.Content {
			r, err := parseRunner(at, yamlnode.Deref(rn), h)
			if err != nil {
				return Host{}, err
			}
			if slices.ContainsFunc(h.Runners, func(o Runner) bool { return o.Name == r.Name }) {
				return Host{}, fmt.Errorf("%s: runner %s is listed twice", at, r.Name)
			}
			h.Runners = append(h.Runners, r)
		}
	}
	return h, nil
}

func parseRunner(at string, n *yaml.Node, h Host) (Runner, error) {
	if err := onlyKeys(at, "a runner", n, runnerKeys); err != nil {
		return Runner{}, err
	}
	name, _ := yamlnode.Scalar(yamlnode.Get(n, "name"))
	if !hostName.MatchString(name) {
		return Runner{}, fmt.Errorf("%s: a runner needs a name (name: 4gpu-0), not %q", at, name)
	}
	at += " runner " + name
	labels := yamlnode.StrList(yamlnode.Get(n, "labels"))
	if len(labels) == 0 || len(labels) > maxLabels {
		return Runner{}, fmt.Errorf("%s: give its GitHub runner labels, 1 to %d of them (labels: [h200, 4gpu])", at, maxLabels)
	}
	for i, l := range labels {
		labels[i] = strings.ToLower(l)
	}
	ids, _ := yamlnode.Scalar(yamlnode.Get(n, "gpus"))
	devs, err := device.ParseSet(ids)
	if err != nil {
		return Runner{}, fmt.Errorf("%s: gpus are the host's device ids the runner pins (CUDA_VISIBLE_DEVICES), such as 0-3 or 4,5: %v", at, err)
	}
	for _, d := range devs {
		if !h.Devices.Contains(d) {
			return Runner{}, fmt.Errorf("%s: device %s is not one of the host's gpus (%s)", at, d, h)
		}
	}
	return Runner{Name: name, Labels: labels, Devices: devs}, nil
}

// onlyKeys refuses a key the entry does not know (a typo would otherwise
// drop a setting silently).
func onlyKeys(at, what string, n *yaml.Node, known []string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: %s is a mapping of %s", at, what, strings.Join(known, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; !slices.Contains(known, k) {
			return fmt.Errorf("%s: %s has no key %q (line %d); its keys are %s", at, what, k, n.Content[i].Line, strings.Join(known, ", "))
		}
	}
	return nil
}
