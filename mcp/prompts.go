package mcp

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Prompt describes a prompt (template) for registration with
// Server.AddPrompt.
type Prompt struct {
	// Name identifies the prompt in prompts/get. Required; unique.
	Name string
	// Title is an optional display name (sent from 2025-06-18 on).
	Title string
	// Description tells the user what the prompt is for.
	Description string
	// Arguments lists the arguments the prompt takes.
	Arguments []PromptArgument
	// Get renders the prompt. args holds the call's values of the
	// arguments the prompt declares (all strings; the required ones are
	// present). Other arguments are checked (strings, named once) and left
	// out, so that a request of many arguments costs no map entry each. Returning an
	// *fastserver.Error answers that error; any other error is 500 /
	// -32603. Get or Render is required.
	Get func(r *fastserver.Request, args map[string]string) (*PromptResult, error)
	// Render, when set instead of Get, renders the prompt with a Call,
	// through which it can ask the client for input (Call.Ask, Elicit,
	// Sample, ListRoots): under 2026-07-28 a Render that returns
	// ErrInputRequired is answered with an input_required result, and runs
	// again when the client answers. Errors are answered as Get's.
	Render func(c *Call, args map[string]string) (*PromptResult, error)
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	// Name of the argument. Required; unique within the prompt.
	Name string
	// Title is an optional display name (sent from 2025-06-18 on).
	Title string
	// Description of the argument.
	Description string
	// Required arguments missing from prompts/get are refused with
	// -32602.
	Required bool
}

// Role is who speaks a prompt message.
type Role string

// The roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PromptResult is a rendered prompt.
type PromptResult struct {
	// Description is optional.
	Description string
	// Messages are the prompt's messages, in order.
	Messages []PromptMessage
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	// Role of the speaker; empty means RoleUser.
	Role Role
	// Text of the message, its content unless Content is set.
	Text string
	// Content, when set, is the message's content block as raw JSON: one
	// object such as {"type":"image","data":"…","mimeType":"image/png"}
	// or {"type":"resource","resource":{…}}. It must be valid JSON.
	Content []byte
}

type prompt struct {
	Prompt
}

// AddPrompt registers a prompt. It fails (and records the mistake for Err
// and the Endpoint) for an empty or duplicate name, a nil Get, an
// argument without a name or named twice, or after Endpoint was called.
func (s *Server) AddPrompt(p Prompt) error {
	if err := s.register("prompt", p.Name); err != nil {
		return s.fail(err)
	}
	if p.Get == nil && p.Render == nil {
		return s.fail(fmt.Errorf("mcp: prompt %q registered with neither Get nor Render", p.Name))
	}
	if _, dup := s.promptIdx[p.Name]; dup {
		return s.fail(fmt.Errorf("mcp: prompt %q registered twice", p.Name))
	}
	if !utf8.ValidString(p.Title) || !utf8.ValidString(p.Description) {
		return s.fail(fmt.Errorf("mcp: prompt %q: title and description must be valid UTF-8", p.Name))
	}
	seen := make(map[string]bool)
	for _, a := range p.Arguments {
		switch {
		case a.Name == "":
			return s.fail(fmt.Errorf("mcp: prompt %q: an argument without a name", p.Name))
		case seen[a.Name]:
			return s.fail(fmt.Errorf("mcp: prompt %q: argument %q listed twice", p.Name, a.Name))
		case !utf8.ValidString(a.Name) || !utf8.ValidString(a.Title) || !utf8.ValidString(a.Description):
			return s.fail(fmt.Errorf("mcp: prompt %q: argument fields must be valid UTF-8", p.Name))
		}
		seen[a.Name] = true
	}
	p.Arguments = append([]PromptArgument(nil), p.Arguments...)
	pr := &prompt{Prompt: p}
	s.prompts = append(s.prompts, pr)
	s.promptIdx[p.Name] = pr
	return nil
}

// servePromptsGet answers prompts/get: row 15 (params, name), row 16 (the
// prompt exists), row 17 (duplicates in params; arguments an object of
// strings without duplicates, the required ones present), then Get.
func (s *Server) servePromptsGet(r *fastserver.Request, dst []byte) ([]byte, error) {
	m := r.Msg
	name, args, xp, dup, ferr := targetX(m, "name", nil)
	if ferr != nil {
		return dst, ferr
	}
	p, ok := lookup(s.promptIdx, name)
	if !ok {
		return dst, unknown("prompt", name)
	}
	if dup {
		return dst, duplicateIn(m.Params, "")
	}
	values := make(map[string]string, len(p.Arguments))
	if args != nil {
		if kindOf(args) != kindObject {
			return dst, errArgsNotObject
		}
		if decode.DuplicateName(args) {
			return dst, duplicateIn(args, "arguments.")
		}
		var it decode.Members
		for it.Reset(args); it.Next(); {
			if !isString(it.Value()) {
				return dst, invalidArguments("arguments."+memberName(&it), "must be a string")
			}
			for _, a := range p.Arguments {
				if it.NameIs(a.Name) {
					values[a.Name] = string(decode.AppendUnquoted(nil, it.Value()))
					break
				}
			}
		}
	}
	for _, a := range p.Arguments {
		if _, ok := values[a.Name]; a.Required && !ok {
			return dst, invalidArguments("arguments."+a.Name, "is required")
		}
	}
	v := RequestVersion(r)
	var res *PromptResult
	var err error
	if p.Render != nil {
		c := getCall(r)
		c.r, c.v, c.m = r, v, m
		c.sess = s.sessionOf(r)
		if e := c.begin(s, v, "prompts/get", p.Name, &xp, false, auth.FromRequest(r)); e != nil {
			c.release()
			return dst, e
		}
		res, err = p.Render(c, values)
		if _, refused := errors.AsType[*fastserver.Error](err); !refused && errors.Is(err, ErrInputRequired) && v.Stateless() && len(c.asks) > 0 {
			dst, err = c.appendInputRequired(dst)
			c.release()
			return dst, err
		}
		c.release()
	} else {
		res, err = p.Get(r, values)
	}
	if err != nil {
		return dst, err
	}
	if res == nil {
		res = &PromptResult{}
	}
	start := len(dst)
	dst = s.openResult(dst, v)
	if res.Description != "" {
		dst = append(dst, `"description":`...)
		dst = decode.AppendString(dst, res.Description)
		dst = append(dst, ',')
	}
	dst = append(dst, `"messages":[`...)
	for i, msg := range res.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		role := msg.Role
		if role == "" {
			role = RoleUser
		}
		if role != RoleUser && role != RoleAssistant {
			return dst[:start], fmt.Errorf("mcp: prompt %q: role %q is neither user nor assistant", p.Name, role)
		}
		dst = append(dst, `{"role":`...)
		dst = decode.AppendString(dst, role)
		dst = append(dst, `,"content":`...)
		if msg.Content != nil {
			content := trimWS(msg.Content)
			if kindOf(content) != kindObject || !decode.Valid(content) {
				return dst[:start], fmt.Errorf("mcp: prompt %q: a message's Content is not one JSON object", p.Name)
			}
			dst = append(dst, content...)
		} else {
			dst = appendTextItem(dst, msg.Text)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	return s.closeResult(dst, v), nil
}

// servePromptsList answers prompts/list from the list rendered at
// Endpoint.
func (s *Server) servePromptsList(r *fastserver.Request, dst []byte) ([]byte, error) {
	if err := checkCursor(r.Msg); err != nil {
		return dst, err
	}
	return append(dst, s.lists[RequestVersion(r)].prompts...), nil
}
