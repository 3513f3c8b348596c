package config

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/clientconf"
)

type fileValues struct {
	shared    *clientconf.File // server, token and contexts, which the CLI shares
	values    map[string]sourced
	mimeAllow []string
	keys      map[string][]string
	source    string // "file PATH", for mime_allow and the keys
	warnings  []string
}

// readConfigFile reads the shared client config. A missing default file is
// no error; a missing explicit one is.
func readConfigFile(path string, explicit bool, in Input) (fileValues, error) {
	out := fileValues{values: make(map[string]sourced), shared: &clientconf.File{Path: path}}
	if path == "" {
		return out, nil
	}
	data, err := in.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("read config %s: %w", path, err)
	}
	if out.shared, err = clientconf.Parse(path, data); err != nil {
		return out, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return out, fmt.Errorf("parse config %s: %w", path, err)
	}
	src := "file " + path
	out.source = src
	known := make(map[string]bool)
	for _, s := range settings() {
		known[s.key] = true
	}
	if err := out.walk("", doc, src, known); err != nil {
		return out, err
	}
	if out.shared.Token != "" {
		warnPermissions(path, in, &out.warnings)
	}
	return out, nil
}

// sharedKey reports a top-level key clientconf reads.
func sharedKey(key string) bool {
	switch key {
	case "server", "token", "token_file", "current-context", "contexts":
		return true
	}
	return false
}

// walk flattens the document into dotted keys. Lists are allowed only for
// tui.preview.mime_allow and under tui.keys; unknown keys warn.
func (f *fileValues) walk(prefix string, node map[string]any, src string, known map[string]bool) error {
	names := make([]string, 0, len(node))
	for k := range node {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		key := strings.TrimPrefix(prefix+"."+name, ".")
		if err := f.value(key, node[name], src, known); err != nil {
			return err
		}
	}
	return nil
}

func (f *fileValues) value(key string, v any, src string, known map[string]bool) error {
	if sharedKey(key) {
		return nil // clientconf's: f.shared
	}
	switch key {
	case "tui.keys":
		return f.keyMap(v, src)
	case "tui.preview.mime_allow":
		list, err := stringList(v)
		if err != nil {
			return &InvalidError{Key: key, Value: fmt.Sprint(v), Source: src, Err: err}
		}
		f.mimeAllow = list
		return nil
	}
	if m, ok := v.(map[string]any); ok {
		return f.walk(key, m, src, known)
	}
	if right, ok := misnamed()[key]; ok {
		f.warnings = append(f.warnings, fmt.Sprintf("%s: %s ignored — cairn-tui's shell detach key is %s", src, key, right))
		return nil
	}
	if !known[key] {
		f.warnings = append(f.warnings, fmt.Sprintf("%s: unknown key %s ignored", src, key))
		return nil
	}
	if v == nil {
		return nil
	}
	f.values[key] = sourced{fmt.Sprint(v), src}
	return nil
}

func (f *fileValues) keyMap(v any, src string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return &InvalidError{Key: "tui.keys", Value: fmt.Sprint(v), Source: src, Err: errors.New("want a map of action ID to keys")}
	}
	f.keys = make(map[string][]string, len(m))
	for id, raw := range m {
		list, err := stringList(raw)
		if err != nil {
			f.warnings = append(f.warnings, fmt.Sprintf("tui.keys.%s: %v; keeping the default", id, err))
			continue
		}
		f.keys[id] = list
	}
	return nil
}

// stringList accepts a YAML list of scalars or one scalar.
func stringList(v any) ([]string, error) {
	switch t := v.(type) {
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if _, nested := e.(map[string]any); nested {
				return nil, errors.New("want a list of strings")
			}
			out = append(out, fmt.Sprint(e))
		}
		return out, nil
	case string:
		return []string{t}, nil
	}
	return nil, errors.New("want a list of strings")
}
