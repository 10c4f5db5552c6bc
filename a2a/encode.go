package a2a

import (
	"encoding/base64"
	"slices"

	"github.com/rpcedge/rpcedge/decode"
)

// NOTE: encoders of answers.
//
// Answers are appended by hand, member by member, in the shape of the
// request's Version: 1.0 (camelCase, enum strings, no kind tags) or 0.3
// (kind tags, lower-case enums). Raw JSON held by the values (metadata,
// data parts) came from validated requests or from an Agent, and is written
// verbatim. Optional members are omitted when empty.

// timeLayout is RFC 3339 in UTC with milliseconds, as A2A recommends.
const timeLayout = "2006-01-02T15:04:05.000Z"

// appendTask appends t in the shape of v. history is the most messages of
// the history to write, newest last; negative means all, 0 none.
func appendTask(dst []byte, t *Task, v Version, history int) []byte {
	dst = append(dst, '{')
	if v == Version03 {
		dst = append(dst, `"kind":"task",`...)
	}
	dst = append(dst, `"id":`...)
	dst = decode.AppendString(dst, t.ID)
	dst = append(dst, `,"contextId":`...)
	dst = decode.AppendString(dst, t.ContextID)
	dst = append(dst, `,"status":`...)
	dst = appendStatus(dst, &t.Status, v)
	if len(t.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":[`...)
		for i := range t.Artifacts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendArtifact(dst, &t.Artifacts[i], v)
		}
		dst = append(dst, ']')
	}
	h := t.History
	if history >= 0 && history < len(h) {
		h = h[len(h)-history:]
	}
	if len(h) > 0 {
		dst = append(dst, `,"history":[`...)
		for i := range h {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMessage(dst, &h[i], v)
		}
		dst = append(dst, ']')
	}
	if len(t.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, t.Metadata...)
	}
	return append(dst, '}')
}

// appendStatus appends a TaskStatus in the shape of v.
func appendStatus(dst []byte, st *TaskStatus, v Version) []byte {
	dst = append(dst, `{"state":`...)
	dst = decode.AppendString(dst, st.State.name(v))
	if st.Message != nil {
		dst = append(dst, `,"message":`...)
		dst = appendMessage(dst, st.Message, v)
	}
	if !st.Timestamp.IsZero() {
		dst = append(dst, `,"timestamp":"`...)
		dst = st.Timestamp.UTC().AppendFormat(dst, timeLayout)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

// appendMessage appends m in the shape of v.
func appendMessage(dst []byte, m *Message, v Version) []byte {
	dst = append(dst, '{')
	if v == Version03 {
		dst = append(dst, `"kind":"message",`...)
	}
	dst = append(dst, `"messageId":`...)
	dst = decode.AppendString(dst, m.MessageID)
	if m.ContextID != "" {
		dst = append(dst, `,"contextId":`...)
		dst = decode.AppendString(dst, m.ContextID)
	}
	if m.TaskID != "" {
		dst = append(dst, `,"taskId":`...)
		dst = decode.AppendString(dst, m.TaskID)
	}
	dst = append(dst, `,"role":`...)
	dst = decode.AppendString(dst, m.Role.name(v))
	dst = append(dst, `,"parts":`...)
	dst = appendParts(dst, m.Parts, v)
	if len(m.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, m.Metadata...)
	}
	if len(m.Extensions) > 0 {
		dst = append(dst, `,"extensions":`...)
		dst = appendStrings(dst, m.Extensions)
	}
	if len(m.ReferenceTaskIDs) > 0 {
		dst = append(dst, `,"referenceTaskIds":`...)
		dst = appendStrings(dst, m.ReferenceTaskIDs)
	}
	return append(dst, '}')
}

// appendArtifact appends a in the shape of v.
func appendArtifact(dst []byte, a *Artifact, v Version) []byte {
	dst = append(dst, `{"artifactId":`...)
	dst = decode.AppendString(dst, a.ArtifactID)
	if a.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = decode.AppendString(dst, a.Name)
	}
	if a.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = decode.AppendString(dst, a.Description)
	}
	dst = append(dst, `,"parts":`...)
	dst = appendParts(dst, a.Parts, v)
	if len(a.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, a.Metadata...)
	}
	if len(a.Extensions) > 0 {
		dst = append(dst, `,"extensions":`...)
		dst = appendStrings(dst, a.Extensions)
	}
	return append(dst, '}')
}

