package synth

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// Profile selects what a synthetic run contains.
type Profile string

const (
	// ProfileDefault is the run of [Generate]: one phase, always completed. Its bytes never
	// change with the profile options.
	ProfileDefault Profile = "default"
	// ProfileRich covers everything a run can hold, for viewers and their tests: all 14 event
	// types, three phases (each of the first two ends at an interrupt; the next resumes with
	// `run.started` and resolves it), all ten content-part kinds (text, reasoning, image, audio,
	// video, file, citation, tool-call, tool-result, custom), tool results with and without
	// isError, tool errors with codes, a tool-approval and a custom interrupt with their
	// resolutions, usage updates, and one of the three terminal events ([Ending]). After that
	// scripted start, the run goes on like the default profile (turns, tools, usage) until n.
	ProfileRich Profile = "rich"
)

// Ending is the terminal event of a rich run.
type Ending string

const (
	// EndingBySeed (the zero value) picks the ending from the seed: seed mod 3 = 0 completed,
	// 1 failed, 2 cancelled.
	EndingBySeed Ending = ""
	// EndingCompleted ends with run.completed (finishReason stop, usage, step limit).
	EndingCompleted Ending = "completed"
	// EndingFailed ends with run.failed (code agent_execution_failed, a message, step limit).
	EndingFailed Ending = "failed"
	// EndingCancelled ends with run.cancelled (a reason, step limit).
	EndingCancelled Ending = "cancelled"
)

// Options configure [GenerateWith]. The zero value is the default profile with run ID
// [DefaultRunID](seed).
type Options struct {
	// Profile is ProfileDefault when empty.
	Profile Profile
	// Ending applies to ProfileRich only (the default profile always completes).
	Ending Ending
	// RunID is [DefaultRunID](seed) when empty.
	RunID string
}

// richPrologue is the number of events of a rich run's scripted start (before the filler and
// the terminal event).
const richPrologue = 41

// MinEventsFor is the smallest run a profile produces: 2 for the default profile (run.started
// and run.completed), 42 for the rich one (its scripted start and the terminal event).
func MinEventsFor(p Profile) int {
	if p == ProfileRich {
		return richPrologue + 1
	}
	return MinEvents
}

