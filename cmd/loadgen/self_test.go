package main

import (
	"encoding/json"
	"testing"
)

// TestSelfAgainstRPCEdge runs loadgen -self against the real demo server
// with every request shape, under the default MCP version and under
// 2026-07-28 (headers and _meta): every answer must be right.
func TestSelfAgainstRPCEdge(t *testing.T) {
	for _, version := range []string{"", "2026-07-28"} {
		t.Run("version="+version, func(t *testing.T) {
			args := []string{"-self", "-n", "2000", "-c", "4", "-json",
				"-mix", "call=90,notify=5,unknown=2,badparams=1,parse=1,batch=1"}
			if version != "" {
				args = append(args, "-mcp-version", version)
			}
			r := runCmd(t, env{self: startSelf}, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			var rep struct {
				Sent  int64 `json:"sent"`
				OK    int64 `json:"ok"`
				Wrong int64 `json:"wrong"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, r.stdout)
			}
			if rep.OK != 2000 || rep.Wrong != 0 {
				t.Errorf("right %d wrong %d of %d\n%s", rep.OK, rep.Wrong, rep.Sent, r.stdout)
			}
		})
	}
}
