// Package synth generates deterministic synthetic agent runs: NDJSON streams of protocol-1
// events (events.md §4–§7) that a conforming reducer (events.md §8) accepts from the first
// event to the last. It backs `agentwire events synth` (cli.md) and the reducer benchmarks.
//
// Contract of [Generate]:
//
//   - exactly n ≥ 2 events, one per line, each line ending with LF;
//   - the same (n, seed, runID) always yields the same bytes, on every platform (the only
//     randomness is a local math/rand/v2 PCG seeded from seed);
//   - the first event is `run.started`, the last `run.completed`; n = 2 is exactly those two;
//   - every eventId is `<runId>:<logicalSequence>` (the producer rule of events.md §11);
//     logicalSequence and sequence both run 1…n in one phase whose phaseId is a UUID derived
//     from the seed; timestamps advance from the fixed epoch 2025-01-01T00:00:00.000Z in RFC 3339
//     UTC with milliseconds;
//   - as n allows, the run mixes user and assistant messages with streamed reasoning and text
//     deltas and completed messages, tool calls with progress, results and errors, one
//     tool-approval interrupt and its resolution, and usage updates.
//
// That contract is the default profile's. [GenerateWith] also writes the rich profile
// ([ProfileRich]): three phases, all 14 event types, all ten content-part kinds and a chosen
// terminal event (completed, failed or cancelled), for viewers and their tests; it too is
// exactly n events and the same bytes for the same (n, seed, options).
//
// The package writes JSON text directly and does not depend on the reducer; it imports events
// only for the event-type constants.
package synth

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// Epoch is the timestamp of the first event of every synthetic run (RFC 3339 UTC,
// 2025-01-01T00:00:00.000Z).
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// MinEvents is the smallest run Generate produces: `run.started` followed by `run.completed`.
const MinEvents = 2

// DefaultRunID is the run ID used when Generate gets an empty one: `run-<seed>` (cli.md).
func DefaultRunID(seed int64) string { return "run-" + strconv.FormatInt(seed, 10) }

