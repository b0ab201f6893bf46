package relay

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

// TestSentIndexBytes: the ids a socket sent are kept within maxSentBytes (and maxSentIndex),
// oldest first out; the newest stays.
func TestSentIndexBytes(t *testing.T) {
	sock := &busSocket{sent: map[string]struct{}{}}
	long := strings.Repeat("x", 250)
	for i := range 20000 {
		sock.markSent(fmt.Sprintf("%s%05d", long, i))
		if sock.sentBytes > maxSentBytes {
			t.Fatalf("after %d ids: %d bytes, bound %d", i+1, sock.sentBytes, maxSentBytes)
		}
	}
	if len(sock.sent) != len(sock.sentOrder) {
		t.Fatalf("%d ids indexed, %d in order", len(sock.sent), len(sock.sentOrder))
	}
	sum := 0
	for _, id := range sock.sentOrder {
		sum += sentCost(id)
	}
	if sum != sock.sentBytes {
		t.Fatalf("accounted %d bytes, the ids cost %d", sock.sentBytes, sum)
	}
	if _, ok := sock.sent[fmt.Sprintf("%s%05d", long, 19999)]; !ok {
		t.Fatal("the newest id was dropped")
	}
	if _, ok := sock.sent[fmt.Sprintf("%s%05d", long, 0)]; ok {
		t.Fatal("the oldest id is still kept")
	}
	if n := len(sock.sent); n < maxSentBytes/sentCost(long+"00000") {
		t.Fatalf("only %d ids kept", n)
	}
}

// TestStreamTailBytes: a followed stream's tail stays within maxTailBytes and the lane's total
// within maxTailTotal however large the messages; what it dropped is read from the store (since
// answers false before the tail), and an unfollowed stream gives its bytes back.
func TestStreamTailBytes(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lane := newBusLane()
	data := []byte(`"` + strings.Repeat("s", 1<<20) + `"`) // a sealed-size message
	keys := make([]store.StreamKey, 12)
	followers := make([]*streamFollowers, len(keys))
	for i := range keys {
		keys[i] = store.OrgStream("org_a", fmt.Sprintf("org:org_a/vault:v/c%d", i))
		followers[i] = &streamFollowers{total: &lane.tailBytes}
		followers[i].refresh(ctx, st, keys[i], DefaultMaxReadBytes) // the head
	}
	for round := range 12 {
		for i, k := range keys {
			w := store.MessageWrite{Stream: k, SenderOrg: "org_a", SenderInstance: "i", ClientMsgID: fmt.Sprintf("m%d-%d", i, round),
				Type: "finding", ServerTime: time.Now(), Data: data}
			if _, _, err := st.AppendMessage(ctx, w); err != nil {
				t.Fatal(err)
			}
			f := followers[i]
			f.refresh(ctx, st, k, DefaultMaxReadBytes)
			if f.bytes > maxTailBytes {
				t.Fatalf("round %d stream %d: %d bytes, bound %d", round, i, f.bytes, maxTailBytes)
			}
			if total := lane.tailBytes.Load(); total > maxTailTotal {
				t.Fatalf("round %d: %d bytes in all, bound %d", round, total, maxTailTotal)
			}
			if got, ok := f.since(f.last - 1); !ok || len(got) != 1 {
				t.Fatalf("round %d stream %d: the newest entry is not in the tail (%d, %v)", round, i, len(got), ok)
			}
			if round > 8 {
				if _, ok := f.since(0); ok {
					t.Fatalf("round %d stream %d: the tail claims entries it dropped", round, i)
				}
			}
		}
	}
	var sum int64
	for _, f := range followers {
		sum += f.bytes
	}
	if sum != lane.tailBytes.Load() {
		t.Fatalf("the lane accounts %d bytes, the tails hold %d", lane.tailBytes.Load(), sum)
	}
	for _, f := range followers {
		f.release()
	}
	if n := lane.tailBytes.Load(); n != 0 {
		t.Fatalf("%d bytes accounted after every stream was released", n)
	}
}
