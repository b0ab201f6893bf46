// Type-checks the generated declarations against conformance fixtures: `tsc --noEmit -p .`
// (see check.sh). Each fixture is the exact JSON of the corpus document named on the line above
// it (TestTSFixturesMatchCorpus in internal/gen checks that), assigned to the declared type.
// "valid" fixtures must type-check; "invalid" ones are documents the validator refuses, and
// a ts-expect-error directive asserts that the declarations refuse them too.

import type { Envelope, EnvelopeSource } from "./envelope.gen";
import { ENVELOPE_SOURCES, SUBJECT_SEGMENT_REPLACED } from "./envelope.gen";
import type {
  AgentEvent,
  AgentReducerState,
  InterruptRequiredEvent,
  MessageCompletedEvent,
  RunCompletedEvent,
} from "./events.gen";
import { AGENT_EVENT_TYPES } from "./events.gen";
import type {
  DispatchAskArgs,
  DispatchDocEditArgs,
  DispatchFollowArgs,
  DispatchIssueArgs,
  DispatchToolCall,
  DispatchWhoamiArgs,
} from "./dispatch.gen";
import { DISPATCH_TOOL_NAMES } from "./dispatch.gen";
import type {
  AgentMessageV1,
  BusEventsV1,
  BusFrameToClient,
  BusFrameV1,
  MessageDeliveryV1,
  MessageReceiptV1,
  MessageType,
  TaskActorV1,
  TaskEventV1,
} from "./hive.gen";
import { BUS_FRAME_TAGS, MESSAGE_TYPES } from "./hive.gen";
import type {
  EvidenceRefV1,
  GapReason,
  LeanCtxDocument,
  MoneyV1,
  PolicyClassification,
  SavingsReceiptV1,
  UsageBreakdownV1,
} from "./leanctx.gen";
import { GAP_REASONS } from "./leanctx.gen";

// The tuples and unions agree.
const firstSource: EnvelopeSource = ENVELOPE_SOURCES[0];
const replaced: readonly string[] = SUBJECT_SEGMENT_REPLACED;
const eventType: AgentEvent["type"] = AGENT_EVENT_TYPES[13];
const toolName: DispatchToolCall["name"] = DISPATCH_TOOL_NAMES[19];
const messageType: MessageType = MESSAGE_TYPES[3];
const frameTag: BusFrameV1["t"] = BUS_FRAME_TAGS[17];
const gapReason: GapReason = GAP_REASONS[4];
export const tuples = [firstSource, replaced, eventType, toolName, messageType, frameTag, gapReason];


// Envelopes (conformance/envelope/decode.json).
// fixture valid conformance/envelope/decode.json#spec-example
export const specExample: Envelope = {"event_id":"5d41402abc4b2a76b9719d911017c592","source":"github","source_event_id":"d-7","topic":"notifications.github.acme.widgets.pr.42","dedupe_key":"github.d-7","issued_at":1760000000000,"payload_summary":"PR #42 opened","payload":"{\"action\":\"opened\"}","trace_id":"0af7651916cd43dd"};
// fixture valid conformance/envelope/decode.json#every-field-canonical
export const everyField: Envelope = {"event_id":"e1","source":"agent","source_event_id":"s1","source_session":"ses_0","topic":"notifications.agent.ses_1","dedupe_key":"publish.0123456789abcdef0123456789abcdef","issued_at":1760000000000,"expires_at":-9223372036854775808,"payload_summary":"hi","payload_ref":"nats://payloads/evt-1","payload":"{\"a\":\"<&>\"}","trace_id":"t1","sender":{"session_id":"s","machine":"m","cwd":"/w","title":"T","roles":["a","b"]},"in_reply_to":"e0","supersedes":"e9","urgency":"high","expects_reply":"optional"};
// fixture valid conformance/envelope/decode.json#sender-with-roles
export const senderWithRoles: Envelope = {"event_id":"e1","source":"agent","source_event_id":"s1","topic":"notifications.agent.ses_1","dedupe_key":"publish.0123456789abcdef0123456789abcdef","issued_at":1760000000000,"payload_summary":"hi","trace_id":"t1","sender":{"session_id":"ses_1","roles":["r"]}};
// fixture invalid conformance/envelope/decode.json#source-email
// @ts-expect-error
export const sourceEmail: Envelope = {"event_id":"e1","source":"email","source_event_id":"s1","topic":"notifications.agent.ses_1","dedupe_key":"publish.0123456789abcdef0123456789abcdef","issued_at":1760000000000,"payload_summary":"hi","trace_id":"t1"};
// fixture invalid conformance/envelope/decode.json#urgency-urgent
// @ts-expect-error
export const urgencyUrgent: Envelope = {"event_id":"e1","source":"agent","source_event_id":"s1","topic":"notifications.agent.ses_1","dedupe_key":"publish.0123456789abcdef0123456789abcdef","issued_at":1760000000000,"payload_summary":"hi","trace_id":"t1","urgency":"urgent"};
// fixture invalid conformance/envelope/decode.json#empty-object-eight-problems
// @ts-expect-error
export const emptyEnvelope: Envelope = {};

