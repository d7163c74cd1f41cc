package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// flagKind is how a flag takes its value.
type flagKind int

const (
	kindString flagKind = iota
	kindBool
	kindInt
	kindList // zero or more words, like argparse's nargs="*"; repeats add up
)

// flagSpec is one flag of a subcommand.
type flagSpec struct {
	name  string
	kind  flagKind
	help  string
	value string // placeholder in usage, e.g. DIR
	str   *string
	b     *bool
	n     *optInt
	list  *[]string
	// required flags must be given (or their env var set).
	required bool
	// envVar is the workflow env var a string flag falls back to.
	envVar string
	// choices are the values a string flag accepts on the command line.
	choices []string
	// min and max bound an integer flag (both inclusive).
	min, max int
}

// flagOption refines a flag: required, an env fallback or choices.
type flagOption func(*flagSpec)

// required marks a flag that must be given (or its env var set).
func required() flagOption { return func(s *flagSpec) { s.required = true } }

// fromEnv makes a string flag fall back to the workflow's env var when absent.
func fromEnv(name string) flagOption { return func(s *flagSpec) { s.envVar = name } }

// oneOf restricts a string flag's command-line value to the given words.
func oneOf(values ...string) flagOption { return func(s *flagSpec) { s.choices = values } }

// optInt is an integer flag that remembers whether it was given.
type optInt struct {
	Set   bool
	Value int
}

// ptr is the flag as a request's optional integer: nil when not given.
func (o *optInt) ptr() *int {
	if !o.Set {
		return nil
	}
	v := o.Value
	return &v
}

// flagSet parses one subcommand's flags the way argparse does in Miles'
// run_suite.py, so a workflow's command line works unchanged: --name value,
// --name=value, boolean switches, and lists that take every following word up
// to the next flag. Two things differ from argparse, on purpose: a repeated
// list flag adds its words to the earlier ones (--substitute h100=h200
// --substitute b200=h200 is both), where argparse keeps only the last; and a
// repeated one-value flag (a string or an integer) is a usage error naming
// it, where argparse silently keeps the last. Every subcommand uses it, so
// every subcommand has the same flag style, the same -h layout (printUsage)
// and the same usage errors (exit 2). Declare flags with String, Bool, Int
// and List (options: required, fromEnv, oneOf), then call parseOrExit.
type flagSet struct {
	cmd      string
	synopsis string // what follows "usage: miles-ci CMD "; more lines start with "miles-ci CMD"
	summary  string
	env      Env
	specs    []*flagSpec
	seen     map[string]bool
	// checks run after parsing, for rules between flags (usage errors).
	checks []func() error
}

// errHelp is returned by parse when -h or --help was given.
var errHelp = errors.New("help requested")

// newFlagSet starts the flags of subcommand cmd; synopsis is its usage line
// (several alternatives separated by "\n"), summary its one-line description.
func newFlagSet(cmd, synopsis string, env Env) *flagSet {
	return &flagSet{cmd: cmd, synopsis: synopsis, summary: commands[cmd].summary, env: env, seen: map[string]bool{}}
}

func (fs *flagSet) add(s *flagSpec, opts []flagOption) *flagSpec {
	for _, o := range opts {
		o(s)
	}
	fs.specs = append(fs.specs, s)
	return s
}

// String declares a flag taking one word; value names it in the usage.
func (fs *flagSet) String(name, value, help string, opts ...flagOption) *string {
	p := new(string)
	fs.add(&flagSpec{name: name, kind: kindString, help: help, str: p, value: value}, opts)
	return p
}

// Bool declares a switch.
func (fs *flagSet) Bool(name, help string, opts ...flagOption) *bool {
	p := new(bool)
	fs.add(&flagSpec{name: name, kind: kindBool, help: help, b: p}, opts)
	return p
}

// Int declares an integer flag accepting lo..hi (both inclusive); every
// count has a range, so no value can make a command allocate without bound.
func (fs *flagSet) Int(name, value, help string, lo, hi int, opts ...flagOption) *optInt {
	p := new(optInt)
	fs.add(&flagSpec{name: name, kind: kindInt, help: help, n: p, value: value, min: lo, max: hi}, opts)
	return p
}

// List declares a flag taking zero or more words; given again, it takes
// more (the words of every occurrence, in order).
func (fs *flagSet) List(name, value, help string, opts ...flagOption) *[]string {
	p := new([]string)
	fs.add(&flagSpec{name: name, kind: kindList, help: help, list: p, value: value}, opts)
	return p
}

// check adds a rule between flags that parse checks last; its error is a
// usage error.
func (fs *flagSet) check(rule func() error) { fs.checks = append(fs.checks, rule) }

// Given reports whether a flag appeared on the command line.
func (fs *flagSet) Given(name string) bool { return fs.seen[name] }

func (fs *flagSet) lookup(name string) *flagSpec {
	for _, s := range fs.specs {
		if s.name == name {
			return s
		}
	}
	return nil
}

func isFlag(arg string) bool { return strings.HasPrefix(arg, "-") && len(arg) > 1 }

