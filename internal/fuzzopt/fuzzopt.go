// Package fuzzopt holds the fuzzing defaults of the packages whose fuzz targets write to a
// real store or run a server per input.
//
// Go's fuzzer minimizes every input that finds new coverage before it goes on, for up to
// 60 s by default. A target whose input costs a store write (a millisecond or more) spends
// most of a short run minimizing: measured on the relay's targets, 20 s with -parallel 1 ran
// 32 inputs with the default and 14,000 with minimization bounded to 100 executions. So
// these packages bound it by default, in their TestMain; an explicit -fuzzminimizetime on
// the command line still wins.
package fuzzopt

import (
	"flag"
	"os"
	"testing"
)

// DefaultMinimize is the bound these packages give minimization: executions, not time, so
// that it does not depend on the machine.
const DefaultMinimize = "200x"

// BoundMinimize sets -test.fuzzminimizetime to DefaultMinimize unless the command line set
// it. Call it from TestMain after flag.Parse.
func BoundMinimize() {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.fuzzminimizetime" {
			set = true
		}
	})
	if f := flag.Lookup("test.fuzzminimizetime"); f != nil && !set {
		_ = f.Value.Set(DefaultMinimize)
	}
}

// Main is a package's TestMain: it parses the flags, bounds minimization (BoundMinimize) and
// runs the tests.
func Main(m *testing.M) {
	flag.Parse()
	BoundMinimize()
	os.Exit(m.Run())
}
