package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The limit of the accuracy phase, and the limiter's defaults it implies
// (fleet.LimiterOptions: Burst = Rate, MaxLease = Rate × 250 ms).
const (
	limitRate  = 200
	limitBurst = 200
	limitLease = 50
	window     = 10 * time.Second
)

func TestProof(t *testing.T) {
	c := newCluster(t)
	var fig figures
	defer fig.write(t)
	defer func() {
		if t.Failed() {
			for _, in := range c.insts {
				l := in.logText()
				t.Logf("log of %s (last 3000 bytes):\n%s", in.name, l[max(0, len(l)-3000):])
			}
		}
	}()

	t.Run("LimitAccuracy", func(t *testing.T) { proofLimit(t, c, &fig) })
	// The rest runs with a limit no test traffic reaches: the limiter
	// and its leases stay on every request's path.
	c.startInstances(3, false, "-rate", "1000000", "-trusted-proxies", "127.0.0.1")
	c.haproxy(3)
	t.Run("Tasks", func(t *testing.T) { proofTasks(t, c, &fig) })
	t.Run("KillInstance", func(t *testing.T) { proofKill(t, c, &fig) })
	t.Run("KillRedis", func(t *testing.T) { proofRedisDown(t, c, &fig) })
	t.Run("MCPTasks", func(t *testing.T) { proofMCPTasks(t, c, &fig) })
	if os.Getenv("FLEET_FIGURES") == "1" && !testing.Short() {
		t.Run("ScaleOut", func(t *testing.T) { figuresScale(t, c, &fig) })
		t.Run("LimiterP99", func(t *testing.T) { figuresP99(t, c, &fig) })
	}
}

// offer sends POSTs at rate per second for d as the client key xff, round
// robin over urls, and counts the answers by status.
func offer(t *testing.T, urls []string, xff string, rate float64, d time.Duration) (ok, limited, other int64) {
	var okN, limN, othN atomic.Int64
	var wg sync.WaitGroup
	const workers = 16
	per := time.Duration(float64(time.Second) * workers / rate)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := start.Add(time.Duration(w) * per / workers)
			for k := 0; ; k++ {
				if time.Until(next) > 0 {
					time.Sleep(time.Until(next))
				}
				if time.Since(start) >= d || k > 1_000_000 {
					return
				}
				url := urls[(w+k)%len(urls)]
				r := rpc(url+"/mcp", `{"jsonrpc":"2.0","id":`+strconv.Itoa(k)+`,"method":"ping"}`, "X-Forwarded-For", xff)
				switch {
				case r.Status == 200 && r.Code == 0:
					okN.Add(1)
				case r.Status == 429 && r.Code == -32603 && r.RetryAfter != "":
					limN.Add(1)
				default:
					othN.Add(1)
					if othN.Load() <= 3 {
						t.Logf("unexpected answer: %+v", r)
					}
				}
				next = next.Add(per)
			}
		}()
	}
	wg.Wait()
	return okN.Load(), limN.Load(), othN.Load()
}