// Generate writes a synthetic run of exactly n events as NDJSON to w. An empty runID means
// [DefaultRunID](seed). n < 2 is refused before anything is written; a write error from w is
// returned as is.
func Generate(w io.Writer, n int, seed int64, runID string) error {
	if n < MinEvents {
		return fmt.Errorf("synth: a run needs at least %d events, got %d", MinEvents, n)
	}
	if runID == "" {
		runID = DefaultRunID(seed)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	g := newGen(bw, n, seed, runID)
	g.run()
	if g.err != nil {
		return g.err
	}
	return bw.Flush()
}

// Bytes returns what Generate writes, as one buffer.
func Bytes(n int, seed int64, runID string) ([]byte, error) {
	var b byteWriter
	if n > 0 {
		b.buf = make([]byte, 0, min(n, 1<<22)*320) // a typical event is 250–350 bytes
	}
	if err := Generate(&b, n, seed, runID); err != nil {
		return nil, err
	}
	return b.buf, nil
}

type byteWriter struct{ buf []byte }

func (b *byteWriter) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// gen emits one run. seq is the logicalSequence (and sequence) of the last emitted event; the
// body always leaves room for the terminal event.
type gen struct {
	w         *bufio.Writer
	rng       *rand.Rand
	n         int
	runID     string
	sessionID string
	phaseID   string
	seq       int
	pseq      int   // sequence of the last emitted event within its phase (= seq in one phase)
	ms        int64 // milliseconds after Epoch of the last event
	line      []byte
	err       error

	nextMessage   int
	nextCall      int
	nextInterrupt int
	turns         int
	hadInterrupt  bool
	lastText      string // text of the last assistant message, echoed by run.completed

	inputTokens, outputTokens, reasoningTokens, cachedTokens float64
	hasUsage                                                 bool
}

func newGen(w *bufio.Writer, n int, seed int64, runID string) *gen {
	// Two PCG words from the seed; the constant only decorrelates them.
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	g := &gen{w: w, rng: rng, n: n, runID: runID, sessionID: "session-" + strconv.FormatInt(seed, 10)}
	g.phaseID = g.uuid()
	return g
}

// uuid draws an RFC 9562 version-4 UUID from the generator (deterministic per seed).
func (g *gen) uuid() string {
	var b [16]byte
	hi, lo := g.rng.Uint64(), g.rng.Uint64()
	for i := 0; i < 8; i++ {
		b[i] = byte(hi >> (56 - 8*i))
		b[8+i] = byte(lo >> (56 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexd[c>>4], hexd[c&0xf])
	}
	return string(out)
}

// rem is the number of events that may still be emitted before the terminal event.
func (g *gen) rem() int { return g.n - 1 - g.seq }

func (g *gen) run() {
	g.begin(events.EventRunStarted, 0)
	g.end()
	g.body()
	g.runCompleted()
}

// body fills the n−2 events between run.started and the terminal event with conversation
// turns: a user message, then assistant turns that stream reasoning and text and may call
// tools, each followed by a usage update, with an occasional new user message.
func (g *gen) body() {
	if g.rem() <= 0 {
		return
	}
	g.userMessage()
	for g.rem() > 0 && g.err == nil {
		calls := g.assistantTurn()
		if g.rem() > 0 {
			g.usageUpdated()
		}
		for _, c := range calls {
			if g.rem() <= 0 {
				break
			}
			g.toolEpisode(c)
		}
		if g.rem() > 0 && (len(calls) == 0 || g.rng.IntN(3) == 0) {
			g.userMessage()
		}
	}
}

// ---- events ----

// begin opens an event line with its type; advance is the minimum number of milliseconds since
// the previous event (a random jitter is added).
func (g *gen) begin(t events.EventType, advance int) {
	g.seq++
	g.pseq++
	if g.seq > 1 {
		g.ms += int64(advance) + int64(g.rng.IntN(40)) + 1
	}
	g.line = append(g.line[:0], `{"type":`...)
	g.line = jsonvalue.AppendQuote(g.line, string(t))
}

// end appends the envelope members (after the payload, as in events.md §3.7's example) and
// writes the line.
func (g *gen) end() {
	b := g.line
	b = append(b, `,"protocolVersion":1,"eventId":`...)
	b = jsonvalue.AppendQuote(b, g.runID+":"+strconv.Itoa(g.seq))
	b = append(b, `,"runId":`...)
	b = jsonvalue.AppendQuote(b, g.runID)
	b = append(b, `,"sessionId":`...)
	b = jsonvalue.AppendQuote(b, g.sessionID)
	b = append(b, `,"phaseId":`...)
	b = jsonvalue.AppendQuote(b, g.phaseID)
	b = append(b, `,"logicalSequence":`...)
	b = strconv.AppendInt(b, int64(g.seq), 10)
	b = append(b, `,"sequence":`...)
	b = strconv.AppendInt(b, int64(g.pseq), 10)
	b = append(b, `,"timestamp":"`...)
	b = Epoch.Add(time.Duration(g.ms)*time.Millisecond).AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, "\"}\n"...)
	g.line = b
	if g.err == nil {
		if _, err := g.w.Write(b); err != nil {
			g.err = err
		}
	}
}

func (g *gen) member(name string) {
	g.line = append(g.line, ',')
	g.line = jsonvalue.AppendQuote(g.line, name)
	g.line = append(g.line, ':')
}

func (g *gen) raw(s []byte) { g.line = append(g.line, s...) }

func (g *gen) newMessageID() string {
	g.nextMessage++
	return "msg-" + strconv.Itoa(g.nextMessage)
}

func (g *gen) messageStarted(id, role string) {
	g.begin(events.EventMessageStarted, 20)
	g.member("messageId")
	g.line = jsonvalue.AppendQuote(g.line, id)
	g.member("role")
	g.line = jsonvalue.AppendQuote(g.line, role)
	g.end()
}

func (g *gen) delta(id string, part []byte) {
	g.begin(events.EventMessagePartDelta, 5)
	g.member("messageId")
	g.line = jsonvalue.AppendQuote(g.line, id)
	g.member("part")
	g.raw(part)
	g.end()
}

func (g *gen) messageCompleted(id, role string, parts [][]byte) {
	g.begin(events.EventMessageCompleted, 10)
	g.member("messageId")
	g.line = jsonvalue.AppendQuote(g.line, id)
	g.member("role")
	g.line = jsonvalue.AppendQuote(g.line, role)
	g.member("content")
	g.line = appendParts(g.line, parts)
	g.end()
}

// userMessage is a prompt: started, one text delta (sometimes an image too) and completed when
// the budget allows, otherwise a bare message.completed.
func (g *gen) userMessage() {
	id := g.newMessageID()
	text := g.sentence(6 + g.rng.IntN(18))
	parts := [][]byte{textPart("text", text)}
	if g.rng.IntN(5) == 0 {
		parts = append(parts, g.mediaPart())
	}
	if g.rem() < 2+len(parts) {
		g.messageCompleted(id, "user", parts[:1])
		return
	}
	g.messageStarted(id, "user")
	for _, p := range parts {
		g.delta(id, p)
	}
	if g.rem() > 0 {
		g.messageCompleted(id, "user", parts)
	}
}

// toolCall is one planned call: its record's JSON text and what the tool will answer.
type toolCall struct {
	id, name string
	input    []byte // JSON object text
	record   []byte // ToolCallRecord JSON text
}

// assistantTurn streams one assistant message: reasoning deltas, text deltas (with an
// occasional citation), tool-call parts for the calls it plans, then message.completed with
// the joined content. It returns the planned calls.
func (g *gen) assistantTurn() []toolCall {
	g.turns++
	id := g.newMessageID()
	if g.rem() < 2 {
		text := g.sentence(4 + g.rng.IntN(8))
		g.lastText = text
		g.messageCompleted(id, "assistant", [][]byte{textPart("text", text)})
		return nil
	}
	g.messageStarted(id, "assistant")
	// Budget for this turn's deltas: mostly short answers, sometimes long ones.
	deltas := 3 + g.rng.IntN(40)
	if g.rng.IntN(6) == 0 {
		deltas += g.rng.IntN(300)
	}
	reasoning := 0
	if g.rng.IntN(3) != 0 {
		reasoning = 1 + deltas/3
	}
	// The first turn always plans a call (so a large enough run has a tool call and the
	// approval interrupt); later turns call tools half of the time.
	var calls []toolCall
	if g.nextCall == 0 || g.rng.IntN(2) == 0 {
		for k := 1 + g.rng.IntN(2); k > 0; k-- {
			calls = append(calls, g.planCall())
		}
	}
	// Reserve the events the planned calls need after the deltas; drop calls that do not fit
	// with at least one delta.
	for len(calls) > 0 && g.rem() < g.reserve(calls)+1 {
		calls = calls[:len(calls)-1]
	}
	need := g.reserve(calls)
	var reasonText, text []byte
	var cites [][]byte
	emitted := 0
	for i := 0; i < deltas && g.rem() > need; i++ {
		var part []byte
		switch {
		case i < reasoning:
			chunk := g.chunk(i == 0)
			reasonText = append(reasonText, chunk...)
			part = textPart("reasoning", chunk)
		case g.rng.IntN(60) == 0:
			part = g.citationPart()
			cites = append(cites, part)
		default:
			chunk := g.chunk(i == reasoning)
			text = append(text, chunk...)
			part = textPart("text", chunk)
		}
		g.delta(id, part)
		emitted++
	}
	// Tool-call parts go last in the message, one delta each (their room is reserved).
	planned := calls
	for _, c := range calls {
		g.delta(id, toolCallPart(c.record))
	}
	g.lastText = string(text)
	if g.rem() > 0 {
		var parts [][]byte
		if len(reasonText) > 0 {
			parts = append(parts, textPart("reasoning", string(reasonText)))
		}
		if len(text) > 0 || emitted == 0 {
			parts = append(parts, textPart("text", string(text)))
		}
		parts = append(parts, cites...)
		for _, c := range planned {
			parts = append(parts, toolCallPart(c.record))
		}
		g.messageCompleted(id, "assistant", parts)
	}
	return planned
}

// reserve counts the events a turn must leave after its text deltas: message.completed, and
// with calls the usage update, one tool-call part, tool.called and a result per call, plus the
// interrupt pair for the run's first call.
func (g *gen) reserve(calls []toolCall) int {
	if len(calls) == 0 {
		return 1
	}
	r := 2
	for i := range calls {
		r += 3
		if i == 0 && !g.hadInterrupt {
			r += 2
		}
	}
	return r
}

// toolEpisode runs one planned call: tool.called, progress updates, for the first call of a
// large enough run a tool-approval interrupt and its resolution, then tool.completed or
// tool.failed, and a tool message carrying the result when the budget allows.
func (g *gen) toolEpisode(c toolCall) {
	g.begin(events.EventToolCalled, 30)
	g.member("toolCall")
	g.raw(c.record)
	g.end()
	denied := false
	if !g.hadInterrupt && g.rem() >= 3 {
		g.hadInterrupt = true
		denied = g.approval(c)
	}
	for p := g.rng.IntN(4); p > 0 && g.rem() > 1; p-- {
		g.begin(events.EventToolProgress, 100)
		g.member("toolCallId")
		g.line = jsonvalue.AppendQuote(g.line, c.id)
		g.member("content")
		g.line = appendParts(g.line, [][]byte{textPart("text", g.progressText(c.name))})
		g.end()
	}
	if g.rem() <= 0 {
		return
	}
	var resultRecord []byte
	switch {
	case denied:
		g.toolFailed(c, "Tool execution was denied by the user.", "authorization_denied")
	case g.rng.IntN(8) == 0:
		code, msg := "tool_execution_failed", c.name+" failed: upstream returned 503."
		if g.rng.IntN(2) == 0 {
			code, msg = "tool_timeout", c.name+" timed out after 30000 ms."
		}
		g.toolFailed(c, msg, code)
	default:
		resultRecord = g.resultRecord(c)
		g.begin(events.EventToolCompleted, 200)
		g.member("result")
		g.raw(resultRecord)
		g.end()
	}
	if resultRecord != nil && g.rem() > 0 && g.rng.IntN(2) == 0 {
		part := append([]byte(`{"type":"tool-result","result":`), resultRecord...)
		part = append(part, '}')
		g.messageCompleted(g.newMessageID(), "tool", [][]byte{part})
	}
}

// approval emits interrupt.required (kind tool-approval, the conventional prompt and one action
// for the call) and interrupt.resolved; it reports whether the user denied the call.
func (g *gen) approval(c toolCall) (denied bool) {
	g.nextInterrupt++
	interruptID := "interrupt-" + strconv.Itoa(g.nextInterrupt)
	approvalID := "approval-" + strconv.Itoa(g.nextInterrupt)
	g.begin(events.EventInterruptRequired, 20)
	g.member("interrupt")
	b := append(g.line, `{"kind":"tool-approval","interruptId":`...)
	b = jsonvalue.AppendQuote(b, interruptID)
	b = append(b, `,"prompt":"Tool execution requires approval.","actions":[{"id":`...)
	b = jsonvalue.AppendQuote(b, approvalID)
	b = append(b, `,"name":`...)
	b = jsonvalue.AppendQuote(b, c.name)
	b = append(b, `,"input":`...)
	b = append(b, c.input...)
	b = append(b, `}]}`...)
	g.line = b
	g.end()

	denied = g.rng.IntN(4) == 0
	g.begin(events.EventInterruptResolved, 3000)
	g.member("interruptId")
	g.line = jsonvalue.AppendQuote(g.line, interruptID)
	g.member("decisions")
	b = append(g.line, `[{"approvalId":`...)
	b = jsonvalue.AppendQuote(b, approvalID)
	if denied {
		b = append(b, `,"approved":false,"reason":"Not now."}]`...)
	} else {
		b = append(b, `,"approved":true}]`...)
	}
	g.line = b
	g.end()
	return denied
}

func (g *gen) toolFailed(c toolCall, msg, code string) {
	g.begin(events.EventToolFailed, 200)
	g.member("error")
	b := append(g.line, c.record[:len(c.record)-1]...)
	b = append(b, `,"error":`...)
	b = jsonvalue.AppendQuote(b, msg)
	b = append(b, `,"code":`...)
	b = jsonvalue.AppendQuote(b, code)
	b = append(b, '}')
	g.line = b
	g.end()
}

// usageUpdated reports the cumulative usage of the run so far (usage is replaced wholesale).
func (g *gen) usageUpdated() {
	in := float64(200 + g.rng.IntN(3000))
	out := float64(20 + g.rng.IntN(800))
	g.inputTokens += in
	g.outputTokens += out
	g.cachedTokens += math.Floor(in / 2)
	g.reasoningTokens += math.Floor(out / 3)
	g.hasUsage = true
	g.begin(events.EventUsageUpdated, 5)
	g.member("usage")
	g.line = g.appendUsage(g.line)
	g.end()
}

func (g *gen) appendUsage(b []byte) []byte {
	b = append(b, `{"inputTokens":`...)
	b = jsonvalue.AppendNumber(b, g.inputTokens)
	b = append(b, `,"cachedInputTokens":`...)
	b = jsonvalue.AppendNumber(b, g.cachedTokens)
	b = append(b, `,"outputTokens":`...)
	b = jsonvalue.AppendNumber(b, g.outputTokens)
	b = append(b, `,"reasoningTokens":`...)
	b = jsonvalue.AppendNumber(b, g.reasoningTokens)
	b = append(b, `,"totalTokens":`...)
	b = jsonvalue.AppendNumber(b, g.inputTokens+g.outputTokens)
	b = append(b, `,"costUsd":`...)
	// $2.50 per million input and $10 per million output tokens, counted in units of 1e-7 USD
	// in integers: one correctly rounded division, so no platform can fuse or reorder it.
	units := int64(g.inputTokens)*25 + int64(g.outputTokens)*100
	b = jsonvalue.AppendNumber(b, float64(units)/1e7)
	b = append(b, `,"model":"synth-model-1","provider":"synth"}`...)
	return b
}

// runCompleted is the terminal event: finishReason stop, the last assistant text as content,
// the cumulative usage when any was reported, and the step limit.
func (g *gen) runCompleted() {
	g.begin(events.EventRunCompleted, 10)
	g.member("finishReason")
	g.line = jsonvalue.AppendQuote(g.line, "stop")
	g.member("content")
	if g.lastText != "" {
		g.line = appendParts(g.line, [][]byte{textPart("text", g.lastText)})
	} else {
		g.line = append(g.line, "[]"...)
	}
	if g.hasUsage {
		g.member("usage")
		g.line = g.appendUsage(g.line)
	}
	if g.turns > 0 {
		g.member("limit")
		b := append(g.line, `{"kind":"steps","limit":`...)
		b = strconv.AppendInt(b, int64(max(50, g.turns)), 10)
		b = append(b, `,"used":`...)
		b = strconv.AppendInt(b, int64(g.turns), 10)
		g.line = append(b, '}')
	}
	g.end()
}

// ---- content ----

var words = []string{
	"the", "agent", "reads", "a", "file", "and", "then", "writes", "tests", "for", "each",
	"function", "it", "finds", "we", "should", "check", "weather", "in", "Oslo", "before",
	"leaving", "tomorrow", "résumé", "naïve", "café", "日本語", "テスト", "données", "😀",
	"build", "passes", "now", "so", "let", "me", "summarise", "what", "changed", "quickly",
	`"quoted"`, "back\\slash", "tab\there", "line\nbreak", "<html>", "&amp;", "50%", "0.5",
}

func (g *gen) word() string { return words[g.rng.IntN(len(words))] }

func (g *gen) sentence(n int) string {
	var b []byte
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, g.word()...)
	}
	return string(append(b, '.'))
}

