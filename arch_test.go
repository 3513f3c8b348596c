package cairn_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/cairn-dev/cairn"

// The layers of the server (docs/architecture.md). Paths are relative to the
// module; a layer holds its sub-packages too.
var (
	// adapters speak to one outside system each, behind the service's ports.
	adapters = []string{"/server/postgres", "/server/s3", "/server/docker", "/server/kube"}
	// frontDoors speak to clients; each calls the service, never an adapter.
	frontDoors = []string{"/server/rest", "/server/mcp", "/server/events", "/server/sshui", "/server/auth"}
	// core is the service layer and the maintainer: it defines the ports the
	// adapters fill and knows no front door.
	core = []string{"/server/service", "/server/reconcile"}
	// shared are the small pieces every front door may use: the route
	// registry and the answer envelope.
	shared = []string{"/server/route", "/server/envelope"}
	// operatorSide speaks to a server over the wire only.
	operatorSide = []string{"/client", "/tui", "/ptyshell", "/wsexec"}
	// sidecarCompression is the one library the sidecar may import besides
	// the standard library: its inflate and deflate are faster than Go's.
	sidecarCompression = "github.com/klauspost/compress"
)

// TestDependencyRules enforces the import rules between the layers on the
// non-test code of every package.
func TestDependencyRules(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-tags", "kube", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	checked := map[string]bool{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			if broken := importRule(pkg, imp); broken != "" {
				t.Errorf("%s imports %s: %s", fields[0], imp, broken)
			}
		}
		checked[layerOf(pkg)] = true
	}
	for _, layer := range []string{"root", "sidecar", "adapter", "front door", "core", "shared", "operator side"} {
		require.True(t, checked[layer], "no package of the %s layer was checked: the layer table is stale", layer)
	}
}

// layerOf names the layer of a module-relative package path, "" for one
// with no rule (the wiring in /server, the commands, the test stacks).
func layerOf(pkg string) string {
	switch {
	case pkg == "":
		return "root"
	case hasPrefix(pkg, "/sidecar"):
		return "sidecar"
	case hasPrefix(pkg, adapters...):
		return "adapter"
	case hasPrefix(pkg, frontDoors...):
		return "front door"
	case hasPrefix(pkg, core...):
		return "core"
	case hasPrefix(pkg, shared...):
		return "shared"
	case hasPrefix(pkg, operatorSide...):
		return "operator side"
	}
	return ""
}

// importRule returns why pkg may not import imp, or "" when it may.
func importRule(pkg, imp string) string {
	layer := layerOf(pkg)
	switch {
	case layer == "root" && !isStdlib(imp):
		return "the domain imports only the standard library"
	case layer == "sidecar" && !isStdlib(imp) && !hasPrefix(imp, sidecarCompression):
		return "the sidecar imports only the standard library and klauspost/compress (pure Go, so the binary stays static)"
	case layer == "root" || layer == "sidecar":
		return ""
	}
	if !strings.HasPrefix(imp, module) {
		return ""
	}
	rel := strings.TrimPrefix(imp, module)
	if hasPrefix(rel, pkg) || hasPrefix(pkg, rel) {
		return "" // a package and its own sub-packages
	}
	switch other := layerOf(rel); {
	case layer == "adapter" && (other == "adapter" || other == "front door" || other == "shared"):
		return "an adapter knows only the service's ports, never another adapter or a front door"
	case layer == "front door" && (other == "adapter" || other == "front door"):
		return "a front door calls the service, never an adapter or another front door"
	case layer == "core" && (other == "adapter" || other == "front door" || other == "shared"):
		return "the service layer knows no adapter and no front door"
	case layer == "shared" && other != "root" && other != "shared":
		return "the route registry and the envelope depend on the domain alone"
	case layer == "operator side" && hasPrefix(rel, "/server"):
		return "the operator side speaks to a server over the wire only"
	}
	return ""
}

func hasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}

// isStdlib reports a standard-library import path: its first element has no
// dot.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// TestDependencyRulesCatchABreak feeds the rule imports each layer must not
// have, so a rule that stopped firing fails here.
func TestDependencyRulesCatchABreak(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ pkg, imp string }{
		{"", "github.com/google/uuid"},
		{"", "github.com/klauspost/compress/gzip"},
		{"/sidecar", module + "/server/service"},
		{"/sidecar", "github.com/google/uuid"},
		{"/sidecar", "github.com/klauspost/compressor"},
		{"/server/kube", module + "/server/docker"},
		{"/server/docker", module + "/server/rest"},
		{"/server/events", module + "/server/rest"},
		{"/server/auth", module + "/server/rest"},
		{"/server/sshui", module + "/server/postgres"},
		{"/server/service", module + "/server/mcp"},
		{"/server/envelope", module + "/server/service"},
		{"/tui/screens/files", module + "/server/route"},
		{"/wsexec", module + "/server/service"},
	} {
		require.NotEmpty(t, importRule(c.pkg, c.imp), "%s importing %s must break a rule", c.pkg, c.imp)
	}
	require.Empty(t, importRule("/sidecar", "github.com/klauspost/compress/flate"))
	require.Empty(t, importRule("/server/rest", module+"/server/envelope"))
	require.Empty(t, importRule("/server/kube", module+"/sidecar"))
	require.Empty(t, importRule("/server", module+"/server/docker"), "the wiring joins every layer")
}
