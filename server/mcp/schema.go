package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn"
)

// reasonInvalidArguments answers arguments that break a tool's input
// schema. It exists only over MCP.
const reasonInvalidArguments cairn.Reason = "invalid_arguments"

// kind is the JSON type of a tool argument.
type kind int

const (
	kindString  kind = iota
	kindInteger      // optional only
	kindBoolean      // optional only
	kindStrings      // an array of strings, optional only
	kindObjects      // an array of objects, each described by fields
)

// param is one property of a tool's input. The published schema and the
// check of incoming arguments are both derived from it, so they cannot
// disagree.
type param struct {
	name     string
	kind     kind
	required bool
	enum     []string // kindStrings: the allowed item values, if limited
	fields   []param  // kindObjects: the properties of each item
	desc     string
}

func requiredString(name, desc string) param {
	return param{name: name, kind: kindString, required: true, desc: desc}
}

func optionalString(name, desc string) param {
	return param{name: name, kind: kindString, desc: desc}
}

func optionalInteger(name, desc string) param {
	return param{name: name, kind: kindInteger, desc: desc}
}

func optionalBoolean(name, desc string) param {
	return param{name: name, kind: kindBoolean, desc: desc}
}

func optionalStrings(name, desc string, enum ...string) param {
	return param{name: name, kind: kindStrings, enum: enum, desc: desc}
}

// requiredObjects is an array of objects, each closed like a tool's input.
func requiredObjects(name, desc string, fields ...param) param {
	return param{name: name, kind: kindObjects, required: true, fields: fields, desc: desc}
}

// inputSchema renders params in the one form every cairn tool publishes:
// {"type":"object","properties":{…},"required":[…],"additionalProperties":false},
// properties in declaration order. Constraints other than types and enums
// live in the prose descriptions.
func inputSchema(params []param) json.RawMessage {
	props := make([]property, len(params))
	for i, p := range params {
		props[i] = property{name: p.name, required: p.required, schema: p.schema()}
	}
	return mustJSON(object{props: props, closed: true})
}

// schema is the property's own JSON Schema: an optional property may also
// be null, which reads as absent.
func (p param) schema() any {
	type items struct {
		Type string   `json:"type"`
		Enum []string `json:"enum,omitempty"`
	}
	type prop struct {
		Type        any    `json:"type"`
		Items       any    `json:"items,omitempty"`
		Description string `json:"description"`
	}
	var typ any = kindTypes[p.kind]
	if !p.required {
		typ = []string{"null", kindTypes[p.kind]}
	}
	switch p.kind {
	case kindStrings:
		return prop{Type: typ, Items: items{Type: "string", Enum: p.enum}, Description: p.desc}
	case kindObjects:
		return prop{Type: typ, Items: inputSchema(p.fields), Description: p.desc}
	}
	return prop{Type: typ, Description: p.desc}
}

// kindTypes names the JSON Schema type of each kind.
var kindTypes = map[kind]string{
	kindString: "string", kindInteger: "integer", kindBoolean: "boolean", kindStrings: "array", kindObjects: "array",
}

// object is a JSON Schema object whose properties keep their order. closed
// adds "additionalProperties": false.
type object struct {
	props  []property
	closed bool
}

