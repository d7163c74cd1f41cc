package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
)

// maxJUnitBytes bounds the JUnit XML read; pytest's report of a CPU shard is
// well under a MiB even with captured output.
const maxJUnitBytes = 64 << 20

// Case is one test case of a JUnit report.
type Case struct {
	// Classname is pytest's dotted module path (plus the class), e.g. tests.fast.test_loss.
	Classname string
	// Name is the test function.
	Name string
	// File is the case's file when the report carries it (xunit1), else "".
	File string
	// TimeS is the case's time in seconds.
	TimeS float64
	// Failed is set for a failure or an error.
	Failed bool
	// Skipped is set for a skipped case.
	Skipped bool
}

type xmlCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	File      string    `xml:"file,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *struct{} `xml:"failure"`
	Error     *struct{} `xml:"error"`
	Skipped   *struct{} `xml:"skipped"`
}

type xmlSuite struct {
	Cases  []xmlCase  `xml:"testcase"`
	Suites []xmlSuite `xml:"testsuite"`
}

// ParseJUnit reads the test cases of a JUnit XML report (pytest's
// --junitxml, a <testsuites> or a bare <testsuite> root).
func ParseJUnit(data []byte) ([]Case, error) {
	if len(data) > maxJUnitBytes {
		return nil, fmt.Errorf("junit.xml: %d bytes, more than the %d a shard's report holds", len(data), maxJUnitBytes)
	}
	var root xmlSuite
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("junit.xml is empty")
		}
		return nil, fmt.Errorf("junit.xml: %w", err)
	}
	var out []Case
	var walk func(s xmlSuite, depth int) error
	walk = func(s xmlSuite, depth int) error {
		if depth > 16 {
			return fmt.Errorf("junit.xml: test suites nested more than 16 deep")
		}
		for _, c := range s.Cases {
			t, _ := strconv.ParseFloat(c.Time, 64)
			out = append(out, Case{Classname: c.Classname, Name: c.Name, File: c.File, TimeS: t,
				Failed: c.Failure != nil || c.Error != nil, Skipped: c.Skipped != nil})
		}
		for _, sub := range s.Suites {
			if err := walk(sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// JUnit renders a summary as JUnit XML: one test case per file, a failure
// for fail and timeout, skipped for not-run and disabled files.
func JUnit(s Summary) []byte { return JUnitAll([]Summary{s}) }

// JUnitAll renders several shards' summaries as one JUnit XML report, one
// test suite per shard in the order given (the ci run's junit.xml).
func JUnitAll(all []Summary) []byte {
	type failure struct {
		Message string `xml:"message,attr"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Classname string   `xml:"classname,attr"`
		Name      string   `xml:"name,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
	}
	type testsuite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName xml.Name    `xml:"testsuites"`
		Suites  []testsuite `xml:"testsuite"`
	}
	var doc testsuites
	for _, s := range all {
		suite := testsuite{Name: s.Name()}
		total := 0.0
		for _, t := range s.Tests {
			c := testcase{Classname: s.Suite, Name: t.File, Time: strconv.FormatFloat(t.ElapsedS, 'f', -1, 64)}
			total += t.ElapsedS
			switch t.Status {
			case Fail, Timeout:
				suite.Failures++
				c.Failure = &failure{Message: t.detail()}
			case NotRun:
				suite.Skipped++
				c.Skipped = &skipped{Message: "not run: the suite stopped before this file"}
			}
			suite.Cases = append(suite.Cases, c)
		}
		for _, t := range s.Skipped {
			suite.Skipped++
			suite.Cases = append(suite.Cases, testcase{Classname: s.Suite, Name: t.File, Time: "0",
				Skipped: &skipped{Message: "disabled: " + t.Reason}})
		}
		suite.Tests = len(suite.Cases)
		suite.Time = strconv.FormatFloat(total, 'f', -1, 64)
		doc.Suites = append(doc.Suites, suite)
	}
	out, _ := xml.MarshalIndent(doc, "", "  ") // cannot fail: plain strings and numbers
	return append(append([]byte(xml.Header), out...), '\n')
}
