// Package fuzz holds rpcedge's native Go fuzz targets. See README.md.
package fuzz
