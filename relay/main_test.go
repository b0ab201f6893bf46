package relay_test

import (
	"testing"

	"github.com/agentwire/agentwire/internal/fuzzopt"
)

func TestMain(m *testing.M) {
	fuzzopt.Main(m) // the fuzz targets write to a real store per input
}
