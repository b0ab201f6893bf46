package hive

import (
	"errors"
	"testing"
)

func TestErrorCodeTable(t *testing.T) {
	want := map[HiveErrorCode]int{
		"authorization_pending": 400, "slow_down": 400, "expired_token": 400, "access_denied": 400,
		"invalid_request": 400, "unauthorized": 401, "plan_required": 402, "forbidden_right": 403,
		"upload_disabled": 403, "screening_required": 403, "instance_revoked": 403, "policy_denied": 403,
		"not_found": 404, "instance_limit": 409, "revision_conflict": 409, "invalid_state": 409,
		"lease_expired": 409, "upgrade_required": 426, "rate_limited": 429, "quota_exceeded": 429,
	}
	if len(HiveErrorCodes()) != len(want) {
		t.Fatalf("%d codes", len(HiveErrorCodes()))
	}
	for _, c := range HiveErrorCodes() {
		if c.HTTPStatus() != want[c] {
			t.Errorf("%s: %d, want %d", c, c.HTTPStatus(), want[c])
		}
		var d HiveErrorCode
		if err := d.UnmarshalJSON([]byte(`"` + string(c) + `"`)); err != nil || d != c {
			t.Errorf("decode %s: %s %v", c, d, err)
		}
	}
	if HiveErrorCodeUnknown.HTTPStatus() != 0 {
		t.Fatal("unknown has no status")
	}
	var d HiveErrorCode
	if err := d.UnmarshalJSON([]byte(`"teapot"`)); err != nil || d != HiveErrorCodeUnknown {
		t.Fatal("other strings decode as unknown")
	}
	for status, code := range map[int]HiveErrorCode{400: "invalid_request", 401: "unauthorized", 402: "plan_required", 403: "forbidden_right", 404: "not_found", 409: "invalid_state", 426: "upgrade_required", 429: "rate_limited", 418: "unknown", 500: "unknown"} {
		if got := CodeForStatus(status); got != code {
			t.Errorf("CodeForStatus(%d) = %s, want %s", status, got, code)
		}
	}
}

func TestErrorBodyRoundTrip(t *testing.T) {
	const in = `{"error":{"code":"rate_limited","message":"slow down","field":"messages_per_minute","reason":"limit_exceeded","limit":60,"used":61,"retry_after_s":30,"kind":"message"}}`
	var b HiveErrorBody
	if err := b.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	out, err := b.MarshalJSON()
	if err != nil || string(out) != in {
		t.Fatalf("%s %v", out, err)
	}
	if err := b.UnmarshalJSON([]byte(`{"error":{"code":"teapot"}}`)); err != nil || b.Error.Code != HiveErrorCodeUnknown || b.Error.Message != "" {
		t.Fatalf("%+v %v", b, err)
	}
	out, _ = b.MarshalJSON()
	if string(out) != `{"error":{"code":"unknown","message":""}}` {
		t.Fatalf("message is always written: %s", out)
	}
}

func TestValidationField(t *testing.T) {
	tests := map[string]string{
		"client_msg_id must not be empty":                          "client_msg_id",
		"from exceeds the 256 byte limit":                          "from",
		"to must not be empty":                                     "to",
		"to_instance must not be empty":                            "to_instance",
		"to_instance names the instance of `to` on an org network": "to_instance",
		"reply_to must not be empty":                               "reply_to",
		"gid must not be empty":                                    "gid",
		"by must not be empty":                                     "by",
		"channel must be org:<org>/vault:<vault_id>/<name>":        "network.channel",
		"swarm_id must not be empty":                               "network.swarm_id",
		"unknown message type":                                     "type",
		"an answer replies to a question":                          "reply_to",
		"unknown receipt state":                                    "state",
		"only questions carry a deadline":                          "deadline",
		"UtcTimestamp contains an invalid calendar or clock value": "deadline",
		"text must not be empty":                                   "body.text",
		"too many references":                                      "body.references",
		"numbers start at 1":                                       "body.references",
		"reference id must not be empty":                           "body.references",
		"handoff_id must not be empty":                             "body.references",
		"commit references are 7-64 hex":                           "body.references",
		"Swarm messages do not reference org tasks":                "body.references",
		"a message carries body or sealed":                         "body",
		"swarm messages are public to the swarm's workers":         "sealed",
		"content_schema must be leanctx.hive.<area>/v<n>":          "sealed.content_schema",
		"sealed content must be leanctx.hive.sealed-message/v1":    "sealed.content_schema",
		"sealed epochs start at 1":                                 "sealed.epoch",
		"nonce must be standard padded base64":                     "sealed.nonce",
		"ciphertext is shorter than the 16 byte tag":               "sealed.ciphertext",
		"Swarm content is always untrusted":                        "",
	}
	for msg, field := range tests {
		if got := ValidationField(msg); got != field {
			t.Errorf("%q: %q, want %q", msg, got, field)
		}
	}
	d := NewValidationFailure(errors.New("unknown message type"))
	if d.Code != HiveErrorCodeInvalidRequest || d.Message != "unknown message type" || d.Field == nil || *d.Field != "type" {
		t.Fatalf("%+v", d)
	}
}
