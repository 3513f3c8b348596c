package clientconf

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"gopkg.in/yaml.v3"
)

// UseContext makes name the file's current-context. A name the file does
// not define is an *UnknownContextError, and the file is left as it was.
func UseContext(path, name string) error {
	return edit(path, func(root *yaml.Node, f *File) error {
		if _, ok := f.Context(name); !ok {
			return &UnknownContextError{Name: name, From: "use-context", Path: path, Known: f.Names()}
		}
		setKey(root, "current-context", scalarNode(name))
		return nil
	})
}

// SaveContext adds c to the file's contexts, or replaces the one of the
// same name in place (its comments kept), and with makeCurrent makes it
// the current-context. It creates the file (and its directory, 0700) when
// there is none.
func SaveContext(path string, c Context, makeCurrent bool) error {
	if err := c.validate(); err != nil {
		return err
	}
	return edit(path, func(root *yaml.Node, _ *File) error {
		list := mapValue(root, "contexts")
		if list == nil || list.Kind != yaml.SequenceNode {
			list = &yaml.Node{Kind: yaml.SequenceNode}
			setKey(root, "contexts", list)
		}
		writeContext(list, c)
		if makeCurrent {
			setKey(root, "current-context", scalarNode(c.Name))
		}
		return nil
	})
}

// DropLegacy removes the top-level server and token when they are exactly
// server and token (a token of "" means none): what an older 'cairn dev'
// wrote before it wrote a context. Anything else at the top level is the
// user's and stays. It reports whether it removed them.
func DropLegacy(path, server, token string) (bool, error) {
	dropped := false
	err := edit(path, func(root *yaml.Node, f *File) error {
		if f.Server == "" || !sameServer(f.Server, server) || f.Token != token || f.TokenFile != "" {
			return errUnchanged
		}
		deleteKey(root, "server")
		deleteKey(root, "token")
		dropped = true
		return nil
	})
	return dropped, err
}

// errUnchanged tells edit that change left the file as it was.
var errUnchanged = errors.New("unchanged")

// edit applies change to the file's YAML tree and writes it back, under a
// lock on its directory so that two writers (two 'cairn dev' stacks
// starting at once) do not lose each other's change. What it writes is
// parsed again first: a file this package cannot read is never written.
func edit(path string, change func(root *yaml.Node, f *File) error) error {
	if path == "" {
		return errors.New("no config file: neither XDG_CONFIG_HOME nor HOME is set")
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a config file linked from a dotfiles repository stays a link
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	unlock, err := lockDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer unlock()
	doc, f, err := readTree(path)
	if err != nil {
		return err
	}
	if err := change(doc.Content[0], f); err != nil {
		if errors.Is(err, errUnchanged) {
			return nil
		}
		return err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write config %s: %w", path, err)
	}
	if _, err := Parse(path, b.Bytes()); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}

// readTree reads the file as a YAML document whose root is a mapping; an
// absent or empty file is an empty mapping.
func readTree(path string) (*yaml.Node, *File, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read config %s: %w", path, err)
	}
	f, err := Parse(path, data)
	if err != nil {
		return nil, nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("parse config %s: %w", path, err)
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	if root := doc.Content[0]; root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("config %s: want a mapping at the top", path)
	}
	return &doc, f, nil
}

// writeContext replaces the entry named c.Name in list, or appends one.
// The entry's keys are rewritten; its comments stay.
func writeContext(list *yaml.Node, c Context) {
	var entry *yaml.Node
	for _, e := range list.Content {
		if n := mapValue(e, "name"); e.Kind == yaml.MappingNode && n != nil && n.Value == c.Name {
			entry = e
		}
	}
	if entry == nil {
		entry = &yaml.Node{Kind: yaml.MappingNode}
		list.Content = append(list.Content, entry)
	}
	setKey(entry, "name", scalarNode(c.Name))
	setKey(entry, "server", scalarNode(c.Server))
	for _, key := range []string{"token_file", "token_env", "token_command"} {
		deleteKey(entry, key)
	}
	switch {
	case c.TokenFile != "":
		setKey(entry, "token_file", scalarNode(c.TokenFile))
	case c.TokenEnv != "":
		setKey(entry, "token_env", scalarNode(c.TokenEnv))
	case len(c.TokenCommand) > 0:
		cmd := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, arg := range c.TokenCommand {
			cmd.Content = append(cmd.Content, scalarNode(arg))
		}
		setKey(entry, "token_command", cmd)
	}
}

func scalarNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// mapValue is the value of key in the mapping m; nil when absent.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey sets key in the mapping m: in place when present (its comments
// kept), else appended.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v.LineComment = m.Content[i+1].LineComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalarNode(key), v)
}

// deleteKey removes key from the mapping m. The head comment of a removed
// first key (often the file's own) moves to what follows.
func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		if head := m.Content[i].HeadComment; head != "" && i+2 < len(m.Content) && m.Content[i+2].HeadComment == "" {
			m.Content[i+2].HeadComment = head
		}
		m.Content = append(m.Content[:i], m.Content[i+2:]...)
		return
	}
}

// writeAtomic replaces path with data, mode 0600: a temporary file in the
// same directory, synced, then renamed over it, so that a reader sees the
// old file or the new one, never half of one.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// lockDir takes an exclusive flock on dir, released by the returned func.
func lockDir(dir string) (func(), error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		d.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { d.Close() }, nil // closing the descriptor releases the lock
}
