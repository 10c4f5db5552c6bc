// Package reliability holds rpcedge's abuse, fault and soak tests: it
// keeps serving, loses nothing, lets nothing through. It has no code of
// its own; everything is in its _test.go files, which start the demo
// server (internal/app) or a fastserver with test endpoints on loopback
// and attack it:
//
//   - slow_test.go: slow clients trickling headers or bodies (slowloris);
//   - conns_test.go: many idle keep-alive connections, the connection cap;
//   - bodies_test.go: oversized, chunked, compressed-bomb, deeply nested,
//     escape-heavy and invalid bodies, and the in-flight body budget;
//   - headers_test.go: oversized and hostile headers and origins;
//   - faults_test.go: handlers that panic or pass their deadline, and the
//     deadline a handler is given on a busy machine;
//   - shutdown_test.go: SIGTERM to cmd/rpcedge under load, and Shutdown
//     with an upload stalled mid-body;
//   - soak_test.go: mixed traffic at a fixed rate, memory and goroutines
//     flat;
//   - stall_test.go: a probe, in a process of its own, of how long the
//     machine holds processes off the CPU, so that latency checks are not
//     judged over windows a busy machine spoilt;
//   - stalled_test.go: hundreds of uploads stalled mid-body beside clients
//     that must still be served;
//   - framing_test.go: absent and unusual body framing (RFC 9112 §6),
//     the one-packet crash of a POST without a length among them;
//   - hostile_headers_test.go: repeated singleton fields, trailers,
//     forwarding lines, Content-Type edge cases, draining after an early
//     answer;
//   - amplify_test.go: many clients sending at once the bodies whose
//     decoded form costs most memory;
//   - zstd_test.go: bodies framed by the reference zstd CLI;
//   - tls_test.go: HTTPS, and the certificate reloaded on SIGHUP;
//   - stdio_test.go, a2astream_test.go: -stdio and open A2A streams at
//     SIGTERM and SIGINT;
//   - prometheus_test.go: promtool lints /metrics and a real Prometheus
//     scrapes it;
//   - helpers_test.go, race_*_test.go: fixtures; memory and latency are
//     logged, not judged, under -race.
//
// Every test binds 127.0.0.1 only, bounds every loop in count and time
// and sets its own short timeouts. The default run takes about two
// minutes on two cores (the soak alone 30 s); -short takes well under a
// minute. RPCEDGE_SOAK sets the soak's duration (RPCEDGE_SOAK=1h for the
// hour-long run the README quotes). The figures these tests measure are
// in the README's Reliability section.
//
// # Security
//
// The tests document the server's limits under attack: memory during an
// attack is bounded by a small multiple of the body ceiling, slow and
// idle clients are bounded by the read and idle timeouts and the
// connection cap, and handler faults are answered, logged and counted.
package reliability
