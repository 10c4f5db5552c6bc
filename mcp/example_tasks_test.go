package mcp_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/valyala/fasthttp"
)

// exchange runs one 2026-07-28 request whose client declares the tasks
// extension through ep, and returns its result's members.
func exchange(ep *fastserver.Endpoint, method, name, params string) map[string]any {
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + mcp.ExtensionTasks + `":{}}}}}}`
	var d decode.Decoder
	d.SetOptions(decode.Options{IDs: ep.IDs})
	var m decode.Message
	if err := d.Decode([]byte(body), &m); err != nil {
		panic(err)
	}
	var h fasthttp.RequestHeader
	h.Set("MCP-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	h.Set("Mcp-Name", name)
	var r fastserver.Request
	r.Reset(&h, &m, nil)
	if e := ep.Check(&r); e != nil {
		panic(e)
	}
	out, err := ep.Route(&r).Handler.ServeRPC(&r, nil)
	if err != nil {
		panic(err)
	}
	var res map[string]any
	json.Unmarshal(out, &res)
	return res
}

// A tool whose long part runs as a task (MCP's tasks extension): the
// client gets a task id at once and polls tasks/get for the result.
func ExampleCall_StartTask() {
	s, _ := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	s.AddTool(mcp.Tool{
		Name:        "report",
		InputSchema: `{"type":"object","properties":{"month":{"type":"string"}},"required":["month"]}`,
		Task:        mcp.TaskOptional,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			month, err := c.ArgString("month") // checked on the request, and again in the task
			if err != nil {
				return err
			}
			if err := c.StartTask(); err != nil {
				return err // ErrRunAsTask: answered with a CreateTaskResult
			}
			select { // the long part, in the task
			case <-time.After(20 * time.Millisecond):
			case <-c.Context().Done(): // tasks/cancel
				return c.Context().Err()
			}
			c.AddText("report for " + string(month) + " ready")
			return nil
		}),
	})
	ep := s.Endpoint()
	defer s.Close()

	created := exchange(ep, "tools/call", "report", `"name":"report","arguments":{"month":"2026-11"},`)
	id := created["taskId"].(string)
	fmt.Println(created["resultType"], created["status"])
	for {
		got := exchange(ep, "tasks/get", id, `"taskId":"`+id+`",`)
		if got["status"] == "working" {
			time.Sleep(5 * time.Millisecond) // a client waits pollIntervalMs
			continue
		}
		fmt.Println(got["status"], got["result"].(map[string]any)["content"])
		break
	}
	// Output:
	// task working
	// completed [map[text:report for 2026-11 ready type:text]]
}
