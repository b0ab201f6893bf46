package relay_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/agentwire/agentwire/hive"
)

// Helpers of the bus frame tests (publish, presence, handoffs, sealed vaults).

func pub(cmid, channel, from, kind, body string) hive.FramePublish {
	return hive.FramePublish{ClientMsgID: cmid, Channel: channel, From: from, Kind: kind, Priority: hive.BusPriorityNormal,
		Privacy: hive.BusPrivacyTeam, Body: json.RawMessage(body)}
}

func (b *busClient) expectPublished() hive.FramePublished {
	b.t.Helper()
	f, raw := b.recv()
	p, ok := f.(hive.FramePublished)
	if !ok {
		b.t.Fatalf("%s: want published, got %s", b.name, raw)
	}
	return p
}

func (b *busClient) expectFrameDeliver() (hive.FrameDeliver, []byte) {
	b.t.Helper()
	f, raw := b.recv()
	d, ok := f.(hive.FrameDeliver)
	if !ok {
		b.t.Fatalf("%s: want deliver, got %s", b.name, raw)
	}
	return d, raw
}

// marker publishes a team frame from b's agent and expects it as the next frame of each
// receiver: nothing else reached them meanwhile.
func marker(t *testing.T, from *busClient, agent, channel, cmid string, receivers ...*busClient) {
	t.Helper()
	from.send(pub(cmid, channel, agent, "marker", `"`+cmid+`"`))
	from.expectPublished()
	for _, r := range receivers {
		if d, raw := r.expectFrameDeliver(); string(d.Body) != `"`+cmid+`"` {
			t.Fatalf("%s: want marker %s, got %s", r.name, cmid, raw)
		}
	}
}

// catchUp reads GET /v1/bus/channels/{channel}/events.
func (h *harness) catchUp(token, channel, query string) hive.BusEventsV1 {
	h.t.Helper()
	code, _, body := h.do("GET", "/v1/bus/channels/"+url.PathEscape(channel)+"/events?"+query, token, nil, nil)
	var ev hive.BusEventsV1
	if code != 200 {
		h.t.Fatalf("catch-up %s: %d %s", channel, code, body)
	}
	if err := ev.UnmarshalJSON(bytes.TrimSpace(body)); err != nil {
		h.t.Fatalf("catch-up %s: %v: %s", channel, err, body)
	}
	return ev
}

// eventSeqs lists the seq of each catch-up event with its tag.
func eventSeqs(ev hive.BusEventsV1) []string {
	var out []string
	for _, f := range ev.Events {
		switch x := f.(type) {
		case hive.FrameDeliver:
			out = append(out, "deliver:"+itoa(x.Seq))
		case hive.FrameMessageDeliver:
			out = append(out, "message.deliver:"+itoa(x.Delivery.Seq))
		case hive.FrameTaskEvent:
			out = append(out, "task.event:"+itoa(x.Event.Seq))
		default:
			out = append(out, f.Tag())
		}
	}
	return out
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
