module github.com/rpcedge/rpcedge/fleet/e2e

go 1.26.0

replace github.com/rpcedge/rpcedge => ../..

require github.com/rpcedge/rpcedge v0.0.0-00010101000000-000000000000
