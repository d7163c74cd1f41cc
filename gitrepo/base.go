package gitrepo

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/radixark/miles-ci/internal/hostexec"
)

// BaseCheckout is the merge base a triage compares the head with: the
// commit git merge-base gives for HEAD and ref in the git checkout repo,
// extracted (git archive, read back bounded) into a new folder below into.
// The checkout itself is not touched. Without ref it is the default
// branch: origin/main, else main.
func BaseCheckout(ctx context.Context, repo, ref, into string) (dir, head, base string, err error) {
	if repo == "" {
		repo = "."
	}
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n\x00") {
		return "", "", "", fmt.Errorf("--base %q is not a git ref; give a branch, tag or commit, e.g. origin/main", ref)
	}
	if head, err = gitLine(ctx, repo, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
		return "", "", "", fmt.Errorf("triage needs the head as a git checkout: %w", err)
	}
	refs := []string{ref}
	if ref == "" {
		refs = []string{"origin/main", "main"}
	}
	var tried []string
	for _, r := range refs {
		if base, err = gitLine(ctx, repo, "merge-base", "HEAD", r); err == nil {
			break
		}
		tried = append(tried, err.Error())
	}
	if base == "" {
		return "", "", "", fmt.Errorf("no merge base of HEAD and %s in %s (%s); fetch the base branch, or give --base REF", strings.Join(refs, " or "), repo, strings.Join(tried, "; "))
	}
	if dir, err = os.MkdirTemp(into, "miles-ci-base-"); err != nil {
		return "", "", "", err
	}
	archive := dir + ".tar"
	defer os.Remove(archive)
	if code, out, err := hostexec.Run(ctx, repo, []string{"git", "archive", "--format=tar", "-o", archive, base}); err != nil || code != 0 {
		os.RemoveAll(dir)
		return "", "", "", fmt.Errorf("git archive %s: exit %d: %s%v", base, code, strings.TrimSpace(out), err)
	}
	if err := untar(archive, dir); err != nil {
		os.RemoveAll(dir)
		return "", "", "", fmt.Errorf("extracting the merge base %s: %w", base, err)
	}
	return dir, head, base, nil
}

var commitID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// gitLine runs git with args in repo and returns the commit it prints.
func gitLine(ctx context.Context, repo string, args ...string) (string, error) {
	code, out, err := hostexec.Run(ctx, repo, append([]string{"git"}, args...))
	out = strings.TrimSpace(out)
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	if code != 0 || !commitID.MatchString(out) {
		return "", fmt.Errorf("git %s: exit %d: %s", strings.Join(args, " "), code, firstLine(out))
	}
	return out, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Bounds of an extracted merge base.
const (
	maxBaseBytes = 2 << 30
	maxBaseFiles = 200000
)

// untar extracts git archive's tar: folders and regular files (symbolic
// links are left out: no test file is one), below dir only, bounded.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n > maxBaseFiles {
			return fmt.Errorf("more than %d entries", maxBaseFiles)
		}
		name := path.Clean(h.Name)
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if total += h.Size; total > maxBaseBytes {
				return fmt.Errorf("over %d bytes", maxBaseBytes)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			_, err = io.CopyN(w, tr, h.Size)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
