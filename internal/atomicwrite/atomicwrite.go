// Package atomicwrite replaces several existing files all or nothing: each
// new content goes to a temporary file beside its target and is synced;
// only when every one is written are they renamed over their targets, and
// any failure removes the temporaries and leaves every file as it was (a
// full disk truncates nothing).
package atomicwrite

import (
	"fmt"
	"os"
	"path/filepath"
)

// File is one target and its new content.
type File struct {
	Path string
	Data []byte
}

// The file system calls, replaced by tests to fail at a chosen step.
var (
	createTemp = os.CreateTemp
	rename     = os.Rename
	link       = os.Link
)

// staged is one file written to its temporary, its original kept by a link.
type staged struct {
	target, tmp, backup string
}

// Replace writes every file or none. Each target must exist; it keeps its
// permission bits. A target that is a symlink is replaced by a regular
// file: resolve links first (the caller decides which it may follow).
func Replace(files []File) (err error) {
	var done []staged
	defer func() {
		if err != nil {
			for _, s := range done {
				os.Remove(s.tmp)
				if s.backup != "" {
					os.Remove(s.backup)
				}
			}
		}
	}()
	for _, f := range files {
		s, err := stage(f)
		if s.tmp != "" {
			done = append(done, s)
		}
		if err != nil {
			return err
		}
	}
	// Every original gets a second name first, so a rename that fails
	// half way can put back the ones already replaced.
	for i := range done {
		backup := done[i].tmp + ".orig"
		if err := link(done[i].target, backup); err != nil {
			return fmt.Errorf("writing %s: keeping the original: %w; nothing was changed", done[i].target, err)
		}
		done[i].backup = backup
	}
	for i, s := range done {
		if err := rename(s.tmp, s.target); err != nil {
			for _, back := range done[:i] {
				os.Rename(back.backup, back.target)
			}
			return fmt.Errorf("writing %s: %w; the files already replaced were put back, nothing was changed", s.target, err)
		}
	}
	dirs := map[string]bool{}
	for _, s := range done {
		os.Remove(s.backup)
		dirs[filepath.Dir(s.target)] = true
	}
	for d := range dirs {
		syncDir(d)
	}
	return nil
}

// stage writes f's content to a synced temporary beside it.
func stage(f File) (staged, error) {
	info, err := os.Stat(f.Path)
	if err != nil {
		return staged{}, fmt.Errorf("writing %s: %w; nothing was changed", f.Path, err)
	}
	tmp, err := createTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".miles-ci-*")
	if err != nil {
		return staged{}, fmt.Errorf("writing %s: %w; nothing was changed", f.Path, err)
	}
	s := staged{target: f.Path, tmp: tmp.Name()}
	_, err = tmp.Write(f.Data)
	if err == nil {
		err = tmp.Chmod(info.Mode().Perm())
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s, fmt.Errorf("writing %s: %w; nothing was changed", f.Path, err)
	}
	return s, nil
}

// syncDir makes the renames in dir durable; its error changes nothing the
// caller can act on, so it is dropped.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
