package interop

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestMCPParamHeadersTypeScriptV2 calls the conformance fixtures'
// regional_query tool with the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client, node/ts2_client.mjs) pinned to 2026-07-28,
// which mirrors its x-mcp-header arguments into Mcp-Param-* headers
// (SEP-2243): every encoding the client produces (plain ASCII, the base64
// sentinel for non-ASCII, padded, empty and sentinel-looking strings,
// integers, booleans, omitted optionals) is accepted and reaches the tool
// unchanged; a call made before tools/list (no headers) is refused and the
// client's retry with headers succeeds; headers rewritten or dropped by a
// custom fetch are refused with HTTP 400 and -32020.
func TestMCPParamHeadersTypeScriptV2(t *testing.T) {
	out := runNodeClient(t, "ts2_client.mjs", 60*time.Second)
	// The summary is the last line (the client may warn on stderr first).
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct {
		ProtocolVersion string            `json:"protocolVersion"`
		Calls           []json.RawMessage `json:"calls"`
		Refusals        []struct {
			Name  string `json:"name"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		} `json:"refusals"`
		Failures *[]string `json:"failures"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("ts2_client.mjs printed no summary (%v):\n%s", err, out)
	}
	if got.ProtocolVersion != "2026-07-28" {
		t.Errorf("negotiated %q, want 2026-07-28", got.ProtocolVersion)
	}
	if got.Failures == nil || len(*got.Failures) != 0 {
		t.Errorf("ts2_client.mjs failures: %v", got.Failures)
	}
	if len(got.Calls) != 8 {
		t.Errorf("%d successful cases, want 8", len(got.Calls))
	}
	refused := 0
	for _, r := range got.Refusals {
		if r.Error != nil && r.Error.Code == -32020 {
			refused++
		}
	}
	if refused != 4 {
		t.Errorf("%d tampered calls refused with -32020, want 4", refused)
	}
	t.Logf("%s", out)
}
