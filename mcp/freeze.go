package mcp

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/rpcedge/rpcedge/decode"
)

// NOTE: results that do not depend on the request are built once.
//
// The registries cannot change after Endpoint, so the list results, the
// initialize results (one per negotiable version), server/discover and
// static resource contents are rendered once, per version, when the
// endpoint is built; serving them is a copy. Lists are in registration
// order, which is deterministic, as MCP asks, and under the registrant's
// control.

// lists holds the rendered list results of one version.
type lists struct {
	tools, resources, prompts, templates []byte
}

func (s *Server) freeze() {
	s.frozen = true
	s.meta = append(append([]byte(`,"_meta":{"io.modelcontextprotocol/serverInfo":`), s.infoJSON(Version20260728)...), "}}"...)
	s.hint = s.cache.appendJSON(nil)

	s.routes = routes{
		initialize:    route("initialize", false, s.serveInitialize),
		ping:          route("ping", false, servePing),
		discover:      route("server/discover", false, s.serveDiscover),
		toolsList:     route("tools/list", false, s.serveToolsList),
		toolsCall:     route("tools/call", true, s.cancellable(s.serveToolsCall)),
		resourcesList: route("resources/list", false, s.serveResourcesList),
		resourcesRead: route("resources/read", true, s.cancellable(s.serveResourcesRead)),
		promptsList:   route("prompts/list", false, s.servePromptsList),
		promptsGet:    route("prompts/get", true, s.cancellable(s.servePromptsGet)),
		templatesList: route("resources/templates/list", false, s.serveTemplatesList),
		complete:      route("completion/complete", true, s.cancellable(s.serveComplete)),
		setLevel:      route("logging/setLevel", false, s.serveSetLevel),
		subscribe:     route("resources/subscribe", true, s.serveSubscribe),
		unsubscribe:   route("resources/unsubscribe", true, s.serveSubscribe),
		tasksGet:      route("tasks/get", false, s.serveTasksGet),
		tasksUpdate:   route("tasks/update", false, s.serveTasksUpdate),
		tasksCancel:   route("tasks/cancel", false, s.serveTasksCancel),
		listen:        route("subscriptions/listen", false, s.serveListen),
	}
	if slices.ContainsFunc(s.tools, func(t *tool) bool { return t.Task != TaskNone }) {
		s.tasks = newTaskStore(s.taskOpts)
	}

	for v := range Version(numVersions) {
		s.lists[v] = lists{
			tools:     s.listResult(v, "tools", s.appendTools),
			resources: s.listResult(v, "resources", s.appendResources),
			prompts:   s.listResult(v, "prompts", s.appendPrompts),
			templates: s.listResult(v, "resourceTemplates", s.appendTemplates),
		}
		s.empty[v] = s.closeResult(bytes.TrimSuffix(s.openResult(nil, v), []byte(",")), v)
		if !v.Stateless() {
			s.init[v] = s.initializeResult(v, capabilities)
			s.initS[v] = s.initializeResult(v, capabilitiesWithSessions)
		}
	}
	s.disc = s.discoverResult()
	for _, r := range s.resources {
		r.freeze(s)
	}
	for _, t := range s.templates {
		t.freeze(s)
	}
}

// infoJSON renders serverInfo as version v defines it (title from
// 2025-06-18 on).
func (s *Server) infoJSON(v Version) []byte {
	b := append([]byte(nil), `{"name":`...)
	b = decode.AppendString(b, s.info.Name)
	if s.info.Title != "" && v >= Version20250618 {
		b = append(b, `,"title":`...)
		b = decode.AppendString(b, s.info.Title)
	}
	b = append(b, `,"version":`...)
	b = decode.AppendString(b, s.info.Version)
	return append(b, '}')
}

// capabilities is what the server declares: every feature it routes.
// Subscriptions to resource updates are not declared: without sessions
// (WithSessions) an HTTP client has nothing to receive them on
// (resources/subscribe is acknowledged under 2025-xx and has no effect).
// A stdio stream is offered them (capabilitiesWithSessions): its updates
// are lines between its answers.
const capabilities = `{"completions":{},"logging":{},"prompts":{},"resources":{},"tools":{}}`

// capabilitiesWithSessions is what a 2025-xx session is offered
// (WithSessions): subscriptions to resource updates, delivered on the
// session's GET stream.
const capabilitiesWithSessions = `{"completions":{},"logging":{},"prompts":{},"resources":{"subscribe":true},"tools":{}}`

