package usecase

import "context"

// Git is what a use case asks of a checkout's git: the infrastructure a
// front end hands in (the command's gitrepo.Local reads .git; the module,
// which sees no .git, names its source by its digest).
type Git interface {
	// Head is the commit checked out at repo ("" when it cannot be told).
	Head(ctx context.Context, repo string) (string, error)
}

// CommitOf is the commit a run's facts name: the one given (--head-sha),
// else what git says is checked out at repo ("" without a git to ask).
func CommitOf(ctx context.Context, git Git, given, repo string) (string, error) {
	if given != "" || git == nil {
		return given, nil
	}
	return git.Head(ctx, repo)
}
