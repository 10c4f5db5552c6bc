package a2a

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// NOTE: reading params.
//
// Params arrive as validated raw JSON (decode.Message.Params). They are
// walked with decode.Members rather than unmarshalled, so that the order of
// the checks is ours (contract §5: what is refused outright, then the
// skill, then the message), member names are compared after unescaping and
// case-sensitively, and each refusal names the member at fault. Inside
// params, a member given twice is not checked (the last one wins), as the
// contract says; params itself is checked for duplicates by the handlers.
// In optional members, null stands for absent (ProtoJSON's reading), but
// for a 1.0 part's data, a google.protobuf.Value, where null is a value.
// Everything kept is copied out of the request.

func invalidParams(field, msg string) *fastserver.Error {
	return fastserver.InvalidParams(field, msg)
}

var (
	errParamsNotObject = &fastserver.Error{Code: decode.CodeInvalidParams, Message: "params must be an object"}
	errParamsDuplicate = &fastserver.Error{Code: decode.CodeInvalidParams, Message: "a member name appears twice in params"}
)

// checkParamsObject answers rows 15 and 17's general checks for methods
// whose params, when present, must be an object without duplicate names.
func checkParamsObject(m *decode.Message) *fastserver.Error {
	switch m.ParamsType {
	case decode.ParamsAbsent:
		return nil
	case decode.ParamsObject:
		if decode.DuplicateName(m.Params) {
			return errParamsDuplicate
		}
		return nil
	}
	return errParamsNotObject
}

func isNull(v []byte) bool { return string(v) == "null" }

// unquote returns the content of the raw JSON string v, escapes resolved,
// as a new string. ok is false when v is not a string.
func unquote(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	return string(decode.AppendUnquoted(nil, v)), true
}

// optString reads an optional string member: absent or null is "".
func optString(v []byte, field string) (string, *fastserver.Error) {
	if v == nil || isNull(v) {
		return "", nil
	}
	s, ok := unquote(v)
	if !ok {
		return "", invalidParams(field, field+" must be a string")
	}
	return s, nil
}

// optObject reads an optional object member as a copy: absent or null is
// nil.
func optObject(v []byte, field string) (json.RawMessage, *fastserver.Error) {
	if v == nil || isNull(v) {
		return nil, nil
	}
	if v[0] != '{' {
		return nil, invalidParams(field, field+" must be an object")
	}
	return append(json.RawMessage(nil), v...), nil
}

// optStrings reads an optional array of strings: absent or null is nil.
// The slice is sized once, after a first walk that checks the elements:
// a string header per element is all it costs beyond the strings.
func optStrings(v []byte, field string) ([]string, *fastserver.Error) {
	n, e := checkStrings(v, field)
	if e != nil || n < 0 {
		return nil, e
	}
	out := make([]string, 0, n)
	eachElement(v, func(_ int, e []byte) bool {
		s, _ := unquote(e)
		out = append(out, s)
		return true
	})
	return out, nil
}

// checkStrings checks an optional array of strings without keeping it:
// its length, or -1 when absent or null.
func checkStrings(v []byte, field string) (int, *fastserver.Error) {
	if v == nil || isNull(v) {
		return -1, nil
	}
	if v[0] != '[' {
		return 0, invalidParams(field, field+" must be an array of strings")
	}
	n, bad := 0, false
	eachElement(v, func(_ int, e []byte) bool {
		if e[0] != '"' {
			bad = true
			return false
		}
		n++
		return true
	})
	if bad {
		return 0, invalidParams(field, field+" must be an array of strings")
	}
	return n, nil
}

// optCount reads an optional non-negative integer (historyLength): absent
// or null is -1, values past math.MaxInt32 are clamped to it.
func optCount(v []byte, field string) (int, *fastserver.Error) {
	if v == nil || isNull(v) {
		return -1, nil
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, invalidParams(field, field+" must be a non-negative integer")
		}
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || n > math.MaxInt32 {
		return math.MaxInt32, nil
	}
	return int(n), nil
}

// optBool checks an optional boolean member.
func optBool(v []byte, field string) *fastserver.Error {
	if v == nil || isNull(v) || string(v) == "true" || string(v) == "false" {
		return nil
	}
	return invalidParams(field, field+" must be a boolean")
}

// eachElement calls f for each element of the valid JSON array arr, in
// order, until f returns false.
func eachElement(arr []byte, f func(i int, elem []byte) bool) {
	var it decode.Elements
	n := 0
	for it.Reset(arr); it.Next(); n++ {
		if !f(n, it.Value()) {
			return
		}
	}
}

// taskParams reads the params of GetTask and CancelTask (and their 0.3
// names): an object with a string id and, for GetTask, an optional
// historyLength. Other members (tenant, metadata) are ignored.
func taskParams(m *decode.Message, withHistory bool) (id string, history int, e *fastserver.Error) {
	if m.ParamsType == decode.ParamsAbsent {
		return "", 0, invalidParams("id", "id is required")
	}
	if e := checkParamsObject(m); e != nil {
		return "", 0, e
	}
	var idv, hv []byte
	var it decode.Members
	for it.Reset(m.Params); it.Next(); {
		switch {
		case it.NameIs("id"):
			idv = it.Value()
		case withHistory && it.NameIs("historyLength"):
			hv = it.Value()
		}
	}
	if idv == nil {
		return "", 0, invalidParams("id", "id is required")
	}
	id, ok := unquote(idv)
	if !ok {
		return "", 0, invalidParams("id", "id must be a string")
	}
	history, e = optCount(hv, "historyLength")
	return id, history, e
}

