package deps

import (
	"strings"
	"testing"
)

// fnmatch is Python's fnmatch.fnmatchcase through globRegexp.
func fnmatch(name, pat string) bool {
	re := globRegexp(pat)
	return re != nil && re.MatchString(name)
}

// TestFnmatch holds fnmatch to Python's fnmatch.fnmatchcase (each row's
// answer is what Python 3 gives).
func TestFnmatch(t *testing.T) {
	tests := []struct {
		name, pat string
		want      bool
	}{
		{"docker/patch/a/b.patch", "docker/patch/*", true},
		{"docker/patch/", "docker/patch/*", true},
		{"docker/Dockerfile.rocm", "docker/Dockerfile", false},
		{"docker/Dockerfile", "docker/Dockerfile", true},
		{"req.txt", "req?txt", true},
		{"reqs.txt", "req?txt", false},
		{"a1", "a[0-9]", true},
		{"ab", "a[!0-9]", true},
		{"a1", "a[!0-9]", false},
		{"a[", "a[", true},
		{"a]", "a[]]", true},
		{"a^", "a[^x]", true},
		{"ax", "a[^x]", true},
		{"a.b", "a.b", true},
		{"axb", "a.b", false},
		{`a\b`, `a[\]b`, true},
		{"a/b", "a?b", true},
		{"DOCKER/Dockerfile", "docker/Dockerfile", false},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+tt.pat, func(t *testing.T) {
			if got := fnmatch(tt.name, tt.pat); got != tt.want {
				t.Errorf("fnmatch(%q, %q): wanted %v, got %v", tt.name, tt.pat, tt.want, got)
			}
		})
	}
}

func TestParseImageInputs(t *testing.T) {
	tests := []struct {
		name, src string
		want, err string
	}{
		{"a tuple", "import sys\nINPUT_GLOBS = (\n    \"docker/Dockerfile\",\n    \"docker/extra/*\",  # a comment\n)\nLABEL = 'x'\n", "docker/Dockerfile docker/extra/*", ""},
		{"a list", "INPUT_GLOBS = ['requirements.txt']\n", "requirements.txt", ""},
		{"the last assignment wins", "INPUT_GLOBS = ('a',)\nINPUT_GLOBS = ('b',)\n", "b", ""},
		{"missing", "GLOBS = ('a',)\n", "", "docker/image_inputs.py has no INPUT_GLOBS"},
		{"not literal", "INPUT_GLOBS = tuple(load())\n", "", "docker/image_inputs.py:1: INPUT_GLOBS is not a tuple or list of string literals"},
		{"not a string", "INPUT_GLOBS = ('a', 3)\n", "", "docker/image_inputs.py:1: INPUT_GLOBS holds a number, not a string"},
		{"not Python", "INPUT_GLOBS = ('a',\n", "", "docker/image_inputs.py: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := ParseImageInputs(tt.src)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("wanted an error with %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil || strings.Join(in.Globs, " ") != tt.want {
				t.Errorf("wanted %q, got %q (%v)", tt.want, in.Globs, err)
			}
		})
	}
}

func TestDecidePRImage(t *testing.T) {
	declared, err := ParseImageInputs(`INPUT_GLOBS = ("docker/Dockerfile", "docker/patch/*", "docker/extra.sh")`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		isPR, fork   bool
		number       int
		changed      []string
		in           BuildInputs
		build        bool
		tag, because string
	}{
		{"a cron", false, false, 0, nil, BuildInputs{}, false, "", "not a pull request"},
		{"no input changed", true, false, 7, []string{"miles/x.py", "docker/Dockerfile.rocm"}, BuildInputs{}, false, "", "match the base branch"},
		{"the Dockerfile changed", true, false, 7, []string{"miles/x.py", "docker/Dockerfile"}, BuildInputs{}, true, "pr-7", "(docker/Dockerfile): build radixark/miles:pr-7"},
		{"a fork", true, true, 7, []string{"requirements.txt"}, BuildInputs{}, false, "", "a fork PR cannot publish an image"},
		{"no number", true, false, 0, []string{"requirements.txt"}, BuildInputs{}, false, "", "no number to tag pr-N with"},
		{"a nested patch, the older form", true, false, 9, []string{"docker/patch/a/b.patch"}, BuildInputs{}, true, "pr-9", "docker/patch/a/b.patch"},
		{"an input only the checkout declares", true, false, 9, []string{"docker/extra.sh"}, declared, true, "pr-9", "(docker/extra.sh)"},
		{"the older list does not know it", true, false, 9, []string{"docker/extra.sh"}, BuildInputs{}, false, "", "match the base branch"},
		{"requirements.txt is not among the declared", true, false, 9, []string{"requirements.txt"}, declared, false, "", "match the base branch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DecidePRImage(tt.isPR, tt.fork, tt.number, tt.changed, tt.in)
			if d.Build != tt.build || d.Tag != tt.tag || !strings.Contains(d.Reason, tt.because) {
				t.Errorf("wanted build=%v tag %q because %q, got %+v", tt.build, tt.tag, tt.because, d)
			}
		})
	}
}

func FuzzImageInputs(f *testing.F) {
	f.Add("INPUT_GLOBS = ('docker/*', 'a[!b]?')\n", "docker/x")
	f.Add("INPUT_GLOBS = ['[', '[]', '[!]', '\\\\']\n", "[")
	f.Fuzz(func(t *testing.T, src, path string) {
		in, err := ParseImageInputs(src)
		if err != nil {
			return
		}
		in.Match(path)
	})
}