// One client at 3R across three instances over 10 s: admitted within
// B + R·W + N·L, through the balancer and straight to the instances.
func proofLimit(t *testing.T, c *cluster, fig *figures) {
	args := []string{"-rate", strconv.Itoa(limitRate), "-burst", strconv.Itoa(limitBurst), "-trusted-proxies", "127.0.0.1"}
	c.startInstances(3, false, args...)
	c.haproxy(3)
	rw := float64(limitRate) * window.Seconds()
	bound := float64(limitBurst) + rw + 3*limitLease
	fig.add("limit R=%d/s B=%d L=%d, N=3, W=%v: stated bound B+R·W+N·L = %.0f = R·W × %.3f", limitRate, limitBurst, limitLease, window, bound, bound/rw)
	for k, via := range []struct {
		name string
		urls []string
	}{
		{"through haproxy", []string{c.lb()}},
		{"round robin straight to the instances", []string{c.insts[0].url(), c.insts[1].url(), c.insts[2].url()}},
	} {
		xff := "198.51.100." + strconv.Itoa(10+k) // a fresh client key each run
		ok, lim, other := offer(t, via.urls, xff, 3*limitRate, window)
		fig.add("  %s: offered %d, admitted %d = R·W × %.3f, limited %d, other %d", via.name, ok+lim+other, ok, float64(ok)/rw, lim, other)
		if float64(ok) > bound {
			t.Errorf("%s: admitted %d past the bound %.0f", via.name, ok, bound)
		}
		if float64(ok) < 0.9*rw {
			t.Errorf("%s: admitted %d, under 90%% of R·W %.0f", via.name, ok, rw)
		}
		if other != 0 {
			t.Errorf("%s: %d answers neither 200 nor 429", via.name, other)
		}
	}
	if os.Getenv("FLEET_FIGURES") == "1" && !testing.Short() {
		// The problem solved: per-process limits let N times through.
		c.startInstances(3, true, args...)
		c.haproxy(3)
		ok, _, _ := offer(t, []string{c.lb()}, "198.51.100.30", 3*limitRate, window)
		fig.add("  without -redis (per-process limits), through haproxy: admitted %d = R·W × %.3f", ok, float64(ok)/rw)
	}
}