func appendParts(dst []byte, ps Parts, v Version) []byte {
	dst = append(dst, '[')
	first := true
	ps.each(func(p *Part, pv partView) bool {
		dst = ensure(dst, 64+len(pv.text)+len(pv.raw)+len(pv.url)+len(pv.data)+len(pv.name)+len(pv.media)+len(pv.md))
		if !first {
			dst = append(dst, ',')
		}
		first = false
		switch {
		case p == nil && v == Version03:
			dst = appendPartView03(dst, &pv)
		case p == nil:
			dst = appendPartView10(dst, &pv)
		case v == Version03:
			dst = appendPart03(dst, p)
		default:
			dst = appendPart10(dst, p)
		}
		return true
	})
	return append(dst, ']')
}

// ensure returns dst with room for n more bytes, at least doubling its
// capacity when it grows: an answer of many small parts then costs at
// most twice its size in buffers, where append's growth by a quarter
// past 256 bytes would cost five times.
func ensure(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	return slices.Grow(dst, max(n, len(dst)))
}

// appendPart10 appends p in the 1.0 shape: one of text, raw, url, data,
// then filename, mediaType and metadata when set.
func appendPart10(dst []byte, p *Part) []byte {
	switch p.Kind {
	case PartFile:
		if p.Raw != nil || p.URL == "" {
			dst = append(dst, `{"raw":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, p.Raw)
			dst = append(dst, '"')
		} else {
			dst = append(dst, `{"url":`...)
			dst = decode.AppendString(dst, p.URL)
		}
	case PartData:
		dst = append(dst, `{"data":`...)
		dst = appendData(dst, p.Data)
	default:
		dst = append(dst, `{"text":`...)
		dst = decode.AppendString(dst, p.Text)
	}
	if p.Filename != "" {
		dst = append(dst, `,"filename":`...)
		dst = decode.AppendString(dst, p.Filename)
	}
	if p.MediaType != "" {
		dst = append(dst, `,"mediaType":`...)
		dst = decode.AppendString(dst, p.MediaType)
	}
	if len(p.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, p.Metadata...)
	}
	return append(dst, '}')
}

// appendPart03 appends p in the 0.3 shape: kind-tagged, the file's name,
// media type and content inside "file", a data part's value as an object.
func appendPart03(dst []byte, p *Part) []byte {
	switch p.Kind {
	case PartFile:
		dst = append(dst, `{"kind":"file","file":{`...)
		if p.Filename != "" {
			dst = append(dst, `"name":`...)
			dst = decode.AppendString(dst, p.Filename)
			dst = append(dst, ',')
		}
		if p.MediaType != "" {
			dst = append(dst, `"mimeType":`...)
			dst = decode.AppendString(dst, p.MediaType)
			dst = append(dst, ',')
		}
		if p.Raw != nil || p.URL == "" {
			dst = append(dst, `"bytes":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, p.Raw)
			dst = append(dst, '"')
		} else {
			dst = append(dst, `"uri":`...)
			dst = decode.AppendString(dst, p.URL)
		}
		dst = append(dst, '}')
	case PartData:
		dst = append(dst, `{"kind":"data","data":`...)
		if isObject(p.Data) {
			dst = append(dst, p.Data...)
		} else {
			dst = append(dst, `{"value":`...)
			dst = appendData(dst, p.Data)
			dst = append(dst, '}')
		}
	default:
		dst = append(dst, `{"kind":"text","text":`...)
		dst = decode.AppendString(dst, p.Text)
	}
	if len(p.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, p.Metadata...)
	}
	return append(dst, '}')
}

// appendData appends a raw JSON value; empty is written as null.
func appendData(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

// isObject reports whether the raw JSON value v is an object.
func isObject(v []byte) bool {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}
