// Package tools holds the same two MCP tools written four ways, for the
// side-by-side comparison of BenchmarkTools and TestToolsLines (package
// bench): with rpcedge's raw handlers, with rpcedge's typed tools, with the
// official MCP Go SDK and with mark3labs/mcp-go.
//
// The tools:
//
//   - add: arguments {"a": integer, "b": integer}, both required; the
//     result says a+b (int64).
//   - lookup: arguments {"key": string matching ^[a-z]+$}, required; the
//     result is the key's value in a small table, or says it is unknown.
//     A key that does not match the pattern is refused by the server's
//     schema validation, before the handler.
//
// Each implementation is written the way its library's documentation
// shows, between the markers "tools:begin" and "tools:end" that
// TestToolsLines counts (lines that are not blank and not only a
// comment). Serving it (a fastserver or an http.Handler) is outside the
// markers: it is the same one call in every case.
package tools

// Table is lookup's data, shared by every implementation.
var Table = map[string]string{
	"gopher": "the Go mascot",
	"ferris": "the Rust mascot",
	"duke":   "the Java mascot",
}

// Unknown is lookup's answer for a key that is not in Table.
const Unknown = "unknown key"
