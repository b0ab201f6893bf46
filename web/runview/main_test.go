package runview_test

import (
	"testing"

	"github.com/agentwire/agentwire/internal/fuzzopt"
)

func TestMain(m *testing.M) {
	fuzzopt.Main(m) // FuzzApply reduces whole runs per input
}
