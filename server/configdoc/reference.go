package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/cairn-dev/cairn/server"
)

// docs maps a struct type of package server to its fields' doc comments,
// each joined into one line.
type docs map[string]map[string]string

// fieldDocs reads the doc comment (or, failing that, the line comment) of
// every struct field declared in the non-test Go files of dir.
func fieldDocs(dir string) (docs, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	d := docs{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					d.add(ts.Name.Name, st)
				}
			}
			return true
		})
	}
	return d, nil
}

func (d docs) add(typeName string, st *ast.StructType) {
	fields := map[string]string{}
	for _, f := range st.Fields.List {
		text := f.Doc.Text()
		if text == "" {
			text = f.Comment.Text()
		}
		for _, n := range f.Names {
			fields[n.Name] = strings.Join(strings.Fields(text), " ")
		}
	}
	d[typeName] = fields
}

// row is one key of the reference.
type row struct {
	Key, Type, Default, Allowed, Doc string
}

// section is a top-level key of the file with the keys under it; the
// top-level keys that are not mappings share the first section.
type section struct {
	Name, Title, Doc string
	Rows             []row
}

//go:embed page.md.tmpl
var pageTemplate string

// minimalExample is the smallest valid file, shown under "Required keys";
// the package's test checks that it validates.
const minimalExample = `artifact:
  s3:
    endpoint: store.internal:7070
  store:
    bucket: cairn
`

// render writes the page from the struct docs d and package server.
func render(d docs) ([]byte, error) {
	required, err := requiredKeys()
	if err != nil {
		return nil, err
	}
	w := walker{docs: d, required: required}
	sections := w.sections()
	if err := errors.Join(w.errs...); err != nil {
		return nil, err
	}
	t, err := template.New("page").Funcs(template.FuncMap{"code": code, "codeList": codeList, "cell": cell}).Parse(pageTemplate)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{
		"Ignored":  server.IgnoredConfigKeys(),
		"Required": sortedKeys(required),
		"Example":  minimalExample,
		"Sections": sections,
	})
	return b.Bytes(), err
}

// requiredKeys are the keys without a default: those DefaultConfig leaves
// empty and Validate requires. Any other complaint about the defaults is
// an error.
func requiredKeys() (map[string]bool, error) {
	c := server.DefaultConfig()
	var joined interface{ Unwrap() []error }
	if err := c.Validate(); !errors.As(err, &joined) {
		return nil, fmt.Errorf("the defaults should lack only the required keys, got %v", err)
	}
	keys := map[string]bool{}
	for _, e := range joined.Unwrap() {
		key, problem, _ := strings.Cut(e.Error(), ": ")
		if problem != "required" {
			return nil, fmt.Errorf("the defaults do not validate: %w", e)
		}
		keys[key] = true
	}
	return keys, nil
}

// walker turns server.Config into sections, collecting every field that
// cannot be documented.
type walker struct {
	docs     docs
	required map[string]bool
	errs     []error
}

func (w *walker) sections() []section {
	t := reflect.TypeFor[server.Config]()
	v := reflect.ValueOf(server.DefaultConfig())
	top := section{Name: "top-level", Title: "Top level"}
	var groups []section
	for i := range t.NumField() {
		f, name := t.Field(i), yamlName(t.Field(i))
		switch {
		case f.Type.Kind() == reflect.Struct:
			s := section{Name: name, Title: code(name), Doc: w.doc(t, f, name)}
			w.rows(&s.Rows, f.Type, v.Field(i), name)
			groups = append(groups, s)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			// A list of mappings: its entries' keys, in a section of its own.
			s := section{Name: name, Title: code(name), Doc: w.doc(t, f, name)}
			w.add(&s.Rows, t, f, name, v.Field(i))
			w.rows(&s.Rows, f.Type.Elem(), reflect.Value{}, name+"[]")
			groups = append(groups, s)
		default:
			w.add(&top.Rows, t, f, name, v.Field(i))
		}
	}
	return append([]section{top}, groups...)
}

