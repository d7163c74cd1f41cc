package deps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/policy"
)

// LockFileName is the release lockfile at the root of a release branch.
const LockFileName = "release-lock.json"

// maxLockSize bounds what ParseLock reads; a real lockfile is under 1 KiB.
var maxLockSize = int(fsinput.Lockfile.Max)

// The dependency repositories a lockfile must name: the CI checkouts fetch
// from these origins, so a lockfile naming another repository cannot be honoured.
const (
	SGLangRepo   = "sgl-project/sglang"
	MegatronRepo = "radixark/Megatron-LM"
)

// Lock is release-lock.json: the dependency triplet a release branch freezes.
// Field order is the file's key order.
type Lock struct {
	// ReleaseBranch is the branch the file was frozen for, release/vX.Y.Z.
	ReleaseBranch string `json:"release_branch"`
	// SGLangRepo is sgl-project/sglang.
	SGLangRepo string `json:"sglang_repo"`
	// SGLangBranch is the branch SGLangCommit was read from (sglang-miles).
	SGLangBranch string `json:"sglang_branch"`
	// SGLangCommit is the frozen SGLang commit, 40 lowercase hex digits.
	SGLangCommit string `json:"sglang_commit"`
	// MegatronRepo is radixark/Megatron-LM.
	MegatronRepo string `json:"megatron_repo"`
	// MegatronBranch is the branch MegatronCommit was read from (miles-main).
	MegatronBranch string `json:"megatron_branch"`
	// MegatronCommit is the frozen Megatron-LM commit, 40 lowercase hex digits.
	MegatronCommit string `json:"megatron_commit"`
	// CIImageTag is the radixark/miles tag release CI runs in.
	CIImageTag string `json:"ci_image_tag"`
	// WheelsCU130X86 fingerprints the cu130-x86_64 wheels release (audit only).
	WheelsCU130X86 string `json:"wheels_fingerprint_cu130_x86_64"`
	// WheelsCU130ARM fingerprints the cu130-aarch64 wheels release (audit only).
	WheelsCU130ARM string `json:"wheels_fingerprint_cu130_aarch64"`
	// WheelsCU129X86 fingerprints the cu129-x86_64 wheels release (audit only).
	WheelsCU129X86 string `json:"wheels_fingerprint_cu129_x86_64"`
}

// lockField ties a JSON key to its Lock field and its check.
type lockField struct {
	key   string
	get   func(*Lock) *string
	check func(string) error
}

var (
	commitSHA       = lazyre.New(`^[0-9a-f]{40}$`)
	sha256Hex       = lazyre.New(`^[0-9a-f]{64}$`)
	releaseBranchRe = lazyre.New(`^release/v[0-9]+\.[0-9]+\.[0-9]+$`)
)

func exactly(want string) func(string) error {
	return func(v string) error {
		if v != want {
			return fmt.Errorf("must be %q (the repository the CI checkouts fetch from), got %q", want, v)
		}
		return nil
	}
}

func checkCommit(v string) error {
	if !commitSHA.MatchString(v) {
		return fmt.Errorf("must be a full commit SHA of 40 lowercase hex digits, got %q", v)
	}
	return nil
}

func checkBranch(v string) error {
	if err := CheckPin(v); err != nil || v[0] == '#' {
		return fmt.Errorf("must be a branch name, e.g. %q or %q, got %q", DefaultSGLangBranch, DefaultMegatronBranch, v)
	}
	return nil
}

func checkFingerprint(v string) error {
	if v != "" && !sha256Hex.MatchString(v) {
		return fmt.Errorf("must be a sha256 of 64 lowercase hex digits or empty, got %q", v)
	}
	return nil
}

