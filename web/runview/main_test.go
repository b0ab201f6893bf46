package runview_test

import (
	"flag"
	"os"
	"testing"

	"github.com/agentwire/agentwire/internal/fuzzopt"
)

func TestMain(m *testing.M) {
	flag.Parse()
	fuzzopt.BoundMinimize() // FuzzApply reduces whole runs per input
	os.Exit(m.Run())
}
