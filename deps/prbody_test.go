package deps

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestFindDirectives(t *testing.T) {
	tests := []struct {
		name string
		body string
		key  string
		want []Directive
	}{
		{name: "empty body", body: "", key: KeySGLang},
		{name: "single line", body: "ci-sglang-pr: #1234", key: KeySGLang,
			want: []Directive{{KeySGLang, "#1234", 1}}},
		{name: "line number", body: "a\nb\nci-megatron-pr: miles-main\n", key: KeyMegatron,
			want: []Directive{{KeyMegatron, "miles-main", 3}}},
		{name: "leading space ignored", body: " ci-sglang-pr: x", key: KeySGLang},
		{name: "inline prose ignored", body: "use `ci-sglang-pr: #1` here", key: KeySGLang},
		{name: "no blank after colon", body: "ci-sglang-pr:#1", key: KeySGLang},
		{name: "no value", body: "ci-sglang-pr:   \nci-sglang-pr: y", key: KeySGLang,
			want: []Directive{{KeySGLang, "y", 2}}},
		{name: "tab separator", body: "ci-sglang-pr:\tx", key: KeySGLang,
			want: []Directive{{KeySGLang, "x", 1}}},
		{name: "value stops at blank", body: "ci-sglang-pr: a b", key: KeySGLang,
			want: []Directive{{KeySGLang, "a", 1}}},
		{name: "crlf", body: "x\r\nci-sglang-pr: abc\r\n", key: KeySGLang,
			want: []Directive{{KeySGLang, "abc", 2}}},
		{name: "lone cr is not a line break", body: "x\rci-sglang-pr: abc", key: KeySGLang},
		{name: "cr only after colon", body: "ci-sglang-pr:\r\n", key: KeySGLang},
		{name: "fenced block counts", body: "```text\nci-sglang-pr: b\n```", key: KeySGLang,
			want: []Directive{{KeySGLang, "b", 2}}},
		{name: "other key", body: "ci-megatron-pr: a", key: KeySGLang},
		{name: "prefix of a longer key", body: "ci-sglang-pr-extra: a", key: KeySGLang},
		{name: "case sensitive", body: "CI-SGLANG-PR: a", key: KeySGLang},
		{name: "all occurrences in order", body: "ci-sglang-pr: a\nci-sglang-pr: b", key: KeySGLang,
			want: []Directive{{KeySGLang, "a", 1}, {KeySGLang, "b", 2}}},
		{name: "image tag", body: "ci-image-tag: dev-1", key: KeyImageTag,
			want: []Directive{{KeyImageTag, "dev-1", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FindDirectives(tt.body, tt.key)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("wanted %+v, got %+v", tt.want, got)
			}
		})
	}
}

func TestFindDirectivesTestdata(t *testing.T) {
	tests := []struct {
		file string
		key  string
		want string // first value, "" = none
		line int
	}{
		{"example-line.md", KeySGLang, "#1234", 5},
		{"directive-in-prose.md", KeySGLang, "", 0},
		{"directive-in-prose.md", KeyMegatron, "", 0},
		{"directive-in-prose.md", KeyImageTag, "", 0},
		{"fenced-text-block.md", KeySGLang, "tom/refactor-miles-repo-sglang/deliver-2", 7},
		{"fenced-text-block.md", KeyMegatron, "#82", 8},
		{"fenced-text-block.md", KeyImageTag, "dev-202611300915", 9},
		{"crlf.md", KeyMegatron, "2e64d788b1c4a0f9e8d7c6b5a4f3e2d1c0b9a8f7", 5},
		{"crlf.md", KeySGLang, "sglang-miles", 6},
		{"duplicate.md", KeySGLang, "c447264eba460045e6e961fd7cf1bfbaf038db6b", 3},
		{"invalid-value.md", KeyMegatron, "../../etc/passwd", 5},
		{"empty.md", KeySGLang, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.key, func(t *testing.T) {
			body := readBody(t, tt.file)
			d, ok := FirstDirective(body, tt.key)
			if !ok {
				d = Directive{}
			}
			if d.Value != tt.want || d.Line != tt.line {
				t.Errorf("wanted %q at line %d, got %q at line %d", tt.want, tt.line, d.Value, d.Line)
			}
		})
	}
}

func readBody(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "pr-bodies", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
