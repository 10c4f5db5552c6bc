package demo

// The fixtures of the official MCP conformance suite
// (@modelcontextprotocol/conformance): every tool, resource, template and
// prompt its server scenarios call, written on mcp's public API only, so
// that it is also the widest example of that API an embedder can read:
// content of every type, progress and log messages on a streamed answer,
// requests to the client (2025-xx on the stream, 2026-07-28 as
// input_required rounds with requestState), resource templates,
// completion, binary resources and prompts with images and resources.
// cmd/rpcedge serves it with -demo conformance.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

// ConformanceInfo identifies the conformance fixture server.
var ConformanceInfo = mcp.Info{Name: "rpcedge-conformance", Title: "rpcedge conformance fixtures", Version: "0.1.0"}

// A 1×1 red PNG and a 44-byte silent WAV: the smallest real files of
// their types.
var (
	redPixelPNG = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV   = []byte("RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
)

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// imageItem, audioItem: content items.
var (
	imageItem = []byte(`{"type":"image","data":"` + base64.StdEncoding.EncodeToString(redPixelPNG) + `","mimeType":"image/png"}`)
	audioItem = []byte(`{"type":"audio","data":"` + base64.StdEncoding.EncodeToString(silentWAV) + `","mimeType":"audio/wav"}`)
)

// Conformance returns the conformance fixture server, its registries
// filled and ready for Endpoint.
func Conformance(opts ...mcp.Option) (*mcp.Server, error) {
	opts = append([]mcp.Option{mcp.WithCompleter(complete)}, opts...)
	s, err := mcp.New(ConformanceInfo, opts...)
	if err != nil {
		return nil, err
	}
	noArgs := `{"type":"object","properties":{}}`
	tools := []mcp.Tool{
		{Name: "test_simple_text", Description: "Returns a simple text.", InputSchema: noArgs,
			Handler: text("This is a simple text response for testing.")},
		{Name: "test_image_content", Description: "Returns an image.", InputSchema: noArgs,
			Handler: items(imageItem)},
		{Name: "test_audio_content", Description: "Returns an audio clip.", InputSchema: noArgs,
			Handler: items(audioItem)},
		{Name: "test_embedded_resource", Description: "Returns an embedded resource.", InputSchema: noArgs,
			Handler: items([]byte(`{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}}`))},
		{Name: "test_multiple_content_types", Description: "Returns text, an image and a resource.", InputSchema: noArgs,
			Handler: items([]byte(`{"type":"text","text":"Multiple content types test:"}`), imageItem,
				[]byte(`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}`))},
		{Name: "test_error_handling", Description: "Always fails: a result with isError.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(func(*mcp.Call) error {
				//lint:ignore ST1005 the text the conformance scenario shows
				return errors.New("This tool intentionally returns an error for testing")
			})},
		{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100, 50 ms apart.", InputSchema: noArgs,
			Streaming: true, Handler: mcp.ToolFunc(withProgress)},
		{Name: "test_tool_with_logging", Description: "Sends three info log messages, 50 ms apart.", InputSchema: noArgs,
			Streaming: true, Handler: mcp.ToolFunc(withLogging)},
		{Name: "test_logging_tool", Description: "Sends log messages at several levels (none reach a client that asked for none).", InputSchema: noArgs,
			Streaming: true, Handler: mcp.ToolFunc(withLogging)},
		{Name: "test_sampling", Description: "Asks the client's model to answer a prompt.",
			InputSchema: `{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send."}},"required":["prompt"]}`,
			Streaming:   true, Handler: mcp.ToolFunc(sampling)},
		{Name: "test_elicitation", Description: "Asks the user for a username and an email.",
			InputSchema: `{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user."}},"required":["message"]}`,
			Streaming:   true, Handler: mcp.ToolFunc(elicitation)},
		{Name: "test_elicitation_sep1034_defaults", Description: "Elicits with a default for every primitive type (SEP-1034).", InputSchema: noArgs,
			Streaming: true, Handler: elicitWith(`{"message":"Please review your information","requestedSchema":{"type":"object","properties":{` +
				`"name":{"type":"string","description":"Your name","default":"John Doe"},` +
				`"age":{"type":"integer","description":"Your age","default":30},` +
				`"score":{"type":"number","description":"Your score","default":95.5},` +
				`"status":{"type":"string","description":"Your status","enum":["active","inactive","pending"],"default":"active"},` +
				`"verified":{"type":"boolean","description":"Verified?","default":true}}}}`)},
		{Name: "test_elicitation_sep1330_enums", Description: "Elicits with the five enum forms (SEP-1330).", InputSchema: noArgs,
			Streaming: true, Handler: elicitWith(`{"message":"Please choose","requestedSchema":{"type":"object","properties":{` +
				`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
				`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
				`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
				`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
				`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}}`)},
		{Name: "test_streaming_elicitation", Description: "Asks the user for a name (2026-07-28: as an input_required result, never on the stream).", InputSchema: noArgs,
			Streaming: true, Handler: elicitWith(`{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)},
		{Name: "test_missing_capability", Description: "Needs sampling: refused with -32021 for a client that does not declare it.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(missingCapability)},
		{Name: "test_input_required_result_elicitation", Description: "Asks for the user's name, then greets them.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irElicitation)},
		{Name: "test_input_required_result_sampling", Description: "Asks the client's model a question.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irSampling)},
		{Name: "test_input_required_result_list_roots", Description: "Asks for the client's roots.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irRoots)},
		{Name: "test_input_required_result_request_state", Description: "Asks for a confirmation and checks its requestState.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irRequestState)},
		{Name: "test_input_required_result_tampered_state", Description: "Asks for a confirmation; a tampered requestState is refused.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irRequestState)},
		{Name: "test_input_required_result_multiple_inputs", Description: "Asks for a name, a greeting and the roots at once.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irMultiple)},
		{Name: "test_input_required_result_multi_round", Description: "Asks for a name, then a colour, in two rounds.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irMultiRound)},
		{Name: "test_input_required_result_capabilities", Description: "Asks only for what the client declares it can give.", InputSchema: noArgs,
			Handler: mcp.ToolFunc(irCapabilities)},
		{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", Handler: text("schema ok"),
			InputSchema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
				`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
				`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
				`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
				`"additionalProperties":false}`},
		// Arguments mirrored into Mcp-Param headers (SEP-2243): the suite's
		// http-custom-header-server-validation scenario calls it.
		{Name: "regional_query", Description: "Runs a query in a region: region, priority and dryRun travel in Mcp-Param headers too, for gateways that route on them.",
			InputSchema: `{"type":"object","properties":{` +
				`"region":{"type":"string","description":"Where the query runs.","x-mcp-header":"Region"},` +
				`"priority":{"type":"integer","minimum":0,"x-mcp-header":"Priority"},` +
				`"dryRun":{"type":"boolean","x-mcp-header":"DryRun"},` +
				`"query":{"type":"string"}},"required":["region","query"]}`,
			Handler: mcp.ToolFunc(regionalQuery)},
		// Not a suite fixture: the streamed tool of the load matrix.
		{Name: "stream_events", Description: "Sends count progress notifications (delayMs apart), then its result: the streamed tool of rpcedge's load matrix.",
			InputSchema: `{"type":"object","properties":{"count":{"type":"integer","minimum":1,"maximum":10000},"delayMs":{"type":"integer","minimum":0,"maximum":1000}},"required":["count"]}`,
			Streaming:   true, Handler: mcp.ToolFunc(streamEvents)},
		// The tasks extension (SEP-2663): the suite's tasks-* scenarios.
		{Name: "greet", Description: "Greets someone by name, at once (no task).",
			InputSchema: `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
			Handler:     mcp.ToolFunc(greetTool)},
		{Name: "slow_compute", Description: "Works for the given seconds, as a task when the client takes tasks (at once for 0 seconds).",
			InputSchema: `{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":600},"label":{"type":"string"}},"required":["seconds"]}`,
			Task:        mcp.TaskOptional, Handler: mcp.ToolFunc(slowCompute)},
		{Name: "failing_job", Description: "A task that fails as a tool after about a second (isError).", InputSchema: noArgs,
			Task: mcp.TaskRequired, Handler: mcp.ToolFunc(failingJob)},
		{Name: "protocol_error_job", Description: "A task that fails with a JSON-RPC error (status failed).", InputSchema: noArgs,
			Task: mcp.TaskOptional, Handler: mcp.ToolFunc(protocolErrorJob)},
		{Name: "confirm_delete", Description: "A task that asks the user to confirm deleting a file, then answers.",
			InputSchema: `{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`,
			Task:        mcp.TaskOptional, Handler: mcp.ToolFunc(confirmDelete)},
		{Name: "multi_input", Description: "A task that asks two questions at once.", InputSchema: noArgs,
			Task: mcp.TaskOptional, Handler: mcp.ToolFunc(multiInput)},
		{Name: "test_tool_with_task", Description: "Asks for the user's name on the request, then greets them from a task.", InputSchema: noArgs,
			Task: mcp.TaskRequired, Handler: mcp.ToolFunc(toolWithTask)},
	}
	for _, t := range tools {
		s.AddTool(t)
	}

	s.AddResource(mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource.",
		MIMEType: "text/plain", Text: "This is the content of the static text resource."})
	s.AddResource(mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG).",
		MIMEType: "image/png", Blob: redPixelPNG})
	s.AddResource(mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to.",
		MIMEType: "text/plain", Text: "Watched resource content."})
	s.AddResource(mcp.Resource{URI: "test://example-resource", Name: "example-resource", Description: "A resource prompts embed.",
		MIMEType: "text/plain", Text: "Embedded resource content for testing."})
	s.AddResourceTemplate(mcp.ResourceTemplate{
		URITemplate: "test://template/{id}/data", Name: "template-data", Description: "Data for an id.", MIMEType: "application/json",
		Read: func(_ *fastserver.Request, uri string, vars map[string]string) ([]mcp.ResourceContents, error) {
			id := string(decode.AppendString(nil, vars["id"]))
			return []mcp.ResourceContents{{Text: `{"id":` + id + `,"templateTest":true,"data":` +
				string(decode.AppendString(nil, "Data for ID: "+vars["id"])) + `}`}}, nil
		},
	})

	s.AddPrompt(mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments.",
		Get: messages(mcp.PromptMessage{Text: "This is a simple prompt for testing."})})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments.",
		Arguments: []mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
		Get: func(_ *fastserver.Request, args map[string]string) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{
				Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])}}}, nil
		}})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource.",
		Arguments: []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
		Get: func(_ *fastserver.Request, args map[string]string) (*mcp.PromptResult, error) {
			res := `{"type":"resource","resource":{"uri":` + string(decode.AppendString(nil, args["resourceUri"])) +
				`,"mimeType":"text/plain","text":"Embedded resource content for testing."}}`
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{
				{Content: []byte(res)},
				{Text: "Please process the embedded resource above."},
			}}, nil
		}})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image.",
		Get: messages(mcp.PromptMessage{Content: imageItem}, mcp.PromptMessage{Text: "Please analyze the image above."})})
	s.AddPrompt(mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks the user for context before it renders.",
		Render: func(c *mcp.Call, _ map[string]string) (*mcp.PromptResult, error) {
			resp, err := c.Elicit("user_context", []byte(`{"message":"What context should the prompt use?","requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}`))
			if err != nil {
				return nil, err
			}
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Text: "Use this context: " + contentString(resp, "context")}}}, nil
		}})
	if err := s.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// regionalQuery answers with the arguments it was called with, as text.
