package fsinput

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := Kind{Name: "a small file", Max: 10}
	ok := filepath.Join(dir, "ok")
	write(t, ok, "0123456789")
	big := filepath.Join(dir, "big")
	write(t, big, "0123456789A")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want, wantErr string
	}{
		{"regular", ok, "0123456789", ""},
		{"symlink to a regular file", link, "0123456789", ""},
		{"over the limit", big, "", big + " is 11 bytes, more than the 10 bytes a small file may be"},
		{"missing", filepath.Join(dir, "nope"), "", filepath.Join(dir, "nope") + " does not exist"},
		{"folder", dir, "", dir + " is a folder, not a regular file"},
		{"symlink to a device", zero, "", zero + " is a device, not a regular file"},
		{"fifo", fifo, "", fifo + " is a named pipe (FIFO), not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var got []byte
			var err error
			go func() {
				got, err = ReadFile(tt.path, small)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadFile(%s) blocked", tt.path)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("wanted error %q, got %v", tt.wantErr, err)
				}
				var e *Error
				if !errors.As(err, &e) {
					t.Errorf("wanted an *Error, got %T", err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("wanted %q, got %q (%v)", tt.want, got, err)
			}
		})
	}
	if _, err := ReadFile(filepath.Join(dir, "nope"), small); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("wanted fs.ErrNotExist to match, got %v", err)
	}
	// A kind that is never a link refuses one (issue 38: a symlinked
	// summary.json was followed), and reads the regular file as before.
	noLink := Kind{Name: "a summary.json", Max: 10, NoLink: true}
	if _, err := ReadFile(link, noLink); err == nil || err.Error() != link+" is a symbolic link, which is not followed here: a summary.json is never one" {
		t.Errorf("wanted the link refused, got %v", err)
	}
	if got, err := ReadFile(ok, noLink); err != nil || string(got) != "0123456789" {
		t.Errorf("wanted the regular file read, got %q %v", got, err)
	}
}

func TestReadIntoReusesTheBuffer(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, a, strings.Repeat("a", 1000))
	write(t, b, "bb")
	var buf []byte
	got, err := ReadInto(a, TestFile, &buf)
	if err != nil || len(got) != 1000 {
		t.Fatalf("wanted 1000 bytes, got %d (%v)", len(got), err)
	}
	first := cap(buf)
	got, err = ReadInto(b, TestFile, &buf)
	if err != nil || string(got) != "bb" {
		t.Fatalf("wanted %q, got %q (%v)", "bb", got, err)
	}
	if cap(buf) != first {
		t.Errorf("wanted the buffer reused (cap %d), got cap %d", first, cap(buf))
	}
}

func TestStatLimitMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "body.md")
	write(t, path, strings.Repeat("x", 1<<20+5))
	_, err := Stat(path, PRBody)
	want := path + " is 1048581 bytes, more than the 1 MiB (1048576 bytes) a PR body file may be"
	if err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

func TestFolder(t *testing.T) {
	root := t.TempDir()
	miles := filepath.Join(root, "miles")
	if err := os.MkdirAll(filepath.Join(miles, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	flat := filepath.Join(root, "flat")
	if err := os.MkdirAll(flat, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(flat, "tests"), "")
	file := filepath.Join(root, "file")
	write(t, file, "")
	tests := []struct {
		name, path, wantErr string
		marker              string // "tests/" when empty
	}{
		{name: "checkout", path: miles},
		{name: "missing", path: filepath.Join(root, "typo"), wantErr: filepath.Join(root, "typo") + " does not exist: not a Miles checkout"},
		{name: "file", path: file, wantErr: file + " is not a folder: not a Miles checkout"},
		{name: "no marker", path: root, wantErr: root + " has no tests/ folder: not a Miles checkout"},
		{name: "marker not a folder", path: flat, wantErr: flat + " has a tests that is not a folder: not a Miles checkout"},
		{name: "file marker", path: miles, marker: ".git", wantErr: miles + " has no .git: not a Miles checkout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := tt.marker
			if marker == "" {
				marker = "tests/"
			}
			err := Folder(tt.path, marker, "a Miles checkout")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("wanted %q, got %q", tt.wantErr, got)
			}
		})
	}
	t.Run("current folder", func(t *testing.T) {
		t.Chdir(root)
		err := Folder("", "tests/", "a Miles checkout")
		want := "the current folder (" + root + ") has no tests/ folder: not a Miles checkout"
		if err == nil || err.Error() != want {
			t.Errorf("wanted %q, got %v", want, err)
		}
	})
}

func TestAppend(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "out")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, wantErr string }{
		{"new file", file, ""},
		{"existing file", file, ""},
		{"fifo nothing reads", fifo, fifo + " is a named pipe (FIFO) that nothing reads"},
		{"folder", dir, dir + " cannot be written: is a directory"},
		{"missing folder", filepath.Join(dir, "no", "out"), filepath.Join(dir, "no", "out") + " cannot be written: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- Append(tt.path, "k=v\n") }()
			select {
			case err := <-done:
				if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
					t.Fatalf("wanted %q, got %v", tt.wantErr, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Append blocked")
			}
		})
	}
	if data, _ := os.ReadFile(file); string(data) != "k=v\nk=v\n" {
		t.Errorf("wanted %q, got %q", "k=v\nk=v\n", data)
	}
}

// TestReadListedInto: a file listed as regular is read without a stat of its
// path, and the opened file is still checked: a FIFO or a folder put where
// the listing saw a regular file is refused, at once.
func TestReadListedInto(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	write(t, ok, "text")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	small := Kind{Name: "a small file", Max: 3}
	var buf []byte
	if got, err := ReadListedInto(ok, 0, TestFile, &buf); err != nil || string(got) != "text" {
		t.Errorf("wanted %q, got %q (%v)", "text", got, err)
	}
	for _, c := range []struct {
		path    string
		listed  fs.FileMode
		k       Kind
		wantErr string
	}{
		{ok, 0, small, ok + " is 4 bytes, more than the 3 bytes a small file may be"},
		{fifo, 0, TestFile, fifo + " is a named pipe (FIFO), not a regular file"},
		{dir, 0, TestFile, dir + " is a folder, not a regular file"},
		{link, fs.ModeSymlink, TestFile, link + " is a device, not a regular file"},
		{filepath.Join(dir, "nope"), 0, TestFile, filepath.Join(dir, "nope") + " does not exist"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadListedInto(c.path, c.listed, c.k, &buf); done <- err }()
		select {
		case err := <-done:
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("ReadListedInto(%s): wanted %q, got %v", c.path, c.wantErr, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadListedInto(%s) blocked", c.path)
		}
	}
}

// TestWriteFileNoLink: an output path that is a symbolic link is refused,
// and the file it points to left as it was (issue 38: history chart --out
// wrote through one); a regular file is replaced, a new one made.
func TestWriteFileNoLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	write(t, target, "keep")
	link := filepath.Join(dir, "chart.svg")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("<svg/>"), 0o644); err == nil || !strings.Contains(err.Error(), "is a symbolic link; miles-ci writes no file through one") {
		t.Errorf("wanted the link refused, got %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("wanted the link's target untouched, got %q", got)
	}
	for _, p := range []string{target, filepath.Join(dir, "new.svg")} {
		if err := WriteFile(p, []byte("<svg/>"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != "<svg/>" {
			t.Errorf("%s: wanted it written, got %q", p, got)
		}
	}
	if err := WriteFile(dir, nil, 0o644); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("wanted a folder refused, got %v", err)
	}
}
