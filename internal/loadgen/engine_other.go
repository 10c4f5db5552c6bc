//go:build !linux

package loadgen

const defaultEngine = "netconn"