func regionalQuery(c *mcp.Call) error {
	c.AddText(string(c.Arguments()))
	return nil
}

func text(t string) mcp.ToolFunc {
	return func(c *mcp.Call) error { c.AddText(t); return nil }
}

func items(list ...[]byte) mcp.ToolFunc {
	return func(c *mcp.Call) error {
		for _, it := range list {
			if err := c.AddContentJSON(it); err != nil {
				return err
			}
		}
		return nil
	}
}

func messages(ms ...mcp.PromptMessage) func(*fastserver.Request, map[string]string) (*mcp.PromptResult, error) {
	return func(*fastserver.Request, map[string]string) (*mcp.PromptResult, error) {
		return &mcp.PromptResult{Messages: ms}, nil
	}
}

// pause waits d or until the call's context ends.
func pause(c *mcp.Call, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.Context().Done():
		return c.Context().Err()
	}
}

func withProgress(c *mcp.Call) error {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := pause(c, 50*time.Millisecond); err != nil {
				return err
			}
		}
		if err := c.Progress(p, 100, fmt.Sprintf("step %d of 3", i+1)); err != nil {
			return err
		}
	}
	c.AddText("Progress test completed")
	return nil
}

func streamEvents(c *mcp.Call) error {
	n, err := c.ArgInt("count")
	if err != nil {
		return err
	}
	var delay int64 // delayMs is optional: 0 when absent
	if c.Arg("delayMs") != nil {
		if delay, err = c.ArgInt("delayMs"); err != nil {
			return err
		}
	}
	for i := range n {
		if delay > 0 && i > 0 {
			if err := pause(c, time.Duration(delay)*time.Millisecond); err != nil {
				return err
			}
		}
		if err := c.Progress(float64(i+1), float64(n), ""); err != nil {
			return err
		}
	}
	c.AddText(fmt.Sprintf("sent %d events", n))
	return nil
}

