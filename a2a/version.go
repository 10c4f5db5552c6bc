package a2a

import (
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Version is the A2A protocol generation whose shapes a request uses. It is
// stored in fastserver.Request.Version (as an int) by the endpoint's Check
// or Route.
type Version int

// The versions served.
const (
	// Version10 is A2A 1.0: camelCase members, enum strings such as
	// "ROLE_USER" and "TASK_STATE_COMPLETED", no "kind" tags, SendMessage
	// answered as {"task":…} or {"message":…}.
	Version10 Version = 1
	// Version03 is A2A 0.3: "kind"-tagged objects, lower-case roles and
	// states, message/send answered with the bare task or message.
	Version03 Version = 2
)

// String returns "1.0" or "0.3" (the A2A-Version header value), or "" for
// anything else.
func (v Version) String() string {
	switch v {
	case Version10:
		return "1.0"
	case Version03:
		return "0.3"
	}
	return ""
}

// VersionHeader is the request header that names the protocol version.
const VersionHeader = "A2A-Version"

var keyVersion = fastserver.NewHeaderKey(VersionHeader)

// CodeVersionNotSupported is A2A's VersionNotSupportedError.
const CodeVersionNotSupported = -32009

// checkVersion is Endpoint.Check (row 11): a present A2A-Version header
// must be "1.0" or "0.3" exactly, and sets the version; any other value,
// the empty one included, is refused. An absent header leaves the choice
// to the method's family in route. (fasthttp's Peek returns nil for an
// absent header and an empty, non-nil slice for an empty one.)
func checkVersion(r *fastserver.Request) *fastserver.Error {
	h := r.HeaderOf(keyVersion)
	switch {
	case h == nil:
		return nil
	case string(h) == "1.0":
		r.Version = int(Version10)
		return nil
	case string(h) == "0.3":
		r.Version = int(Version03)
		return nil
	}
	data := make([]byte, 0, len(versionData)+len(h)+16)
	data = append(data, versionData...)
	data = decode.AppendString(data, h)
	data = append(data, '}')
	return &fastserver.Error{
		Status:  400,
		Code:    CodeVersionNotSupported,
		Message: "A2A version not supported",
		Data:    data,
	}
}

const versionData = `{"supported":["1.0","0.3"],"requested":`