// chunk is one streamed delta: one to three words, with a leading space unless first.
func (g *gen) chunk(first bool) string {
	var b []byte
	for k := 1 + g.rng.IntN(3); k > 0; k-- {
		if !first || len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, g.word()...)
	}
	return string(b)
}

func textPart[S string | []byte](typ string, text S) []byte {
	b := append([]byte(`{"type":`), jsonvalue.AppendQuote(nil, typ)...)
	b = append(b, `,"text":`...)
	b = jsonvalue.AppendQuote(b, string(text))
	return append(b, '}')
}

func toolCallPart(record []byte) []byte {
	b := append([]byte(`{"type":"tool-call","toolCall":`), record...)
	return append(b, '}')
}

func appendParts(b []byte, parts [][]byte) []byte {
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	return append(b, ']')
}

func (g *gen) citationPart() []byte {
	k := strconv.Itoa(1 + g.rng.IntN(99))
	return []byte(`{"type":"citation","url":"https://docs.example.test/page/` + k + `","title":"Reference ` + k + `"}`)
}

// mediaPart is an image, file or audio part with exactly one media source (events.md §6).
func (g *gen) mediaPart() []byte {
	k := strconv.Itoa(1 + g.rng.IntN(999))
	switch g.rng.IntN(3) {
	case 0:
		return []byte(`{"type":"image","url":"https://cdn.example.test/img/` + k + `.png","mimeType":"image/png"}`)
	case 1:
		return []byte(`{"type":"file","data":"SGVsbG8sIHdvcmxkIQ==","mimeType":"text/plain","name":"note-` + k + `.txt"}`)
	default:
		return []byte(`{"type":"audio","fileId":"file-` + k + `","mimeType":"audio/wav"}`)
	}
}