// The example run (conformance/events/example-run.ndjson), one event per line.
// fixture valid conformance/events/example-run.ndjson#line-1
export const exampleRun01: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:1","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:01.000Z","logicalSequence":1,"sequence":1,"type":"run.started"};
// fixture valid conformance/events/example-run.ndjson#line-2
export const exampleRun02: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:2","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:02.000Z","logicalSequence":2,"sequence":2,"type":"message.started","messageId":"msg-user","role":"user"};
// fixture valid conformance/events/example-run.ndjson#line-3
export const exampleRun03: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:3","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:03.000Z","logicalSequence":3,"sequence":3,"type":"message.part.delta","messageId":"msg-user","part":{"type":"text","text":"What's the weather in Oslo?"}};
// fixture valid conformance/events/example-run.ndjson#line-4
export const exampleRun04: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:4","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:04.000Z","logicalSequence":4,"sequence":4,"type":"message.completed","messageId":"msg-user","role":"user","content":[{"type":"text","text":"What's the weather in Oslo?"}]};
// fixture valid conformance/events/example-run.ndjson#line-5
export const exampleRun05: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:5","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:05.000Z","logicalSequence":5,"sequence":5,"type":"message.started","messageId":"msg-1","role":"assistant"};
// fixture valid conformance/events/example-run.ndjson#line-6
export const exampleRun06: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:6","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:06.000Z","logicalSequence":6,"sequence":6,"type":"message.part.delta","messageId":"msg-1","part":{"type":"reasoning","text":"The user wants the weather; call the tool."}};
// fixture valid conformance/events/example-run.ndjson#line-7
export const exampleRun07: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:7","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:07.000Z","logicalSequence":7,"sequence":7,"type":"message.part.delta","messageId":"msg-1","part":{"type":"text","text":"Let me check."}};
// fixture valid conformance/events/example-run.ndjson#line-8
export const exampleRun08: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:8","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:08.000Z","logicalSequence":8,"sequence":8,"type":"message.part.delta","messageId":"msg-1","part":{"type":"tool-call","toolCall":{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"}}}};
// fixture valid conformance/events/example-run.ndjson#line-9
export const exampleRun09: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:9","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:09.000Z","logicalSequence":9,"sequence":9,"type":"tool.called","toolCall":{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"}}};
// fixture valid conformance/events/example-run.ndjson#line-10
export const exampleRun10: InterruptRequiredEvent = {"protocolVersion":1,"eventId":"run-ex:10","runId":"run-ex","sessionId":"s-ex","phaseId":"p-1","timestamp":"2025-01-01T00:00:10.000Z","logicalSequence":10,"sequence":10,"type":"interrupt.required","interrupt":{"kind":"tool-approval","interruptId":"int-1","prompt":"Tool execution requires approval.","actions":[{"id":"appr-1","name":"weather","input":{"city":"Oslo"}}]}};
// fixture valid conformance/events/example-run.ndjson#line-11
export const exampleRun11: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:11","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:11.000Z","logicalSequence":11,"sequence":1,"type":"run.started"};
// fixture valid conformance/events/example-run.ndjson#line-12
export const exampleRun12: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:12","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:12.000Z","logicalSequence":12,"sequence":2,"type":"interrupt.resolved","interruptId":"int-1","decisions":[{"approvalId":"appr-1","approved":true}]};
// fixture valid conformance/events/example-run.ndjson#line-13
export const exampleRun13: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:13","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:13.000Z","logicalSequence":13,"sequence":3,"type":"tool.progress","toolCallId":"call-1","content":[{"type":"text","text":"Fetching forecast…"}]};
// fixture valid conformance/events/example-run.ndjson#line-14
export const exampleRun14: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:14","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:14.000Z","logicalSequence":14,"sequence":4,"type":"tool.completed","result":{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"},"output":{"tempC":4,"conditions":"cloudy"}}};
// fixture valid conformance/events/example-run.ndjson#line-15
export const exampleRun15: MessageCompletedEvent = {"protocolVersion":1,"eventId":"run-ex:15","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:15.000Z","logicalSequence":15,"sequence":5,"type":"message.completed","messageId":"msg-1","role":"assistant","content":[{"type":"reasoning","text":"The user wants the weather; call the tool."},{"type":"text","text":"Let me check."},{"type":"tool-call","toolCall":{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"}}},{"type":"tool-result","result":{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"},"output":{"tempC":4,"conditions":"cloudy"}}}]};
// fixture valid conformance/events/example-run.ndjson#line-16
export const exampleRun16: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:16","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:16.000Z","logicalSequence":16,"sequence":6,"type":"message.started","messageId":"msg-2","role":"assistant"};
// fixture valid conformance/events/example-run.ndjson#line-17
export const exampleRun17: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:17","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:17.000Z","logicalSequence":17,"sequence":7,"type":"message.part.delta","messageId":"msg-2","part":{"type":"text","text":"It is 4 °C"}};
// fixture valid conformance/events/example-run.ndjson#line-18
export const exampleRun18: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:18","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:18.000Z","logicalSequence":18,"sequence":8,"type":"message.part.delta","messageId":"msg-2","part":{"type":"text","text":" and cloudy in Oslo."}};
// fixture valid conformance/events/example-run.ndjson#line-19
export const exampleRun19: AgentEvent = {"protocolVersion":1,"eventId":"run-ex:19","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:19.000Z","logicalSequence":19,"sequence":9,"type":"usage.updated","usage":{"inputTokens":120,"outputTokens":40,"totalTokens":160,"model":"example-model"}};
// fixture valid conformance/events/example-run.ndjson#line-20
export const exampleRun20: RunCompletedEvent = {"protocolVersion":1,"eventId":"run-ex:20","runId":"run-ex","sessionId":"s-ex","phaseId":"p-2","timestamp":"2025-01-01T00:00:20.000Z","logicalSequence":20,"sequence":10,"type":"run.completed","finishReason":"stop","content":[{"type":"text","text":"It is 4 °C and cloudy in Oslo."}],"usage":{"inputTokens":180,"cachedInputTokens":64,"outputTokens":52,"totalTokens":232,"costUsd":0.0012,"model":"example-model","provider":"example"},"limit":{"kind":"steps","limit":10,"used":3}};

