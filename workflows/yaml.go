package workflows

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The helpers below build yaml.v3 node trees: keys keep the order they are
// given in, so the generated files are deterministic and read like a
// hand-written workflow.

// str is a plain string scalar (yaml.v3 quotes it when it must).
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// quoted is a string scalar in single quotes, for values YAML would read as
// another type or that read better quoted (crons, expressions).
func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.SingleQuotedStyle}
}

// block is a multi-line string in literal block style (|), for scripts and
// long conditions.
func block(lines ...string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.Join(lines, "\n") + "\n", Style: yaml.LiteralStyle}
}

func integer(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// flow is a one-line sequence of strings: [a, b].
func flow(items ...string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, it := range items {
		n.Content = append(n.Content, str(it))
	}
	return n
}

func flowInts(items ...int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, it := range items {
		n.Content = append(n.Content, integer(it))
	}
	return n
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// pair is one key and value of a mapping.
type pair struct {
	key   string
	value *yaml.Node
}

// kv makes a pair; a nil value leaves the pair out of the mapping.
func kv(key string, value *yaml.Node) pair { return pair{key, value} }

// kvs makes a pair whose value is a plain string scalar.
func kvs(key, value string) pair { return pair{key, str(value)} }

// mapping builds a mapping whose keys keep the order given.
func mapping(pairs ...pair) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, p := range pairs {
		if p.value != nil {
			n.Content = append(n.Content, str(p.key), p.value)
		}
	}
	return n
}

// add appends one key/value pair to a mapping.
func add(m *yaml.Node, key string, v *yaml.Node) { m.Content = append(m.Content, str(key), v) }
