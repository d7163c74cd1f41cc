package deps

import "testing"

func TestCheckPin(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  string // "" = valid
	}{
		{name: "pr number", value: "#1234"},
		{name: "branch", value: "sglang-miles"},
		{name: "nested branch", value: "tom/refactor-miles-repo-sglang/deliver-2"},
		{name: "commit", value: "c447264eba460045e6e961fd7cf1bfbaf038db6b"},
		{name: "version tag", value: "v0.5.17"},
		{name: "pull ref", value: "refs/pull/12/head"},
		{name: "underscore start", value: "_wip"},
		{name: "empty", value: "", want: "is empty"},
		{name: "option", value: "--upload-pack=touch", want: "starts with '-', which git would read as an option"},
		{name: "hash without digits", value: "#", want: "is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -"},
		{name: "hash with letters", value: "#12a", want: "is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -"},
		{name: "leading dot", value: ".hidden", want: "is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -"},
		{name: "leading slash", value: "/abs", want: "is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -"},
		{name: "full image", value: "radixark/miles:dev", want: "is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -"},
		{name: "reflog", value: "main@{1}", want: "is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -"},
		{name: "non ascii", value: "fix-é", want: "is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -"},
		{name: "double dot", value: "feature..x", want: "contains '..', which git does not allow in a ref name"},
		{name: "traversal", value: "a/../b", want: "contains '..', which git does not allow in a ref name"},
		{name: "double slash", value: "a//b", want: "contains '//', which git does not allow in a ref name"},
		{name: "trailing slash", value: "feature/", want: "ends with '/', which git does not allow in a ref name"},
		{name: "trailing dot", value: "feature.", want: "ends with '.', which git does not allow in a ref name"},
		{name: "lock suffix", value: "main.lock", want: "has a path component ending in '.lock', which git does not allow in a ref name"},
		{name: "lock component", value: "a.lock/b", want: "has a path component ending in '.lock', which git does not allow in a ref name"},
		{name: "dot component", value: "a/.b", want: "has a path component starting with '.', which git does not allow in a ref name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPin(tt.value)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("CheckPin(%q): wanted %q, got %q", tt.value, tt.want, got)
			}
		})
	}
}

func TestFetchRef(t *testing.T) {
	tests := []struct{ pin, want string }{
		{"#1234", "refs/pull/1234/head"},
		{"#0", "refs/pull/0/head"},
		{"sglang-miles", "sglang-miles"},
		{"1234", "1234"},
	}
	for _, tt := range tests {
		t.Run(tt.pin, func(t *testing.T) {
			if got := FetchRef(tt.pin); got != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, got)
			}
		})
	}
}
