package auth

import (
	"crypto/subtle"
	"net/netip"
)

var origCompare = subtle.ConstantTimeCompare

func mustAddrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