// parse reads args, then fills absent flags from their env vars and checks
// required flags, choices and ranges.
func (fs *flagSet) parse(args []string) error {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "-h" || arg == "--help" {
			return errHelp
		}
		if !strings.HasPrefix(arg, "--") {
			return fmt.Errorf("unexpected argument %q; every input is a --flag", arg)
		}
		name, inline, hasInline := strings.Cut(arg[2:], "=")
		s := fs.lookup(name)
		if s == nil {
			return fmt.Errorf("unknown flag --%s", name)
		}
		if fs.seen[name] && (s.kind == kindString || s.kind == kindInt) {
			return fmt.Errorf("--%s is given twice; it takes one value (%s), so give it once", name, s.value)
		}
		fs.seen[name] = true
		switch s.kind {
		case kindBool:
			if hasInline {
				v, err := strconv.ParseBool(inline)
				if err != nil {
					return fmt.Errorf("--%s takes no value or true/false, got %q", name, inline)
				}
				*s.b = v
			} else {
				*s.b = true
			}
		case kindList:
			var words []string
			if hasInline {
				words = append(words, inline)
			}
			for i+1 < len(args) && !isFlag(args[i+1]) {
				i++
				words = append(words, args[i])
			}
			*s.list = append(*s.list, words...) // unlike argparse, a repeated list flag adds up
		default:
			v := inline
			if !hasInline {
				if i+1 >= len(args) || (isFlag(args[i+1]) && s.kind != kindInt) {
					return fmt.Errorf("--%s needs a value (%s)", name, s.value)
				}
				i++
				v = args[i]
			}
			if s.kind == kindString {
				if len(s.choices) > 0 && !slices.Contains(s.choices, v) {
					return fmt.Errorf("--%s %q is not one of %s", name, v, strings.Join(s.choices, ", "))
				}
				*s.str = v
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("--%s needs an integer in %d..%d, got %q", name, s.min, s.max, v)
			}
			if n < s.min || n > s.max {
				return fmt.Errorf("--%s must be in %d..%d, got %d", name, s.min, s.max, n)
			}
			*s.n = optInt{Set: true, Value: n}
		}
	}
	for _, s := range fs.specs {
		if s.kind == kindString && s.envVar != "" && !fs.seen[s.name] {
			*s.str = fs.env.Getenv(s.envVar)
		}
		if s.required && !fs.seen[s.name] && (s.kind != kindString || *s.str == "") {
			msg := "--" + s.name + " is required"
			if len(s.choices) > 0 {
				msg += "; use " + strings.Join(s.choices, ", ")
			}
			if s.envVar != "" {
				msg += " (or set " + s.envVar + ")"
			}
			return errors.New(msg)
		}
	}
	for _, rule := range fs.checks {
		if err := rule(); err != nil {
			return err
		}
	}
	return nil
}

// usageLines are the synopsis lines: each alternative starts with
// "miles-ci CMD"; a synopsis line starting with a blank continues the one
// before it.
func (fs *flagSet) usageLines() []string {
	var lines []string
	head := "miles-ci " + fs.cmd + " "
	for i, alt := range strings.Split(fs.synopsis, "\n") {
		prefix := "usage: "
		if i > 0 {
			prefix = "       "
		}
		if rest, ok := strings.CutPrefix(alt, " "); ok && i > 0 {
			lines = append(lines, prefix+strings.Repeat(" ", len(head))+strings.TrimLeft(rest, " "))
			continue
		}
		lines = append(lines, prefix+head+alt)
	}
	return lines
}

// helpColumn is where flag descriptions start; a longer flag puts its
// description on the next line, as argparse does.
const helpColumn = 30

// printUsage writes the -h text: synopsis, summary, and one row per flag.
func (fs *flagSet) printUsage(w io.Writer) {
	var b strings.Builder
	for _, l := range fs.usageLines() {
		b.WriteString(l + "\n")
	}
	if fs.summary != "" {
		b.WriteString("\n" + fs.summary + "\n")
	}
	b.WriteString("\nflags:\n")
	row := func(left, help string) {
		if len(left) > helpColumn-4 {
			fmt.Fprintf(&b, "  %s\n%s%s\n", left, strings.Repeat(" ", helpColumn), help)
			return
		}
		fmt.Fprintf(&b, "  %-*s%s\n", helpColumn-2, left, help)
	}
	row("-h, --help", "show this help and exit")
	for _, s := range fs.specs {
		left := "--" + s.name
		switch {
		case len(s.choices) > 0:
			left += " " + strings.Join(s.choices, "|")
		case s.kind == kindString || s.kind == kindInt:
			left += " " + s.value
		case s.kind == kindList:
			left += " [" + s.value + " ...]"
		}
		help := s.help
		var notes []string
		if s.required {
			notes = append(notes, "required")
		}
		if s.kind == kindInt {
			notes = append(notes, fmt.Sprintf("%d..%d", s.min, s.max))
		}
		if s.envVar != "" {
			notes = append(notes, "env "+s.envVar)
		}
		if len(notes) > 0 {
			help += " (" + strings.Join(notes, "; ") + ")"
		}
		row(left, help)
	}
	io.WriteString(w, b.String())
}

// usageError prints a usage error and the synopsis on stderr and returns
// exit code 2.
func (fs *flagSet) usageError(format string, args ...any) int {
	var b strings.Builder
	fmt.Fprintf(&b, "miles-ci %s: %s\n", fs.cmd, fmt.Sprintf(format, args...))
	for _, l := range fs.usageLines() {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "Run 'miles-ci %s -h' for every flag.\n", fs.cmd)
	io.WriteString(fs.env.Stderr, b.String())
	return 2
}

// parseOrExit parses args; on failure it prints why (or the usage for -h) and
// returns the exit code to use, else -1.
func (fs *flagSet) parseOrExit(args []string) int {
	err := fs.parse(args)
	switch {
	case err == nil:
		return -1
	case errors.Is(err, errHelp):
		fs.printUsage(fs.env.Stdout)
		return 0
	default:
		return fs.usageError("%v", err)
	}
}
