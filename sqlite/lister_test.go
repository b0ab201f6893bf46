package sqlite_test

import (
	"testing"

	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

func TestLister(t *testing.T) {
	storetest.RunLister(t, func(t *testing.T, dir string) store.Store { return openIn(t, dir) })
}