// Its snapshot (conformance/events/example-run.state.json).
// fixture valid conformance/events/example-run.state.json
export const exampleRunState: AgentReducerState = {"protocolVersion":1,"runId":"run-ex","sessionId":"s-ex","status":"completed","messages":[{"messageId":"msg-user","role":"user","content":[{"type":"text","text":"What's the weather in Oslo?"}]},{"messageId":"msg-1","role":"assistant","content":[{"type":"reasoning","text":"The user wants the weather; call the tool."},{"type":"text","text":"Let me check."},{"type":"tool-call","toolCall":{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"}}},{"type":"tool-result","result":{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"},"output":{"tempC":4,"conditions":"cloudy"}}}]},{"messageId":"msg-2","role":"assistant","content":[{"type":"text","text":"It is 4 °C"},{"type":"text","text":" and cloudy in Oslo."}]}],"toolCalls":[{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"}}],"toolProgress":[{"toolCallId":"call-1","content":[{"type":"text","text":"Fetching forecast…"}]}],"toolResults":[{"toolCallId":"call-1","name":"weather","input":{"city":"Oslo"},"output":{"tempC":4,"conditions":"cloudy"}}],"toolErrors":[],"interrupt":null,"interruptResolution":{"interruptId":"int-1","decisions":[{"approvalId":"appr-1","approved":true}]},"usage":{"inputTokens":180,"cachedInputTokens":64,"outputTokens":52,"totalTokens":232,"costUsd":0.0012,"model":"example-model","provider":"example"},"limit":{"kind":"steps","limit":10,"used":3},"finishReason":"stop","errorCode":null,"cancellationReason":null,"lastSequence":10,"lastLogicalSequence":20,"lastPhaseId":"p-2","eventIds":["run-ex:1","run-ex:2","run-ex:3","run-ex:4","run-ex:5","run-ex:6","run-ex:7","run-ex:8","run-ex:9","run-ex:10","run-ex:11","run-ex:12","run-ex:13","run-ex:14","run-ex:15","run-ex:16","run-ex:17","run-ex:18","run-ex:19","run-ex:20"],"eventFingerprints":{"run-ex:1":"sha256:abcb3735c628465106ab52998ec57f327a734ae9cccafc837d3064ed1b35c33c","run-ex:2":"sha256:e5f308d20bcbaf552c5ba71f0ba246ed70249e3fa8b9660e8d4e1254235f2fee","run-ex:3":"sha256:b0ba3330ddf4bbf1e8e30d18ada8d106d3d2f1de216f425f0cd2fbd73710b693","run-ex:4":"sha256:18eca1ab45a12efeb7b39e9c8471b382177b4c174a965e32ea3bf510165b271f","run-ex:5":"sha256:513f6641f0324767d2da347e7f2f033c87d70de3b8aea0d6ef5e58eed83f9010","run-ex:6":"sha256:2a167a030fffac32f0b80c9d20651b1bace254307de6bb1c0b362bcbe1c07cd3","run-ex:7":"sha256:46a9b176699de6900978768a700ceba7e52f5febc1f414e900fea653ee2cb3e7","run-ex:8":"sha256:ca5e23161f823ab91d362a69ef7aef70fd9904373fb3889045cf1dd80ab520d3","run-ex:9":"sha256:46eb2ae2e5978c542298abc358eb1b3e316fee342edc910b207a4c154ec72613","run-ex:10":"sha256:c8943eaee622ecda3a643b3a4e681e2fd01c6c9ad4b1c43608ec06f00087f095","run-ex:11":"sha256:536043732e8133b584af584b7070e663074a83c01ebc861f1b1be28a16d407a5","run-ex:12":"sha256:70a905e483fb740cb990d5278896794fc670f9c3a386471a13998aa5a1c59eb2","run-ex:13":"sha256:f8aac54ef105884975c6cb4cf0c4c46462b6605d634d727dabc676ea2036dde1","run-ex:14":"sha256:20b171ffc1cc68ab8cc0ef9c750778f610e585ebbf23521eb38280c11bdfb1bb","run-ex:15":"sha256:ad292c6b4634fda8fb139f7b1e211493d270f80c9974adfc30f69549d2c02dc0","run-ex:16":"sha256:9283ccba449abd5e37954b616a842a5a401660a0c772ca61fca45a4c7bd3eb43","run-ex:17":"sha256:f388e712e67091cb6bdd8a8a7fe847fb9475a17f39bfcf91a28c24d11f0e8bcf","run-ex:18":"sha256:53b464bf174eaba46fcf6e42872b8df3b3329777d67395ce525d73c02ce44cbe","run-ex:19":"sha256:b77924726202ac6263b1f99df3f41e9898b7f5f2e8bd916f0d51051e3b9e81f0","run-ex:20":"sha256:7acd324a334c48733ada700a0be79acf7b47f86ee5535a13a959fc8235880a06"}};

// Events (conformance/events/*.json).
// fixture valid conformance/events/content.json#content-all-ten-types
export const allTenParts: MessageCompletedEvent = {"protocolVersion":1,"eventId":"run-1:4","runId":"run-1","sessionId":"s-1","phaseId":"p-1","timestamp":"2025-01-01T00:00:04.000Z","logicalSequence":4,"sequence":4,"type":"message.completed","messageId":"m-1","role":"assistant","content":[{"type":"text","text":"See attached."},{"type":"reasoning","text":"The user wants a chart."},{"type":"image","url":"https://example.test/a.png","mimeType":"image/png"},{"type":"audio","data":"UklGRg=="},{"type":"video","fileId":"file-7","mimeType":"video/mp4"},{"type":"file","data":"SGVsbG8=","name":"a.txt","mimeType":"text/plain"},{"type":"citation","url":"https://example.test/doc","title":"Doc"},{"type":"tool-call","toolCall":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"}}},{"type":"tool-result","result":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"},"output":{"tempC":4},"isError":false}},{"type":"custom","name":"chart","data":{"points":[1,2,3]}}]};
// fixture invalid conformance/events/content.json#content-image-no-source
// @ts-expect-error
export const imageNoSource: AgentEvent = {"protocolVersion":1,"eventId":"run-1:4","runId":"run-1","sessionId":"s-1","phaseId":"p-1","timestamp":"2025-01-01T00:00:04.000Z","logicalSequence":4,"sequence":4,"type":"message.completed","messageId":"m-1","role":"assistant","content":[{"type":"image"}]};
// fixture invalid conformance/events/content.json#content-file-url-and-fileId
// @ts-expect-error
export const fileTwoSources: AgentEvent = {"protocolVersion":1,"eventId":"run-1:4","runId":"run-1","sessionId":"s-1","phaseId":"p-1","timestamp":"2025-01-01T00:00:04.000Z","logicalSequence":4,"sequence":4,"type":"message.completed","messageId":"m-1","role":"assistant","content":[{"type":"file","url":"u","fileId":"f"}]};
// fixture invalid conformance/events/payload.json#message-started-role-system
// @ts-expect-error
export const roleSystem: AgentEvent = {"protocolVersion":1,"eventId":"run-1:5","runId":"run-1","sessionId":"s-1","phaseId":"p-1","timestamp":"2025-01-01T00:00:05.000Z","logicalSequence":5,"sequence":5,"type":"message.started","messageId":"m-1","role":"system"};
// fixture invalid conformance/events/envelope.json#event-protocol-version-2
// @ts-expect-error
export const protocolVersion2: AgentEvent = {"protocolVersion":2,"eventId":"run-1:1","runId":"run-1","sessionId":"s-1","phaseId":"p-1","timestamp":"2025-01-01T00:00:01.000Z","logicalSequence":1,"sequence":1,"type":"run.started"};
// fixture invalid conformance/events/envelope.json#event-run-started-unknown-member
// @ts-expect-error
export const runStartedUnknownMember: AgentEvent = {"protocolVersion":1,"eventId":"run-1:1","runId":"run-1","sessionId":"s-1","phaseId":"p-1","timestamp":"2025-01-01T00:00:01.000Z","logicalSequence":1,"sequence":1,"type":"run.started","foo":1};

