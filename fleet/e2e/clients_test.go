package e2e

import (
	"context"
	"strconv"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/rpcedge/rpcedge/internal/services"
)

// leaseScript is the shape of fleet's lease script (GCRA on Redis's
// clock), for measuring the clients on the call the limiter makes.
const leaseScript = `
local T, tau, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local grant = math.floor((now + tau - tat) / T)
if grant > want then grant = want end
if grant < 0 then grant = 0 end
tat = tat + grant * T
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', 1000)
return {grant, 0}
`

// BenchmarkClients measures go-redis v9 and rueidis on what the fleet
// sends: the lease script (EVALSHA) and a plain GET, serially and from
// 16 goroutines, with allocations. The README quotes a run.
func BenchmarkClients(b *testing.B) {
	r := services.StartRedis(b)
	ctx := context.Background()
	args := []string{"10", "1000000000", "1"}

	gr := goredis.NewClient(&goredis.Options{Addr: r.Addr(), MaxRetries: -1, DialerRetries: 1, PoolSize: 16})
	defer gr.Close()
	grScript := goredis.NewScript(leaseScript)
	ru, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{r.Addr()}, DisableCache: true, DisableRetry: true, ForceSingleClient: true, PipelineMultiplex: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer ru.Close()
	ruScript := rueidis.NewLuaScript(leaseScript)
	gr.Set(ctx, "bench:get", "value", 0)

	clients := []struct {
		name  string
		lease func(i int) error
		get   func() error
	}{
		{"go-redis", func(i int) error {
			return grScript.Run(ctx, gr, []string{"bench:k" + strconv.Itoa(i&63)}, args[0], args[1], args[2]).Err()
		}, func() error { return gr.Get(ctx, "bench:get").Err() }},
		{"rueidis", func(i int) error {
			return ruScript.Exec(ctx, ru, []string{"bench:k" + strconv.Itoa(i&63)}, args).Error()
		}, func() error { return ru.Do(ctx, ru.B().Get().Key("bench:get").Build()).Error() }},
	}
	for _, c := range clients {
		b.Run(c.name+"/lease/serial", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := c.lease(i); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/lease/parallel16", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8) // 16 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					if err := c.lease(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(c.name+"/get/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.get(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