// lockFields lists the keys in file order.
var lockFields = []lockField{
	{"release_branch", func(l *Lock) *string { return &l.ReleaseBranch }, func(v string) error {
		if !releaseBranchRe.MatchString(v) {
			return fmt.Errorf("must match release/vX.Y.Z, e.g. \"release/v0.3.0\", got %q", v)
		}
		return nil
	}},
	{"sglang_repo", func(l *Lock) *string { return &l.SGLangRepo }, exactly(SGLangRepo)},
	{"sglang_branch", func(l *Lock) *string { return &l.SGLangBranch }, checkBranch},
	{"sglang_commit", func(l *Lock) *string { return &l.SGLangCommit }, checkCommit},
	{"megatron_repo", func(l *Lock) *string { return &l.MegatronRepo }, exactly(MegatronRepo)},
	{"megatron_branch", func(l *Lock) *string { return &l.MegatronBranch }, checkBranch},
	{"megatron_commit", func(l *Lock) *string { return &l.MegatronCommit }, checkCommit},
	{"ci_image_tag", func(l *Lock) *string { return &l.CIImageTag }, func(v string) error {
		if !dockerTag.MatchString(v) {
			return fmt.Errorf("must be a Docker tag, not a full image name, e.g. \"release-v0.3.0-ci\", got %q", v)
		}
		return nil
	}},
	{"wheels_fingerprint_cu130_x86_64", func(l *Lock) *string { return &l.WheelsCU130X86 }, checkFingerprint},
	{"wheels_fingerprint_cu130_aarch64", func(l *Lock) *string { return &l.WheelsCU130ARM }, checkFingerprint},
	{"wheels_fingerprint_cu129_x86_64", func(l *Lock) *string { return &l.WheelsCU129X86 }, checkFingerprint},
}

// ParseLock decodes and validates a lockfile. name is used in errors (the
// path as the user knows it). Every missing, repeated, unknown or bad field
// is reported, one per line, each naming the file and the field.
func ParseLock(name string, data []byte) (Lock, error) {
	if len(data) > maxLockSize {
		return Lock{}, fmt.Errorf("%s: file is %d bytes, more than the %d a lockfile can be; regenerate it with the release branch cut", name, len(data), maxLockSize)
	}
	values, err := decodeFlatObject(data)
	if err != nil {
		return Lock{}, fmt.Errorf("%s: %w; the file must be one JSON object of string fields", name, err)
	}
	var lock Lock
	var errs []error
	known := map[string]bool{}
	for _, f := range lockFields {
		known[f.key] = true
		v, ok := values.get(f.key)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: field %s is missing; add it (release-branch-cut.yml writes all %d fields)", name, f.key, len(lockFields)))
		case v.dup:
			errs = append(errs, fmt.Errorf("%s: field %s appears more than once; keep one", name, f.key))
		case !v.isString:
			errs = append(errs, fmt.Errorf("%s: field %s must be a JSON string, got %s", name, f.key, v.kind))
		default:
			if err := f.check(v.text); err != nil {
				errs = append(errs, fmt.Errorf("%s: field %s %w", name, f.key, err))
				continue
			}
			*f.get(&lock) = v.text
		}
	}
	for _, k := range values.order {
		if !known[k] {
			errs = append(errs, fmt.Errorf("%s: field %q is unknown; remove it or fix its name", name, k))
		}
	}
	if len(errs) > 0 {
		return Lock{}, errors.Join(errs...)
	}
	return lock, nil
}

// ReadLock reads release-lock.json from the root of the Miles checkout dir
// ("" is the current folder; see policy.CheckCheckout). It returns nil and no
// error when the file does not exist (not a release branch).
func ReadLock(dir string) (*Lock, error) {
	dir, err := policy.CheckCheckout(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockFileName)
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file; the lockfile must be a plain committed file", path)
	}
	data, err := ReadLockFile(path)
	if err != nil {
		return nil, err
	}
	lock, err := ParseLock(path, data)
	if err != nil {
		return nil, err
	}
	return &lock, nil
}

// ReadLockFile reads a lockfile at path, a regular file of at most
// fsinput.Lockfile.Max bytes; a bigger one is an error giving its real size.
func ReadLockFile(path string) ([]byte, error) {
	data, err := fsinput.ReadFile(path, fsinput.Lockfile)
	if err != nil {
		return nil, fmt.Errorf("%w; give the %s a release branch cut writes", err, LockFileName)
	}
	return data, nil
}

// Validate checks every field of a lock built in code.
func (l Lock) Validate() error {
	var errs []error
	for _, f := range lockFields {
		if err := f.check(*f.get(&l)); err != nil {
			errs = append(errs, fmt.Errorf("%s: field %s %w", LockFileName, f.key, err))
		}
	}
	return errors.Join(errs...)
}

// Format renders the lock as the branch cut writes it: a JSON object with two
// spaces of indent, keys in file order, and a final newline.
func (l Lock) Format() ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("%s: %w", LockFileName, err)
	}
	return b.Bytes(), nil
}

