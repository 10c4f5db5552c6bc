package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// regionArgs is a typed tool's input with mirrored fields: a string, an
// optional integer, a field of an embedded struct, and one of a nested
// struct.
type regionArgs struct {
	Region   string `json:"region" mcpheader:"Region"`
	Priority int    `json:"priority,omitempty" mcpheader:"Priority"`
	Query    string `json:"query"`
	regionEmbedded
	Target struct {
		Zone string `json:"zone" mcpheader:"Zone"`
	} `json:"target"`
}

type regionEmbedded struct {
	DryRun bool `json:"dryRun,omitempty" mcpheader:"DryRun"`
}

// TestTypedParamHeaders: `mcpheader:"Name"` tags on a typed tool's input
// fields become x-mcp-header annotations (listed by tools/list, checked
// like a written schema's), and the calls are checked against the
// headers; a tag on a field no header may carry is refused at
// registration.
func TestTypedParamHeaders(t *testing.T) {
	s, err := New(Info{Name: "typed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got regionArgs
	if err := AddTool(s, Tool{Name: "route"}, func(_ context.Context, _ *Call, in regionArgs) (string, error) {
		got = in
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for _, h := range s.toolIndex["route"].headers {
		paths[h.header] = strings.Join(h.path, ".")
	}
	want := map[string]string{"Mcp-Param-Region": "region", "Mcp-Param-Priority": "priority", "Mcp-Param-DryRun": "dryRun", "Mcp-Param-Zone": "target.zone"}
	if len(paths) != len(want) {
		t.Fatalf("annotations %v, want %v", paths, want)
	}
	for h, p := range want {
		if paths[h] != p {
			t.Errorf("%s on %q, want %q (all: %v)", h, paths[h], p, paths)
		}
	}
	ep := s.Endpoint()
	list := exchange(t, ep, v26("tools/list"), req("tools/list", meta26))
	if !strings.Contains(string(list.Result), `"x-mcp-header":"Zone"`) {
		t.Errorf("tools/list does not publish the annotations: %s", list.Result)
	}
	args := `{"region":"eu","priority":3,"query":"q","dryRun":true,"target":{"zone":"b"}}`
	body := call(`"name":"route","arguments":` + args + "," + meta26)
	mirrored := hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "3", "Mcp-Param-DryRun", "true", "Mcp-Param-Zone", "b"}
	if a := exchange(t, ep, append(v26("tools/call", HeaderName, "route"), mirrored...), body); a.Code != 0 || got.Target.Zone != "b" || !got.DryRun {
		t.Errorf("mirrored call: %+v, handler saw %+v", a, got)
	}
	for i := 0; i < len(mirrored); i += 2 {
		wrong := append(hdr{}, mirrored...)
		wrong[i+1] = "x" + wrong[i+1]
		a := exchange(t, ep, append(v26("tools/call", HeaderName, "route"), wrong...), body)
		if a.Status != 400 || a.Code != CodeHeaderMismatch || string(a.Data) != `{"header":"`+mirrored[i]+`"}` {
			t.Errorf("%s disagreeing: %+v", mirrored[i], a)
		}
	}

	// An embedded struct with a json name is a member of its own, as
	// encoding/json reads it: its tagged field belongs there, never to the
	// level it is embedded in (whose own "zone" is not mirrored). Until
	// 2026-12-07 the schema left such a member out (the generator's
	// walk), so nothing was mirrored.
	type ZoneInner struct {
		Zone string `json:"zone" mcpheader:"Zone"`
	}
	type named struct {
		ZoneInner `json:"inner"`
		Zone      string `json:"zone"`
	}
	sn, err := New(Info{Name: "typed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddTool(sn, Tool{Name: "named"}, func(context.Context, *Call, named) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	if hs := sn.toolIndex["named"].headers; len(hs) != 1 || hs[0].header != "Mcp-Param-Zone" || !slices.Equal(hs[0].path, []string{"inner", "zone"}) {
		t.Errorf("named embedded struct: annotations %+v, want Mcp-Param-Zone at inner.zone", hs)
	}

	// Tags no header can carry are the registration mistakes they are in
	// a written schema.
	type floatArgs struct {
		Ratio float64 `json:"ratio" mcpheader:"Ratio"`
	}
	type sliceArgs struct {
		Zones []string `json:"zones" mcpheader:"Zones"`
	}
	type badName struct {
		Region string `json:"region" mcpheader:"My Region"`
	}
	type twice struct {
		A string `json:"a" mcpheader:"Region"`
		B string `json:"b" mcpheader:"region"`
	}
	type empty struct {
		A string `json:"a" mcpheader:""`
	}
	s, err = New(Info{Name: "typed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, add := range map[string]func() error{
		"float": func() error {
			return AddTool(s, Tool{Name: "f"}, func(context.Context, *Call, floatArgs) (string, error) { return "", nil })
		},
		"slice": func() error {
			return AddTool(s, Tool{Name: "s"}, func(context.Context, *Call, sliceArgs) (string, error) { return "", nil })
		},
		"bad name": func() error {
			return AddTool(s, Tool{Name: "n"}, func(context.Context, *Call, badName) (string, error) { return "", nil })
		},
		"twice": func() error {
			return AddTool(s, Tool{Name: "t"}, func(context.Context, *Call, twice) (string, error) { return "", nil })
		},
		"empty": func() error {
			return AddTool(s, Tool{Name: "e"}, func(context.Context, *Call, empty) (string, error) { return "", nil })
		},
	} {
		if err := add(); err == nil || !strings.Contains(err.Error(), "x-mcp-header") {
			t.Errorf("%s: %v, want the annotation refused", name, err)
		}
	}
}