// sendParams is what SendMessage's params hold, read after the skill
// check.
type sendParams struct {
	msg     Message
	history int // configuration.historyLength; -1 when absent
	push    bool
	// now: the client does not wait for the task to end (1.0
	// returnImmediately true, 0.3 blocking false).
	now   bool
	modes []string // configuration.acceptedOutputModes
}

// readSend reads SendMessage's params (an object without duplicate names)
// in the shape of v: message (required), configuration (optional).
func readSend(params []byte, v Version) (sendParams, *fastserver.Error) {
	p := sendParams{history: -1}
	var msgv, confv, tenantv []byte
	var it decode.Members
	for it.Reset(params); it.Next(); {
		switch {
		case it.NameIs("message"):
			msgv = it.Value()
		case it.NameIs("configuration"):
			confv = it.Value()
		case it.NameIs("tenant"):
			tenantv = it.Value()
		}
	}
	if msgv == nil || isNull(msgv) {
		return p, invalidParams("message", "message is required")
	}
	var e *fastserver.Error
	if p.msg, e = readMessage(msgv, v, "message"); e != nil {
		return p, e
	}
	if _, e = optString(tenantv, "tenant"); e != nil {
		return p, e
	}
	if confv != nil && !isNull(confv) {
		if confv[0] != '{' {
			return p, invalidParams("configuration", "configuration must be an object")
		}
		for it.Reset(confv); it.Next(); {
			val := it.Value()
			switch {
			case it.NameIs("historyLength"):
				if p.history, e = optCount(val, "configuration.historyLength"); e != nil {
					return p, e
				}
			case it.NameIs("acceptedOutputModes"):
				if p.modes, e = optStrings(val, "configuration.acceptedOutputModes"); e != nil {
					return p, e
				}
			case it.NameIs("blocking"), it.NameIs("returnImmediately"):
				if e = optBool(val, "configuration."+string(it.Name())); e != nil {
					return p, e
				}
				if it.NameIs("blocking") {
					p.now = p.now || string(val) == "false"
				} else {
					p.now = p.now || string(val) == "true"
				}
			case it.NameIs("pushNotificationConfig"), it.NameIs("taskPushNotificationConfig"):
				if !isNull(val) {
					p.push = true
				}
			}
		}
	}
	return p, nil
}

// readMessage reads a client's message in the shape of v. The checks run
// in a fixed order: role, parts, messageId, then the optional members.
func readMessage(v []byte, ver Version, field string) (Message, *fastserver.Error) {
	var m Message
	if v[0] != '{' {
		return m, invalidParams(field, field+" must be an object")
	}
	var kind, role, parts, id, ctx, task, meta, exts, refs []byte
	var it decode.Members
	for it.Reset(v); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("kind"):
			kind = val
		case it.NameIs("role"):
			role = val
		case it.NameIs("parts"):
			parts = val
		case it.NameIs("messageId"):
			id = val
		case it.NameIs("contextId"):
			ctx = val
		case it.NameIs("taskId"):
			task = val
		case it.NameIs("metadata"):
			meta = val
		case it.NameIs("extensions"):
			exts = val
		case it.NameIs("referenceTaskIds"):
			refs = val
		}
	}
	// 0.3 tags the message; a tag that is there must be right.
	if ver == Version03 && kind != nil && !decode.StringIs(kind, "message") {
		return m, invalidParams(field+".kind", field+`.kind must be "message"`)
	}
	want := RoleUser.name(ver)
	if role == nil {
		return m, invalidParams(field+".role", field+".role is required")
	}
	if !decode.StringIs(role, want) {
		return m, invalidParams(field+".role", field+".role must be "+strconv.Quote(want))
	}
	m.Role = RoleUser
	if parts == nil || parts[0] != '[' {
		return m, invalidParams(field+".parts", field+".parts must be a non-empty array")
	}
	// The parts are checked in place and kept as one copy of their JSON
	// (parts.go); a part's field name is built only for its refusal.
	var e *fastserver.Error
	n := 0
	eachElement(parts, func(i int, pv []byte) bool {
		if _, pe := viewPart(pv, ver); pe.msg != "" {
			pf := field + ".parts[" + strconv.Itoa(i) + "]" + pe.member
			e = invalidParams(pf, pf+pe.msg)
			return false
		}
		n++
		return true
	})
	if e != nil {
		return m, e
	}
	if n == 0 {
		return m, invalidParams(field+".parts", field+".parts must be a non-empty array")
	}
	m.Parts = Parts{raw: append([]byte(nil), parts...), ver: ver, n: n}
	if id == nil {
		return m, invalidParams(field+".messageId", field+".messageId is required")
	}
	s, ok := unquote(id)
	if !ok || s == "" {
		return m, invalidParams(field+".messageId", field+".messageId must be a non-empty string")
	}
	m.MessageID = s
	if m.ContextID, e = optString(ctx, field+".contextId"); e != nil {
		return m, e
	}
	if m.TaskID, e = optString(task, field+".taskId"); e != nil {
		return m, e
	}
	if m.Metadata, e = optObject(meta, field+".metadata"); e != nil {
		return m, e
	}
	if m.Extensions, e = optStrings(exts, field+".extensions"); e != nil {
		return m, e
	}
	if m.ReferenceTaskIDs, e = optStrings(refs, field+".referenceTaskIds"); e != nil {
		return m, e
	}
	return m, nil
}
