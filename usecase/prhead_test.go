package usecase

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/gitrepo"
)

// gitCheckout writes a folder whose .git says HEAD is at sha, as a clone
// (HEAD -> refs/heads/main), a detached checkout, a packed ref or a git
// worktree (.git a file naming its folder, the refs in the common one).
func gitCheckout(t *testing.T, form, sha string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	switch form {
	case "clone":
		write(".git/HEAD", "ref: refs/heads/main\n")
		write(".git/refs/heads/main", sha+"\n")
	case "detached":
		write(".git/HEAD", sha+"\n")
	case "packed":
		write(".git/HEAD", "ref: refs/heads/main\n")
		write(".git/packed-refs", "# pack-refs with: peeled fully-peeled sorted\n"+sha+" refs/heads/main\n")
	case "worktree":
		write("main/.git/worktrees/wt/HEAD", "ref: refs/heads/pr\n")
		write("main/.git/worktrees/wt/commondir", "../..\n")
		write("main/.git/refs/heads/pr", sha+"\n")
		write("wt/.git", "gitdir: ../main/.git/worktrees/wt\n")
		return filepath.Join(dir, "wt")
	}
	return dir
}

func TestCheckPRHead(t *testing.T) {
	const head, merge, other = "5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d", "9c1e5b7a3d2f4e6a8b0c1d3e5f7a9b2c4d6e8f01", "1111111111112222222222223333333333334444"
	pr := &github.PR{Repo: "radixark/miles", Number: 2874, HeadSHA: head, MergeSHA: merge, BaseRef: "main"}
	for _, form := range []string{"clone", "detached", "packed", "worktree"} {
		t.Run(form, func(t *testing.T) {
			for _, sha := range []string{head, merge} {
				if msgs, err := CheckPRHead(PRHeadRequest{Repo: gitCheckout(t, form, sha), PR: pr, Git: gitrepo.Local{}}); err != nil || len(msgs) > 0 {
					t.Errorf("a checkout at %s is the PR's: wanted no message, got %v %v", sha, msgs, err)
				}
			}
			repo := gitCheckout(t, form, other)
			_, err := CheckPRHead(PRHeadRequest{Repo: repo, PR: pr, Git: gitrepo.Local{}})
			want := "--pr 2874: " + repo + " is at 111111111111, not radixark/miles#2874's head 5f1d0c7e2b9a nor its merge into main 9c1e5b7a3d2f, so its tests are not the pull request's; " +
				"check the pull request out (git fetch origin pull/2874/head && git checkout FETCH_HEAD), or give --allow-other-head to take this checkout as it is"
			if err == nil || err.Error() != want {
				t.Errorf("wanted\n%s\ngot\n%v", want, err)
			}
			msgs, err := CheckPRHead(PRHeadRequest{Repo: repo, PR: pr, Git: gitrepo.Local{}, AllowOtherHead: true})
			if err != nil || len(msgs) != 1 || msgs[0].Level != "warning" || !strings.Contains(msgs[0].Text, "--allow-other-head takes its tests as they are") {
				t.Errorf("--allow-other-head: wanted one warning, got %v %v", msgs, err)
			}
		})
	}
	t.Run("no .git", func(t *testing.T) {
		msgs, err := CheckPRHead(PRHeadRequest{Repo: t.TempDir(), PR: pr, Git: gitrepo.Local{}})
		if err != nil || len(msgs) != 1 || msgs[0].Level != "notice" || !strings.Contains(msgs[0].Text, "has no readable .git, so miles-ci cannot check that it is radixark/miles#2874's head 5f1d0c7e2b9a; it takes the folder as it is") {
			t.Errorf("wanted a notice that the folder cannot be checked, got %v %v", msgs, err)
		}
	})
}
