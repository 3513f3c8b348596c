package cairn_test

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// section is the sign of a numbered-section citation, spelled as an escape
// so that this file does not cite anything itself.
const section = "\u00a7"

// trackedFiles lists the files git tracks, relative to the module root.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	require.NoError(t, err, "git ls-files")
	var files []string
	for f := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		files = append(files, f)
	}
	require.NotEmpty(t, files)
	return files
}

// markdownFiles are the tracked *.md files.
func markdownFiles(files []string) []string {
	var md []string
	for _, f := range files {
		if strings.HasSuffix(f, ".md") {
			md = append(md, f)
		}
	}
	return md
}

// TestMarkdownLinksResolve: every relative link of every tracked Markdown
// file names a tracked file or a directory holding one, and a #fragment
// names a heading of the Markdown file it points into (GitHub's anchors).
func TestMarkdownLinksResolve(t *testing.T) {
	t.Parallel()
	files := trackedFiles(t)
	exists := map[string]bool{}
	for _, f := range files {
		exists[f] = true
		for dir := path.Dir(f); dir != "."; dir = path.Dir(dir) {
			exists[dir] = true
		}
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(md string) map[string]bool {
		if a, ok := anchors[md]; ok {
			return a
		}
		b, err := os.ReadFile(md)
		require.NoError(t, err)
		anchors[md] = headingAnchors(string(b))
		return anchors[md]
	}

	var broken []string
	for _, md := range markdownFiles(files) {
		b, err := os.ReadFile(md)
		require.NoError(t, err)
		for _, l := range relativeLinks(string(b)) {
			target, fragment, _ := strings.Cut(l.target, "#")
			p, err := url.PathUnescape(target)
			if err != nil {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %v", md, l.line, l.target, err))
				continue
			}
			resolved := md
			if p != "" {
				resolved = path.Clean(path.Join(path.Dir(md), p))
			}
			switch {
			case !exists[resolved]:
				broken = append(broken, fmt.Sprintf("%s:%d: %s: no tracked file or directory %s", md, l.line, l.target, resolved))
			case fragment != "" && strings.HasSuffix(resolved, ".md") && !anchorsOf(resolved)[fragment]:
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s has no heading #%s", md, l.line, l.target, resolved, fragment))
			}
		}
	}
	require.Zero(t, len(broken), "broken links:\n%s", strings.Join(broken, "\n"))
}

// link is one link target of a Markdown file and the line it is on.
type link struct {
	target string
	line   int
}

var (
	inlineLink    = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	referenceLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	codeSpan      = regexp.MustCompile("`+[^`]*`+")
	hasScheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// relativeLinks returns the inline and reference links of a Markdown
// document outside code, except those to another site (a scheme, or //).
func relativeLinks(doc string) []link {
	var links []link
	for _, l := range proseLines(doc) {
		line := codeSpan.ReplaceAllString(l.text, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := referenceLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, tg := range targets {
			if hasScheme.MatchString(tg) || strings.HasPrefix(tg, "//") {
				continue
			}
			links = append(links, link{target: tg, line: l.n})
		}
	}
	return links
}

// numberedLine is one line of a document and its 1-based number.
type numberedLine struct {
	n    int
	text string
}

// proseLines returns the lines outside fenced code blocks, in order.
func proseLines(doc string) []numberedLine {
	var lines []numberedLine
	fence := ""
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "" {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			lines = append(lines, numberedLine{n: i + 1, text: line})
		}
	}
	return lines
}

var (
	atxHeading   = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	markdownLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// headingAnchors returns the anchors GitHub gives the ATX headings of a
// Markdown document: the heading's text, lower-cased, without punctuation
// but '-' and '_', spaces made '-'; a repeated anchor gets -1, -2, ….
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(doc) {
		m := atxHeading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		slug := slugify(m[1])
		if k := seen[slug]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

func slugify(heading string) string {
	text := markdownLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlugify(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"Shell v2: cairn.ptyshell.v2":    "shell-v2-cairnptyshellv2",
		"The local stack: `cairn dev`":   "the-local-stack-cairn-dev",
		"Ports: the interfaces, again":   "ports-the-interfaces-again",
		"[docs/api.md](docs/api.md) — x": "docsapimd--x",
		"snake_case and CAPS":            "snake_case-and-caps",
	} {
		require.Equal(t, want, slugify(heading), heading)
	}
	require.Equal(t, map[string]bool{"keys": true, "keys-1": true, "other": true},
		headingAnchors("# Keys\n```\n# not a heading\n```\n## Keys\n### Other #\n"))
}

// designDocs are the names of design documents the project was built from,
// which are not part of it. They are spelled from their stems so that this
// file does not name them itself.
func designDocs() []string {
	var names []string
	for _, stem := range []string{"api", "ptyshell", "tui", "k8s", "style"} {
		names = append(names, strings.ToUpper(stem)+".md")
	}
	return append(names, strings.ToUpper("architecture")+".md", strings.ToUpper("architecture"))
}

// TestNoCitationOfMissingDocuments: a line that cites a numbered section
// names a tracked Markdown file, and no line names one of the design
// documents unless the repository tracks a file of that name.
func TestNoCitationOfMissingDocuments(t *testing.T) {
	t.Parallel()
	files := trackedFiles(t)
	trackedNames := map[string]bool{}
	for _, f := range files {
		trackedNames[path.Base(f)] = true
	}
	md := markdownFiles(files)
	var pattern []string
	for _, name := range designDocs() {
		if !trackedNames[name] {
			pattern = append(pattern, regexp.QuoteMeta(name))
		}
	}
	var missing *regexp.Regexp
	if len(pattern) > 0 {
		missing = regexp.MustCompile(`\b(` + strings.Join(pattern, "|") + `)\b`)
	}

	var bad []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			sectionWithoutDoc := strings.Contains(line, section) && !namesAny(line, md)
			absent := ""
			if missing != nil {
				absent = missing.FindString(line)
			}
			if sectionWithoutDoc || absent != "" {
				bad = append(bad, fmt.Sprintf("%s:%d: %s", f, i+1, strings.TrimSpace(line)))
			}
		}
	}
	require.Zero(t, len(bad), "lines that cite a document the repository does not hold "+
		"(a section sign without a tracked *.md file, or a design document's name):\n%s", strings.Join(bad, "\n"))
}

// namesAny reports whether line names one of the Markdown files, by path
// or by base name.
func namesAny(line string, md []string) bool {
	return slices.ContainsFunc(md, func(f string) bool {
		return strings.Contains(line, f) || strings.Contains(line, path.Base(f))
	})
}

// TestHelpCitesNoSection: the --help of every cairn command is free of
// section citations: a user has no design document to look them up in.
func TestHelpCitesNoSection(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "cairn")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/cairn").CombinedOutput()
	require.NoError(t, err, "%s", out)

	var bad []string
	queue := [][]string{nil}
	for len(queue) > 0 {
		cmd := queue[0]
		queue = queue[1:]
		out, err := exec.Command(bin, append(slices.Clone(cmd), "--help")...).CombinedOutput()
		require.NoError(t, err, "cairn %s --help: %s", strings.Join(cmd, " "), out)
		help := string(out)
		if strings.Contains(help, section) {
			bad = append(bad, "cairn "+strings.Join(cmd, " "))
		}
		for _, sub := range subcommands(help) {
			queue = append(queue, append(slices.Clone(cmd), sub))
		}
	}
	require.Zero(t, len(bad), "--help with a section citation:\n%s", strings.Join(bad, "\n"))
}

// subcommands reads the names under "Available Commands:" of a cobra help
// text, but help.
func subcommands(help string) []string {
	_, rest, found := strings.Cut(help, "Available Commands:\n")
	if !found {
		return nil
	}
	var names []string
	for line := range strings.Lines(rest) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			break
		}
		if fields[0] != "help" {
			names = append(names, fields[0])
		}
	}
	return names
}

// TestPackageMapIsCurrent: the package map of docs/architecture.md names
// exactly today's packages.
func TestPackageMapIsCurrent(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "./...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var want []string
	for pkg := range strings.Lines(strings.TrimSpace(string(out))) {
		pkg = strings.TrimSpace(pkg)
		if rel, ok := strings.CutPrefix(pkg, module+"/"); ok {
			pkg = rel
		}
		want = append(want, pkg)
	}

	b, err := os.ReadFile("docs/architecture.md")
	require.NoError(t, err)
	_, mapSection, found := strings.Cut(string(b), "\n## Package map\n")
	require.True(t, found, "docs/architecture.md has no ## Package map")
	mapSection, _, _ = strings.Cut(mapSection, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	var got []string
	for _, m := range row.FindAllStringSubmatch(mapSection, -1) {
		got = append(got, m[1])
	}
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got, "the package map of docs/architecture.md must name exactly the packages of go list ./...")
}
