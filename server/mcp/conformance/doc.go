// Package conformance holds the tests that hold cairn's MCP endpoint to
// the protocol with real clients against a real server: the official
// conformance suite, the official TypeScript SDK's client and mcp-go's,
// and raw request sequences of both protocol eras. The Node.js programs
// and the Node.js they run on are in testdata, installed by `make deps`.
package conformance
