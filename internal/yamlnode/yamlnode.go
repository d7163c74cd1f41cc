// Package yamlnode reads values out of decoded YAML nodes (yaml.v3), the few
// accessors the workflow readers of policy and graph share.
package yamlnode

import "gopkg.in/yaml.v3"

// Deref follows a YAML alias (one hop: the readers only walk a fixed depth).
func Deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// Get returns the value of a key of a mapping, or nil.
func Get(m *yaml.Node, key string) *yaml.Node {
	m = Deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return Deref(m.Content[i+1])
		}
	}
	return nil
}

// Scalar is a scalar node's text.
func Scalar(n *yaml.Node) (string, bool) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// StrList reads a scalar or a sequence of scalars.
func StrList(n *yaml.Node) []string {
	n = Deref(n)
	if s, ok := Scalar(n); ok {
		return []string{s}
	}
	var out []string
	if n != nil && n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			if s, ok := Scalar(c); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
