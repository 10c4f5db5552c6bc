// Package demo holds the demo content that cmd/rpcedge serves, as the
// wire contract (§4, §5) describes it.
package demo

import (
	"math"
	"strconv"
	"strings"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

// MCPInfo identifies the demo MCP server.
var MCPInfo = mcp.Info{Name: "rpcedge", Title: "rpcedge demo", Version: "0.1.0"}

// AboutText is the text of the resource rpcedge://about.
const AboutText = "rpcedge serves JSON-RPC 2.0 for agent endpoints (MCP on /mcp, A2A on /a2a) on fasthttp, strictly and without allocating on the hot path."

// MCP returns the demo MCP server of the contract's §4, with its
// registries filled and ready for Endpoint:
//
//   - tool echo: arguments {"text": string}, required; the result's only
//     content is that text.
//   - tool add: arguments {"a": number, "b": number}, both required; the
//     result's text is the sum (see Add).
//   - resource rpcedge://about: a short text/plain description.
//   - prompt greet: argument name (required); one user message.
func MCP(opts ...mcp.Option) (*mcp.Server, error) {
	return MCPScoped(nil, opts...)
}

// MCPScoped is MCP with per-tool OAuth scopes (tool name → scopes; see
// mcp.Tool.Scopes, which need mcp.WithAuth among opts).
func MCPScoped(toolScopes map[string][]string, opts ...mcp.Option) (*mcp.Server, error) {
	s, err := mcp.New(MCPInfo, opts...)
	if err != nil {
		return nil, err
	}
	s.AddTool(mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the text it is given.",
		InputSchema: `{"type":"object","properties":{"text":{"type":"string","description":"The text to echo."}},"required":["text"]}`,
		Handler:     mcp.ToolFunc(echo),
		Scopes:      toolScopes["echo"],
	})
	s.AddTool(mcp.Tool{
		Name:        "add",
		Title:       "Add",
		Description: "Adds two numbers.",
		InputSchema: `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
		Handler:     mcp.ToolFunc(add),
		Scopes:      toolScopes["add"],
	})
	s.AddResource(mcp.Resource{
		URI:         "rpcedge://about",
		Name:        "about",
		Title:       "About rpcedge",
		Description: "What this server is.",
		MIMEType:    "text/plain",
		Text:        AboutText,
	})
	s.AddPrompt(mcp.Prompt{
		Name:        "greet",
		Title:       "Greet",
		Description: "Asks the model to greet someone by name.",
		Arguments:   []mcp.PromptArgument{{Name: "name", Description: "Who to greet.", Required: true}},
		Get:         greet,
	})
	if err := s.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// echo copies the text argument, as it came, into the result: no
// unescaping, no allocation.
func echo(c *mcp.Call) error {
	return c.AddTextJSON(c.Arg("text"))
}

func add(c *mcp.Call) error {
	a, b := c.Arg("a"), c.Arg("b")
	sum, ok := Add(a, b)
	if !ok {
		c.SetError()
		c.AddText("the sum is out of range")
		return nil
	}
	c.AddText(sum)
	return nil
}

// Add returns the sum of the JSON numbers a and b as the add tool writes
// it. When both are integers written without fraction or exponent the sum
// is exact, whatever their size: 2 + 3 is "5", 9007199254740993 + 0 is
// "9007199254740993", 9223372036854775807 + 1 is "9223372036854775808".
// Otherwise the sum is IEEE 754 double arithmetic, as in JavaScript,
// printed in the shortest form that reads back to the same double, in
// decimal notation from 1e-6 up to 1e21 and in exponent notation outside
// it: 0.1 + 0.2 is "0.30000000000000004", 1.5 + 2.5 is "4", 1e300 + 1e300
// is "2e+300", 1e-7 + 0 is "1e-7". ok is false when a number or the sum is
// beyond double range (1e400, or 1e308 + 1e308).
func Add(a, b []byte) (sum string, ok bool) {
	if isPlainInt(a) && isPlainInt(b) {
		return addIntegers(a, b), true
	}
	x, errx := strconv.ParseFloat(string(a), 64)
	y, erry := strconv.ParseFloat(string(b), 64)
	s := x + y
	if errx != nil || erry != nil || math.IsInf(s, 0) || math.IsNaN(s) {
		return "", false
	}
	if s == 0 {
		return "0", true // -0 included
	}
	if abs := math.Abs(s); abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(s, 'f', -1, 64), true
	}
	// Exponent notation with JavaScript's exponent: "1e-7", not "1e-07".
	e := strconv.FormatFloat(s, 'e', -1, 64)
	i := strings.IndexByte(e, 'e') + 2 // past "e+" or "e-"
	j := i
	for j < len(e)-1 && e[j] == '0' {
		j++
	}
	return e[:i] + e[j:], true
}

// isPlainInt reports whether the JSON number v is written as an integer:
// an optional minus and digits.
func isPlainInt(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(v) > 0
}

// addIntegers adds two plain JSON integers exactly, digit by digit: linear
// in their length, whatever it is.
func addIntegers(a, b []byte) string {
	na, da := splitSign(a)
	nb, db := splitSign(b)
	var neg bool
	var mag []byte
	if na == nb {
		neg, mag = na, addDigits(da, db)
	} else {
		switch c := compareDigits(da, db); {
		case c == 0:
			return "0"
		case c > 0:
			neg, mag = na, subDigits(da, db)
		default:
			neg, mag = nb, subDigits(db, da)
		}
	}
	if neg && string(mag) != "0" {
		return "-" + string(mag)
	}
	return string(mag)
}

// splitSign returns the sign and the digits without leading zeros ("0"
// for zero).
func splitSign(v []byte) (neg bool, digits []byte) {
	if v[0] == '-' {
		neg, v = true, v[1:]
	}
	for len(v) > 1 && v[0] == '0' {
		v = v[1:]
	}
	return neg, v
}

func compareDigits(a, b []byte) int {
	if len(a) != len(b) {
		if len(a) > len(b) {
			return 1
		}
		return -1
	}
	return strings.Compare(string(a), string(b))
}

// addDigits returns a + b for digit strings.
func addDigits(a, b []byte) []byte {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := make([]byte, len(a)+1)
	carry := byte(0)
	for i := 0; i < len(a); i++ {
		d := a[len(a)-1-i] - '0' + carry
		if i < len(b) {
			d += b[len(b)-1-i] - '0'
		}
		carry = d / 10
		out[len(out)-1-i] = d%10 + '0'
	}
	if carry > 0 {
		out[0] = '1'
		return out
	}
	return out[1:]
}

// subDigits returns a - b for digit strings with a > b.
func subDigits(a, b []byte) []byte {
	out := make([]byte, len(a))
	borrow := byte(0)
	for i := 0; i < len(a); i++ {
		d := int(a[len(a)-1-i]-'0') - int(borrow)
		if i < len(b) {
			d -= int(b[len(b)-1-i] - '0')
		}
		borrow = 0
		if d < 0 {
			d += 10
			borrow = 1
		}
		out[len(out)-1-i] = byte(d) + '0'
	}
	for len(out) > 1 && out[0] == '0' {
		out = out[1:]
	}
	return out
}

func greet(_ *fastserver.Request, args map[string]string) (*mcp.PromptResult, error) {
	return &mcp.PromptResult{
		Description: "A greeting",
		Messages: []mcp.PromptMessage{
			{Role: mcp.RoleUser, Text: "Please greet " + args["name"] + " warmly, in one sentence."},
		},
	}, nil
}