// rows adds the keys of struct type t under prefix; v holds their
// defaults, or is invalid inside a list's elements, which have none.
func (w *walker) rows(rows *[]row, t reflect.Type, v reflect.Value, prefix string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		key := prefix + "." + name
		var fv reflect.Value
		if v.IsValid() {
			fv = v.Field(i)
		}
		switch {
		case f.Type.Kind() == reflect.Struct:
			// A mapping gets a row of its own only when it has something
			// to say; its keys carry the rest.
			if doc := w.docs[t.Name()][f.Name]; doc != "" {
				*rows = append(*rows, row{Key: code(key), Type: "mapping", Default: "—", Doc: doc})
			}
			w.rows(rows, f.Type, fv, key)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			w.add(rows, t, f, key, fv)
			w.rows(rows, f.Type.Elem(), reflect.Value{}, key+"[]")
		default:
			w.add(rows, t, f, key, fv)
		}
	}
}

// add appends the row of the key of field f of struct type t.
func (w *walker) add(rows *[]row, t reflect.Type, f reflect.StructField, key string, v reflect.Value) {
	*rows = append(*rows, row{
		Key:     code(key),
		Type:    w.typeName(f.Type, key),
		Default: w.defaultText(key, v),
		Allowed: allowed(key),
		Doc:     w.doc(t, f, key),
	})
}

func (w *walker) doc(t reflect.Type, f reflect.StructField, key string) string {
	doc := w.docs[t.Name()][f.Name]
	if doc == "" {
		w.errs = append(w.errs, fmt.Errorf("%s: server.%s.%s has no doc comment to describe it", key, t.Name(), f.Name))
	}
	return doc
}

func (w *walker) typeName(t reflect.Type, key string) string {
	switch {
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		return "integer"
	case t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "list of strings"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return "list of mappings"
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String:
		return "mapping of strings"
	}
	w.errs = append(w.errs, fmt.Errorf("%s: configdoc cannot name type %s", key, t))
	return ""
}

// defaultText is the default of key as YAML would spell it; a number the
// key's rule knows as a byte size gets its unit too.
func (w *walker) defaultText(key string, v reflect.Value) string {
	switch {
	case w.required[key]:
		return "**required**"
	case !v.IsValid():
		return "—"
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return "empty"
		}
		return code(v.String())
	case reflect.Bool:
		return code(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int64:
		if rule, ok := server.ConfigRule(key); ok {
			return rule.Format(v.Int())
		}
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String || v.Len() == 0 {
			items := make([]string, v.Len())
			for i := range items {
				items[i] = v.Index(i).String()
			}
			return code("[" + strings.Join(items, ", ") + "]")
		}
	case reflect.Map:
		if v.Len() == 0 {
			return code("{}")
		}
	}
	w.errs = append(w.errs, fmt.Errorf("%s: configdoc cannot spell the default %v", key, v))
	return ""
}

// allowed is the key's rule from server.ConfigRule, in words.
func allowed(key string) string {
	rule, ok := server.ConfigRule(key)
	if !ok {
		return ""
	}
	var parts []string
	if r := rule.Range(); r != "" {
		parts = append(parts, r)
	}
	if values := rule.Values(); len(values) > 0 {
		for i, v := range values {
			values[i] = code(v)
		}
		parts = append(parts, "one of "+strings.Join(values, ", "))
	}
	if p := rule.Pattern(); p != "" {
		parts = append(parts, "matches "+code(p))
	}
	if a := rule.Also(); a != "" {
		parts = append(parts, a)
	}
	return strings.Join(parts, "; ")
}

// yamlName is the key of a field, as the config decoder reads its tag.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func code(s string) string { return "`" + s + "`" }

// codeList spells keys as a sentence does: "`a`, `b` and `c`".
func codeList(keys []string) string {
	spelled := make([]string, len(keys))
	for i, k := range keys {
		spelled[i] = code(k)
	}
	if len(spelled) < 2 {
		return strings.Join(spelled, "")
	}
	return strings.Join(spelled[:len(spelled)-1], ", ") + " and " + spelled[len(spelled)-1]
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
