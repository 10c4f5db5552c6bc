package fleet

import (
	"context"

	"github.com/redis/rueidis"
)

// boundedClient is the fleet's rueidis client with every Do and DoMulti
// (and so every script's Exec and ExecMulti) bounded by its context.
// rueidis honours a call's context on a connection it has, but not all
// the way through a new one: when Redis accepts the connection and then
// says nothing (a stopped or overloaded process), the handshake times out
// with the context and rueidis closes the connection with a PING it may
// wait a second for (pipe.Close's escape timer, rueidis v1.0.80), whatever
// the context said. A request (a Take, a task call) must cost at most
// about Options.Timeout, so the call runs beside the caller, which leaves
// when the context ends; the call finishes on its own, its result
// dropped, as a call abandoned at its deadline is in rueidis too.
//
// The goroutine costs about a microsecond a call; calls are made per
// lease and per task operation, not per request.
type boundedClient struct{ rueidis.Client }

func (c boundedClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	done := ctx.Done()
	if done == nil {
		return c.Client.Do(ctx, cmd)
	}
	ch := make(chan rueidis.RedisResult, 1)
	go func() { ch <- c.Client.Do(ctx, cmd) }()
	select {
	case r := <-ch:
		return r
	case <-done:
		return rueidis.NewErrorResult(ctx.Err())
	}
}

func (c boundedClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	done := ctx.Done()
	if done == nil {
		return c.Client.DoMulti(ctx, multi...)
	}
	ch := make(chan []rueidis.RedisResult, 1)
	go func() { ch <- c.Client.DoMulti(ctx, multi...) }()
	select {
	case r := <-ch:
		return r
	case <-done:
		out := make([]rueidis.RedisResult, len(multi))
		for i := range out {
			out[i] = rueidis.NewErrorResult(ctx.Err())
		}
		return out
	}
}
