package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// stallClient answers every call after stall, whatever the call's
// context says: rueidis closing a connection whose handshake failed.
type stallClient struct {
	rueidis.Client
	stall time.Duration
}

func (c stallClient) Do(context.Context, rueidis.Completed) rueidis.RedisResult {
	time.Sleep(c.stall)
	return rueidis.NewErrorResult(errors.New("late"))
}

func (c stallClient) DoMulti(_ context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	time.Sleep(c.stall)
	return make([]rueidis.RedisResult, len(multi))
}

// TestBoundedClient: a call that rueidis holds past its context returns
// at the context's end with its error, single and pipelined, and a call
// that answers in time is passed through.
func TestBoundedClient(t *testing.T) {
	// A client that never dials: only its command builder is used.
	real, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:1"}, ForceSingleClient: true})
	if real == nil {
		t.Fatal(err)
	}
	defer real.Close()
	c := boundedClient{stallClient{Client: real, stall: 2 * time.Second}}
	for _, timeout := range []time.Duration{20 * time.Millisecond, 80 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		start := time.Now()
		err := c.Do(ctx, c.B().Ping().Build()).Error()
		if took := time.Since(start); took > timeout+300*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Do with a %v context on a stalled client: %v after %v", timeout, err, took)
		}
		start = time.Now()
		rs := c.DoMulti(ctx, c.B().Ping().Build(), c.B().Ping().Build())
		if took := time.Since(start); took > timeout+300*time.Millisecond || len(rs) != 2 || !errors.Is(rs[0].Error(), context.DeadlineExceeded) || !errors.Is(rs[1].Error(), context.DeadlineExceeded) {
			t.Errorf("DoMulti with a %v context on a stalled client: %d results after %v", timeout, len(rs), took)
		}
		cancel()
	}
	// In time: the client's own answer.
	quick := boundedClient{stallClient{Client: real, stall: time.Millisecond}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := quick.Do(ctx, quick.B().Ping().Build()).Error(); err == nil || err.Error() != "late" {
		t.Errorf("Do in time: %v, want the client's own error", err)
	}
	if rs := quick.DoMulti(ctx, quick.B().Ping().Build()); len(rs) != 1 || rs[0].Error() != nil {
		t.Errorf("DoMulti in time: %+v", rs)
	}
}

// TestFleetClientBounded: the fleet's calls go through boundedClient.
func TestFleetClientBounded(t *testing.T) {
	f, err := New(Options{URL: "redis://127.0.0.1:1/0", Instance: "x", Logger: quiet(), Timeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.client.(boundedClient); !ok {
		t.Fatalf("the fleet's client is a %T, want boundedClient", f.client)
	}
}
