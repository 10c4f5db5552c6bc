package a2a

import (
	"context"
	"reflect"
	"strconv"
	"testing"
)

// Fourth review (2026-12): conformance of what the package answers to the
// A2A 1.0 text (a2aproject/A2A specification/a2a.proto and the released
// specification, "Latest Released Version 1.0.0") and 0.3 (types.ts),
// as a strict client SDK would check it. The departures that doc.go
// lists are not findings here.

// partsOK reports the first object in v whose "parts" member is absent
// where required or not a non-empty array: artifacts and messages of a
// 1.0 answer. path names where it is.
func partsOK(v any, path string) (string, bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "metadata" || k == "data" {
				continue
			}
			if k == "parts" {
				if ps, _ := e.([]any); len(ps) == 0 {
					return path + ".parts", false
				}
			}
			if p, ok := partsOK(e, path+"."+k); !ok {
				return p, false
			}
		}
		_, isArtifact := x["artifactId"]
		_, isMessage := x["messageId"]
		if _, has := x["parts"]; !has && (isArtifact || isMessage) {
			return path + " (no parts)", false
		}
	case []any:
		for i, e := range x {
			if p, ok := partsOK(e, path+"["+strconv.Itoa(i)+"]"); !ok {
				return p, false
			}
		}
	}
	return "", true
}

// A2A 1.0 a2a.proto: Artifact `repeated Part parts = 4 [REQUIRED]` "The
// content of the artifact. Must contain at least one part." (§4.1.7);
// Message `repeated Part parts = 5 [REQUIRED]`; TaskStatus `TaskState
// state = 1 [REQUIRED]`; §5.7: "Fields marked with [REQUIRED] ... MUST be
// present and set in valid messages ... Arrays marked as required MUST
// contain at least one element." §3.3.2: "InvalidAgentResponseError: An
// agent returned a response that does not conform to the specification
// for the current method" (-32006, §5.4). checkReply (handlers.go) refuses
// bad metadata and data, but an Agent's artifact, direct message or status
// message without parts, or a state outside the enum, is stored and
// answered as is: "parts":[] and "state":"TASK_STATE_UNSPECIFIED".
// Refusing the reply (-32006, or -32603) passes this test; so would
// answering only conforming objects.
func TestReview4InvalidAgentReplyRefused(t *testing.T) {
	bad := AgentFunc(func(_ context.Context, c *Call) (*Reply, error) {
		var text string
		for _, p := range c.Message.Parts.OfKind(PartText).All() {
			text = p.Text
		}
		switch text {
		case "artifact":
			return &Reply{Artifacts: []Artifact{{Name: "empty"}}}, nil
		case "message":
			return &Reply{Message: &Message{}}, nil
		case "status":
			return &Reply{State: TaskStateInputRequired, Status: &Message{}}, nil
		case "state":
			return &Reply{State: TaskState(42)}, nil
		}
		return &Reply{Artifacts: []Artifact{{Parts: PartsOf(TextPart("ok"))}}}, nil
	})
	s := newTestServer(t, func(c *Config) { c.Agent = bad })
	for _, what := range []string{"artifact", "message", "status", "state"} {
		a := call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"`+what+`"}]}}`))
		if a.code != 0 {
			if a.code != -32006 && a.code != -32603 {
				t.Errorf("%s: refused %+v, want -32006 (InvalidAgentResponseError) or -32603", what, a)
			}
			continue
		}
		res := parse(t, a.result)
		if p, ok := partsOK(res, "result"); !ok {
			t.Errorf("agent reply %q answered with %s empty: %s", what, p, a.result)
		}
		if st, _ := get(res, "task", "status", "state").(string); what == "state" && (st == "" || st == "TASK_STATE_UNSPECIFIED") {
			t.Errorf("agent reply %q answered with state %q: %s", what, st, a.result)
		}
	}
}

// A2A 1.0 a2a.proto, Artifact: `string artifact_id = 1 [REQUIRED]`
// "Unique identifier (e.g. UUID) for the artifact. It must be unique
// within a task." (§4.1.7; 0.3 types.ts: "A unique identifier for the
// artifact within the scope of the task"). An Agent that names its
// artifact (say "doc", revised each turn) gets it appended again on every
// turn (storeReply and UpdateTask: slices.Concat), so GetTask answers
// several artifacts with one artifactId, while the streams send each as
// an artifactUpdate with append false, that is a replacement.
func TestReview4ArtifactIDUniqueWithinTask(t *testing.T) {
	doc := AgentFunc(func(_ context.Context, c *Call) (*Reply, error) {
		return &Reply{State: TaskStateInputRequired, Artifacts: []Artifact{{ArtifactID: "doc", Parts: c.Message.Parts.OfKind(PartText)}}}, nil
	})
	s := newTestServer(t, func(c *Config) { c.Agent = doc })
	a := call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"draft 1"}]}}`))
	id, _ := get(parse(t, a.result), "task", "id").(string)
	if a.code != 0 || id == "" {
		t.Fatalf("send: %+v", a)
	}
	a = call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m2","taskId":"`+id+`","parts":[{"text":"draft 2"}]}}`))
	if a.code != 0 {
		t.Fatalf("continue: %+v", a)
	}
	if _, err := s.UpdateTask(context.Background(), id, &Reply{State: TaskStateInputRequired, Artifacts: []Artifact{{ArtifactID: "doc", Parts: PartsOf(TextPart("draft 3"))}}}); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	for _, v := range []string{"1.0", "0.3"} {
		method := map[string]string{"1.0": "GetTask", "0.3": "tasks/get"}[v]
		g := call(t, s, v, req(method, `{"id":"`+id+`"}`))
		arts, _ := get(parse(t, g.result), "artifacts").([]any)
		seen := map[string]int{}
		for _, art := range arts {
			aid, _ := get(art, "artifactId").(string)
			seen[aid]++
		}
		if seen["doc"] != 1 {
			t.Errorf("%s %s: artifactId \"doc\" appears %d times in the task (must be unique within a task): %v", v, method, seen["doc"], get(parse(t, g.result), "artifacts"))
		}
	}
}

