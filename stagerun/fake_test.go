package stagerun_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	. "github.com/radixark/miles-ci/stagerun"
)

// fake is a recording stagerun.Container: each With method returns a new
// value with one more op, so a container is the list of ops that made it.
// Evaluating a container replays its execs through the engine's handler.
type fake struct {
	eng *fakeEngine
	ops []string
	// execs are the commands in order, with the files and state they see.
	execs []fakeExec
	files map[string]string
	env   map[string]string
	dir   string
}

type fakeExec struct {
	argv []string
	env  map[string]string
	dir  string
	opts ExecOptions
}

// hangs is the exit code a handler gives a command that never ends.
const hangs = -1000

// fakeEngine answers commands: handler returns stdout, exit code and the
// files the command writes.
type fakeEngine struct {
	handler func(e fakeExec, files map[string]string) (stdout string, code int, writes map[string]string)
	// ran counts every command evaluated, by its joined argv.
	ran []string
	// cacheRepo is the cache registry's repository: From of a tag of it
	// answers from registry (tag -> digest ref); Publish writes there, and
	// published lists what it pushed, each with its ops.
	cacheRepo string
	registry  map[string]string
	published []string
	// sources are checkout files' contents, for SourceFileDigest.
	sources map[string]string
}

func newFake(h func(e fakeExec, files map[string]string) (string, int, map[string]string)) *fake {
	return &fake{eng: &fakeEngine{handler: h}, files: map[string]string{}, env: map[string]string{}}
}

func (f *fake) clone(op string) *fake {
	n := &fake{eng: f.eng, ops: append(slices.Clone(f.ops), op), execs: slices.Clone(f.execs),
		files: map[string]string{}, env: map[string]string{}, dir: f.dir}
	for k, v := range f.files {
		n.files[k] = v
	}
	for k, v := range f.env {
		n.env[k] = v
	}
	return n
}

func (f *fake) From(image string) Container { return f.clone("from " + image) }

// ImageRef answers right after a From: a cache registry tag by the digest
// it was published with (an error when it was not), any other image as
// IMAGE@sha256:base.
func (f *fake) ImageRef(context.Context) (string, error) {
	if len(f.ops) == 0 || !strings.HasPrefix(f.ops[len(f.ops)-1], "from ") {
		return "", fmt.Errorf("image ref: not right after a From")
	}
	image := strings.TrimPrefix(f.ops[len(f.ops)-1], "from ")
	if f.eng.cacheRepo != "" && strings.HasPrefix(image, f.eng.cacheRepo+":") {
		if ref, ok := f.eng.registry[image]; ok {
			return ref, nil
		}
		return "", fmt.Errorf("%s: not found", image)
	}
	if strings.Contains(image, "@") {
		return image, nil
	}
	return image + "@sha256:base", nil
}

// Publish evaluates the container and pushes it under ref.
func (f *fake) Publish(ctx context.Context, ref string) (string, error) {
	if _, err := f.Stdout(ctx); err != nil {
		return "", err
	}
	if f.eng.registry == nil {
		f.eng.registry = map[string]string{}
	}
	// As Dagger's: the ref as given, with the digest pushed.
	digest := fmt.Sprintf("%s@sha256:%d", ref, len(f.eng.published)+1)
	f.eng.registry[ref] = digest
	f.eng.published = append(f.eng.published, ref)
	return digest, nil
}