// Dispatch tool arguments (conformance/tools/dispatch_*.json, strict mode).
// fixture valid conformance/tools/dispatch_issue.json#assignee, force, labels
export const issueLabels: DispatchIssueArgs = {"project":"DSP","title":"x","assignee":"octocat","force":true,"labels":["ui"]};
// fixture valid conformance/tools/dispatch_issue.json#components explicit with ids
export const issueComponents: DispatchIssueArgs = {"project":"DSP","title":"x","components":{"mode":"explicit","ids":["api","web"]}};
// fixture valid conformance/tools/dispatch_ask.json#project with artifact
export const askWithOptions: DispatchAskArgs = {"project":"CORE","artifact":"roadmap","question":"Q","urgency":"blocking","multiple":true,"options":[{"label":"A","description":"first"},{"label":"B"}]};
// fixture valid conformance/tools/dispatch_doc_edit.json#retype
export const docEditRetype: DispatchDocEditArgs = {"issue":"DSP-1","artifact":"spec","ops":[{"op":"retype","block":"b1","type":"decision","attributes":{"tone":"x"}}]};
// fixture valid conformance/tools/dispatch_whoami.json#no arguments
export const whoami: DispatchWhoamiArgs = {};
// fixture valid conformance/tools/dispatch_follow.json#unfollow
export const unfollow: DispatchFollowArgs = {"ask":"dispatch://DSP-1/ask/01234567-0000-4000-8000-000000000001","action":"unfollow"};
// fixture invalid conformance/tools/dispatch_issue.json#priority as string
// @ts-expect-error
export const priorityString: DispatchIssueArgs = {"project":"DSP","title":"x","priority":"1"};
// fixture invalid conformance/tools/dispatch_ask.json#multiple as string
// @ts-expect-error
export const multipleString: DispatchAskArgs = {"issue":"DSP-1","question":"Q","multiple":"yes"};
// fixture invalid conformance/tools/dispatch_follow.json#action watch
// @ts-expect-error
export const actionWatch: DispatchFollowArgs = {"ask":"01234567-0000-4000-8000-000000000001","action":"watch"};
// fixture invalid conformance/tools/dispatch_whoami.json#verbose refused
// @ts-expect-error
export const whoamiVerbose: DispatchWhoamiArgs = {"verbose":true};

