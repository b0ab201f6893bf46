package dispatch_test

import (
	"testing"

	"github.com/agentwire/agentwire/internal/fuzzopt"
)

func TestMain(m *testing.M) {
	fuzzopt.Main(m) // a minimization of Go's default 60 s stalls a short run
}
