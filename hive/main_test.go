package hive

import (
	"testing"

	"github.com/agentwire/agentwire/internal/fuzzopt"
)

func TestMain(m *testing.M) {
	fuzzopt.Main(m) // seeds of whole documents: minimizing one for Go's default 60 s stalls a short run
}