// A call of the suite: the tool name selects the arguments type.
export const followCall: DispatchToolCall = { name: "dispatch_follow", arguments: unfollow };
// @ts-expect-error
export const mismatchedCall: DispatchToolCall = { name: "dispatch_whoami", arguments: unfollow };

// Hive contracts (conformance/hive/*.json): messages, deliveries, frames, tasks.
// fixture valid conformance/hive/spec-cases.json#9.1 M is valid
export const questionM: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}};
// fixture valid conformance/hive/spec-cases.json#9.20a W is valid
export const questionW: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"swarm","swarm_id":"sw-1"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}};
// fixture valid conformance/hive/spec-cases.json#9.20b X is valid
export const sealedX: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":"claude-3e","sealed":{"content_schema":"leanctx.hive.sealed-message/v1","epoch":3,"nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX","ciphertext":"KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OTw=="}};
// fixture valid conformance/hive/spec-cases.json#9.47a O is valid
export const deliveryO: MessageDeliveryV1 = {"gid":"g-1","seq":41,"network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":{"kind":"agent","agent":"claude-3e","instance_label":"laptop","instance_id":"inst_01jb8z9","owner":"Ana","mine":false},"thread_id":"g-1","deadline":"2026-10-21T12:00:00Z","body":{"text":"Which retry budget does payments use?"},"trust":"team","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-19T12:00:00Z"};
// fixture valid conformance/hive/spec-cases.json#9.47b D is valid
export const deliveryD: MessageDeliveryV1 = {"gid":"g-9","seq":3,"network":{"kind":"swarm","swarm_id":"sw-1"},"type":"finding","from":{"kind":"swarm","handle":"quiet-heron","reputation":1},"thread_id":"g-9","body":{"text":"found"},"trust":"untrusted","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-20T12:00:00Z"};
// fixture valid conformance/hive/spec-cases.json#9.67a presence_update
export const presenceUpdate: BusFrameV1 = {"t":"presence_update","agent_id":"a","instance_id":"i","role":"coder","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","state":"online","server_time":"2026-10-20T12:00:00Z"};
// fixture valid conformance/hive/spec-cases.json#9.67b presence.update alias
export const presenceUpdateAlias: BusFrameToClient = {"t":"presence.update","agent_id":"a","instance_id":"i","role":"coder","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","state":"online","server_time":"2026-10-20T12:00:00Z"};
// fixture valid conformance/hive/spec-cases.json#9.95 task event by a person without label
export const taskEventPerson: TaskEventV1 = {"channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general","seq":42,"number":7,"event":"claimed","state":"claimed","by":{"kind":"person"},"server_time":"2026-10-20T12:01:00Z"};
// fixture valid conformance/hive/bus.json#bus events
export const busEvents: BusEventsV1 = {"schema":"leanctx.hive.bus-events/v1","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general","events":[{"t":"deliver","seq":43,"channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general","from":"claude-3e","kind":"note","priority":"low","privacy":"team","body":[1,2.5,"x",null,true],"server_time":"2026-10-20T12:00:00Z"},{"t":"message.deliver","gid":"g-9","seq":3,"network":{"kind":"swarm","swarm_id":"sw-1"},"type":"finding","from":{"kind":"swarm","handle":"quiet-heron","reputation":1},"thread_id":"g-9","body":{"text":"found"},"trust":"untrusted","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-20T12:00:00Z"},{"t":"task.event","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general","seq":42,"number":7,"event":"claimed","state":"claimed","by":{"kind":"agent","agent":"codex-85","instance_id":"inst_01jb8z9"},"server_time":"2026-10-20T12:01:00Z"}],"next_after_seq":44};
// fixture invalid conformance/hive/spec-cases.json#9.2 M without type
// @ts-expect-error
export const withoutType: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"from":"claude-3e","body":{"text":"Which retry budget does payments use?"}};
// fixture invalid conformance/hive/spec-cases.json#9.3a type poll
// @ts-expect-error
export const typePoll: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"poll","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}};
// fixture invalid conformance/hive/spec-cases.json#9.31b network kind mesh
// @ts-expect-error
export const networkMesh: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"mesh"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}};
// fixture invalid conformance/hive/spec-cases.json#9.32 top-level priority
// @ts-expect-error
export const topLevelPriority: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"},"priority":"high"};
// fixture invalid conformance/hive/spec-cases.json#9.37 sealed swarm message
// @ts-expect-error
export const sealedSwarm: AgentMessageV1 = {"client_msg_id":"01JBMSG","network":{"kind":"swarm","swarm_id":"sw-1"},"type":"question","from":"claude-3e","sealed":{"content_schema":"leanctx.hive.sealed-message/v1","epoch":3,"nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX","ciphertext":"KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OTw=="}};
// fixture invalid conformance/hive/spec-cases.json#9.48a swarm delivery with trust team
// @ts-expect-error
export const swarmTrustTeam: MessageDeliveryV1 = {"gid":"g-9","seq":3,"network":{"kind":"swarm","swarm_id":"sw-1"},"type":"finding","from":{"kind":"swarm","handle":"quiet-heron","reputation":1},"thread_id":"g-9","body":{"text":"found"},"trust":"team","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-20T12:00:00Z"};
// fixture invalid conformance/hive/spec-cases.json#9.55b receipt with at
// @ts-expect-error
export const receiptWithAt: MessageReceiptV1 = {"gid":"g-1","by":"codex-85","state":"read","at":"x"};
// fixture invalid conformance/hive/spec-cases.json#9.66b person actor without label
// @ts-expect-error
export const personWithoutLabel: TaskActorV1 = {"kind":"person"};