func withLogging(c *mcp.Call) error {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := pause(c, 50*time.Millisecond); err != nil {
				return err
			}
		}
		if err := c.LogText(mcp.LogInfo, "conformance", msg); err != nil {
			return err
		}
	}
	c.AddText("Logging test completed")
	return nil
}

func sampling(c *mcp.Call) error {
	prompt, err := c.ArgString("prompt")
	if err != nil {
		return err
	}
	params := `{"messages":[{"role":"user","content":{"type":"text","text":` + string(decode.AppendString(nil, prompt)) + `}}],"maxTokens":100}`
	resp, err := c.Sample("sampling", []byte(params))
	if err != nil {
		return err
	}
	content, _ := decode.Lookup(resp, "content")
	c.AddText("LLM response: " + contentString(content, "text"))
	return nil
}

func elicitation(c *mcp.Call) error {
	msg, err := c.ArgString("message")
	if err != nil {
		return err
	}
	params := `{"message":` + string(decode.AppendString(nil, msg)) + `,"requestedSchema":{"type":"object","properties":{` +
		`"username":{"type":"string","description":"User's response"},` +
		`"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}}`
	resp, err := c.Elicit("elicitation", []byte(params))
	if err != nil {
		return err
	}
	c.AddText("User response: " + string(resp))
	return nil
}

