package loadgen

// SelfServer starts an in-process rpcedge server listening on a loopback
// port and returns its base URL ("http://127.0.0.1:PORT", no path) and a
// function that stops it, waiting for it to finish. cmd/loadgen -self
// calls one and runs against baseURL joined with the path of -url
// (default /mcp).
type SelfServer func() (baseURL string, stop func(), err error)
