package demo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/valyala/fasthttp"
)

// TestConformanceFixtures checks that the fixtures the conformance suite
// names are served (the suite itself, interop/conformance.sh, checks what
// they answer) and that a few answer as the suite's scenarios describe.
func TestConformanceFixtures(t *testing.T) {
	s, err := Conformance()
	if err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	call := func(method, params string) json.RawMessage {
		t.Helper()
		var d decode.Decoder
		d.SetOptions(decode.Options{IDs: ep.IDs})
		var m decode.Message
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
		if err := d.Decode([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		var h fasthttp.RequestHeader
		h.Set(mcp.HeaderProtocolVersion, "2025-11-25")
		var r fastserver.Request
		r.Reset(&h, &m, nil)
		if e := ep.Check(&r); e != nil {
			t.Fatalf("%s: %v", method, e)
		}
		out, err := ep.Route(&r).Handler.ServeRPC(&r, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", method, params, err)
		}
		return out
	}
	list := string(call("tools/list", ""))
	for _, name := range []string{"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_error_handling", "test_tool_with_progress", "test_tool_with_logging", "test_logging_tool",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"test_streaming_elicitation", "test_missing_capability", "json_schema_2020_12_tool", "stream_events",
		"test_input_required_result_elicitation", "test_input_required_result_multi_round", "test_input_required_result_capabilities"} {
		if !strings.Contains(list, `"name":"`+name+`"`) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	if got := string(call("tools/call", `"name":"test_simple_text"`)); got != `{"content":[{"type":"text","text":"This is a simple text response for testing."}]}` {
		t.Errorf("test_simple_text: %s", got)
	}
	if got := string(call("resources/read", `"uri":"test://template/123/data"`)); !strings.Contains(got, `"text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"`) {
		t.Errorf("template: %s", got)
	}
	if got := string(call("prompts/get", `"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}`)); !strings.Contains(got, `arg1='a', arg2='b'`) {
		t.Errorf("prompt: %s", got)
	}
	if got := string(call("completion/complete", `"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"par"}`)); got != `{"completion":{"values":["paris","park","party"],"total":3}}` {
		t.Errorf("completion: %s", got)
	}
	if got := string(call("resources/read", `"uri":"test://static-binary"`)); !strings.Contains(got, `"mimeType":"image/png","blob":"iVBOR`) {
		t.Errorf("binary: %s", got)
	}
}
