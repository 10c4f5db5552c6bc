package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rpcedge/rpcedge/auth"
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
	call, p, err := s.prepareSend(r, v)
	if err != nil {
		return dst, err
	}
	reply, err := s.runAgent(r.Context(), call)
	if err != nil {
		return dst, err
	}
	if reply.Message != nil {
		return appendReplyMessage(dst, reply.Message, call, v), nil
	}
	t, err := s.storeReply(r.Context(), call, reply)
	if err != nil {
		return dst, err
	}
	if p.now || s.sendWait < 0 || ends(t.Status.State) {
		s.then(reply)
	} else {
		t = s.awaitEnd(r.Context(), r.Stopping(), t, reply)
	}
	if v == Version10 {
		dst = append(dst, `{"task":`...)
		dst = appendTask(dst, t, v, p.history)
		return append(dst, '}'), nil
	}
	return appendTask(dst, t, v, p.history), nil
}

// awaitEnd starts reply's Then and waits for the stored task t to end (a
// final or interrupted state), at most Config.SendWait, until a tenth of
// the time left before ctx's deadline, and until stop is closed (the
// server shuts down), and returns the task as stored then: SendMessage
// waits unless the client asked not to (A2A 1.0: "If false (default), the
// operation MUST wait until the task reaches a terminal ... or
// interrupted ... state before returning"; 0.3's blocking, which the SDKs
// take as true when absent). Found by review on 2026-12-07: it answered
// the task as the agent left it, working.
func (s *Server) awaitEnd(ctx context.Context, stop <-chan struct{}, t *Task, reply *Reply) *Task {
	wake := make(chan struct{}, 1)
	unsub := s.events.Subscribe(t.ID, func(c *TaskChange) {
		for _, e := range c.Events {
			if e.Status != nil && ends(e.Status.State) {
				select {
				case wake <- struct{}{}:
				default:
				}
				return
			}
		}
	})
	defer unsub()
	s.then(reply)
	wait := s.sendWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d)*9/10)
	}
	limit := time.NewTimer(wait)
	defer limit.Stop()
	for last := false; ; {
		// Read from the store each time: a change made before the
		// subscription, or one the Broker lost (delivery is at most
		// once), is there.
		if now, err := s.tasks.Get(ctx, t.ID); err == nil && now.Seq >= t.Seq {
			t = now
		}
		if last || ends(t.Status.State) {
			return t
		}
		select {
		case <-wake:
		case <-limit.C:
			last = true
		case <-stop:
			last = true // answered before the grace ends, with the task's id
		case <-ctx.Done():
			return t
		}
	}
}

