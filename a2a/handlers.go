package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// sendMessage serves SendMessage and message/send. The order of its
// refusals is contract §5's:
//
//  1. params present and not an object: -32602 (row 15);
//  2. params.metadata.skillId, when present: metadata given twice, not an
//     object, or skillId given twice or not a string: -32602; empty or not
//     a skill of the card: -32004 (row 16);
//  3. a member name given twice in params: -32602 (row 17);
//  4. the message, in the shape of v: -32602 naming the member (row 17);
//  5. configuration asking for push notifications: -32003;
//  6. message.taskId naming no stored task: -32001, a task in a final
//     state: -32004, and a contextId other than the task's: -32602.
//
// Then the Agent runs, and its reply is stored and answered.
func (s *Server) sendMessage(r *fastserver.Request, dst []byte, v Version) ([]byte, error) {
	m := r.Msg
	if m.ParamsType == decode.ParamsOther {
		return dst, errParamsNotObject
	}
	skill, meta, e := s.skill(m.Params)
	if e != nil {
		return dst, e
	}
	if m.ParamsType == decode.ParamsAbsent {
		return dst, invalidParams("message", "message is required")
	}
	if decode.DuplicateName(m.Params) {
		return dst, errParamsDuplicate
	}
	p, e := readSend(m.Params, v)
	if e != nil {
		return dst, e
	}
	if p.push {
		return dst, errNoPush
	}

	call := &Call{Message: p.msg, SkillID: skill, Metadata: meta, Version: v}
	if id := p.msg.TaskID; id != "" {
		t, ok := s.store.get(id)
		switch {
		case !ok:
			return dst, taskNotFound(id)
		case t.Status.State.Final():
			return dst, errFinalTask
		case p.msg.ContextID != "" && p.msg.ContextID != t.ContextID:
			return dst, invalidParams("message.contextId", "message.contextId differs from the task's contextId")
		}
		call.TaskID, call.ContextID, call.Task = t.ID, t.ContextID, t
	} else {
		call.TaskID = newID()
		call.ContextID = p.msg.ContextID
		if call.ContextID == "" {
			call.ContextID = newID()
		}
	}
	// The history keeps the message with the task's ids.
	call.Message.TaskID, call.Message.ContextID = call.TaskID, call.ContextID
	in := call.Message

	reply, err := s.agent.HandleMessage(r.Context(), call)
	if err != nil {
		return dst, err
	}
	if reply == nil {
		return dst, errors.New("a2a: the agent returned a nil Reply")
	}
	if err := checkReply(reply); err != nil {
		return dst, err
	}

	if reply.Message != nil {
		out := *reply.Message
		fillAgentMessage(&out, call, call.Task != nil)
		if v == Version10 {
			dst = append(dst, `{"message":`...)
			dst = appendMessage(dst, &out, v)
			return append(dst, '}'), nil
		}
		return appendMessage(dst, &out, v), nil
	}

	status, artifacts := s.outcome(reply, call)
	var t *Task
	if call.Task == nil {
		t = &Task{ID: call.TaskID, ContextID: call.ContextID, Status: status, Artifacts: artifacts, Metadata: reply.Metadata}
		t.History = append(t.History, in)
		if status.Message != nil {
			t.History = append(t.History, *status.Message)
		}
		s.store.put(t)
	} else {
		next := func(old *Task) (*Task, error) {
			if old.Status.State.Final() { // finished or canceled meanwhile
				return nil, errFinalTask
			}
			nt := *old
			nt.Status = status
			nt.Artifacts = slices.Concat(old.Artifacts, artifacts)
			nt.History = slices.Concat(old.History, []Message{in})
			if status.Message != nil {
				nt.History = append(nt.History, *status.Message)
			}
			if reply.Metadata != nil {
				nt.Metadata = reply.Metadata
			}
			return &nt, nil
		}
		var ok bool
		t, ok, err = s.store.update(call.TaskID, next)
		if err != nil {
			return dst, err
		}
		if !ok { // evicted while the agent ran: store it again
			t, _ = next(call.Task)
			s.store.put(t)
		}
	}
	if v == Version10 {
		dst = append(dst, `{"task":`...)
		dst = appendTask(dst, t, v, p.history)
		return append(dst, '}'), nil
	}
	return appendTask(dst, t, v, p.history), nil
}

// skill reads params.metadata.skillId (row 16 of SendMessage): the skill
// id ("" when absent) and a copy of params.metadata (nil when absent).
func (s *Server) skill(params []byte) (string, json.RawMessage, *fastserver.Error) {
	mv, n := decode.Lookup(params, "metadata")
	switch {
	case n == 0 || isNull(mv):
		return "", nil, nil
	case n > 1:
		return "", nil, invalidParams("metadata", "metadata appears twice in params")
	case mv[0] != '{':
		return "", nil, invalidParams("metadata", "metadata must be an object")
	}
	meta := append(json.RawMessage(nil), mv...)
	sv, k := decode.Lookup(mv, "skillId")
	switch {
	case k == 0:
		return "", meta, nil
	case k > 1:
		return "", nil, invalidParams("metadata.skillId", "metadata.skillId appears twice")
	}
	id, ok := unquote(sv)
	if !ok {
		return "", nil, invalidParams("metadata.skillId", "metadata.skillId must be a string")
	}
	if id == "" || !s.skills[id] {
		d := append([]byte(`{"skillId":`), decode.AppendString(nil, id)...)
		return "", nil, &fastserver.Error{Code: CodeUnsupportedOperation, Message: "the skill is not on the agent card", Data: append(d, '}')}
	}
	return id, meta, nil
}