func sendBody(ctxID, text, meta string, id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},"metadata":{"skillId":` + meta +
		`},"message":{"role":"ROLE_USER","messageId":"m` + strconv.Itoa(id) + `","contextId":"` + ctxID + `","parts":[{"text":"` + text + `"}]}}}`
}

// taskID reads a SendMessage answer's task id ("" and an error when it
// is none).
func taskID(t *testing.T, r rpcResult) string {
	t.Helper()
	var v struct{ Task struct{ ID string } }
	if r.Status != 200 || r.Code != 0 || json.Unmarshal(r.Result, &v) != nil || v.Task.ID == "" {
		t.Errorf("SendMessage: %+v %s", r, r.Result)
	}
	return v.Task.ID
}

// parallel runs f(k) for k in [0, n) on 16 goroutines.
func parallel(n int, f func(k int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				f(k)
			}
		}()
	}
	wg.Wait()
}

// 1,000 tasks created through the balancer: each readable through each
// instance with the same answer, CancelTask -32002 through each; working
// tasks canceled through all three at once: exactly one cancel wins;
// ListTasks pages one context through the balancer.
func proofTasks(t *testing.T, c *cluster, fig *figures) {
	const n = 1000
	ids := make([]string, n)
	start := time.Now()
	parallel(n, func(k int) {
		ids[k] = taskID(t, rpc(c.lb()+"/a2a", sendBody("ctx-"+strconv.Itoa(k%10), "task "+strconv.Itoa(k), `"echo"`, k)))
	})
	created := time.Since(start)
	var bad atomic.Int64
	for _, in := range c.insts {
		answers := make([][]byte, n)
		parallel(n, func(k int) {
			r := rpc(in.url()+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+ids[k]+`"}}`)
			if r.Status != 200 || r.Code != 0 || !bytes.Contains(r.Result, []byte(`"task `+strconv.Itoa(k)+`"`)) {
				if bad.Add(1) <= 3 {
					t.Errorf("GetTask %d through %s: %+v %s", k, in.name, r, r.Result)
				}
			}
			answers[k] = r.Result
			r = rpc(in.url()+"/a2a", `{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id":"`+ids[k]+`"}}`)
			if r.Status != 200 || r.Code != -32002 {
				if bad.Add(1) <= 3 {
					t.Errorf("CancelTask %d through %s: %+v, want -32002", k, in.name, r)
				}
			}
		})
		if in != c.insts[0] {
			continue
		}
		// The same bytes through every instance.
		for _, other := range c.insts[1:] {
			for _, k := range []int{0, n / 2, n - 1} {
				r := rpc(other.url()+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+ids[k]+`"}}`)
				if !bytes.Equal(r.Result, answers[k]) {
					t.Errorf("task %d differs through %s:\n%s\n%s", k, other.name, r.Result, answers[k])
				}
			}
		}
	}
	fig.add("tasks: %d created through haproxy in %v; each read and CancelTask'd (-32002) through each of 3 instances: %d wrong", n, created.Round(time.Millisecond), bad.Load())

	// Working tasks, canceled through the three instances at once.
	const w = 100
	wids := make([]string, w)
	parallel(w, func(k int) {
		wids[k] = taskID(t, rpc(c.lb()+"/a2a", sendBody("ctx-wait", "hold", `"wait","seconds":300`, k)))
	})
	var wins, refused, other atomic.Int64
	parallel(w, func(k int) {
		var wg sync.WaitGroup
		for _, in := range c.insts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rpc(in.url()+"/a2a", `{"jsonrpc":"2.0","id":3,"method":"CancelTask","params":{"id":"`+wids[k]+`"}}`)
				switch {
				case r.Status == 200 && r.Code == 0 && bytes.Contains(r.Result, []byte("TASK_STATE_CANCELED")):
					wins.Add(1)
				case r.Status == 200 && r.Code == -32002:
					refused.Add(1)
				default:
					other.Add(1)
				}
			}()
		}
		wg.Wait()
		for _, in := range c.insts {
			r := rpc(in.url()+"/a2a", `{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"`+wids[k]+`"}}`)
			if !bytes.Contains(r.Result, []byte("TASK_STATE_CANCELED")) {
				other.Add(1)
			}
		}
	})
	fig.add("working tasks: %d, each canceled through 3 instances at once: %d cancels won, %d answered -32002, %d other", w, wins.Load(), refused.Load(), other.Load())
	if wins.Load() != w || refused.Load() != 2*w || other.Load() != 0 {
		t.Errorf("cancels: %d won, %d refused, %d other; want %d, %d, 0", wins.Load(), refused.Load(), other.Load(), w, 2*w)
	}

	// ListTasks of one context, pages of 7 through the balancer.
	seen := map[string]bool{}
	tok, pages, lastTS := "", 0, "9999"
	for ; pages < 100; pages++ {
		r := rpc(c.lb()+"/a2a", `{"jsonrpc":"2.0","id":5,"method":"ListTasks","params":{"contextId":"ctx-3","pageSize":7,"historyLength":0,"pageToken":"`+tok+`"}}`)
		var page struct {
			Tasks []struct {
				ID     string
				Status struct{ Timestamp string }
			}
			NextPageToken string
			TotalSize     int
		}
		if r.Code != 0 || json.Unmarshal(r.Result, &page) != nil || page.TotalSize != n/10 {
			t.Fatalf("ListTasks: %+v %s", r, r.Result)
		}
		for _, tk := range page.Tasks {
			if seen[tk.ID] || tk.Status.Timestamp > lastTS {
				t.Errorf("ListTasks: %s repeated or out of order", tk.ID)
			}
			seen[tk.ID], lastTS = true, tk.Status.Timestamp
		}
		if tok = page.NextPageToken; tok == "" {
			break
		}
	}
	fig.add("ListTasks of a context of %d through haproxy, pages of 7: %d listed in %d pages, newest first", n/10, len(seen), pages+1)
	if len(seen) != n/10 {
		t.Errorf("ListTasks listed %d of %d", len(seen), n/10)
	}
}