// SourceFileDigest is the file's contents, marked as a digest.
func (f *fake) SourceFileDigest(_ context.Context, rel string) (string, error) {
	data, ok := f.eng.sources[rel]
	if !ok {
		data = "contents of " + rel
	}
	return "sha256:" + data, nil
}
func (f *fake) WithEnvVariable(name, value string) Container {
	n := f.clone("env " + name + "=" + value)
	n.env[name] = value
	return n
}
func (f *fake) WithoutEnvVariable(name string) Container {
	n := f.clone("unset " + name)
	delete(n.env, name)
	return n
}
func (f *fake) WithWorkdir(path string) Container {
	n := f.clone("workdir " + path)
	n.dir = path
	return n
}
func (f *fake) WithMountedCache(path, key string, sharing CacheSharing) Container {
	return f.clone(fmt.Sprintf("cache %s %s %s", key, path, sharing))
}
func (f *fake) FromCheckoutDockerfile(dockerfile string) Container {
	return f.clone("build " + dockerfile)
}
func (f *fake) WithoutMount(path string) Container { return f.clone("unmount " + path) }
func (f *fake) WithMountedTemp(path string, size int64) Container {
	return f.clone(fmt.Sprintf("tmpfs %s %d", path, size))
}
func (f *fake) WithSourceFile(path, rel string) Container {
	n := f.clone("file " + rel + " " + path)
	n.files[path] = "source:" + rel
	return n
}
func (f *fake) WithSourceDirectory(path string) Container { return f.clone("source " + path) }
func (f *fake) WithDataDirectory(path string, name DataName) Container {
	return f.clone(fmt.Sprintf("data %s %s", name, path))
}
func (f *fake) WithSecretVariable(name string) Container { return f.clone("secret " + name) }
func (f *fake) WithGPUs(devices []string) Container {
	return f.clone("gpus " + strings.Join(devices, ","))
}
func (f *fake) WithExec(argv []string, opts ExecOptions) Container {
	if len(argv) > 3 && (argv[0] == "bash" && argv[1] == "-c" || argv[0] == "python3" && argv[1] == "-ISc") {
		name := "<" + strings.TrimPrefix(argv[3], "miles-ci-") + ">"
		argv = append([]string{name}, argv[4:]...)
	}
	n := f.clone("exec " + strings.Join(argv, " "))
	env := map[string]string{}
	for k, v := range f.env {
		env[k] = v
	}
	n.execs = append(n.execs, fakeExec{argv: argv, env: env, dir: f.dir, opts: opts})
	return n
}
func (f *fake) WithNewFile(path, contents string) Container {
	n := f.clone("newfile " + path)
	n.files[path] = contents
	return n
}

// eval replays the execs; an exit status other than 0 without AnyExitCode
// is an error. A handler's write to "<stderr>" is the command's stderr.
func (f *fake) eval(ctx context.Context) (stdout string, code int, files map[string]string, err error) {
	stdout, code, _, files, err = f.evalAll(ctx)
	return stdout, code, files, err
}

func (f *fake) evalAll(ctx context.Context) (stdout string, code int, stderr string, files map[string]string, err error) {
	files = map[string]string{}
	for k, v := range f.files {
		files[k] = v
	}
	for _, e := range f.execs {
		f.eng.ran = append(f.eng.ran, strings.Join(e.argv, " "))
		out, c, writes := f.eng.handler(e, files)
		stderr = writes["<stderr>"]
		for k, v := range writes {
			if k != "<stderr>" {
				files[k] = v
			}
		}
		if c == hangs {
			// A command that never ends: only the caller's deadline stops it.
			<-ctx.Done()
			return "", 0, "", nil, ctx.Err()
		}
		stdout, code = out, c
		if c != 0 && !e.opts.AnyExitCode {
			return "", c, "", nil, fmt.Errorf("exec %s: exit code %d", strings.Join(e.argv, " "), c)
		}
	}
	return stdout, code, stderr, files, nil
}

func (f *fake) Stdout(ctx context.Context) (string, error) {
	out, _, _, err := f.eval(ctx)
	return out, err
}
func (f *fake) Stderr(ctx context.Context) (string, error) {
	_, _, stderr, _, err := f.evalAll(ctx)
	return stderr, err
}
func (f *fake) ExitCode(ctx context.Context) (int, error) {
	_, code, _, err := f.eval(ctx)
	return code, err
}

// Stat knows regular files, "<symlink>" and "<fifo>" contents, and folders
// (ResultsDir, or any prefix of a file).
func (f *fake) Stat(_ context.Context, path string) (FileInfo, error) {
	_, _, files, err := f.eval(context.Background())
	if err != nil {
		return FileInfo{}, err
	}
	if data, ok := files[path]; ok {
		switch data {
		case "<symlink>":
			return FileInfo{Type: FileSymlink}, nil
		case "<fifo>":
			return FileInfo{Type: FileOther}, nil
		}
		return FileInfo{Type: FileRegular, Size: len(data)}, nil
	}
	for k := range files {
		if strings.HasPrefix(k, path+"/") {
			return FileInfo{Type: FileDirectory}, nil
		}
	}
	if path == ResultsDir {
		return FileInfo{Type: FileDirectory}, nil
	}
	return FileInfo{Type: FileMissing}, nil
}
func (f *fake) Entries(_ context.Context, path string) ([]string, error) {
	_, _, files, err := f.eval(context.Background())
	var out []string
	for k := range files {
		if rest, ok := strings.CutPrefix(k, path+"/"); ok && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	slices.Sort(out)
	return out, err
}
func (f *fake) ReadFile(_ context.Context, path string, limit int) (string, error) {
	_, _, files, err := f.eval(context.Background())
	if err != nil {
		return "", err
	}
	data, ok := files[path]
	if !ok {
		return "", fmt.Errorf("%s: no such file", path)
	}
	if len(data) > limit {
		return "", fmt.Errorf("%s: too large", path)
	}
	return data, nil
}
