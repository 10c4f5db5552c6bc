package a2a

import (
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// listParams is what ListTasks' params hold.
type listParams struct {
	q         TaskQuery
	history   int // historyLength; -1 when absent (all)
	artifacts bool
}

// readList reads ListTasks' params: absent, or an object without
// duplicate names whose members are all optional: contextId, status (a
// state name of v, or of 1.0), pageSize (1 to MaxPageSize, default
// DefaultPageSize), pageToken, historyLength, statusTimestampAfter (RFC
// 3339), includeArtifacts, tenant (ignored). Each wrong one is -32602
// naming it.
func readList(m *decode.Message, v Version) (listParams, *fastserver.Error) {
	p := listParams{history: -1}
	p.q.PageSize = DefaultPageSize
	if e := checkParamsObject(m); e != nil {
		return p, e
	}
	var e *fastserver.Error
	var it decode.Members
	for it.Reset(m.Params); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("contextId"):
			p.q.ContextID, e = optString(val, "contextId")
		case it.NameIs("status"):
			p.q.State, e = readState(val, v)
		case it.NameIs("pageSize"):
			p.q.PageSize, e = readPageSize(val)
		case it.NameIs("pageToken"):
			p.q.PageToken, e = optString(val, "pageToken")
		case it.NameIs("historyLength"):
			p.history, e = optCount(val, "historyLength")
		case it.NameIs("statusTimestampAfter"):
			p.q.After, e = readTimestamp(val, "statusTimestampAfter")
		case it.NameIs("includeArtifacts"):
			if e = optBool(val, "includeArtifacts"); e == nil {
				p.artifacts = string(val) == "true"
			}
		case it.NameIs("tenant"):
			_, e = optString(val, "tenant")
		}
		if e != nil {
			return p, e
		}
	}
	return p, nil
}

// readState reads a task state filter: a state name of v (or of 1.0,
// whatever v), null or TASK_STATE_UNSPECIFIED for none.
func readState(val []byte, v Version) (TaskState, *fastserver.Error) {
	s, e := optString(val, "status")
	if e != nil || s == "" {
		return TaskStateUnspecified, e
	}
	for i := range stateNames10 {
		if s == stateNames10[i] || (v == Version03 && s == stateNames03[i]) {
			return TaskState(i), nil
		}
	}
	return TaskStateUnspecified, invalidParams("status", "status must name a task state, such as TASK_STATE_WORKING")
}

// readPageSize reads pageSize: an integer from 1 to MaxPageSize; absent
// or null is DefaultPageSize.
func readPageSize(val []byte) (int, *fastserver.Error) {
	if val == nil || isNull(val) {
		return DefaultPageSize, nil
	}
	n := 0
	for i, c := range val {
		if c < '0' || c > '9' || i >= 3 {
			n = -1
			break
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > MaxPageSize {
		return 0, invalidParams("pageSize", "pageSize must be an integer from 1 to 100")
	}
	return n, nil
}

// readTimestamp reads an optional RFC 3339 timestamp; absent or null is
// the zero time.
func readTimestamp(val []byte, field string) (time.Time, *fastserver.Error) {
	s, e := optString(val, field)
	if e != nil || s == "" {
		return time.Time{}, e
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, invalidParams(field, field+" must be an RFC 3339 timestamp, such as 2026-01-02T15:04:05Z")
	}
	return t, nil
}