func elicitWith(params string) mcp.ToolFunc {
	return func(c *mcp.Call) error {
		resp, err := c.Elicit("user_input", []byte(params))
		if err != nil {
			return err
		}
		action, _ := decode.Lookup(resp, "action")
		content, _ := decode.Lookup(resp, "content")
		c.AddText("Elicitation completed: action=" + string(decode.AppendUnquoted(nil, action)) + ", content=" + string(content))
		return nil
	}
}

func missingCapability(c *mcp.Call) error {
	resp, err := c.Sample("sampling", []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"Say hello"}}],"maxTokens":10}`))
	if err != nil {
		return err
	}
	c.AddText("sampled: " + string(resp))
	return nil
}

// contentString returns the string member name of the JSON object obj
// (empty when it is not one).
func contentString(obj []byte, name string) string {
	if v, n := decode.Lookup(obj, "content"); n == 1 && len(v) > 0 && v[0] == '{' && name != "text" {
		obj = v
	}
	v, _ := decode.Lookup(obj, name)
	if len(v) == 0 || v[0] != '"' {
		return string(v)
	}
	return string(decode.AppendUnquoted(nil, v))
}

const (
	askName    = `{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	askCapital = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}`
)

func irElicitation(c *mcp.Call) error {
	resp, err := c.Elicit("user_name", []byte(askName))
	if err != nil {
		return err
	}
	c.AddText("Hello, " + contentString(resp, "name") + "!")
	return nil
}

func irSampling(c *mcp.Call) error {
	resp, err := c.Sample("capital_question", []byte(askCapital))
	if err != nil {
		return err
	}
	content, _ := decode.Lookup(resp, "content")
	c.AddText("The model says: " + contentString(content, "text"))
	return nil
}

func irRoots(c *mcp.Call) error {
	resp, err := c.ListRoots("client_roots")
	if err != nil {
		return err
	}
	roots, _ := decode.Lookup(resp, "roots")
	c.AddText("The client's roots: " + string(roots))
	return nil
}

func irRequestState(c *mcp.Call) error {
	if !c.HasState() {
		if err := c.SetState([]byte(`{"step":"confirm"}`)); err != nil {
			return err
		}
	}
	resp, err := c.Elicit("confirm", []byte(`{"message":"Please confirm","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`))
	if err != nil {
		return err
	}
	if !c.HasState() || !strings.Contains(string(c.State()), "confirm") {
		c.AddText("confirmed without the state of the first round")
		return nil
	}
	c.AddText("state-ok: confirmed " + contentString(resp, "ok"))
	return nil
}

