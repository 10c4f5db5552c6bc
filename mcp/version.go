package mcp

import "github.com/rpcedge/rpcedge/fastserver"

// Version is an MCP protocol version served by this package. The values
// are ordered by date, so v < Version20260728 means "a version before the
// stateless revision" (one with an initialize handshake).
type Version uint8

// The protocol versions served.
const (
	// Version20250326 is 2025-03-26, the first Streamable HTTP revision. It
	// is also the version of a request without an MCP-Protocol-Version
	// header (the header did not exist before 2025-06-18). It is the zero
	// Version.
	Version20250326 Version = iota
	// Version20250618 is 2025-06-18.
	Version20250618
	// Version20251125 is 2025-11-25, the last revision with an initialize
	// handshake, and the version initialize offers when the client asks
	// for one this package does not negotiate.
	Version20251125
	// Version20260728 is 2026-07-28: stateless, every request carrying
	// its version, identity and capabilities in params._meta.
	Version20260728

	numVersions = iota
)

// versionNames holds the wire form of each Version.
var versionNames = [numVersions]string{
	Version20250326: "2025-03-26",
	Version20250618: "2025-06-18",
	Version20251125: "2025-11-25",
	Version20260728: "2026-07-28",
}

// String returns the version as it appears on the wire, such as
// "2026-07-28".
func (v Version) String() string {
	if v >= numVersions {
		return "unknown"
	}
	return versionNames[v]
}

// Stateless reports whether v is a version without an initialize
// handshake, whose requests carry their metadata in params._meta and
// whose results carry resultType.
func (v Version) Stateless() bool { return v >= Version20260728 }

// Versions returns the served versions, newest first: the order of the
// supported list in server/discover and in the -32022 error.
func Versions() []Version {
	return []Version{Version20260728, Version20251125, Version20250618, Version20250326}
}

// ParseVersion returns the Version named by s, compared exactly
// (case-sensitive, no whitespace), and whether it is served.
func ParseVersion[S ~string | ~[]byte](s S) (Version, bool) {
	for v, name := range versionNames {
		if string(s) == name {
			return Version(v), true
		}
	}
	return 0, false
}

// RequestVersion returns the protocol version in use for r, as the
// endpoint's Check decided it (stored in r.Version). It is meaningful only
// for Requests that went through the Check of an Endpoint built by this
// package; otherwise it reports Version20250326.
func RequestVersion(r *fastserver.Request) Version {
	if r.Version < 0 || r.Version >= numVersions {
		return Version20250326
	}
	return Version(r.Version)
}