// BranchCut is what a release branch cut freezes into a Lock; NewLock adds
// the dependency repositories and their default branches.
type BranchCut struct {
	// Branch is the release branch, release/vX.Y.Z.
	Branch string
	// SGLangCommit is the SGLang commit read from its default branch head.
	SGLangCommit string
	// MegatronCommit is the Megatron-LM commit read from its default branch head.
	MegatronCommit string
	// ImageTag is the CI image tag the release runs with.
	ImageTag string
	// WheelsCU130X86 fingerprints the cu130-x86_64 wheels release ("" for none).
	WheelsCU130X86 string
	// WheelsCU130ARM fingerprints the cu130-aarch64 wheels release ("" for none).
	WheelsCU130ARM string
	// WheelsCU129X86 fingerprints the cu129-x86_64 wheels release ("" for none).
	WheelsCU129X86 string
}

// ReleaseImageTag is the CI image tag a release branch cut records when none
// is given: release/vX.Y.Z runs on release-vX.Y.Z-ci. A branch outside
// release/ is an error naming the flag.
func ReleaseImageTag(branch string) (string, error) {
	version, ok := strings.CutPrefix(branch, "release/")
	if !ok || version == "" {
		return "", fmt.Errorf("--branch %q: a release branch is release/vX.Y.Z", branch)
	}
	return "release-" + version + "-ci", nil
}

// NewLock is the lock a branch cut freezes: the cut's branch, dependency
// commits, CI image tag and wheel fingerprints, with the dependency
// repositories and their default branches. It returns the lock and
// Validate's error.
func NewLock(c BranchCut) (Lock, error) {
	l := Lock{
		ReleaseBranch:  c.Branch,
		SGLangRepo:     SGLangRepo,
		SGLangBranch:   DefaultSGLangBranch,
		SGLangCommit:   c.SGLangCommit,
		MegatronRepo:   MegatronRepo,
		MegatronBranch: DefaultMegatronBranch,
		MegatronCommit: c.MegatronCommit,
		CIImageTag:     c.ImageTag,
		WheelsCU130X86: c.WheelsCU130X86,
		WheelsCU130ARM: c.WheelsCU130ARM,
		WheelsCU129X86: c.WheelsCU129X86,
	}
	return l, l.Validate()
}

// WriteLock writes the lock to dir/release-lock.json.
func WriteLock(dir string, l Lock) error {
	data, err := l.Format()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, LockFileName)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// jsonValue is one top-level value of the lockfile object.
type jsonValue struct {
	text     string
	isString bool
	kind     string
	dup      bool
}

type flatObject struct {
	order  []string
	values map[string]*jsonValue
}

func (o flatObject) get(k string) (*jsonValue, bool) {
	v, ok := o.values[k]
	return v, ok
}

// decodeFlatObject reads one JSON object, keeping key order and noting
// repeated keys, which encoding/json would silently collapse.
func decodeFlatObject(data []byte) (flatObject, error) {
	obj := flatObject{values: map[string]*jsonValue{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return obj, jsonErr(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return obj, fmt.Errorf("top level is %s, not an object", describeToken(tok))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return obj, jsonErr(err)
		}
		key, ok := tok.(string)
		if !ok {
			return obj, fmt.Errorf("not valid JSON: object key is %s", describeToken(tok))
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return obj, fmt.Errorf("at field %s: %w", key, jsonErr(err))
		}
		v := &jsonValue{kind: describeRaw(raw)}
		if v.kind == "a string" {
			if err := json.Unmarshal(raw, &v.text); err != nil {
				return obj, fmt.Errorf("not valid JSON at field %s: %w", key, err)
			}
			v.isString = true
		}
		if prev, seen := obj.values[key]; seen {
			prev.dup = true
			continue
		}
		obj.order = append(obj.order, key)
		obj.values[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return obj, jsonErr(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return obj, fmt.Errorf("not valid JSON: extra data after the object")
	}
	return obj, nil
}

// jsonErr words a decoder error; the decoder says a bare "EOF" for a file
// that ends too early.
func jsonErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not valid JSON: the file ends too early")
	}
	return fmt.Errorf("not valid JSON: %w", err)
}

func describeRaw(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(t))
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}