var tools = []string{"weather", "search", "read_file", "run_shell"}

var cities = []string{"Oslo", "Lisbon", "Nairobi", "Montréal", "Kyoto", "Reykjavík"}

func (g *gen) planCall() toolCall {
	g.nextCall++
	c := toolCall{id: "call-" + strconv.Itoa(g.nextCall), name: tools[g.rng.IntN(len(tools))]}
	var in []byte
	switch c.name {
	case "weather":
		in = append([]byte(`{"city":`), jsonvalue.AppendQuote(nil, cities[g.rng.IntN(len(cities))])...)
		in = append(in, `,"days":`...)
		in = strconv.AppendInt(in, int64(1+g.rng.IntN(7)), 10)
		in = append(in, '}')
	case "search":
		in = append([]byte(`{"query":`), jsonvalue.AppendQuote(nil, g.sentence(3))...)
		in = append(in, `,"limit":5}`...)
	case "read_file":
		in = []byte(`{"path":"/src/pkg` + strconv.Itoa(g.rng.IntN(20)) + `/main.go"}`)
	default:
		in = []byte(`{"command":"go test ./...","timeoutSeconds":60,"env":{"CGO_ENABLED":"0"}}`)
	}
	c.input = in
	r := append([]byte(`{"toolCallId":`), jsonvalue.AppendQuote(nil, c.id)...)
	r = append(r, `,"name":`...)
	r = jsonvalue.AppendQuote(r, c.name)
	r = append(r, `,"input":`...)
	r = append(r, in...)
	c.record = append(r, '}')
	return c
}

