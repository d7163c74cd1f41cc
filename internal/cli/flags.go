package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// flagKind is how a flag takes its value.
type flagKind int

const (
	kindString flagKind = iota
	kindBool
	kindInt
	kindList // zero or more words, like argparse's nargs="*"
)

type flagSpec struct {
	name  string
	kind  flagKind
	help  string
	str   *string
	b     *bool
	n     *optInt
	list  *[]string
	value string // placeholder in usage, e.g. DIR
}

// optInt is an integer flag that remembers whether it was given.
type optInt struct {
	Set   bool
	Value int
}

// flagSet parses argparse-style flags: --name value, --name=value, boolean
// switches, and lists that take every following word up to the next flag, so
// a run_suite.py command line works unchanged.
type flagSet struct {
	cmd   string
	usage string
	specs []*flagSpec
	seen  map[string]bool
}

// errHelp is returned by parse when -h or --help was given.
var errHelp = errors.New("help requested")

func newFlagSet(cmd, usage string) *flagSet {
	return &flagSet{cmd: cmd, usage: usage, seen: map[string]bool{}}
}

func (fs *flagSet) add(s *flagSpec) { fs.specs = append(fs.specs, s) }

func (fs *flagSet) String(name, value, help string) *string {
	p := new(string)
	fs.add(&flagSpec{name: name, kind: kindString, help: help, str: p, value: value})
	return p
}

func (fs *flagSet) Bool(name, help string) *bool {
	p := new(bool)
	fs.add(&flagSpec{name: name, kind: kindBool, help: help, b: p})
	return p
}

func (fs *flagSet) Int(name, value, help string) *optInt {
	p := new(optInt)
	fs.add(&flagSpec{name: name, kind: kindInt, help: help, n: p, value: value})
	return p
}

func (fs *flagSet) List(name, value, help string) *[]string {
	p := new([]string)
	fs.add(&flagSpec{name: name, kind: kindList, help: help, list: p, value: value})
	return p
}

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
			*s.list = words // like argparse, a repeated list flag replaces the earlier one
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
				*s.str = v
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("--%s needs an integer, got %q", name, v)
			}
			*s.n = optInt{Set: true, Value: n}
		}
	}
	return nil
}

func (fs *flagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: miles-ci %s %s\n\nflags:\n", fs.cmd, fs.usage)
	for _, s := range fs.specs {
		left := "--" + s.name
		switch s.kind {
		case kindString, kindInt:
			left += " " + s.value
		case kindList:
			left += " [" + s.value + " ...]"
		}
		fmt.Fprintf(w, "  %-32s %s\n", left, s.help)
	}
}

// parseOrExit parses args; on failure it prints why (or the usage for -h) and
// returns the exit code to use, else -1.
func (fs *flagSet) parseOrExit(args []string, env Env) int {
	err := fs.parse(args)
	switch {
	case err == nil:
		return -1
	case errors.Is(err, errHelp):
		fs.printUsage(env.Stdout)
		return 0
	default:
		fmt.Fprintf(env.Stderr, "miles-ci %s: %v\n", fs.cmd, err)
		fmt.Fprintf(env.Stderr, "usage: miles-ci %s %s\n", fs.cmd, fs.usage)
		return 2
	}
}