type property struct {
	name     string
	required bool
	schema   any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	required := []string{}
	for i, p := range o.props {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(p.name))
		b.WriteByte(':')
		b.Write(mustJSON(p.schema))
		if p.required {
			required = append(required, p.name)
		}
	}
	b.WriteString(`},"required":`)
	b.Write(mustJSON(required))
	if o.closed {
		b.WriteString(`,"additionalProperties":false`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// mustJSON marshals values this package builds from strings, integers,
// slices and structs of them, which cannot fail.
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// decodeArguments checks raw tool arguments against params as the published
// schema reads (types, enums, required properties, no unknown properties)
// and returns them as a clean JSON object: a property given as null is
// dropped, as if absent, and integers are normalised. Every problem found is
// named in one invalid_arguments error.
func decodeArguments(params []param, raw any) ([]byte, error) {
	obj, err := argumentObject(raw)
	if err != nil {
		return nil, err
	}
	clean, problems := checkObject(params, obj)
	if len(problems) > 0 {
		return nil, cairn.Errorf(reasonInvalidArguments, "%s", strings.Join(problems, "; "))
	}
	return mustJSON(clean), nil
}

// checkObject checks obj against params and returns it clean, with every
// problem found: unknown properties first, then each param's in order.
func checkObject(params []param, obj map[string]any) (map[string]any, []string) {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if obj[name] != nil && !slices.ContainsFunc(params, func(p param) bool { return p.name == name }) {
			problems = append(problems, fmt.Sprintf("unknown property '%s'", name))
		}
	}
	clean := make(map[string]any, len(params))
	for _, p := range params {
		v := obj[p.name]
		if v == nil {
			if p.required {
				problems = append(problems, fmt.Sprintf("missing required property '%s'", p.name))
			}
			continue
		}
		norm, problem := p.check(v)
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		clean[p.name] = norm
	}
	return clean, problems
}

// argumentObject decodes the arguments; absent arguments are an empty
// object.
func argumentObject(raw any) (map[string]any, error) {
	var data []byte
	switch v := raw.(type) {
	case nil:
		return map[string]any{}, nil
	case json.RawMessage:
		data = v
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			return nil, cairn.Errorf(reasonInvalidArguments, "arguments are not valid JSON")
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, cairn.Errorf(reasonInvalidArguments, "arguments are not valid JSON")
	}
	if v == nil {
		return map[string]any{}, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, cairn.Errorf(reasonInvalidArguments, "arguments must be a JSON object, got %s", jsonType(v))
	}
	return obj, nil
}

// check returns the value normalised, or what is wrong with it.
func (p param) check(v any) (any, string) {
	switch p.kind {
	case kindString:
		if _, ok := v.(string); !ok {
			return nil, fmt.Sprintf("property '%s' must be a string, got %s", p.name, jsonType(v))
		}
		return v, ""
	case kindInteger:
		n, ok := integer(v)
		if !ok {
			return nil, fmt.Sprintf("property '%s' must be an integer, got %s", p.name, jsonType(v))
		}
		return n, ""
	case kindBoolean:
		if _, ok := v.(bool); !ok {
			return nil, fmt.Sprintf("property '%s' must be a boolean, got %s", p.name, jsonType(v))
		}
		return v, ""
	case kindStrings:
		return p.checkStrings(v)
	default:
		return p.checkObjects(v)
	}
}

func (p param) checkStrings(v any) (any, string) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Sprintf("property '%s' must be an array of strings, got %s", p.name, jsonType(v))
	}
	out := make([]string, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Sprintf("property '%s' item %d must be a string, got %s", p.name, i, jsonType(item))
		}
		if len(p.enum) > 0 && !slices.Contains(p.enum, s) {
			return nil, fmt.Sprintf("property '%s' item %d must be one of '%s', got '%s'",
				p.name, i, strings.Join(p.enum, "', '"), s)
		}
		out[i] = s
	}
	return out, ""
}

// checkObjects checks each item against p.fields; an item's problems are
// named with its index.
func (p param) checkObjects(v any) (any, string) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Sprintf("property '%s' must be an array of objects, got %s", p.name, jsonType(v))
	}
	out := make([]map[string]any, len(list))
	var problems []string
	for i, item := range list {
		at := fmt.Sprintf("property '%s' item %d", p.name, i)
		obj, ok := item.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s must be an object, got %s", at, jsonType(item)))
			continue
		}
		clean, bad := checkObject(p.fields, obj)
		for _, b := range bad {
			problems = append(problems, at+": "+b)
		}
		out[i] = clean
	}
	return out, strings.Join(problems, "; ")
}

// integer accepts a JSON number with no fractional part (1000 and 1e3
// alike, as JSON Schema does), clamped to the int64 range: a value that
// large fails every range check anyway.
func integer(v any) (int64, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(num.String(), 10, 64); err == nil {
		return n, true
	}
	f, err := num.Float64()
	if (err != nil && !math.IsInf(f, 0)) || f != math.Trunc(f) {
		return 0, false
	}
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, true
	case f <= math.MinInt64:
		return math.MinInt64, true
	}
	return int64(f), true
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}
