package relay_test

import (
	"flag"
	"os"
	"testing"

	"github.com/agentwire/agentwire/internal/fuzzopt"
)

func TestMain(m *testing.M) {
	flag.Parse()
	fuzzopt.BoundMinimize() // the fuzz targets write to a real store per input
	os.Exit(m.Run())
}
