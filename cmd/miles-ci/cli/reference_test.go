package cli

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCLIReference holds docs/cli.md to the flag definitions: its command
// table names every command the tool registers and no other, and every flag
// a command's -h prints is documented in docs/cli.md or on a page the
// command's row links to.
func TestCLIReference(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	// A row: | `name` | what it answers (links) | rules |, or `a`, `b` for two commands.
	row := regexp.MustCompile("^\\| (`[a-z-]+`(?:, `[a-z-]+`)*) \\|(.*)\\|")
	link := regexp.MustCompile(`\]\(([a-z-]+\.md)`)
	documented := map[string][]string{} // command: the pages where its flags may be
	for line := range strings.Lines(string(page)) {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pages := []string{string(page)}
		for _, l := range link.FindAllStringSubmatch(m[2], -1) {
			text, err := os.ReadFile(filepath.Join(root, "docs", l[1]))
			if err != nil {
				t.Fatalf("docs/cli.md links %s: %v", l[1], err)
			}
			pages = append(pages, string(text))
		}
		for _, name := range strings.Split(m[1], ", ") {
			documented[strings.Trim(name, "`")] = pages
		}
	}
	flagRow := regexp.MustCompile(`^ +(--[a-z0-9-]+)`)
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		pages, ok := documented[name]
		if !ok {
			t.Errorf("docs/cli.md's command table has no row for %s: add | `%s` | what it answers | rules § |", name, name)
			continue
		}
		var out bytes.Buffer
		if code := Run([]string{name, "-h"}, Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}); code != 0 {
			t.Fatalf("%s -h: wanted exit 0, got %d\n%s", name, code, out.String())
		}
		for line := range strings.Lines(out.String()) {
			m := flagRow.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if !slices.ContainsFunc(pages, func(p string) bool { return strings.Contains(p, m[1]) }) {
				t.Errorf("%s %s is documented neither in docs/cli.md nor on a page its row links to", name, m[1])
			}
		}
	}
	for name := range documented {
		if _, ok := commands[name]; !ok {
			t.Errorf("docs/cli.md's command table names %s, which is not a command", name)
		}
	}
}

// TestREADMEIsShort keeps the README a page a newcomer reads to the end: the
// reference belongs in docs/.
func TestREADMEIsShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 320 {
		t.Errorf("wanted README.md at most 320 lines, got %d: move the detail to a docs/ page and link it", n)
	}
}