// prepareSend runs SendMessage's checks, 1 to 6 above, and returns the
// Agent's Call (with the continued task, or a new task id) and the params.
func (s *Server) prepareSend(r *fastserver.Request, v Version) (*Call, *sendParams, error) {
	m := r.Msg
	if m.ParamsType == decode.ParamsOther {
		return nil, nil, errParamsNotObject
	}
	skill, meta, e := s.skill(m.Params)
	if e != nil {
		return nil, nil, e
	}
	if m.ParamsType == decode.ParamsAbsent {
		return nil, nil, invalidParams("message", "message is required")
	}
	if decode.DuplicateName(m.Params) {
		return nil, nil, errParamsDuplicate
	}
	p, e := readSend(m.Params, v)
	if e != nil {
		return nil, nil, e
	}
	if p.push {
		return nil, nil, errNoPush
	}

	call := &Call{Message: p.msg, SkillID: skill, AcceptedOutputModes: p.modes, Metadata: meta, Version: v, owner: s.owner(r)}
	if id := p.msg.TaskID; id != "" {
		t, err := s.getOwned(r, id)
		switch {
		case err != nil:
			return nil, nil, storeError(err, id)
		case t.Status.State.Final():
			return nil, nil, errFinalTask
		case p.msg.ContextID != "" && p.msg.ContextID != t.ContextID:
			return nil, nil, invalidParams("message.contextId", "message.contextId differs from the task's contextId")
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
	return call, &p, nil
}

// runAgent calls the Agent and checks its reply.
func (s *Server) runAgent(ctx context.Context, call *Call) (*Reply, error) {
	reply, err := s.agent.HandleMessage(ctx, call)
	if err != nil {
		return nil, err
	}
	if reply == nil {
		return nil, errors.New("a2a: the agent returned a nil Reply")
	}
	if err := checkReply(reply); err != nil {
		return nil, err
	}
	return reply, nil
}

// appendReplyMessage appends an Agent's direct message, with the server's
// ids filled in: the SendMessage result (1.0 {"message":…}, 0.3 the bare
// message), which is also the stream response of SendStreamingMessage.
func appendReplyMessage(dst []byte, msg *Message, call *Call, v Version) []byte {
	out := *msg
	fillAgentMessage(&out, call, call.Task != nil)
	if v == Version10 {
		dst = append(dst, `{"message":`...)
		dst = appendMessage(dst, &out, v)
		return append(dst, '}')
	}
	return appendMessage(dst, &out, v)
}

// storeReply stores the task outcome of reply: a new task, or the change
// of the continued one (published to its streams).
//
// A continued task that went final while the agent ran (finished, or
// canceled with the cancel acknowledged) keeps its state: the reply is
// dropped with -32004. One that left the store meanwhile (evicted,
// expired) is not stored again from call.Task, the snapshot taken before
// the agent ran: it may have been canceled in between, and its clients
// were told it does not exist (GetTask, its streams): the reply is
// dropped with -32001.
func (s *Server) storeReply(ctx context.Context, call *Call, reply *Reply) (*Task, error) {
	in := call.Message
	status, artifacts := s.outcome(reply, call)
	if call.Task == nil {
		t := &Task{ID: call.TaskID, ContextID: call.ContextID, Status: status, Artifacts: artifacts, Metadata: reply.Metadata, Seq: 1, Owner: call.owner}
		t.History = append(t.History, in)
		if status.Message != nil {
			t.History = append(t.History, *status.Message)
		}
		if err := s.tasks.Create(ctx, t); err != nil {
			return nil, storeError(err, t.ID)
		}
		return t, nil
	}
	next := func(old *Task) (*Task, error) {
		if old.Status.State.Final() { // finished or canceled meanwhile
			return nil, errFinalTask
		}
		nt := *old
		nt.Seq = old.Seq + 1
		nt.Status = status
		nt.Artifacts = mergeArtifacts(old.Artifacts, artifacts)
		if status.Message != nil {
			appendHistory(&nt, old, in, *status.Message)
		} else {
			appendHistory(&nt, old, in)
		}
		if reply.Metadata != nil {
			nt.Metadata = reply.Metadata
		}
		return &nt, nil
	}
	t, err := s.tasks.Update(ctx, call.TaskID, next)
	if err != nil {
		if errors.Is(err, ErrTaskFinal) {
			return nil, errFinalTask
		}
		return nil, storeError(err, call.TaskID)
	}
	s.publish(t, changeEvents(artifacts, &t.Status)...)
	return t, nil
}

// then starts the reply's work that goes on after the answer.
func (s *Server) then(reply *Reply) {
	if reply.Then != nil {
		go reply.Then()
	}
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

// mergeArtifacts returns the task's artifacts old with those of a reply
// added: one whose ArtifactID the task holds replaces that artifact in its
// place (A2A: an artifact id "must be unique within a task"; the streams
// send it with append false, a replacement), the others are appended in
// order. old is not modified. Found by review on 2026-12-07: an agent
// that rewrote its draft in each turn left every draft in the task under
// one id.
func mergeArtifacts(old, add []Artifact) []Artifact {
	out := slices.Clone(old)
	for _, a := range add {
		i := slices.IndexFunc(out, func(b Artifact) bool { return b.ArtifactID == a.ArtifactID })
		if i >= 0 {
			out[i] = a
		} else {
			out = append(out, a)
		}
	}
	return out
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

// checkReply refuses an Agent's reply that A2A's shapes do not allow or
// whose raw JSON would break the answer: a state outside the enum; a
// message, status message or artifact without a part (A2A: "Arrays marked
// as required MUST contain at least one element", and parts are; found by
// review on 2026-12-07: they were answered "parts":[], and a state past the
// enum TASK_STATE_UNSPECIFIED); metadata that is not a valid object, data
// that is not a valid JSON value. The refusal is an internal error (500 /
// -32603).
func checkReply(r *Reply) error {
	if int(r.State) >= len(stateNames10) {
		return fmt.Errorf("a2a: Reply.State %d is not a task state", r.State)
	}
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

// checkParts checks the parts an agent made; a client's parts were
// checked when they were read.
func checkParts(ps Parts, where string) error {
	if ps.Len() == 0 {
		return fmt.Errorf("a2a: %s has no part (A2A asks for one at least)", where)
	}
	for i := range ps.list {
		p := &ps.list[i]
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
	t, err := s.getOwned(r, id)
	if err != nil {
		return dst, storeError(err, id)
	}
	return appendTask(dst, t, v, history), nil
}

// owner returns the Task.Owner of r's caller: "" without Config.Auth.
func (s *Server) owner(r *fastserver.Request) string {
	if s.auth == nil {
		return ""
	}
	if t := auth.FromRequest(r); t != nil {
		return t.Principal()
	}
	return ""
}

// getOwned returns the task with the given id when r's caller owns it,
// else ErrTaskNotFound: a task of another owner does not exist for it.
func (s *Server) getOwned(r *fastserver.Request, id string) (*Task, error) {
	t, err := s.tasks.Get(r.Context(), id)
	if err == nil && t.Owner != s.owner(r) {
		return nil, ErrTaskNotFound
	}
	return t, err
}

// cancelTask serves CancelTask and tasks/cancel: params checked first
// (-32602), then the task looked up (-32001), then refused when in a final
// state (-32002). Otherwise the stored task is marked canceled, atomically
// (TaskStore.Update): of a cancel and a completion racing, exactly one
// wins, and the loser is told so. The agent's work in the background, if
// any, finds the task canceled when it reports (UpdateTask).
func (s *Server) cancelTask(r *fastserver.Request, dst []byte, v Version) ([]byte, error) {
	id, _, e := taskParams(r.Msg, false)
	if e != nil {
		return dst, e
	}
	owner := s.owner(r)
	t, err := s.tasks.Update(r.Context(), id, func(old *Task) (*Task, error) {
		if old.Owner != owner {
			return nil, ErrTaskNotFound
		}
		if old.Status.State.Final() {
			return nil, notCancelable(id, old.Status.State, v)
		}
		nt := *old
		nt.Seq = old.Seq + 1
		nt.Status = TaskStatus{State: TaskStateCanceled, Timestamp: s.now()}
		return &nt, nil
	})
	if err != nil {
		if errors.Is(err, ErrTaskFinal) {
			return dst, notCancelable(id, TaskStateUnspecified, v)
		}
		return dst, storeError(err, id)
	}
	s.publish(t, TaskEvent{Status: &t.Status})
	return appendTask(dst, t, v, -1), nil
}

func notCancelable(id string, st TaskState, v Version) *fastserver.Error {
	msg := "the task is in a final state and cannot be canceled"
	if st != TaskStateUnspecified {
		msg = "the task is in a final state (" + st.name(v) + ") and cannot be canceled"
	}
	return &fastserver.Error{Code: CodeTaskNotCancelable, Message: msg, Data: taskData(id)}
}

// listTasks serves ListTasks: params checked (-32602), then one page of
// the store's tasks, newest status first.
func (s *Server) listTasks(r *fastserver.Request, dst []byte, v Version) ([]byte, error) {
	p, e := readList(r.Msg, v)
	if e != nil {
		return dst, e
	}
	p.q.Owner = s.owner(r)
	page, err := s.tasks.List(r.Context(), p.q)
	if err != nil {
		if errors.Is(err, ErrBadPageToken) {
			return dst, invalidParams("pageToken", "pageToken was not issued for this listing")
		}
		return dst, storeError(err, "")
	}
	dst = append(dst, `{"tasks":[`...)
	for i, t := range page.Tasks {
		if i > 0 {
			dst = append(dst, ',')
		}
		if !p.artifacts && len(t.Artifacts) > 0 {
			nt := *t
			nt.Artifacts = nil
			t = &nt
		}
		dst = appendTask(dst, t, v, p.history)
	}
	dst = append(dst, `],"nextPageToken":`...)
	dst = decode.AppendString(dst, page.NextPageToken)
	dst = append(dst, `,"pageSize":`...)
	dst = strconv.AppendInt(dst, int64(p.q.PageSize), 10)
	dst = append(dst, `,"totalSize":`...)
	dst = strconv.AppendInt(dst, int64(page.TotalSize), 10)
	return append(dst, '}'), nil
}

// UpdateTask applies an agent's later report to a task that is not in a
// final state, for work that goes on after SendMessage answered (the
// Agent replied with TaskStateWorking, say, and finishes in the
// background): the reply's state and status message become the task's
// status, its artifacts are appended, its metadata (when not nil)
// replaces the task's. It is atomic (TaskStore.Update): when the task was
// canceled (or finished) meanwhile it returns an error wrapping
// ErrTaskFinal and changes nothing. A Reply.Message is refused.
func (s *Server) UpdateTask(ctx context.Context, taskID string, reply *Reply) (*Task, error) {
	if reply == nil || reply.Message != nil {
		return nil, errors.New("a2a: UpdateTask takes a task outcome, not a direct message")
	}
	if err := checkReply(reply); err != nil {
		return nil, err
	}
	var (
		call      Call
		artifacts []Artifact
	)
	t, err := s.tasks.Update(ctx, taskID, func(old *Task) (*Task, error) {
		if old.Status.State.Final() {
			return nil, ErrTaskFinal
		}
		call.TaskID, call.ContextID = old.ID, old.ContextID
		var status TaskStatus
		status, artifacts = s.outcome(reply, &call)
		nt := *old
		nt.Seq = old.Seq + 1
		nt.Status = status
		nt.Artifacts = mergeArtifacts(old.Artifacts, artifacts)
		if status.Message != nil {
			appendHistory(&nt, old, *status.Message)
		}
		if reply.Metadata != nil {
			nt.Metadata = reply.Metadata
		}
		return &nt, nil
	})
	if err != nil {
		return nil, err
	}
	s.publish(t, changeEvents(artifacts, &t.Status)...)
	return t, nil
}

// ArtifactUpdate is a piece of a task's output for Server.UpdateArtifact:
// an artifact, or a chunk of one.
type ArtifactUpdate struct {
	// Artifact is the artifact or chunk: at least one part. With Append
	// it needs the ArtifactID of the artifact it extends; otherwise an
	// empty ArtifactID is set to a new random id.
	Artifact Artifact
	// Append makes Artifact's parts extend the task's artifact of the
	// same ArtifactID (one is started when the task has none of that
	// id); without it Artifact replaces that artifact, or is added.
	Append bool
	// LastChunk marks the artifact's last chunk, for the streams.
	LastChunk bool
}

// UpdateArtifact adds an artifact to a task that is not in a final state,
// or a chunk to one of its artifacts (ArtifactUpdate), for work that goes
// on after SendMessage answered; the task's streams carry it as a
// TaskArtifactUpdateEvent (append, lastChunk). The task's status is
// unchanged. It is atomic like UpdateTask, and returns an error wrapping
// ErrTaskFinal when the task was canceled or finished meanwhile.
func (s *Server) UpdateArtifact(ctx context.Context, taskID string, u ArtifactUpdate) (*Task, error) {
	a := u.Artifact
	switch {
	case a.Parts.Len() == 0:
		return nil, errors.New("a2a: UpdateArtifact: the artifact has no part")
	case u.Append && a.ArtifactID == "":
		return nil, errors.New("a2a: UpdateArtifact: a chunk to append needs the ArtifactID it extends")
	}
	if err := checkObject(a.Metadata, "ArtifactUpdate.Artifact.Metadata"); err != nil {
		return nil, err
	}
	if err := checkParts(a.Parts, "ArtifactUpdate.Artifact"); err != nil {
		return nil, err
	}
	if a.ArtifactID == "" {
		a.ArtifactID = newID()
	}
	t, err := s.tasks.Update(ctx, taskID, func(old *Task) (*Task, error) {
		if old.Status.State.Final() {
			return nil, ErrTaskFinal
		}
		nt := *old
		nt.Seq = old.Seq + 1
		nt.Artifacts = slices.Clone(old.Artifacts)
		i := slices.IndexFunc(nt.Artifacts, func(o Artifact) bool { return o.ArtifactID == a.ArtifactID })
		switch {
		case i < 0:
			nt.Artifacts = append(nt.Artifacts, a)
		case u.Append:
			merged := nt.Artifacts[i]
			merged.Parts = merged.Parts.appendParts(a.Parts)
			nt.Artifacts[i] = merged
		default:
			nt.Artifacts[i] = a
		}
		return &nt, nil
	})
	if err != nil {
		return nil, err
	}
	s.publish(t, TaskEvent{Artifact: &a, Append: u.Append, LastChunk: u.LastChunk})
	return t, nil
}

// storeError turns a TaskStore error into the answer: -32001 for an
// unknown task, 503 / -32603 with Retry-After while the store is
// unavailable, -32602 for a task past the store's size bound, and any
// other error as it is (500 / -32603).
func storeError(err error, id string) error {
	var fe *fastserver.Error
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.Is(err, ErrTaskNotFound):
		return taskNotFound(id)
	case errors.Is(err, ErrStoreUnavailable):
		return errStoreDown
	case errors.Is(err, ErrTaskTooLarge):
		return invalidParams("message", "the task would pass the task store's size bound; it is unchanged")
	}
	return err
}

var errStoreDown = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "task store unavailable: try again later", RetryAfter: StoreRetryAfter}

// extendedAgentCard serves GetExtendedAgentCard when there is an extended
// card: params, when present, must be an object (tenant is ignored).
func (s *Server) extendedAgentCard(r *fastserver.Request, dst []byte, _ Version) ([]byte, error) {
	if e := checkParamsObject(r.Msg); e != nil {
		return dst, e
	}
	return s.extended.append(dst, &s.endpoint, r.Host()), nil
}