// outcome turns a task reply into the task's new status and the
// artifacts to add, with the server's ids filled in.
func (s *Server) outcome(reply *Reply, call *Call) (TaskStatus, []Artifact) {
	st := TaskStatus{State: reply.State, Timestamp: s.now()}
	if st.State == TaskStateUnspecified {
		st.State = TaskStateCompleted
	}
	if reply.Status != nil {
		msg := *reply.Status
		fillAgentMessage(&msg, call, true)
		st.Message = &msg
	}
	arts := slices.Clone(reply.Artifacts)
	for i := range arts {
		if arts[i].ArtifactID == "" {
			arts[i].ArtifactID = newID()
		}
	}
	return st, arts
}

// fillAgentMessage sets what the server owns in an agent's message: the
// role, and ids left empty. The task id is set only when the message
// belongs to a task (a status message, or a direct reply to a message that
// continued a task), as A2A asks.
func fillAgentMessage(m *Message, call *Call, inTask bool) {
	m.Role = RoleAgent
	if m.MessageID == "" {
		m.MessageID = newID()
	}
	if m.ContextID == "" {
		m.ContextID = call.ContextID
	}
	if m.TaskID == "" && inTask {
		m.TaskID = call.TaskID
	}
}

// checkReply refuses an Agent's reply whose raw JSON would break the
// answer: metadata that is not a valid object, data that is not a valid
// JSON value. The refusal is an internal error (500 / -32603).
func checkReply(r *Reply) error {
	if err := checkObject(r.Metadata, "Reply.Metadata"); err != nil {
		return err
	}
	if r.Message != nil {
		if err := checkMessage(r.Message, "Reply.Message"); err != nil {
			return err
		}
	}
	if r.Status != nil {
		if err := checkMessage(r.Status, "Reply.Status"); err != nil {
			return err
		}
	}
	for i := range r.Artifacts {
		a := &r.Artifacts[i]
		where := fmt.Sprintf("Reply.Artifacts[%d]", i)
		if err := checkObject(a.Metadata, where+".Metadata"); err != nil {
			return err
		}
		if err := checkParts(a.Parts, where); err != nil {
			return err
		}
	}
	return nil
}

func checkMessage(m *Message, where string) error {
	if err := checkObject(m.Metadata, where+".Metadata"); err != nil {
		return err
	}
	return checkParts(m.Parts, where)
}

func checkParts(ps []Part, where string) error {
	for i := range ps {
		p := &ps[i]
		if err := checkObject(p.Metadata, fmt.Sprintf("%s.Parts[%d].Metadata", where, i)); err != nil {
			return err
		}
		if p.Kind == PartData && len(p.Data) > 0 && !decode.Valid(p.Data) {
			return fmt.Errorf("a2a: %s.Parts[%d].Data is not valid JSON", where, i)
		}
	}
	return nil
}

func checkObject(raw json.RawMessage, where string) error {
	if raw == nil {
		return nil
	}
	if !decode.Valid(raw) || !isObject(raw) {
		return fmt.Errorf("a2a: %s is not a valid JSON object", where)
	}
	return nil
}

// getTask serves GetTask and tasks/get: params checked first (-32602),
// then the task looked up (-32001).
func (s *Server) getTask(r *fastserver.Request, dst []byte, v Version) ([]byte, error) {
	id, history, e := taskParams(r.Msg, true)
	if e != nil {
		return dst, e
	}
	t, ok := s.store.get(id)
	if !ok {
		return dst, taskNotFound(id)
	}
	return appendTask(dst, t, v, history), nil
}

// cancelTask serves CancelTask and tasks/cancel: params checked first
// (-32602), then the task looked up (-32001), then refused when in a final
// state (-32002). Otherwise the stored task is marked canceled and
// answered. Agents run within SendMessage, so there is nothing running to
// stop: a task that is not final is waiting for the client.
func (s *Server) cancelTask(r *fastserver.Request, dst []byte, v Version) ([]byte, error) {
	id, _, e := taskParams(r.Msg, false)
	if e != nil {
		return dst, e
	}
	t, ok, err := s.store.update(id, func(old *Task) (*Task, error) {
		if old.Status.State.Final() {
			return nil, &fastserver.Error{Code: CodeTaskNotCancelable, Message: "the task is in a final state (" + old.Status.State.name(v) + ") and cannot be canceled", Data: taskData(id)}
		}
		nt := *old
		nt.Status = TaskStatus{State: TaskStateCanceled, Timestamp: s.now()}
		return &nt, nil
	})
	switch {
	case !ok:
		return dst, taskNotFound(id)
	case err != nil:
		return dst, err
	}
	return appendTask(dst, t, v, -1), nil
}

// extendedAgentCard serves GetExtendedAgentCard when there is an extended
// card: params, when present, must be an object (tenant is ignored).
func (s *Server) extendedAgentCard(r *fastserver.Request, dst []byte, _ Version) ([]byte, error) {
	if e := checkParamsObject(r.Msg); e != nil {
		return dst, e
	}
	return s.extended.append(dst, &s.endpoint, r.Host()), nil
}
