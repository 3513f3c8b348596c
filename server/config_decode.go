package server

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// configIgnoredKeys maps each accepted-and-ignored key of the first cairn
// server (its task engine) to how the warning names its family.
func configIgnoredKeys() map[string]string {
	return map[string]string{
		"tasking":                   "tasking.*",
		"persistence.redis":         "persistence.redis.*",
		"persistence.sql.tasking":   "persistence.sql.tasking.*",
		"maintenance.taskAgeOutSec": "maintenance.taskAgeOutSec",
	}
}

// IgnoredConfigKeys lists, sorted, the key families that are accepted and
// ignored with a warning: those of the first cairn server's task engine.
func IgnoredConfigKeys() []string {
	return slices.Sorted(maps.Values(configIgnoredKeys()))
}

// configDecoder decodes YAML into the config structs the way yaml.v3 would,
// but walks the node tree itself so that every unknown key and every
// mistyped value is reported with its full dotted key, which yaml.v3's own
// errors (line numbers and Go type names) do not give.
type configDecoder struct {
	ignored map[string]string // dotted key → family named in the warning
	met     []string          // ignored families present, in file order
}

// warnings returns the one warning about ignored keys, if any were present.
func (d *configDecoder) warnings() []string {
	if len(d.met) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("ignoring obsolete config keys of the first cairn server's task engine: %s",
		strings.Join(d.met, ", "))}
}

// decodeDocument decodes the YAML document data into v. An empty document
// leaves v untouched.
func (d *configDecoder) decodeDocument(data []byte, v reflect.Value, key string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return d.decode(doc.Content[0], v, key)
}

func (d *configDecoder) decode(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // a key without a value keeps its default
	}
	if sh, ok := v.Addr().Interface().(configShorthand); ok && n.Kind == yaml.ScalarNode {
		return sh.shorthand(n, key)
	}
	switch {
	case v.Kind() == reflect.Struct:
		return d.mapping(n, v, key)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		return d.sequence(n, v, key)
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: %s", configKeyName(key), strings.Join(te.Errors, "; "))
		}
		return fmt.Errorf("%s: %w", configKeyName(key), err)
	}
	return nil
}

// configShorthand is a section that also takes a scalar standing for its
// most used key (`shell.record: true` is `shell.record.enable: true`).
type configShorthand interface {
	shorthand(n *yaml.Node, key string) error
}

func (d *configDecoder) mapping(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: line %d: want a mapping, got %s", configKeyName(key), n.Line, configNodeKind(n))
	}
	fields := configFields(v.Type())
	seen := make(map[string]bool, len(n.Content)/2)
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		child := name
		if key != "" {
			child = key + "." + name
		}
		field, known := fields[name]
		family, ignored := d.ignored[child]
		switch {
		case seen[name]:
			errs = append(errs, fmt.Errorf("duplicate key %q", child))
		case ignored:
			d.met = append(d.met, family)
		case !known:
			errs = append(errs, fmt.Errorf("unknown key %q", child))
		default:
			errs = append(errs, d.decode(n.Content[i+1], v.Field(field), child))
		}
		seen[name] = true
	}
	return errors.Join(errs...)
}

// sequence decodes a list of structs element by element, so that keys
// inside elements are checked too; the list replaces the default.
func (d *configDecoder) sequence(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s: line %d: want a list, got %s", configKeyName(key), n.Line, configNodeKind(n))
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	var errs []error
	for i, e := range n.Content {
		errs = append(errs, d.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", key, i)))
	}
	v.Set(s)
	return errors.Join(errs...)
}

// configFields maps the yaml tag names of struct type t to field indexes.
func configFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			fields[name] = i
		}
	}
	return fields
}

func configKeyName(key string) string {
	if key == "" {
		return "top level"
	}
	return fmt.Sprintf("key %q", key)
}

func configNodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
}
