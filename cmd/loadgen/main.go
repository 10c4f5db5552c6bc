// Command loadgen is a JSON-RPC 2.0 load generator that checks every
// answer against the rpcedge wire contract (shared/spec/contract.md).
//
// It drives an MCP or A2A endpoint over HTTP/1.1 keep-alive connections
// without pipelining, in a closed loop (each connection sends its next
// request when the answer is in) or an open loop (-rate: a fixed timetable,
// latency measured from each request's intended send time, so stalls are
// not hidden by coordinated omission). Every answer is checked: status,
// headers, JSON-RPC envelope, id, error code, and for echo calls the text.
//
//	loadgen -url http://127.0.0.1:8080/mcp -c 64 -d 10s
//	loadgen -rate 2000 -c 4 -d 30s -mix call=90,notify=5,unknown=2,badparams=1,parse=1,batch=1
//	loadgen -n 100000 -json > report.json
//
// Exit status: 0 when every answer was right, 1 when any was wrong, an
// open loop left slots unsent (the server stalled, or -c is too low for
// -rate), the run was given up (no answer for -give-up while requests
// failed) or the target could not be reached; 2 on bad flags.
//
// The logic lives in internal/loadgen; this file only parses flags and
// wires.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/rpcedge/rpcedge/internal/loadgen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() {
		// After the first Ctrl-C the run stops and reports; a second one
		// kills the process the usual way.
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], env{
		stdout:   os.Stdout,
		stderr:   os.Stderr,
		terminal: term.IsTerminal(int(os.Stderr.Fd())),
		self:     startSelf,
	}))
}

// env is what run needs from the process, so tests can supply their own.
type env struct {
	stdout, stderr io.Writer
	terminal       bool               // stderr is a terminal: show the live line
	self           loadgen.SelfServer // nil: -self is not available
	shared         bool               // a server runs in this process (tests)
}

// headerFlags collects repeated -header flags.
type headerFlags []loadgen.Header

func (h *headerFlags) String() string {
	var s []string
	for _, x := range *h {
		s = append(s, x.String())
	}
	return strings.Join(s, ", ")
}

func (h *headerFlags) Set(v string) error {
	x, err := loadgen.ParseHeader(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "loadgen: "))
	}
	*h = append(*h, x)
	return nil
}

const usageHead = `usage: loadgen [flags]

loadgen sends JSON-RPC 2.0 requests to an rpcedge endpoint and checks every
answer against the wire contract. Closed loop by default; -rate makes it an
open loop whose latency is measured from each request's intended send time.

Request shapes for -mix (each with a fresh id, calls with a fresh text):
  call       tools/call of tool echo       200, result echoing the text, same id
  notify     notifications/cancelled       202, empty body, no Content-Type
  unknown    a method that does not exist  404, -32601, same id
  badparams  tools/call, params an array   200, -32602, same id
  parse      a body that is not JSON       400, -32700, id null
  batch      a batch of one call           400, -32600, id null

Exit status: 0 every answer right, 1 some answer wrong, open-loop slots
unsent, the run given up (-give-up) or the target unreachable; 2 bad flags.

Flags:
`

