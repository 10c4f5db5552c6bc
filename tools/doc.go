// Package tools pins the development tools .ci/run uses (staticcheck), in
// a module of their own so that users of rpcedge never download them:
//
//	go tool -modfile=tools/go.mod staticcheck ./...
package tools
