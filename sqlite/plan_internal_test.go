package sqlite

import (
	"context"
	"github.com/agentwire/agentwire/store"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fullScan matches a query-plan line that walks a whole table: "SCAN t" with no index.
var fullScan = regexp.MustCompile(`^SCAN \S+$`)

// wantIndex names the index a statement (found by a part of its text) must search with: the
// statements whose partial or multi-column index is easy to lose.
var wantIndex = map[string]string{
	"AND message_id = ?":                  "envelopes_by_message_id (org=? AND message_id=?)",
	"WHERE m.pending = 1":                 "bus_messages_due (deadline<?)",
	"expires_at > 0 AND expires_at <= ?1": "bus_messages_by_expiry",
	"WHERE stored_at < ?":                 "envelopes_by_age (stored_at<?)",
	"AND m.thread_id = ?":                 "bus_messages_by_thread (stream=? AND thread_id=? AND seq>?)",
	"m.client_msg_id = ?":                 "(sender_org=? AND sender_instance=? AND client_msg_id=?)",
	"AND seq > ? AND stored_at >= ?":      "envelopes_by_org (org=? AND seq>?)",
	"WHERE m.stream = ? AND m.seq > ?":    "(stream=? AND",
	"expires_at <= ?1 AND expires_at > 0": "_by_expiry (expires_at>? AND expires_at<?)",
	"p.client_msg_id = ?":                 "(sender_org=? AND sender_instance=? AND client_msg_id=?)",
	"WHERE p.stream = ? AND p.seq > ?":    "(stream=? AND seq>?)",
	"AND h.state = 0 AND h.deadline > ?":  "bus_handoffs_pending (org=? AND to_instance=? AND to_agent=?)",
	"h.org = ? AND h.handoff_id = ?":      "(org=? AND handoff_id=?)",
	"AND agent = ? AND last_seen >= ?":    "bus_announcements_by_vault (org=? AND vault=? AND agent=?",
	"WHERE last_seen < ?":                 "bus_announcements_by_age (last_seen<?)",
	"AND instance = ? AND last_seen >= ?": "(org=? AND instance=?)",
	"WHERE a.org = ? AND a.instance = ?":  "(org=? AND instance=?)",
	"json_each(?)) AND delivered_at >= ?": "(org=? AND session=? AND dedupe_key=?)",
	"WHERE delivered_at < ?":              "notify_session_keys_by_age (delivered_at<?)",
}

// TestQueryPlans: every hot statement of the bus and notification lanes finds its rows through
// an index, so its cost does not grow with the data (a partial index is only used when the
// statement's WHERE implies the index's, which is easy to lose in an edit).
func TestQueryPlans(t *testing.T) {
	s, _ := openGated(t)
	ctx := context.Background()
	queries := map[string]string{}
	for _, d := range append(append(s.w.bus.defs(), s.w.state.defs()...), s.w.env.defs()...) {
		queries[d.q] = d.q
	}
	for _, d := range s.rd.defs() { // every prepared read, the four message ranges included
		queries[d.q] = d.q
	}
	for _, rq := range []store.ReadQuery{{}, {Viewer: &store.Viewer{Org: "o", Instance: "i"}}, {Viewer: &store.Viewer{Org: "o", Instance: "i", Agents: []string{"a", "b"}}}} {
		q, _ := publishQuery(1, rq, 0)
		queries[q] = q
	}
	for _, q := range []string{qHandoffByKey, qPendingHandoffs} {
		queries[q] = q
	}
	matched := map[string]bool{}
	for _, q := range queries {
		if !strings.HasPrefix(strings.TrimSpace(q), "SELECT") && !strings.HasPrefix(strings.TrimSpace(q), "DELETE") &&
			!strings.HasPrefix(strings.TrimSpace(q), "UPDATE") {
			continue // inserts: no search
		}
		n := strings.Count(q, "?")
		if strings.Contains(q, "?1") {
			n = len(slices.Compact(slices.Sorted(slices.Values(regexp.MustCompile(`\?\d`).FindAllString(q, -1)))))
		}
		rows, err := s.conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, make([]any, n)...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for part, index := range wantIndex {
			if !strings.Contains(q, part) {
				continue
			}
			matched[part] = true
			if !strings.Contains(strings.Join(plan, "\n"), index) {
				t.Errorf("%s\ndoes not use %s; plan:\n  %s", q, index, strings.Join(plan, "\n  "))
			}
		}
		for _, line := range plan {
			if fullScan.MatchString(line) || strings.Contains(line, "USE TEMP B-TREE") {
				t.Errorf("full scan or sort in\n%s\nplan:\n  %s", q, strings.Join(plan, "\n  "))
			}
		}
	}
	for part := range wantIndex {
		if !matched[part] {
			t.Errorf("no statement contains %q", part)
		}
	}
}