// capabilitiesDiscover is what server/discover declares: 2026-07-28
// delivers resource updates on subscriptions/listen streams, so
// resources.subscribe as a 2025-xx session's; no list changes (the lists
// are fixed once served).
const capabilitiesDiscover = capabilitiesWithSessions

func (s *Server) listResult(v Version, key string, items func([]byte, Version) []byte) []byte {
	b := s.openResult(nil, v)
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":[`...)
	b = items(b, v)
	b = append(b, ']')
	if v.Stateless() {
		b = append(b, s.hint...)
	}
	return s.closeResult(b, v)
}

// appendTitled appends the optional "title" (from 2025-06-18 on) and
// "description" members.
func appendTitled(b []byte, v Version, title, description string) []byte {
	if title != "" && v >= Version20250618 {
		b = append(b, `,"title":`...)
		b = decode.AppendString(b, title)
	}
	if description != "" {
		b = append(b, `,"description":`...)
		b = decode.AppendString(b, description)
	}
	return b
}

func (s *Server) appendTools(b []byte, v Version) []byte {
	for i, t := range s.tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = decode.AppendString(b, t.Name)
		b = appendTitled(b, v, t.Title, t.Description)
		b = append(b, `,"inputSchema":`...)
		b = append(b, t.in.json...)
		if t.out != nil && v >= Version20250618 {
			b = append(b, `,"outputSchema":`...)
			b = append(b, t.out.json...)
		}
		b = append(b, '}')
	}
	return b
}

func (s *Server) appendResources(b []byte, v Version) []byte {
	for i, r := range s.resources {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"uri":`...)
		b = decode.AppendString(b, r.URI)
		b = append(b, `,"name":`...)
		b = decode.AppendString(b, r.Name)
		b = appendTitled(b, v, r.Title, r.Description)
		if r.MIMEType != "" {
			b = append(b, `,"mimeType":`...)
			b = decode.AppendString(b, r.MIMEType)
		}
		b = append(b, '}')
	}
	return b
}

func (s *Server) appendPrompts(b []byte, v Version) []byte {
	for i, p := range s.prompts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = decode.AppendString(b, p.Name)
		b = appendTitled(b, v, p.Title, p.Description)
		if len(p.Arguments) > 0 {
			b = append(b, `,"arguments":[`...)
			for j, a := range p.Arguments {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"name":`...)
				b = decode.AppendString(b, a.Name)
				b = appendTitled(b, v, a.Title, a.Description)
				if a.Required {
					b = append(b, `,"required":true`...)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return b
}

// initializeResult renders the initialize result for the negotiated
// version v (a version before 2026-07-28).
func (s *Server) initializeResult(v Version, caps string) []byte {
	b := append([]byte(nil), `{"protocolVersion":`...)
	b = decode.AppendString(b, v.String())
	b = append(b, `,"capabilities":`...)
	b = append(b, caps...)
	b = append(b, `,"serverInfo":`...)
	b = append(b, s.infoJSON(v)...)
	if s.instructions != "" {
		b = append(b, `,"instructions":`...)
		b = decode.AppendString(b, s.instructions)
	}
	return append(b, '}')
}

// discoverResult renders the server/discover result: MCP 2026-07-28's
// DiscoverResult, the same under every version.
func (s *Server) discoverResult() []byte {
	b := s.openResult(nil, Version20260728)
	b = append(b, `"supportedVersions":[`...)
	for i, v := range Versions() {
		if i > 0 {
			b = append(b, ',')
		}
		b = decode.AppendString(b, v.String())
	}
	b = append(b, `],"capabilities":`...)
	if s.tasks != nil {
		// The tasks extension (SEP-2663), served under 2026-07-28.
		b = append(b, capabilitiesDiscover[:len(capabilitiesDiscover)-1]...)
		b = append(b, `,"extensions":{"`+ExtensionTasks+`":{}}}`...)
	} else {
		b = append(b, capabilitiesDiscover...)
	}
	b = append(b, `,"serverInfo":`...)
	b = append(b, s.infoJSON(Version20260728)...)
	if s.instructions != "" {
		b = append(b, `,"instructions":`...)
		b = decode.AppendString(b, s.instructions)
	}
	b = append(b, s.hint...)
	return s.closeResult(b, Version20260728)
}

// compactJSON returns the valid JSON text v without insignificant
// whitespace.
func compactJSON(v []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return append([]byte(nil), v...)
	}
	return buf.Bytes()
}