func irMultiple(c *mcp.Call) error {
	name, e1 := c.Elicit("user_name", []byte(askName))
	greeting, e2 := c.Sample("greeting", []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}`))
	roots, e3 := c.ListRoots("client_roots")
	if err := errors.Join(e1, e2, e3); err != nil {
		return err
	}
	content, _ := decode.Lookup(greeting, "content")
	r, _ := decode.Lookup(roots, "roots")
	c.AddText(fmt.Sprintf("%s, %s! Roots: %s", contentString(content, "text"), contentString(name, "name"), r))
	return nil
}

func irMultiRound(c *mcp.Call) error {
	name, err := c.Elicit("step1", []byte(`{"message":"Step 1: What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`))
	if err != nil {
		return err
	}
	color, err := c.Elicit("step2", []byte(`{"message":"Step 2: What is your favorite color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}`))
	if err != nil {
		return err
	}
	c.AddText(contentString(name, "name") + " likes " + contentString(color, "color"))
	return nil
}

func irCapabilities(c *mcp.Call) error {
	var errs []error
	asked := 0
	if c.ClientSupports("sampling") {
		_, err := c.Sample("capital_question", []byte(askCapital))
		errs = append(errs, err)
		asked++
	}
	if c.ClientSupports("elicitation") {
		_, err := c.Elicit("user_name", []byte(askName))
		errs = append(errs, err)
		asked++
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.AddText(fmt.Sprintf("asked for %d inputs the client can give", asked))
	return nil
}

// complete suggests values for the arguments of test_prompt_with_arguments
// and the id of the template.
func complete(_ *fastserver.Request, req mcp.CompletionRequest) (mcp.Completion, error) {
	var pool []string
	switch req.Argument {
	case "arg1", "arg2":
		pool = []string{"paris", "park", "party", "test", "testing", "tested"}
	case "id":
		pool = []string{"1", "12", "123", "1234"}
	}
	var out []string
	for _, v := range pool {
		if strings.HasPrefix(v, req.Value) {
			out = append(out, v)
		}
	}
	return mcp.Completion{Values: out, Total: len(out)}, nil
}

// The fixtures of the tasks extension (SEP-2663).

func greetTool(c *mcp.Call) error {
	name, err := c.ArgString("name")
	if err != nil {
		return err
	}
	c.AddText("Hello, " + string(name) + "!")
	return nil
}

func slowCompute(c *mcp.Call) error {
	secs, err := c.ArgFloat("seconds")
	if err != nil {
		return err
	}
	label := "job"
	if c.Arg("label") != nil {
		l, err := c.ArgString("label")
		if err != nil {
			return err
		}
		label = string(l)
	}
	if secs > 0 { // 0: answered at once, the immediate-result shortcut
		if err := c.StartTask(); err != nil {
			return err
		}
		_ = c.Progress(0, secs, "computing "+label)
		if err := pause(c, time.Duration(secs*float64(time.Second))); err != nil {
			return err
		}
	}
	c.AddText(fmt.Sprintf("computed %s in %gs", label, secs))
	return nil
}

func failingJob(c *mcp.Call) error {
	if err := c.StartTask(); err != nil {
		return err
	}
	if err := pause(c, time.Second); err != nil {
		return err
	}
	return errors.New("the job failed: no such input")
}

func protocolErrorJob(c *mcp.Call) error {
	if err := c.StartTask(); err != nil {
		return err
	}
	return &fastserver.Error{Code: decode.CodeInternalError, Message: "the job's backend answered garbage"}
}

// needElicitation refuses, on the request, a call whose task will ask the
// user: a client that cannot answer should not get a task that fails at
// its first question.
func needElicitation(c *mcp.Call) error {
	if c.InTask() || c.ClientSupports("elicitation") {
		return nil
	}
	return &fastserver.Error{Status: 400, Code: mcp.CodeMissingCapability,
		Message: "the tool asks the user: the client must declare the elicitation capability",
		Data:    []byte(`{"requiredCapabilities":{"elicitation":{}}}`)}
}

func confirmDelete(c *mcp.Call) error {
	name, err := c.ArgString("filename")
	if err != nil {
		return err
	}
	if err := needElicitation(c); err != nil {
		return err
	}
	if err := c.StartTask(); err != nil {
		return err
	}
	ask := `{"message":` + string(decode.AppendString(nil, "Delete "+string(name)+"?")) +
		`,"requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}`
	resp, err := c.Elicit("confirm_delete", []byte(ask))
	if err != nil {
		return err
	}
	if contentString(resp, "confirm") == "true" {
		c.AddText("deleted " + string(name))
	} else {
		c.AddText("kept " + string(name))
	}
	return nil
}

func multiInput(c *mcp.Call) error {
	if err := needElicitation(c); err != nil {
		return err
	}
	if err := c.StartTask(); err != nil {
		return err
	}
	name, e1 := c.Elicit("name", []byte(askName))
	ok, e2 := c.Elicit("confirm", []byte(`{"message":"Go ahead?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}`))
	if err := errors.Join(e1, e2); err != nil {
		return err
	}
	c.AddText(fmt.Sprintf("%s answered, confirm: %s", contentString(name, "name"), contentString(ok, "confirm")))
	return nil
}

func toolWithTask(c *mcp.Call) error {
	name, err := c.Elicit("user_name", []byte(askName))
	if err != nil {
		return err // the first round: input_required, on the request
	}
	if err := c.StartTask(); err != nil {
		return err
	}
	if err := pause(c, 100*time.Millisecond); err != nil {
		return err
	}
	c.AddText("Hello, " + contentString(name, "name") + "! (from a task)")
	return nil
}
