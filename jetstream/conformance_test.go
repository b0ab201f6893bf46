package jetstream_test

import (
	"testing"

	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// openEmbedded opens a store on a single-node server embedded in process, storing in dir and
// listening on a random loopback port.
func openEmbedded(t *testing.T, dir string) store.Store {
	t.Helper()
	s, err := jetstream.OpenEmbedded(dir, jetstream.EmbeddedOptions{Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceRuns(t *testing.T) {
	storetest.Run(t, openEmbedded)
}

func TestConformanceNotifications(t *testing.T) {
	storetest.RunNotifications(t, openEmbedded)
}

func TestConformanceBus(t *testing.T) {
	storetest.RunBus(t, openEmbedded)
}

func TestConformanceLister(t *testing.T) {
	storetest.RunLister(t, openEmbedded)
}
