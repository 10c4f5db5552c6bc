package a2a

import (
	"bufio"
	"slices"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

var allMethods = []string{
	"SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "SubscribeToTask",
	"ListTasks", "GetExtendedAgentCard", "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
	"ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig",
	"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
	"agent/getAuthenticatedExtendedCard", "tasks/pushNotificationConfig/set",
	"tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list",
	"tasks/pushNotificationConfig/delete",
}

func TestEndpoint(t *testing.T) {
	s := newTestServer(t, nil)
	ep := s.Endpoint()
	if ep.Path != "/a2a" || ep.IDs != decode.IDsJSONRPC || ep.Check == nil || ep.Route == nil || ep.Err != nil {
		t.Fatalf("Endpoint = %+v", ep)
	}
	want := slices.Clone(allMethods)
	slices.Sort(want)
	if !slices.Equal(ep.Labels, want) {
		t.Errorf("Labels = %v\nwant %v", ep.Labels, want)
	}
	for _, m := range allMethods {
		a := call(t, s, "", req(m, `{}`))
		if a.route.Label != m {
			t.Errorf("%s: label %q", m, a.route.Label)
		}
		if a.status == 404 {
			t.Errorf("%s: 404", m)
		}
	}
	// Unknown methods, case-sensitive names, draft names.
	for _, m := range []string{"sendMessage", "SENDMESSAGE", "listTasks", "tasks/list", "SetTaskPushNotificationConfig", "message/Send", ""} {
		a := call(t, s, "1.0", req(m, `{}`))
		if a.status != 404 || a.code != -32601 || a.route.Label != "" {
			t.Errorf("%q: %+v, want 404 / -32601 without a label", m, a)
		}
	}
}

func TestVersionHeader(t *testing.T) {
	s := newTestServer(t, nil)
	tests := []struct {
		header, method string
		want           Version // 0: refused with -32009
	}{
		{"", "SendMessage", Version10},
		{"", "message/send", Version03},
		{"1.0", "SendMessage", Version10},
		{"1.0", "message/send", Version10},
		{"0.3", "message/send", Version03},
		{"0.3", "SendMessage", Version03},
		{"2.0", "SendMessage", 0},
		{"1.0.0", "SendMessage", 0},
		{"0.3.0", "message/send", 0},
		{"1", "SendMessage", 0},
		{"v1.0", "SendMessage", 0},
		{"1.0,0.3", "SendMessage", 0},
	}
	for _, tt := range tests {
		body := msg10
		if strings.Contains(tt.method, "/") && tt.header != "1.0" || tt.header == "0.3" {
			body = msg03
		}
		a := call(t, s, tt.header, req(tt.method, body))
		if tt.want == 0 {
			want := `{"supported":["1.0","0.3"],"requested":"` + tt.header + `"}`
			if a.status != 400 || a.code != -32009 || a.data != want {
				t.Errorf("%q %s: %+v, want 400 / -32009 / %s", tt.header, tt.method, a, want)
			}
			continue
		}
		if a.status != 200 {
			t.Errorf("%q %s: %+v", tt.header, tt.method, a)
			continue
		}
		res := parse(t, a.result)
		if tt.want == Version10 {
			if get(res, "task", "status", "state") != "TASK_STATE_COMPLETED" || hasKey(res, "kind") {
				t.Errorf("%q %s: not a 1.0 answer: %s", tt.header, tt.method, a.result)
			}
		} else if get(res, "kind") != "task" || get(res, "status", "state") != "completed" {
			t.Errorf("%q %s: not a 0.3 answer: %s", tt.header, tt.method, a.result)
		}
	}

	// Two A2A-Version lines are one combined value, never the first line
	// alone (contract §2): "1.0, 1.0" is no version served.
	var two fasthttp.RequestHeader
	two.Add(VersionHeader, "1.0")
	two.Add(VersionHeader, "1.0")
	if a := callHeader(t, s, &two, req("SendMessage", msg10)); a.status != 400 || a.code != -32009 || a.data != `{"supported":["1.0","0.3"],"requested":"1.0, 1.0"}` {
		t.Errorf("two A2A-Version lines: %+v, want 400 / -32009 naming \"1.0, 1.0\"", a)
	}

	// Notifications: refused by a bad header too, else 202.
	if a := call(t, s, "9.9", `{"jsonrpc":"2.0","method":"SendMessage"}`); a.status != 400 || a.code != -32009 {
		t.Errorf("notification with a bad version: %+v", a)
	}
	if a := call(t, s, "1.0", `{"jsonrpc":"2.0","method":"SendMessage"}`); a.status != 202 {
		t.Errorf("notification: %+v", a)
	}
	// The requested value is escaped into valid JSON whatever it holds.
	var hdr fasthttp.RequestHeader
	hdr.Set(VersionHeader, "\"\xff\\")
	a := callHeader(t, s, &hdr, req("SendMessage", msg10))
	if a.code != -32009 || a.data != `{"supported":["1.0","0.3"],"requested":"\"\ufffd\\"}` {
		t.Errorf("odd header: %+v", a)
	}
	// An empty header, as parsed from the wire, is present: refused.
	var he fasthttp.RequestHeader
	if err := he.Read(bufio.NewReader(strings.NewReader("POST /a2a HTTP/1.1\r\nHost: x\r\nA2A-Version:\r\nContent-Length: 0\r\n\r\n"))); err != nil {
		t.Fatal(err)
	}
	if a := callHeader(t, s, &he, req("SendMessage", msg10)); a.status != 400 || a.code != -32009 || a.data != `{"supported":["1.0","0.3"],"requested":""}` {
		t.Errorf("empty header: %+v", a)
	}
	// A version set by Check is kept by Route; the family fills a gap.
	var h2 fasthttp.RequestHeader
	h2.Set("a2a-version", "0.3") // header names are case-insensitive
	if a := callHeader(t, s, &h2, req("SendMessage", msg03)); get(parse(t, a.result), "kind") != "task" {
		t.Errorf("lower-case header name: %+v", a)
	}
}

// TestContractTable covers every row of contract §5's table.
func TestContractTable(t *testing.T) {
	s := newTestServer(t, nil)
	completed := get(parse(t, call(t, s, "", req("SendMessage", msg10)).result), "task", "id").(string)
	tests := []struct {
		name, version, body string
		code                int
	}{
		// Streaming asked for when the card declares streaming: false.
		{"stream 1.0", "", req("SendStreamingMessage", msg10), -32004},
		{"stream 0.3", "", req("message/stream", msg03), -32004},
		{"subscribe 1.0", "", req("SubscribeToTask", `{"id":"x"}`), -32004},
		{"subscribe 0.3", "", req("tasks/resubscribe", `{"id":"x"}`), -32004},
		// The extended card when there is none.
		{"extended 1.0", "", req("GetExtendedAgentCard", ""), -32004},
		{"extended 0.3", "", req("agent/getAuthenticatedExtendedCard", ""), -32004},
		// A skill that is not on the card.
		{"skill 1.0", "", req("SendMessage", `{"metadata":{"skillId":"nope"},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`), -32004},
		{"skill 0.3", "", req("message/send", `{"metadata":{"skillId":"nope"},"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]}}`), -32004},
		{"empty skill", "", req("SendMessage", `{"metadata":{"skillId":""},"message":{}}`), -32004},
		{"skill by case", "", req("SendMessage", `{"metadata":{"skillId":"Echo"},"message":{}}`), -32004},
		// Push-notification configs when the card declares none.
		{"push create", "", req("CreateTaskPushNotificationConfig", `{"taskId":"x","url":"https://x"}`), -32003},
		{"push get", "", req("GetTaskPushNotificationConfig", `{"taskId":"x","id":"y"}`), -32003},
		{"push list", "", req("ListTaskPushNotificationConfigs", `{"taskId":"x"}`), -32003},
		{"push delete", "", req("DeleteTaskPushNotificationConfig", `{"taskId":"x","id":"y"}`), -32003},
		{"push set 0.3", "", req("tasks/pushNotificationConfig/set", `{"taskId":"x"}`), -32003},
		{"push get 0.3", "", req("tasks/pushNotificationConfig/get", `{"id":"x"}`), -32003},
		{"push list 0.3", "", req("tasks/pushNotificationConfig/list", `{"id":"x"}`), -32003},
		{"push delete 0.3", "", req("tasks/pushNotificationConfig/delete", `{"id":"x"}`), -32003},
		// Unknown task id.
		{"get unknown", "", req("GetTask", `{"id":"nope"}`), -32001},
		{"get unknown 0.3", "", req("tasks/get", `{"id":"nope"}`), -32001},
		{"cancel unknown", "", req("CancelTask", `{"id":"nope"}`), -32001},
		{"cancel unknown 0.3", "", req("tasks/cancel", `{"id":"nope"}`), -32001},
		{"get empty id", "", req("GetTask", `{"id":""}`), -32001},
		// Cancel a task in a final state.
		{"cancel final", "", req("CancelTask", `{"id":"`+completed+`"}`), -32002},
		{"cancel final 0.3", "", req("tasks/cancel", `{"id":"`+completed+`"}`), -32002},
	}
	for _, tt := range tests {
		a := call(t, s, tt.version, tt.body)
		if a.status != 200 || a.code != tt.code {
			t.Errorf("%s: %+v, want 200 / %d", tt.name, a, tt.code)
		}
	}
}

// TestRefusalOrder covers the order inside rows 15 to 17 (contract §5).
func TestRefusalOrder(t *testing.T) {
	s := newTestServer(t, nil)
	bad := `"message":{"role":"ROLE_AGENT"}`
	tests := []struct {
		name, body string
		code       int
		field      string
	}{
		// Refused outright: before params are looked at.
		{"stream with array params", req("SendStreamingMessage", `[]`), -32004, ""},
		{"stream with string params", req("SendStreamingMessage", `"x"`), -32004, ""},
		{"stream with null params", req("message/stream", `null`), -32004, ""},
		{"stream with duplicate names", req("SendStreamingMessage", `{"a":1,"a":2}`), -32004, ""},
		{"subscribe with array params", req("SubscribeToTask", `[1]`), -32004, ""},
		{"extended card with array params", req("GetExtendedAgentCard", `[]`), -32004, ""},
		{"push with array params", req("ListTaskPushNotificationConfigs", `[]`), -32003, ""},
		{"push with number params", req("tasks/pushNotificationConfig/get", `7`), -32003, ""},
		// GetTask / CancelTask: params first, then the task.
		{"get with array params", req("GetTask", `[]`), -32602, ""},
		{"get with null params", req("GetTask", `null`), -32602, ""},
		{"get without params", req("GetTask", ""), -32602, "id"},
		{"get without id", req("GetTask", `{}`), -32602, "id"},
		{"get with number id", req("GetTask", `{"id":5}`), -32602, "id"},
		{"get with null id", req("tasks/get", `{"id":null}`), -32602, "id"},
		{"get with duplicate id", req("GetTask", `{"id":"a","id":"b"}`), -32602, ""},
		{"get with escaped duplicate", req("GetTask", `{"id":"a","\u0069d":"b"}`), -32602, ""},
		{"get with bad historyLength", req("GetTask", `{"id":"nope","historyLength":-1}`), -32602, "historyLength"},
		{"get with Id", req("GetTask", `{"Id":"nope"}`), -32602, "id"},
		{"cancel with array params", req("CancelTask", `[]`), -32602, ""},
		{"cancel with number id", req("tasks/cancel", `{"id":1}`), -32602, "id"},
		// SendMessage: params an object, then the skill, then the rest.
		{"send with array params", req("SendMessage", `[]`), -32602, ""},
		{"send unknown skill, bad message", req("SendMessage", `{"metadata":{"skillId":"nope"},`+bad+`}`), -32004, ""},
		{"send unknown skill, duplicate names", req("SendMessage", `{"metadata":{"skillId":"nope"},"message":1,"message":2}`), -32004, ""},
		{"send unknown skill, no message", req("SendMessage", `{"metadata":{"skillId":"nope"}}`), -32004, ""},
		{"send skillId not a string", req("SendMessage", `{"metadata":{"skillId":5},`+bad+`}`), -32602, "metadata.skillId"},
		{"send skillId null", req("SendMessage", `{"metadata":{"skillId":null},`+bad+`}`), -32602, "metadata.skillId"},
		{"send skillId twice", req("SendMessage", `{"metadata":{"skillId":"echo","skillId":"nope"},`+bad+`}`), -32602, "metadata.skillId"},
		{"send metadata twice", req("SendMessage", `{"metadata":{"skillId":"nope"},"metadata":{}}`), -32602, "metadata"},
		{"send metadata not an object", req("SendMessage", `{"metadata":"echo",`+bad+`}`), -32602, "metadata"},
		{"send good skill, duplicate names", req("SendMessage", `{"metadata":{"skillId":"echo"},"message":1,"message":2}`), -32602, ""},
		{"send good skill, bad message", req("SendMessage", `{"metadata":{"skillId":"echo"},`+bad+`}`), -32602, "message.role"},
		{"send no skill, bad message", req("SendMessage", `{`+bad+`}`), -32602, "message.role"},
		{"send without params", req("SendMessage", ""), -32602, "message"},
		{"send with empty params", req("SendMessage", `{}`), -32602, "message"},
		{"send null metadata", req("SendMessage", `{"metadata":null,`+bad+`}`), -32602, "message.role"},
	}
	for _, tt := range tests {
		a := call(t, s, "", tt.body)
		if a.status != 200 || a.code != tt.code || a.field() != tt.field {
			t.Errorf("%s: %+v (field %q), want 200 / %d, field %q", tt.name, a, a.field(), tt.code, tt.field)
		}
	}
	// A known skill is accepted and reaches the agent.
	a := call(t, s, "", req("SendMessage", `{"metadata":{"skillId":"echo"},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`))
	if a.status != 200 {
		t.Errorf("known skill: %+v", a)
	}
}

func TestMessageValidation(t *testing.T) {
	s := newTestServer(t, nil)
	wrap := func(m string) string { return `{"message":` + m + `}` }
	m10 := func(parts string) string {
		return wrap(`{"role":"ROLE_USER","messageId":"m","parts":` + parts + `}`)
	}
	m03 := func(parts string) string {
		return wrap(`{"kind":"message","role":"user","messageId":"m","parts":` + parts + `}`)
	}
	tests := []struct {
		name, method, params, field string
	}{
		{"message null", "SendMessage", `{"message":null}`, "message"},
		{"message not an object", "SendMessage", `{"message":[]}`, "message"},
		{"role missing", "SendMessage", wrap(`{"messageId":"m","parts":[{"text":"x"}]}`), "message.role"},
		{"role agent", "SendMessage", wrap(`{"role":"ROLE_AGENT","messageId":"m","parts":[{"text":"x"}]}`), "message.role"},
		{"role 0.3 under 1.0", "SendMessage", wrap(`{"role":"user","messageId":"m","parts":[{"text":"x"}]}`), "message.role"},
		{"role 1.0 under 0.3", "message/send", wrap(`{"role":"ROLE_USER","messageId":"m","parts":[{"kind":"text","text":"x"}]}`), "message.role"},
		{"role case", "SendMessage", wrap(`{"role":"role_user","messageId":"m","parts":[{"text":"x"}]}`), "message.role"},
		{"Role", "SendMessage", wrap(`{"Role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}`), "message.role"},
		{"parts missing", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":"m"}`), "message.parts"},
		{"parts empty", "SendMessage", m10(`[]`), "message.parts"},
		{"parts object", "SendMessage", m10(`{"text":"x"}`), "message.parts"},
		{"part not an object", "SendMessage", m10(`["x"]`), "message.parts[0]"},
		{"part empty", "SendMessage", m10(`[{"text":"a"},{}]`), "message.parts[1]"},
		{"part two contents", "SendMessage", m10(`[{"text":"a","url":"https://x"}]`), "message.parts[0]"},
		{"part only nulls", "SendMessage", m10(`[{"text":null,"url":null}]`), "message.parts[0]"},
		{"part data null and text", "SendMessage", m10(`[{"text":"a","data":null}]`), "message.parts[0]"},
		{"text not a string", "SendMessage", m10(`[{"text":5}]`), "message.parts[0].text"},
		{"raw not base64", "SendMessage", m10(`[{"raw":"***"}]`), "message.parts[0].raw"},
		{"raw not a string", "SendMessage", m10(`[{"raw":[1]}]`), "message.parts[0].raw"},
		{"url empty", "SendMessage", m10(`[{"url":""}]`), "message.parts[0].url"},
		{"filename", "SendMessage", m10(`[{"text":"x","filename":1}]`), "message.parts[0].filename"},
		{"mediaType", "SendMessage", m10(`[{"text":"x","mediaType":true}]`), "message.parts[0].mediaType"},
		{"part metadata", "SendMessage", m10(`[{"text":"x","metadata":[]}]`), "message.parts[0].metadata"},
		{"0.3 part in 1.0", "SendMessage", m10(`[{"kind":"file","file":{"uri":"https://x"}}]`), "message.parts[0]"},
		{"kind missing", "message/send", m03(`[{"text":"x"}]`), "message.parts[0].kind"},
		{"kind unknown", "message/send", m03(`[{"kind":"video"}]`), "message.parts[0].kind"},
		{"kind not a string", "message/send", m03(`[{"kind":1}]`), "message.parts[0].kind"},
		{"text kind without text", "message/send", m03(`[{"kind":"text"}]`), "message.parts[0].text"},
		{"file without file", "message/send", m03(`[{"kind":"file"}]`), "message.parts[0].file"},
		{"file with both", "message/send", m03(`[{"kind":"file","file":{"bytes":"eA==","uri":"https://x"}}]`), "message.parts[0].file"},
		{"file with neither", "message/send", m03(`[{"kind":"file","file":{"name":"x"}}]`), "message.parts[0].file"},
		{"file bad bytes", "message/send", m03(`[{"kind":"file","file":{"bytes":"%%"}}]`), "message.parts[0].file.bytes"},
		{"file bad name", "message/send", m03(`[{"kind":"file","file":{"uri":"u","name":1}}]`), "message.parts[0].file.name"},
		{"file bad mimeType", "message/send", m03(`[{"kind":"file","file":{"uri":"u","mimeType":1}}]`), "message.parts[0].file.mimeType"},
		{"data not an object", "message/send", m03(`[{"kind":"data","data":[1]}]`), "message.parts[0].data"},
		{"0.3 kind wrong", "message/send", wrap(`{"kind":"task","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]}`), "message.kind"},
		{"messageId missing", "SendMessage", wrap(`{"role":"ROLE_USER","parts":[{"text":"x"}]}`), "message.messageId"},
		{"messageId empty", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":"","parts":[{"text":"x"}]}`), "message.messageId"},
		{"messageId number", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":1,"parts":[{"text":"x"}]}`), "message.messageId"},
		{"contextId", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":"m","contextId":1,"parts":[{"text":"x"}]}`), "message.contextId"},
		{"taskId", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":"m","taskId":[],"parts":[{"text":"x"}]}`), "message.taskId"},
		{"metadata", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":"m","metadata":"x","parts":[{"text":"x"}]}`), "message.metadata"},
		{"extensions", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":"m","extensions":[1],"parts":[{"text":"x"}]}`), "message.extensions"},
		{"referenceTaskIds", "SendMessage", wrap(`{"role":"ROLE_USER","messageId":"m","referenceTaskIds":"x","parts":[{"text":"x"}]}`), "message.referenceTaskIds"},
		{"configuration", "SendMessage", `{"configuration":1,"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`, "configuration"},
		{"historyLength negative", "SendMessage", `{"configuration":{"historyLength":-1},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`, "configuration.historyLength"},
		{"historyLength fraction", "SendMessage", `{"configuration":{"historyLength":1.5},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`, "configuration.historyLength"},
		{"historyLength string", "SendMessage", `{"configuration":{"historyLength":"3"},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`, "configuration.historyLength"},
		{"acceptedOutputModes", "SendMessage", `{"configuration":{"acceptedOutputModes":"text/plain"},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`, "configuration.acceptedOutputModes"},
		{"blocking", "message/send", `{"configuration":{"blocking":"yes"},"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]}}`, "configuration.blocking"},
		{"tenant", "SendMessage", `{"tenant":1,"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`, "tenant"},
	}
	for _, tt := range tests {
		a := call(t, s, "", req(tt.method, tt.params))
		if a.status != 200 || a.code != -32602 || a.field() != tt.field {
			t.Errorf("%s: %+v (field %q), want -32602 naming %q", tt.name, a, a.field(), tt.field)
		}
	}

	// Accepted: every part kind, optional members, null for absent,
	// unknown members ignored, escapes resolved, deeper duplicates last-wins.
	ok := []struct{ method, params string }{
		{"SendMessage", m10(`[{"text":"a","mediaType":"text/plain","metadata":{"k":1}},{"raw":"aGk="},{"raw":"aGk"},{"raw":"-_8"},{"url":"https://x/y","filename":"y.png","mediaType":"image/png"},{"data":{"a":[1,2]}},{"data":[1]},{"data":"s"}]`)},
		{"SendMessage", wrap(`{"role":"ROLE_USER","messageId":"m","contextId":null,"taskId":null,"metadata":null,"extensions":["u"],"referenceTaskIds":["t"],"parts":[{"text":"x","kind":"ignored"}],"unknown":1}`)},
		{"SendMessage", wrap(`{"r\u006fle":"ROLE_\u0055SER","messageId":"m","parts":[{"text":"x"}]}`)},
		{"SendMessage", wrap(`{"role":"ROLE_AGENT","role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}`)},
		{"SendMessage", `{"tenant":"t","configuration":{"historyLength":2,"acceptedOutputModes":["text/plain"],"returnImmediately":false,"pushNotificationConfig":null},"metadata":{"other":1},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`},
		{"message/send", m03(`[{"kind":"text","text":"a","metadata":{}},{"kind":"file","file":{"bytes":"aGk=","name":"a.txt","mimeType":"text/plain"}},{"kind":"file","file":{"uri":"https://x"}},{"kind":"data","data":{"a":1}}]`)},
		{"message/send", wrap(`{"role":"user","messageId":"m","parts":[{"kind":"text","text":"no message kind"}]}`)},
		{"message/send", `{"configuration":{"blocking":true,"historyLength":0},"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]}}`},
	}
	for _, tt := range ok {
		if a := call(t, s, "", req(tt.method, tt.params)); a.status != 200 || a.code != 0 {
			t.Errorf("%s %s: %+v", tt.method, tt.params, a)
		}
	}

	// Push notifications asked for in the configuration: -32003.
	for _, p := range []string{
		`{"configuration":{"pushNotificationConfig":{"url":"https://x"}},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`,
		`{"configuration":{"taskPushNotificationConfig":{"url":"https://x"}},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`,
	} {
		if a := call(t, s, "", req("SendMessage", p)); a.code != -32003 {
			t.Errorf("push in configuration: %+v", a)
		}
	}
}

func TestExtendedCard(t *testing.T) {
	ext := testCard()
	ext.Name = "extended"
	ext.Capabilities.ExtendedAgentCard = true
	for _, tt := range []struct {
		name     string
		declared bool
		card     *AgentCard
		served   bool
	}{
		{"declared, no card", true, nil, false}, // A2A: -32007; rpcedge: -32004
		{"card, not declared", false, &ext, false},
		{"declared and card", true, &ext, true},
	} {
		s := newTestServer(t, func(c *Config) {
			c.Card.Capabilities.ExtendedAgentCard = tt.declared
			c.ExtendedCard = tt.card
		})
		for _, m := range []string{"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"} {
			a := call(t, s, "", req(m, ""))
			if !tt.served {
				if a.code != -32004 || a.route.Refuse == nil {
					t.Errorf("%s %s: %+v, want -32004 refused outright", tt.name, m, a)
				}
				continue
			}
			card := parse(t, a.result)
			if card["name"] != "extended" || card["url"] != "http://agent.test:8080/a2a" {
				t.Errorf("%s %s: %s", tt.name, m, a.result)
			}
			if a := call(t, s, "", req(m, `[]`)); a.code != -32602 {
				t.Errorf("%s %s with array params: %+v", tt.name, m, a)
			}
			if a := call(t, s, "", req(m, `{"tenant":"x"}`)); a.code != 0 {
				t.Errorf("%s %s with tenant: %+v", tt.name, m, a)
			}
		}
		pub := parse(t, string(s.AppendCard(nil, nil)))
		if get(pub, "capabilities", "extendedAgentCard") != tt.declared || pub["supportsAuthenticatedExtendedCard"] != tt.declared {
			t.Errorf("%s: public card flags: %v", tt.name, pub["capabilities"])
		}
	}
}
