package fastserver

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// ServeLines serves ep over a newline-delimited stream, MCP's stdio
// transport (contract §6): it reads one message per line from r and
// writes one answer per line to w, in order. Notifications get no answer;
// a line longer than cfg.MaxBodyBytes is answered -32600 and skipped
// without losing the stream's place; a line that is not valid JSON is
// answered -32700 and the next line is read normally. There are no
// headers: ep.Check sees none. Logs go to cfg.Logger only, never to w.
//
// ServeLines returns nil when r ends, ctx's error when ctx is done
// (checked between lines), and otherwise the first read or write error.
// Calls are served one at a time.
func ServeLines(ctx context.Context, ep *Endpoint, cfg Config, r io.Reader, w io.Writer) error {
	if ep == nil || ep.Route == nil {
		return errors.New("fastserver: ServeLines needs an endpoint with a Route")
	}
	if ep.Err != nil {
		return ep.Err
	}
	s, err := New(cfg, ep)
	if err != nil {
		return err
	}
	e := s.endpoints[ep.Path]
	f, err := decode.NewFramer(r, decode.Options{MaxBytes: s.cfg.MaxBodyBytes, MaxDepth: s.cfg.MaxDepth, IDs: ep.IDs})
	if err != nil {
		return err
	}
	defer s.running.stop()
	bw := bufio.NewWriter(w)
	c := s.newCall(ep.IDs)
	var h fields // no headers on a stream
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := f.Next(&c.msg)
		if err == io.EOF {
			return bw.Flush()
		}
		var label string
		switch de := err.(type) {
		case nil:
			status, _ := s.dispatch(c, e, &h, &label)
			if status == fasthttp.StatusAccepted {
				continue
			}
		case *decode.Error:
			c.error(de.HTTPStatus(), c.msg.AnswerID(), de.Code, de.Reason, nil)
		default:
			bw.Flush()
			return err
		}
		c.out = append(c.out, '\n')
		if _, err := bw.Write(c.out); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
}