// kill -9 of an instance under load: only requests in flight on it fail
// (haproxy answers them 502/503), haproxy marks it down within its check
// interval, its tasks are served by the others, and it rejoins.
func proofKill(t *testing.T, c *cluster, fig *figures) {
	victim := c.insts[1]
	var ids []string
	for k := range 50 {
		ids = append(ids, taskID(t, rpc(victim.url()+"/a2a", sendBody("ctx-victim", "v"+strconv.Itoa(k), `"echo"`, k))))
	}
	const conns = 32
	var rep loadReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep = runLoad(t, "-url", c.lb()+"/mcp", "-c", strconv.Itoa(conns), "-d", "8s", "-mix", "call=100", "-timeout", "3s", "-examples", "1000")
	}()
	time.Sleep(2 * time.Second)
	victim.proc.Kill()
	down, ok := c.waitStatus(victim.name, 5*time.Second, func(s string) bool { return strings.HasPrefix(s, "DOWN") })
	if !ok {
		t.Errorf("haproxy did not mark %s down within 5 s", victim.name)
	}
	missing := 0
	for _, id := range ids {
		if r := rpc(c.lb()+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`"}}`); r.Code != 0 || r.Status != 200 {
			missing++
		}
	}
	time.Sleep(time.Second)
	c.start(victim)
	up, ok := c.waitStatus(victim.name, 10*time.Second, func(s string) bool { return s == "UP" })
	if !ok {
		t.Errorf("%s did not rejoin within 10 s", victim.name)
	}
	<-done
	transport := rep.WrongByClass["transport"]
	var lbErrors, wrong uint64
	for class, n := range rep.WrongByClass {
		if class != "transport" && class != "status" {
			wrong += n
		}
	}
	for _, e := range rep.Examples {
		if e.Class == "status" {
			if strings.Contains(e.Answer, " 502 ") || strings.Contains(e.Answer, " 503 ") || strings.Contains(e.Answer, " 504 ") {
				lbErrors++
			} else {
				wrong++
			}
		}
	}
	if rep.WrongByClass["status"] > uint64(len(rep.Examples)) {
		wrong += rep.WrongByClass["status"] // not all shown: cannot tell them apart
	}
	fig.add("kill -9 of 1 of 3 under load (%d conns, 8 s): %d requests, %d failed in flight (%d haproxy 502/503, %d transport), %d wrong; marked down %v after the kill, rejoined %v after restart; %d of %d of its tasks missing meanwhile",
		conns, rep.Sent, lbErrors+transport, lbErrors, transport, wrong, down.Round(time.Millisecond), up.Round(time.Millisecond), missing, len(ids))
	if wrong != 0 {
		t.Errorf("%d wrong answers beyond failed requests in flight: %+v", wrong, rep.Examples)
	}
	if lbErrors+transport > 4*conns {
		t.Errorf("%d requests failed: more than the %d in flight could explain", lbErrors+transport, 4*conns)
	}
	if missing != 0 {
		t.Errorf("%d tasks of the killed instance not served by the others", missing)
	}
}