// A2A 1.0 §3.1.11 Get Extended Agent Card: "AgentCard : A complete Agent
// Card object, which may contain additional details or skills not present
// in the public card" and "Card Replacement : Clients retrieving this
// extended card SHOULD replace their cached public Agent Card with the
// content received"; §13.3: "Extended cards MAY include additional skills
// not present in the public card". The server knows only the public
// card's skills (server.go New: s.skills from cfg.Card.Skills), so a
// skill its extended card advertises is refused with -32004 "the skill
// is not on the agent card" to the very caller who was handed that card
// (contract §5: -32004 is for "a skill ... that is not on the card").
func TestReview4ExtendedCardSkillUsable(t *testing.T) {
	ext := testCard()
	ext.Capabilities.ExtendedAgentCard = true
	ext.Skills = append(ext.Skills, AgentSkill{ID: "members", Name: "Members", Description: "for authenticated callers", Tags: []string{"x"}})
	s := authServer(t, func(c *Config) {
		c.Card.Capabilities.ExtendedAgentCard = true
		c.ExtendedCard = &ext
	})
	a := callAs(t, s, "alice", "1.0", req("GetExtendedAgentCard", ""))
	if a.code != 0 || get(parse(t, a.result), "skills", 1, "id") != "members" {
		t.Fatalf("extended card: %+v", a)
	}
	a = callAs(t, s, "alice", "1.0", req("SendMessage", `{"metadata":{"skillId":"members"},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`))
	if a.code != 0 {
		t.Errorf("SendMessage with skillId \"members\", a skill of the extended card served to this caller: %+v, want it served", a)
	}
}

// holdsString reports whether an exported member of v, at any depth (the
// client's message and the continued task aside), holds the string want.
func holdsString(v reflect.Value, want string, depth int) bool {
	if depth > 5 {
		return false
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && holdsString(v.Elem(), want, depth+1)
	case reflect.Struct:
		ty := v.Type()
		for i := range ty.NumField() {
			f := ty.Field(i)
			if !f.IsExported() || f.Name == "Message" || f.Name == "Task" {
				continue
			}
			if holdsString(v.Field(i), want, depth+1) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := range v.Len() {
			if holdsString(v.Index(i), want, depth+1) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if holdsString(it.Key(), want, depth+1) || holdsString(it.Value(), want, depth+1) {
				return true
			}
		}
	case reflect.String:
		return v.String() == want
	}
	return false
}

// A2A 1.0 a2a.proto, SendMessageConfiguration: `repeated string
// accepted_output_modes = 1` "A list of media types the client is
// prepared to accept for response parts. Agents SHOULD use this to tailor
// their output." (0.3 MessageSendConfiguration.acceptedOutputModes: "A
// list of output MIME types the client is prepared to accept in the
// response."). readSend (params.go) type-checks the list and drops it:
// nothing of it reaches the Agent (Call has no member for it), so no
// Agent built on the package can tailor its output or answer
// ContentTypeNotSupportedError (-32005) for it. The test looks for the
// modes anywhere in the Call, whatever the member's name.
func TestReview4AcceptedOutputModesReachAgent(t *testing.T) {
	const mode = "application/vnd.review4+json"
	var got *Call
	rec := AgentFunc(func(_ context.Context, c *Call) (*Reply, error) {
		got = c
		return &Reply{Artifacts: []Artifact{{Parts: PartsOf(TextPart("ok"))}}}, nil
	})
	s := newTestServer(t, func(c *Config) { c.Agent = rec })
	for v, body := range map[string]string{
		"1.0": req("SendMessage", `{"configuration":{"acceptedOutputModes":["`+mode+`"]},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`),
		"0.3": req("message/send", `{"configuration":{"acceptedOutputModes":["`+mode+`"]},"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]}}`),
	} {
		got = nil
		if a := call(t, s, v, body); a.code != 0 || got == nil {
			t.Fatalf("%s: %+v", v, a)
		}
		if !holdsString(reflect.ValueOf(got), mode, 0) {
			t.Errorf("%s: configuration.acceptedOutputModes [%q] is not in the Agent's Call: the agent cannot honour it", v, mode)
		}
	}
}