func run(ctx context.Context, args []string, e env) int {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprint(e.stderr, usageHead)
		fs.PrintDefaults()
	}
	var (
		target     = fs.String("url", loadgen.DefaultURL, "target `URL` (http:// only)")
		conns      = fs.Int("c", loadgen.DefaultConnections, "number of keep-alive `connections`, one request in flight on each")
		duration   = fs.Duration("d", 0, "run for this `duration` (default 10s, or no time limit when -n is set)")
		count      = fs.Int64("n", 0, "stop after this many `requests` (default: no count limit)")
		rate       = fs.Float64("rate", 0, "open loop at this many `requests/s` on a fixed schedule (default 0: closed loop)")
		mixFlag    = fs.String("mix", loadgen.DefaultMix.String(), "request shapes and their `weights`, e.g. call=90,notify=5,unknown=2,badparams=1,parse=1,batch=1")
		textSize   = fs.Int("text-size", 0, "make every call's text exactly this many `bytes` (JSON string contents): the counter and a variant, then plain words; "+strconv.Itoa(loadgen.SmallTextSize)+" gives the small fixture's shape and size (default 0: short texts, 4 to about 60 bytes)")
		bodyFile   = fs.String("body", "", "send this `file`'s JSON-RPC request instead of -mix; its id is rewritten per request and the answer checked as a call's (200, result, same id)")
		gzipBody   = fs.Bool("gzip", false, "with -body: send it gzip-compressed (Content-Encoding: gzip); the parts around the id are compressed once, so a request costs a CRC-32 of the body, not a compression")
		events     = fs.Int("events", 0, "with -body: every answer must stream this many `notifications` (text/event-stream) before the response; each is checked and counted")
		a2aStream  = fs.Bool("a2a", false, "with -body and -events: the answers are A2A streams (SendStreamingMessage, SubscribeToTask) of exactly -events events, each a response to the request with a stream response checked for its kind and order (task first, a final status last)")
		mcpVersion = fs.String("mcp-version", "", "send the MCP headers of this `version` ("+strings.Join(loadgen.MCPVersions, ", ")+"); 2026-07-28 also adds params._meta (default: none)")
		timeout    = fs.Duration("timeout", loadgen.DefaultTimeout, "per-request and per-connect `timeout`")
		giveUp     = fs.Duration("give-up", loadgen.DefaultGiveUp, "end the run, exit status 1, when for this `duration` no answer came while requests failed (refused connections, timeouts): the server is down or hangs")
		drain      = fs.Duration("drain", loadgen.DefaultDrain, "after -d, wait at most this `duration` for the answers in flight (and an open loop's slots still due), then count those unanswered as failed; at most -timeout")
		jsonOut    = fs.Bool("json", false, "print the final report as one JSON object")
		histFile   = fs.String("hist", "", "write the latency distribution to this .hgrm `file` (milliseconds; corrected in an open loop)")
		self       = fs.Bool("self", false, "start an in-process rpcedge server on a loopback port and run against it (the path of -url is kept)")
		engineName = fs.String("engine", "", "I/O `engine`: "+strings.Join(loadgen.Engines(), " or ")+" (default "+loadgen.Engines()[0]+")")
		examples   = fs.Int("examples", loadgen.DefaultMaxExamples, "how many wrong answers to show verbatim")
		spin       = fs.Duration("spin", loadgen.DefaultSpin, "epoll engine, closed loop: how long a `wait` with nothing ready polls before it sleeps, while answers come sooner than that (0: never); a client asleep between answers makes the server pay its wakeups over loopback")
		headers    headerFlags
	)
	fs.Var(&headers, "header", "extra request header `Name:Value` (repeatable; not the framing headers, nor Accept-Encoding: answers are checked as sent, never decompressed)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	bad := func(err error) int {
		fmt.Fprintln(e.stderr, err)
		fmt.Fprintln(e.stderr, "run loadgen -h for help")
		return 2
	}
	if fs.NArg() > 0 {
		return bad(fmt.Errorf("loadgen: unexpected argument %q", fs.Arg(0)))
	}
	mix, err := loadgen.ParseMix(*mixFlag)
	if err != nil {
		return bad(err)
	}
	if *examples == 0 {
		*examples = -1 // the Config's "none"
	}
	cfg := loadgen.Config{
		URL:         *target,
		Connections: *conns,
		Duration:    *duration,
		Requests:    *count,
		Rate:        *rate,
		Mix:         mix,
		TextSize:    *textSize,
		Headers:     headers,
		MCPVersion:  *mcpVersion,
		Events:      *events,
		A2A:         *a2aStream,
		BodyGzip:    *gzipBody,
		Timeout:     *timeout,
		Drain:       *drain,
		GiveUp:      *giveUp,
		MaxExamples: *examples,
		Engine:      *engineName,
		Spin:        *spin,
		// An in-process server needs the CPU the engine would hold.
		SharedProcess: e.shared || *self,
	}
	if *conns <= 0 {
		return bad(fmt.Errorf("loadgen: -c %d: want at least 1 connection", *conns))
	}
	if *timeout <= 0 {
		return bad(fmt.Errorf("loadgen: -timeout %v: want a positive duration", *timeout))
	}
	if *giveUp <= 0 {
		return bad(fmt.Errorf("loadgen: -give-up %v: want a positive duration", *giveUp))
	}
	if *drain <= 0 {
		return bad(fmt.Errorf("loadgen: -drain %v: want a positive duration", *drain))
	}
	if *duration < 0 || (*duration == 0 && isSet(fs, "d")) {
		return bad(fmt.Errorf("loadgen: -d %v: want a positive duration", *duration))
	}
	if *bodyFile != "" {
		b, err := readBody(*bodyFile)
		if err != nil {
			return bad(err)
		}
		cfg.Body, cfg.BodyName = b, *bodyFile
		if isSet(fs, "mix") {
			return bad(errors.New("loadgen: -body and -mix cannot be used together"))
		}
	}
	if err := cfg.Validate(); err != nil {
		return bad(err)
	}

	var hist *os.File
	if *histFile != "" {
		if hist, err = os.Create(*histFile); err != nil {
			return bad(fmt.Errorf("loadgen: -hist: %v", err))
		}
		defer hist.Close()
	}
	if *self {
		if e.self == nil {
			fmt.Fprintln(e.stderr, "loadgen: -self is not available: this build has no in-process server")
			return 2
		}
		base, stopServer, err := e.self()
		if err != nil {
			fmt.Fprintln(e.stderr, "loadgen: -self: starting the server:", err)
			return 1
		}
		defer stopServer()
		u, _ := url.Parse(cfg.URL) // valid: Validate passed
		cfg.URL = strings.TrimRight(base, "/") + u.RequestURI()
	}

	var live io.Writer
	if e.terminal {
		live = e.stderr
	}
	rep, err := loadgen.Run(ctx, cfg, live)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return 1
	}
	if rep.Aborted != "" {
		fmt.Fprintln(e.stderr, rep.Aborted)
	}
	if *jsonOut {
		err = rep.WriteJSON(e.stdout)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "loadgen: writing the report:", err)
		return 1
	}
	if hist != nil {
		if err := rep.WriteHistogram(hist); err != nil {
			fmt.Fprintln(e.stderr, "loadgen: -hist:", err)
			return 1
		}
		if err := hist.Close(); err != nil {
			fmt.Fprintln(e.stderr, "loadgen: -hist:", err)
			return 1
		}
	}
	return rep.ExitCode
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func readBody(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("loadgen: -body: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, loadgen.MaxBodySize+1))
	if err != nil {
		return nil, fmt.Errorf("loadgen: -body: %v", err)
	}
	if len(b) > loadgen.MaxBodySize {
		return nil, fmt.Errorf("loadgen: -body %s: larger than %d bytes", name, loadgen.MaxBodySize)
	}
	return b, nil
}
