package leanctx

import (
	"flag"
	"os"
	"testing"

	"github.com/agentwire/agentwire/internal/fuzzopt"
)

func TestMain(m *testing.M) {
	flag.Parse()
	fuzzopt.BoundMinimize() // seeds of whole documents: minimizing one for Go's default 60 s stalls a short run
	os.Exit(m.Run())
}
