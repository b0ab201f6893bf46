package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

// TestClientFilterNeverSaysNo: a key added is always "maybe"; keys never added are "no" about
// as often as 10 bits a key promise (a 1 % false-positive rate; 2 % allowed).
func TestClientFilterNeverSaysNo(t *testing.T) {
	f := newClientFilter(100_000)
	for i := range 100_000 {
		f.add("org", fmt.Sprint("inst-", i%7), fmt.Sprint("m-", i))
	}
	for i := range 100_000 {
		if !f.mayHold("org", fmt.Sprint("inst-", i%7), fmt.Sprint("m-", i)) {
			t.Fatalf("key %d added but answered no", i)
		}
	}
	// Sized for 1 Mi keys at least: load it to its capacity and measure.
	for i := 100_000; i < int(f.capacity); i++ {
		f.add("org", "x", fmt.Sprint("m-", i))
	}
	fp := 0
	const probes = 100_000
	for i := range probes {
		if f.mayHold("org", "y", fmt.Sprint("new-", i)) {
			fp++
		}
	}
	if rate := float64(fp) / probes; rate > 0.02 {
		t.Fatalf("false-positive rate %.3f at capacity", rate)
	}
	// A separator between the parts: ("a", "bc") and ("ab", "c") are different keys.
	g := newClientFilter(0)
	g.add("o", "ab", "c")
	misses := 0
	for i := range 1000 {
		if !g.mayHold("o", "a", fmt.Sprint("bc", i)) {
			misses++
		}
	}
	if misses < 990 {
		t.Fatalf("%d of 1000 unrelated keys answered maybe", 1000-misses)
	}
}

// TestClientFilterWhileRebuilding: while filters are rebuilt over and over, every message is
// found by LookupClientMsg as soon as AppendMessage returned (the filter never answers "no"
// for a stored key, whichever filter is current), and a reopened store finds them all again.
func TestClientFilterWhileRebuilding(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), DefaultFileName)
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := store.OrgStream("org_a", "org:org_a/vault:v/general")
	write := func(st *Store, cmid string) {
		now := time.Now()
		if _, _, err := st.AppendMessage(ctx, store.MessageWrite{Stream: k, SenderOrg: "org_a", SenderInstance: "i1",
			ClientMsgID: cmid, Type: "finding", ServerTime: now, ExpiresAt: now.Add(time.Hour), Data: []byte(`{}`)}); err != nil {
			t.Error(err)
		}
	}
	stop := make(chan struct{})
	var rebuilds sync.WaitGroup
	rebuilds.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			st.rebuildClientFilter()
			time.Sleep(time.Millisecond)
		}
	})
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := range 150 {
				cmid := fmt.Sprintf("w%d-%d", w, i)
				write(st, cmid)
				if _, err := st.LookupClientMsg(ctx, "org_a", "i1", cmid); err != nil {
					t.Errorf("%s right after it was stored: %v", cmid, err)
					return
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	rebuilds.Wait()
	if f := st.clientIDs.cur.Load(); f == nil || !f.ready.Load() {
		t.Fatal("no filter is in use")
	}
	if _, err := st.LookupClientMsg(ctx, "org_a", "i1", "never-sent"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown id: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for w := range 4 {
		for i := range 150 {
			if _, err := st.LookupClientMsg(ctx, "org_a", "i1", fmt.Sprintf("w%d-%d", w, i)); err != nil {
				t.Fatalf("after reopening, w%d-%d: %v", w, i, err)
			}
		}
	}
	// A resend after reopening is still answered with the original.
	now := time.Now()
	if _, replayed, err := st.AppendMessage(ctx, store.MessageWrite{Stream: k, SenderOrg: "org_a", SenderInstance: "i1",
		ClientMsgID: "w0-0", Type: "finding", ServerTime: now, ExpiresAt: now.Add(time.Hour), Data: []byte(`{}`)}); err != nil || !replayed {
		t.Fatalf("a resend after reopening: replayed %v, %v", replayed, err)
	}
}
