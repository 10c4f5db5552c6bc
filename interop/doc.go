// Package interop holds tests that drive the rpcedge demo server
// (cmd/rpcedge, built from the parent module) with real third-party
// clients. It is a module of its own so that the clients never enter the
// main module's dependencies.
package interop
