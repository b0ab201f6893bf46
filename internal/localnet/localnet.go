// Package localnet holds the checks that keep a server listening on loopback out of reach of
// the web pages a user has open (relay.md §1 "Local mode trusts the machine, not the
// browser"): a browser lets any page send requests to 127.0.0.1, and DNS rebinding lets a
// foreign name resolve to it, so being bound to loopback proves nothing about who is asking.
// Two headers tell: `Host` (a rebinding page carries its own name) and `Origin` (a page's
// cross-site request carries its site). Both the relay and `agentwire dispatch mcp --http`
// use these checks.
package localnet

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// HostIsLoopback reports whether a `Host` header value (host with an optional port) names
// this machine's loopback: `localhost`, an address in 127.0.0.0/8 or `[::1]`. Any port is
// accepted. Every other name, including a name that resolves to loopback (DNS rebinding),
// subdomains of localhost and an empty Host, is not.
func HostIsLoopback(host string) bool {
	if host == "" {
		return false
	}
	h := host
	if sh, port, err := net.SplitHostPort(host); err == nil {
		if !validPort(port) {
			return false
		}
		h = sh
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		h = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		// A bare IPv6 address is not a valid Host; "name:" with an empty port neither.
		return false
	}
	return nameIsLoopback(h)
}

// OriginIsLoopback reports whether an `Origin` header value is an http or https origin whose
// host is loopback (as [HostIsLoopback]): `http://localhost:5173`, `https://127.0.0.1`,
// `http://[::1]:8080`. The opaque origin `null`, other schemes and values with a path, query,
// fragment or user info are not.
func OriginIsLoopback(origin string) bool {
	host, ok := originHost(origin)
	return ok && HostIsLoopback(host)
}

// SameOrigin reports whether origin names the same host and port as the request's Host
// header (a page served by this server calling it back). Scheme is not compared: behind a
// TLS-terminating proxy the server cannot see the scheme the browser used.
func SameOrigin(origin, requestHost string) bool {
	host, ok := originHost(origin)
	if !ok || requestHost == "" {
		return false
	}
	scheme := origin[:strings.Index(origin, ":")]
	return strings.EqualFold(withDefaultPort(host, scheme), withDefaultPort(requestHost, scheme))
}

// NormalizeOrigin returns an origin in the form browsers send (lowercase scheme and host, no
// default port, no trailing slash), or ok=false when s is not an http(s) origin. It is how an
// `--allow-origin` value is compared with a request's Origin.
func NormalizeOrigin(s string) (string, bool) {
	host, ok := originHost(s)
	if !ok {
		return "", false
	}
	scheme := strings.ToLower(s[:strings.Index(s, ":")])
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
	}
	return scheme + "://" + host, true
}

// originHost returns the host[:port] of an http(s) origin with nothing else in it.
func originHost(origin string) (string, bool) {
	scheme, rest, ok := strings.Cut(origin, "://")
	if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
		return "", false
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.ContainsAny(rest, "/?#@\\ \t") {
		return "", false
	}
	u, err := url.Parse(strings.ToLower(scheme) + "://" + rest)
	if err != nil || u.Host != rest || u.Hostname() == "" {
		return "", false
	}
	if p := u.Port(); p != "" && !validPort(p) {
		return "", false
	}
	return rest, true
}

func withDefaultPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if strings.EqualFold(scheme, "https") {
		return host + ":443"
	}
	return host + ":80"
}

func nameIsLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	if i := strings.IndexByte(h, '%'); i >= 0 {
		return false // zoned addresses are not what a browser sends for loopback
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	if a.Is4() {
		return a.As4()[0] == 127
	}
	return a == netip.IPv6Loopback()
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}