// Redis killed under load: everything but task calls keeps answering
// (the limit falls back per instance), task calls answer 503 / -32603
// with Retry-After, and the fleet recovers within seconds of Redis
// returning.
func proofRedisDown(t *testing.T, c *cluster, fig *figures) {
	var rep loadReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep = runLoad(t, "-url", c.lb()+"/mcp", "-c", "16", "-d", "7s", "-mix", "call=100", "-timeout", "3s")
	}()
	time.Sleep(1500 * time.Millisecond)
	c.redis.Kill()
	killed := time.Now()
	var down503, other int
	for k := 0; time.Since(killed) < 2*time.Second; k++ {
		r := rpc(c.lb()+"/a2a", sendBody("ctx-down", "x", `"echo"`, k))
		if r.Status == 503 && r.Code == -32603 && r.RetryAfter != "" {
			down503++
		} else if k > 0 { // the first may still have found Redis
			other++
			t.Logf("while Redis is down: %+v", r)
		}
		if g := rpc(c.lb()+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`); g.Status != 503 {
			other++
		}
		time.Sleep(50 * time.Millisecond)
	}
	gauges := 0.0
	fallback := 0.0
	for _, in := range c.insts {
		gauges += metric(in.url(), `rpcedge_fleet_redis_up{`)
		fallback += metric(in.url(), `rpcedge_fleet_fallback_decisions_total{`)
	}
	c.redis.Restart()
	back := time.Now()
	var recovered time.Duration
	for time.Since(back) < 10*time.Second {
		if r := rpc(c.lb()+"/a2a", sendBody("ctx-up", "x", `"echo"`, 1)); r.Status == 200 && r.Code == 0 {
			recovered = time.Since(back)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every instance, not only the one that answered.
	for _, in := range c.insts {
		for time.Since(back) < 10*time.Second && metric(in.url(), `rpcedge_fleet_redis_up{`) != 1 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	all := time.Since(back)
	<-done
	fig.add("Redis killed under load (16 conns, 7 s): %d MCP requests, %d wrong; task calls while down: %d × 503/-32603 with Retry-After, %d other; rpcedge_fleet_redis_up summed %v while down; %v limiter decisions by the per-instance fallback; task calls back %v after Redis returned, all instances up after %v",
		rep.Sent, rep.Wrong, down503, other, gauges, fallback, recovered.Round(time.Millisecond), all.Round(time.Millisecond))
	if rep.Wrong != 0 {
		t.Errorf("loadgen: %d wrong answers while Redis was down: %v", rep.Wrong, rep.WrongByClass)
	}
	if down503 < 5 || other != 0 {
		t.Errorf("task calls while down: %d × 503, %d other", down503, other)
	}
	if gauges != 0 || fallback <= 0 {
		t.Errorf("while down: redis_up summed %v (want 0), fallback decisions %v (want > 0)", gauges, fallback)
	}
	if recovered == 0 || all > 5*time.Second {
		t.Errorf("recovery: task calls after %v, all instances after %v; want within 5 s", recovered, all)
	}
	for _, in := range c.insts {
		if n := strings.Count(in.logText(), "redis is down"); n != 1 {
			t.Errorf("%s logged %d down transitions, want 1", in.name, n)
		}
	}
}

// Requests/s of 1, 2 and 3 instances behind haproxy, closed loop.
func figuresScale(t *testing.T, c *cluster, fig *figures) {
	fig.add("scale-out, closed loop, 64 conns, 5 s, MCP tools/call echo, limiter on (Redis, leases):")
	direct := runLoad(t, "-url", c.insts[0].url()+"/mcp", "-c", "64", "-d", "5s", "-mix", "call=100")
	fig.add("  1 instance straight (no haproxy): %.0f req/s, p50 %d µs, p99 %d µs, wrong %d", direct.RPS, direct.Latency.P50, direct.Latency.P99, direct.Wrong)
	for n := 1; n <= 3; n++ {
		c.haproxy(n)
		rep := runLoad(t, "-url", c.lb()+"/mcp", "-c", "64", "-d", "5s", "-mix", "call=100")
		fig.add("  %d behind haproxy: %.0f req/s, p50 %d µs, p99 %d µs, wrong %d", n, rep.RPS, rep.Latency.P50, rep.Latency.P99, rep.Wrong)
	}
	c.haproxy(3)
}

// p99 of the Redis-backed limiter against the local one, in one run:
// one instance of each, the same open-loop load on both at the same time
// (so that the machine's noise hits both alike), five rounds.
func figuresP99(t *testing.T, c *cluster, fig *figures) {
	c.stopInstances()
	c.startInstances(1, true, "-rate", "1000000")
	local := c.insts[0]
	c.insts = nil
	c.startInstances(1, false, "-rate", "1000000")
	redis := c.insts[0]
	c.insts = []*instance{local, redis}
	const rounds = 5
	var p [2][]int64
	var ratios []float64
	for range rounds {
		var reps [2]loadReport
		var wg sync.WaitGroup
		for k, in := range []*instance{local, redis} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				reps[k] = runLoad(t, "-url", in.url()+"/mcp", "-rate", "2000", "-c", "16", "-d", "4s", "-mix", "call=100")
			}()
		}
		wg.Wait()
		p[0], p[1] = append(p[0], reps[0].Latency.P99), append(p[1], reps[1].Latency.P99)
		ratios = append(ratios, float64(reps[1].Latency.P99)/float64(reps[0].Latency.P99))
	}
	slices.Sort(ratios)
	fig.add("limiter p99, one local and one Redis-backed instance loaded at once, open loop 2000 req/s each, 16 conns, 4 s × %d rounds: local %v µs, Redis-backed %v µs; median ratio %.3f (%+.1f %%)",
		rounds, p[0], p[1], ratios[rounds/2], 100*(ratios[rounds/2]-1))
}

// MCP tasks (SEP-2663) live in the instance that runs them; their ids
// start with its name, and haproxy routes tasks/* by Mcp-Name (see
// cluster.haproxy). 60 tasks created through the balancer, round robin
// over the instances, are each found through it until they complete;
// straight to another instance a task does not exist (-32602), which is
// what the routing is for.
func proofMCPTasks(t *testing.T, c *cluster, fig *figures) {
	c.startInstances(3, false, "-demo", "conformance", "-rate", "1000000", "-trusted-proxies", "127.0.0.1")
	c.haproxy(3)
	const n = 60
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	hdr := func(method, name string) []string {
		return []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name}
	}
	type task struct{ TaskID, Status string }
	ids := make([]string, n)
	var bad atomic.Int64
	fail := func(format string, args ...any) {
		if bad.Add(1) <= 3 {
			t.Errorf(format, args...)
		}
	}
	parallel(n, func(k int) {
		r := rpc(c.lb()+"/mcp", `{"jsonrpc":"2.0","id":`+strconv.Itoa(k)+`,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0.3,"label":"t`+strconv.Itoa(k)+`"},`+meta+`}}`,
			hdr("tools/call", "slow_compute")...)
		var v task
		if r.Status != 200 || r.Code != 0 || json.Unmarshal(r.Result, &v) != nil || v.TaskID == "" {
			fail("tools/call %d: %+v %s", k, r, r.Result)
			return
		}
		ids[k] = v.TaskID
	})
	by := map[string]int{}
	for _, id := range ids {
		if name, _, ok := strings.Cut(id, "."); ok {
			by[name]++
		}
	}
	if len(by) != len(c.insts) {
		t.Errorf("tasks by instance %v: round robin should spread them over all %d", by, len(c.insts))
	}
	get := func(url, id string) rpcResult {
		return rpc(url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"`+id+`",`+meta+`}}`, hdr("tasks/get", id)...)
	}
	start := time.Now()
	parallel(n, func(k int) {
		if ids[k] == "" {
			return
		}
		for {
			r := get(c.lb(), ids[k])
			var v task
			if r.Status != 200 || r.Code != 0 || json.Unmarshal(r.Result, &v) != nil || v.TaskID != ids[k] {
				fail("tasks/get %s through haproxy: %+v %s", ids[k], r, r.Result)
				return
			}
			if v.Status == "completed" {
				if !bytes.Contains(r.Result, []byte(`computed t`+strconv.Itoa(k)+` in 0.3s`)) {
					fail("task %s: %s", ids[k], r.Result)
				}
				return
			}
			if time.Since(start) > 10*time.Second {
				fail("task %s still %s after 10 s", ids[k], v.Status)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	elapsed := time.Since(start)
	// Straight to an instance the id does not name: unknown there.
	elsewhere := 0
	for _, id := range ids[:min(10, n)] {
		for _, in := range c.insts {
			if id == "" || strings.HasPrefix(id, in.name+".") {
				continue
			}
			if r := get(in.url(), id); r.Status != 200 || r.Code != -32602 {
				fail("tasks/get %s straight to %s: %+v, want -32602", id, in.name, r)
			}
			elsewhere++
		}
	}
	fig.add("%d MCP tasks (slow_compute, 0.3 s) created through haproxy, by instance %v; each polled through haproxy to completed in %v: %d wrong; %d gets straight to another instance: -32602 (the routing by Mcp-Name is what finds them)",
		n, by, elapsed.Round(time.Millisecond), bad.Load(), elsewhere)
}
