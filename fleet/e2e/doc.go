// Package e2e is the fleet's proof on loopback: redis-server and haproxy
// from Debian packages (installed with apt-get when missing), three
// cmd/rpcedge instances behind haproxy with /healthz checks, and
// cmd/loadgen through haproxy. TestProof shows the fleet-wide rate limit
// within its stated bound, 1,000 tasks readable and cancelable through
// each instance, a kill -9 of an instance under load, and Redis killed
// under load; with FLEET_FIGURES=1 (fleet/run.sh) it also measures
// scale-out over 1, 2 and 3 instances and the p99 cost of the Redis-backed
// limiter against the local one. BenchmarkClients compares go-redis and
// rueidis on the lease script.
//
// It is a module of its own so that the main module's go test ./... does
// not start processes, and so that go-redis (measured here, not used) stays
// out of the main module.
package e2e