// Core contracts (conformance/hive/*.json, the leanctx TYPEs).
// fixture valid conformance/hive/leanctx.json#money
export const moneyUSD: MoneyV1 = {"currency":"USD","coefficient":1234,"scale":4};
// fixture valid conformance/hive/spec-cases.json#9.61b unversioned legacy digest
export const legacyEvidence: EvidenceRefV1 = {"kind":"ProviderReceipt","uri":"s3://evidence/r-1.json","digest":"sha256:abc","signature_status":"Verified"};
// fixture valid conformance/hive/spec-cases.json#9.62b usage without other_units
export const usageWithoutUnits: UsageBreakdownV1 = {"input_tokens":1200,"output_tokens":300,"cached_input_tokens":800,"cache_write_tokens":0,"reasoning_tokens":50};
// fixture valid conformance/hive/leanctx.json#policy without fallback
export const policyWithoutFallback: PolicyClassification = {"criticality":"High","expiry_behavior":"GracePeriod","grace_period_seconds":3600,"last_known_good_allowed":true};
// fixture valid conformance/hive/leanctx.json#savings receipt
export const savingsReceipt: SavingsReceiptV1 = {"schema_version":1,"savings_id":"sav-1","task_id":"task-1","baseline_receipt_id":"rcpt-b","treatment_receipt_id":"rcpt-t","baseline_cost_micros":90000,"treatment_cost_micros":50000,"avoided_cost_micros":40000,"baseline_tokens":{"original_tokens":10000,"materialized_tokens":6000,"delivered_tokens":5000,"provider_billed_tokens":5000},"treatment_tokens":{"original_tokens":10000,"materialized_tokens":6000,"delivered_tokens":5000,"provider_billed_tokens":5000},"token_savings_ratio_milli":400,"quality_preserved":true,"quality_baseline_score_milli":900,"quality_treatment_score_milli":910,"measurement_method":"provider_reported","context_strategy":"lean","methodology_version":"m-1","evidence_refs":[{"kind":"ProviderReceipt","uri":"s3://evidence/r-1.json","digest":"sha256:abc","signature_status":"Verified"}],"decision_refs":["dec-1"],"signature":"sig"};
// fixture valid conformance/hive/leanctx.json#gap opened without last sequence
export const gapOpened: LeanCtxDocument = {"gap_id":"gap-1","tenant_id":"t-1","source_instance_id":"inst-1","first_missing_sequence":10,"started_at":"2026-10-20T12:00:00Z","detected_at":"2026-10-20T12:05:00Z","reason":"NetworkTimeout","affected_event_types":["usage"],"runtime_version":"1.2.3","previous_evidence_hash":"sha256:abababababababababababababababababababababababababababababababab","signature":"sig"};
// fixture invalid conformance/hive/spec-cases.json#9.59a quoted coefficient
// @ts-expect-error
export const quotedCoefficient: MoneyV1 = {"currency":"EUR","coefficient":"12","scale":2};
// fixture invalid conformance/hive/spec-cases.json#9.60 evidence kind providerReceipt
// @ts-expect-error
export const evidenceKindCamel: EvidenceRefV1 = {"kind":"providerReceipt","uri":"s3://evidence/r-1.json","digest":"sha256:abc","signature_status":"Verified"};
// fixture invalid conformance/hive/spec-cases.json#9.63a receipt schema_version 2
// @ts-expect-error
export const receiptVersion2: SavingsReceiptV1 = {"schema_version":2,"savings_id":"sav-1","task_id":"task-1","baseline_receipt_id":"rcpt-b","treatment_receipt_id":"rcpt-t","baseline_cost_micros":90000,"treatment_cost_micros":50000,"avoided_cost_micros":40000,"baseline_tokens":{"original_tokens":10000,"materialized_tokens":6000,"delivered_tokens":5000,"provider_billed_tokens":5000},"treatment_tokens":{"original_tokens":10000,"materialized_tokens":6000,"delivered_tokens":5000,"provider_billed_tokens":5000},"token_savings_ratio_milli":400,"quality_preserved":true,"quality_baseline_score_milli":900,"quality_treatment_score_milli":910,"measurement_method":"provider_reported","context_strategy":"lean","methodology_version":"m-1","evidence_refs":[{"kind":"ProviderReceipt","uri":"s3://evidence/r-1.json","digest":"sha256:abc","signature_status":"Verified"}],"decision_refs":["dec-1"],"signature":"sig"};
// fixture invalid conformance/hive/leanctx.json#policy expiry fail_closed
// @ts-expect-error
export const policyFailClosed: PolicyClassification = {"criticality":"High","expiry_behavior":"fail_closed","grace_period_seconds":3600,"fallback_policy_ref":"pol-0","last_known_good_allowed":true};
