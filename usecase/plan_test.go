package usecase

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckSource(t *testing.T) {
	miles := t.TempDir()
	if err := os.Mkdir(filepath.Join(miles, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckSource(miles); err != nil {
		t.Errorf("wanted a Miles checkout to pass, got %v", err)
	}
	want := "source has no tests/ folder: not a Miles checkout; pass --source the folder of a Miles checkout (the one that holds tests/)"
	if err := CheckSource(t.TempDir()); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}