func (g *gen) progressText(name string) string {
	switch name {
	case "weather":
		return "Contacting the forecast service…"
	case "search":
		return "Fetched " + strconv.Itoa(1+g.rng.IntN(5)) + " of 5 results."
	case "read_file":
		return "Reading…"
	}
	return "=== RUN   TestReduce" + strconv.Itoa(g.rng.IntN(50))
}

// resultRecord is a ToolResultRecord: the call's members, an output and sometimes isError.
func (g *gen) resultRecord(c toolCall) []byte {
	b := append([]byte(nil), c.record[:len(c.record)-1]...)
	b = append(b, `,"output":`...)
	switch c.name {
	case "weather":
		t := float64(g.rng.IntN(600)-200) / 10
		b = append(b, `{"temperatureC":`...)
		b = jsonvalue.AppendNumber(b, t)
		b = append(b, `,"conditions":"snow","windKph":12.5}`...)
	case "search":
		b = append(b, `{"results":[`...)
		for i := 0; i < 3; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"title":`...)
			b = jsonvalue.AppendQuote(b, g.sentence(4))
			b = append(b, `,"url":"https://search.example.test/r/`...)
			b = strconv.AppendInt(b, int64(g.rng.IntN(100000)), 10)
			b = append(b, `"}`...)
		}
		b = append(b, `]}`...)
	case "read_file":
		b = append(b, `"package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"`...)
	default:
		b = append(b, `{"exitCode":0,"stdout":"ok  \tgithub.com/agentwire/agentwire/events\t0.412s\n","stderr":null}`...)
	}
	if g.rng.IntN(10) == 0 {
		b = append(b, `,"isError":false`...)
	}
	return append(b, '}')
}
