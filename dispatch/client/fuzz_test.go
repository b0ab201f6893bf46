package client

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/toolspec"
)

// FuzzDecodeAnswer feeds arbitrary answer bodies to the response decoder (dispatch-tools.md
// §8.8): a non-2xx body must map to a DispatchServiceError or a DispatchGatewayError with code
// `HTTP_<status>` and the token redacted from the excerpt; a 2xx body must decode into the
// selected API type or be a gateway error, and a decoded value must render without panicking.
// Seeds: testdata/fuzz/FuzzDecodeAnswer.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(409, []byte(`{"error":"https://a.test is linked to DSP-9","code":"EXTERNAL_LINK_TAKEN"}`), uint8(0))
	f.Add(502, []byte("<html>Bad gateway</html>"), uint8(0))
	f.Add(200, []byte(`{"issues":[{"key":"DSP-1","priority":2,"open_asks":1,"route":"role:r"}],"total":3,"limit":1,"offset":0}`), uint8(3))
	const token = "tok_fuzz"
	c := New(Config{URL: "https://dispatch.test", Token: token, Host: Host{SessionID: "ses_1"}})
	f.Fuzz(func(t *testing.T, status int, body []byte, kind uint8) {
		if status < 100 || status > 999 {
			status = 100 + (status%900+900)%900
		}
		req := &request{method: "PATCH", path: "/api/v1/issues/DSP-1", linksPatch: kind%2 == 0}
		if status < 200 || status > 299 {
			err := c.answerError(req, "https://dispatch.test/api/v1/issues/DSP-1", status, body)
			again := c.answerError(req, "https://dispatch.test/api/v1/issues/DSP-1", status, body)
			if err.Error() != again.Error() {
				t.Fatal("non-deterministic error text")
			}
			var se *DispatchServiceError
			var ge *DispatchGatewayError
			switch {
			case errors.As(err, &se):
				if se.Code == "" || !strings.HasPrefix(err.Error(), se.Code+": ") {
					t.Fatalf("service error %q", err)
				}
				_ = se.DuplicateCandidates()
			case errors.As(err, &ge):
				if ge.Code != "HTTP_"+strconv.Itoa(status) || strings.Contains(ge.Excerpt, token) {
					t.Fatalf("gateway error %q", err)
				}
				if n := toolspec.UTF16Len(strings.TrimSuffix(ge.Excerpt, "…")); n > excerptMax {
					t.Fatalf("excerpt of %d units", n)
				}
			default:
				t.Fatalf("%T", err)
			}
			return
		}
		a := &answer{status: status, body: body, req: req, url: "https://dispatch.test/x"}
		err := decodeInto(c, a, kind)
		if err != nil {
			var ge *DispatchGatewayError
			if !errors.As(err, &ge) || ge.Code != "HTTP_"+strconv.Itoa(status) {
				t.Fatalf("%T %v", err, err)
			}
		}
	})
}

// decodeInto decodes a 2xx answer as one of the executor's answer types, chosen by kind, and
// renders what it decoded.
func decodeInto(c *Client, a *answer, kind uint8) error {
	doc := &document{art: dispatch.Artifact{ID: "a", Slug: "spec", Name: "Spec"}, key: "DSP-1"}
	switch kind % 16 {
	case 0:
		var v dispatch.IssueRead
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = componentsLine(v.Issue.Components)
		_ = eventRows(v.Events)
		_ = approvalLine(nil)
	case 1:
		var w IssueWrite
		if err := c.decodeAnswer(a, shapeWrapped, "issue", &w.Issue); err != nil {
			return err
		}
		w.Advice = adviceOf(a.body)
		_ = createdResult(c, &w, nil)
		_ = updatedResult(c, "DSP-1", &w, updateChange{hasLinks: true, hasLabels: true})
	case 2:
		var v dispatch.Ask
		if err := c.decodeAnswer(a, shapeWrapped, "ask", &v); err != nil {
			return err
		}
		_ = askOpenedResult(c, &v, askSub(&v, nil), adviceOf(a.body))
	case 3:
		page, err := c.decodeIssuePage(a)
		if err != nil {
			return err
		}
		_ = issuesResult("DSP", page)
	case 4:
		var v []dispatch.Comment
		if err := c.decodeAnswer(a, shapeList, "comments", &v); err != nil {
			return err
		}
		_ = replyRows(v)
	case 5:
		var v dispatch.WhoamiResponse
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = whoamiResult("ses_1", &v)
	case 6:
		var v dispatch.EditArtifactResponse
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = editResult(c, doc, []dispatch.EditOp{{Op: dispatch.OpRetype}}, &v)
	case 7:
		var v dispatch.SearchResponse
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = searchResult(c, "q", &v)
	case 8:
		var v dispatch.OpenAsksResponse
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = openAsksResult(c, "", &v)
	case 9:
		var v dispatch.GraphReferences
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = edgeRows(v.Edges, dispatch.DirectionIn)
		_ = edgeRows(v.Edges, dispatch.DirectionOut)
	case 10:
		var v dispatch.ArtifactUploadResponse
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = uploadResult(c, "", "CORE", &v)
	case 11:
		var v ApprovalRequestResponse
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = approvalResult(c, doc, &v)
	case 12:
		var v dispatch.ArchitectureSource
		if err := c.decodeAnswer(a, shapeWrapped, "source", &v); err != nil {
			return err
		}
		_ = syncResult("CORE", &v)
	case 13:
		var v []dispatch.ArtifactBlock
		if err := c.decodeAnswer(a, shapeList, "blocks", &v); err != nil {
			return err
		}
	case 14:
		var v dispatch.AskRead
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
		_ = replyRows(v.Replies)
	default:
		var v dispatch.MessageRead
		if err := c.decodeAnswer(a, shapeObject, "", &v); err != nil {
			return err
		}
	}
	return nil
}