// GenerateWith writes a synthetic run of exactly n events of the given profile as NDJSON to w.
// The default profile writes exactly what [Generate] writes. Invalid options or an n below
// [MinEventsFor] the profile are refused before anything is written.
func GenerateWith(w io.Writer, n int, seed int64, o Options) error {
	switch o.Profile {
	case "", ProfileDefault:
		return Generate(w, n, seed, o.RunID)
	case ProfileRich:
	default:
		return fmt.Errorf("synth: unknown profile %q (want default or rich)", o.Profile)
	}
	ending := o.Ending
	switch ending {
	case EndingBySeed:
		ending = []Ending{EndingCompleted, EndingFailed, EndingCancelled}[(seed%3+3)%3]
	case EndingCompleted, EndingFailed, EndingCancelled:
	default:
		return fmt.Errorf("synth: unknown ending %q (want completed, failed or cancelled)", o.Ending)
	}
	if min := MinEventsFor(ProfileRich); n < min {
		return fmt.Errorf("synth: a rich run needs at least %d events, got %d", min, n)
	}
	runID := o.RunID
	if runID == "" {
		runID = DefaultRunID(seed)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	g := newGen(bw, n, seed, runID)
	g.rich(ending)
	if g.err != nil {
		return g.err
	}
	return bw.Flush()
}

// BytesWith returns what GenerateWith writes, as one buffer.
func BytesWith(n int, seed int64, o Options) ([]byte, error) {
	var b byteWriter
	if err := GenerateWith(&b, n, seed, o); err != nil {
		return nil, err
	}
	return b.buf, nil
}

// newPhase starts a new phase: a fresh phaseId and sequence restarting at 1 (events.md §4.2).
func (g *gen) newPhase() {
	g.phaseID = g.uuid()
	g.pseq = 0
}

// rich emits a rich run: the scripted start of exactly richPrologue events, the default
// profile's turns until n−1, and the ending.
func (g *gen) rich(ending Ending) {
	start := g.seq
	g.begin(events.EventRunStarted, 0)
	g.end()

	// A user prompt with an image and a file, streamed.
	user := g.newMessageID()
	prompt := textPart("text", "Plan my trip to "+cities[g.rng.IntN(len(cities))]+": check the weather and find a map.")
	image := []byte(`{"type":"image","url":"https://cdn.example.test/img/itinerary.png","mimeType":"image/png"}`)
	file := []byte(`{"type":"file","data":"SGVsbG8sIHdvcmxkIQ==","mimeType":"text/plain","name":"notes.txt"}`)
	g.messageStarted(user, "user")
	g.delta(user, prompt)
	g.delta(user, image)
	g.delta(user, file)
	g.messageCompleted(user, "user", [][]byte{prompt, image, file})

	// An assistant message with every other part kind, streamed, then completed.
	call1 := g.planCall()
	asst := g.newMessageID()
	g.messageStarted(asst, "assistant")
	var reasoning, text []byte
	for i := 0; i < 2; i++ {
		c := g.chunk(i == 0)
		reasoning = append(reasoning, c...)
		g.delta(asst, textPart("reasoning", c))
	}
	for i := 0; i < 3; i++ {
		c := g.chunk(i == 0)
		text = append(text, c...)
		g.delta(asst, textPart("text", c))
	}
	cite := g.citationPart()
	custom := []byte(`{"type":"custom","name":"chart","data":{"kind":"bar","series":[3,1,4,1,5],"title":"Rain (mm)"}}`)
	video := []byte(`{"type":"video","url":"https://cdn.example.test/video/forecast.mp4","mimeType":"video/mp4"}`)
	audio := []byte(`{"type":"audio","fileId":"file-` + strconv.Itoa(1+g.rng.IntN(999)) + `","mimeType":"audio/wav"}`)
	for _, p := range [][]byte{cite, custom, video, audio} {
		g.delta(asst, p)
	}
	tail := g.chunk(false)
	text = append(text, tail...)
	g.delta(asst, textPart("text", tail))
	g.delta(asst, toolCallPart(call1.record))
	g.messageCompleted(asst, "assistant", [][]byte{
		textPart("reasoning", string(reasoning)), textPart("text", string(text)),
		cite, custom, video, audio, toolCallPart(call1.record),
	})
	g.usageUpdated()

	// The call needs approval: the phase ends waiting.
	g.toolCalled(call1)
	g.progress(call1)
	g.nextInterrupt++
	approvalIID := "interrupt-" + strconv.Itoa(g.nextInterrupt)
	approvalID := "approval-" + strconv.Itoa(g.nextInterrupt)
	g.begin(events.EventInterruptRequired, 20)
	g.member("interrupt")
	b := append(g.line, `{"kind":"tool-approval","interruptId":`...)
	b = jsonvalue.AppendQuote(b, approvalIID)
	b = append(b, `,"prompt":"Tool execution requires approval.","actions":[{"id":`...)
	b = jsonvalue.AppendQuote(b, approvalID)
	b = append(b, `,"name":`...)
	b = jsonvalue.AppendQuote(b, call1.name)
	b = append(b, `,"input":`...)
	b = append(b, call1.input...)
	g.line = append(b, `}]}`...)
	g.end()

	// Phase 2: resumed, approved, the call completes; a second call fails, a third returns an
	// error result; then a custom interrupt ends the phase.
	g.newPhase()
	g.begin(events.EventRunStarted, 60000)
	g.end()
	g.begin(events.EventInterruptResolved, 5)
	g.member("interruptId")
	g.line = jsonvalue.AppendQuote(g.line, approvalIID)
	g.member("decisions")
	b = append(g.line, `[{"approvalId":`...)
	b = jsonvalue.AppendQuote(b, approvalID)
	g.line = append(b, `,"approved":true}]`...)
	g.end()
	g.progress(call1)
	result := g.resultRecord(call1)
	g.begin(events.EventToolCompleted, 200)
	g.member("result")
	g.raw(result)
	g.end()
	toolResult := append([]byte(`{"type":"tool-result","result":`), result...)
	g.messageCompleted(g.newMessageID(), "tool", [][]byte{append(toolResult, '}')})

	call2, call3 := g.planCall(), g.planCall()
	asst2 := g.newMessageID()
	g.messageStarted(asst2, "assistant")
	line := g.chunk(true)
	g.delta(asst2, textPart("text", line))
	g.delta(asst2, toolCallPart(call2.record))
	g.delta(asst2, toolCallPart(call3.record))
	g.messageCompleted(asst2, "assistant", [][]byte{textPart("text", line), toolCallPart(call2.record), toolCallPart(call3.record)})
	g.turns, g.lastText = 2, line
	g.toolCalled(call2)
	g.toolFailed(call2, call2.name+" timed out after 30000 ms.", "tool_timeout")
	g.toolCalled(call3)
	errResult := append(append([]byte(nil), call3.record[:len(call3.record)-1]...), `,"output":{"error":"quota exceeded","retryAfterSeconds":30},"isError":true}`...)
	g.begin(events.EventToolCompleted, 200)
	g.member("result")
	g.raw(errResult)
	g.end()

	g.nextInterrupt++
	customIID := "interrupt-" + strconv.Itoa(g.nextInterrupt)
	g.begin(events.EventInterruptRequired, 20)
	g.member("interrupt")
	b = append(g.line, `{"kind":"custom","interruptId":`...)
	b = jsonvalue.AppendQuote(b, customIID)
	b = append(b, `,"prompt":"Which plan should I follow?","actions":[{"id":"plan-a","name":"Train","input":{"budgetEur":120}},{"id":"plan-b","name":"Flight","input":null}],"payload":{"deadlineMinutes":15}}`...)
	g.line = b
	g.end()

	// Phase 3: resumed and answered; usage so far.
	g.newPhase()
	g.begin(events.EventRunStarted, 120000)
	g.end()
	g.begin(events.EventInterruptResolved, 5)
	g.member("interruptId")
	g.line = jsonvalue.AppendQuote(g.line, customIID)
	g.member("decisions")
	g.line = append(g.line, `[{"actionId":"plan-a","note":"Prefer the train."}]`...)
	g.end()
	g.usageUpdated()
	if g.seq-start != richPrologue && g.err == nil {
		g.err = fmt.Errorf("synth: internal error: rich prologue has %d events, want %d", g.seq-start, richPrologue)
		return
	}

	// The rest is the default profile's conversation, without a further interrupt.
	g.hadInterrupt = true
	g.body()
	switch ending {
	case EndingFailed:
		g.runFailed()
	case EndingCancelled:
		g.runCancelled()
	default:
		g.runCompleted()
	}
}

func (g *gen) toolCalled(c toolCall) {
	g.begin(events.EventToolCalled, 30)
	g.member("toolCall")
	g.raw(c.record)
	g.end()
}

func (g *gen) progress(c toolCall) {
	g.begin(events.EventToolProgress, 100)
	g.member("toolCallId")
	g.line = jsonvalue.AppendQuote(g.line, c.id)
	g.member("content")
	g.line = appendParts(g.line, [][]byte{textPart("text", g.progressText(c.name))})
	g.end()
}

func (g *gen) stepLimit(b []byte) []byte {
	b = append(b, `{"kind":"steps","limit":`...)
	b = strconv.AppendInt(b, int64(max(50, g.turns)), 10)
	b = append(b, `,"used":`...)
	b = strconv.AppendInt(b, int64(g.turns), 10)
	return append(b, '}')
}

// runFailed is a failed ending: code agent_execution_failed, a message and the step limit.
func (g *gen) runFailed() {
	g.begin(events.EventRunFailed, 10)
	g.member("code")
	g.line = jsonvalue.AppendQuote(g.line, "agent_execution_failed")
	g.member("message")
	g.line = jsonvalue.AppendQuote(g.line, "The model provider returned 529 (overloaded) three times.")
	g.member("limit")
	g.line = g.stepLimit(g.line)
	g.end()
}

// runCancelled is a cancelled ending with its reason and the step limit.
func (g *gen) runCancelled() {
	g.begin(events.EventRunCancelled, 10)
	g.member("reason")
	g.line = jsonvalue.AppendQuote(g.line, "The user stopped the run.")
	g.member("limit")
	g.line = g.stepLimit(g.line)
	g.end()
}
