package typedjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Root is one result object of the module: an answer's JSON, typed.
type Root struct {
	// Name is the result object's type name, e.g. PlanAnswer.
	Name string
	// Doc is its description, a whole sentence.
	Doc string
	// Type is the Go type the answer's JSON is encoded from (a struct).
	Type reflect.Type
	// Items, when the JSON is an array of Type, names the field that holds
	// its items, ItemsDoc describing it.
	Items, ItemsDoc string
	// Strings are further string fields the module fills (a text answer).
	Strings []Field
}

// Field is a further field of a root: its name and description.
type Field struct{ Name, Doc string }

// Config is what Generate writes.
type Config struct {
	// Header is the generated file's first comment, naming what writes it.
	Header string
	Roots  []Root
	// Types are further Go structs to mirror, for a result object the
	// module declares itself (and fills with Fill).
	Types []reflect.Type
	// Names renames a nested object type (default: its Go type's name).
	Names map[reflect.Type]string
	// Reserved are the type names the module declares itself.
	Reserved []string
	// Docs gives a Go type's description and its fields' by Go field name
	// (SourceDocs reads them from the source).
	Docs func(reflect.Type) (string, map[string]string)
}

// MessageType is the generated object type of a message.
const MessageType = "Message"

// entryTypes are the object types of a map's entry (Name, Value), by the
// value's type.
var entryTypes = map[string]string{"string": "NameValue", "int": "NameInt", "float64": "NameFloat", "bool": "NameBool"}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

type genField struct{ name, typ, doc, tag string }

type genType struct {
	name, doc string
	fields    []genField
}

type generator struct {
	cfg     Config
	names   map[string]reflect.Type // object name -> the Go type it mirrors
	types   map[reflect.Type]string
	queue   []reflect.Type
	out     []genType
	entries []string // the value types of the maps met
}

// Generate writes the module's result object types (Go source of package
// main): one per root, with the root's fields, Json and Messages, and one
// per Go struct they reach.
func Generate(cfg Config) ([]byte, error) {
	g := &generator{cfg: cfg, names: map[string]reflect.Type{}, types: map[reflect.Type]string{}}
	for _, r := range cfg.Reserved {
		g.names[r] = nil
	}
	for _, r := range cfg.Roots {
		if _, taken := g.names[r.Name]; taken {
			return nil, fmt.Errorf("typedjson: the result type %s is declared twice", r.Name)
		}
		g.names[r.Name] = r.Type
		t := genType{name: r.Name, doc: r.Doc}
		if r.Items != "" {
			typ, err := g.goType(reflect.SliceOf(r.Type), r.Name+"."+r.Items)
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, genField{name: r.Items, typ: typ, doc: r.ItemsDoc, tag: "`typedjson:\"" + ItemsTag + "\"`"})
		} else {
			fields, err := g.fields(r.Type, r.Name)
			if err != nil {
				return nil, err
			}
			t.fields = fields
		}
		for _, f := range t.fields {
			if f.name == JSONField || f.name == "Messages" || slices.ContainsFunc(r.Strings, func(s Field) bool { return s.Name == f.name }) {
				return nil, fmt.Errorf("typedjson: %s has a key named %s, which the result object keeps for itself", r.Name, f.name)
			}
		}
		for _, f := range r.Strings {
			t.fields = append(t.fields, genField{name: f.Name, typ: "string", doc: f.Doc})
		}
		t.fields = append(t.fields,
			genField{name: JSONField, typ: "string", doc: "The answer as miles-ci's JSON, byte for byte what the command prints with --json."},
			genField{name: "Messages", typ: "[]*" + MessageType, doc: "The answer's notices and warnings (the command writes them on stderr)."})
		g.out = append(g.out, t)
	}
	for _, t := range cfg.Types {
		if _, err := g.object(t); err != nil {
			return nil, err
		}
	}
	for len(g.queue) > 0 {
		rt := g.queue[0]
		g.queue = g.queue[1:]
		doc, _ := g.cfg.Docs(rt)
		name := g.types[rt]
		if rest, ok := strings.CutPrefix(doc, rt.Name()+" "); ok {
			doc = name + " " + rest
		}
		t := genType{name: name, doc: sentence(doc, name+" is part of an answer.")}
		fields, err := g.fields(rt, t.name)
		if err != nil {
			return nil, err
		}
		t.fields = fields
		g.out = append(g.out, t)
	}
	g.out = append(g.out, genType{name: MessageType, doc: "Message is a notice or a warning that came with an answer.", fields: []genField{
		{name: "Level", typ: "string", doc: "Its level: notice or warning."},
		{name: "Text", typ: "string", doc: "What it says."},
	}})
	for _, elem := range g.entries {
		name := entryTypes[elem]
		g.out = append(g.out, genType{name: name, doc: name + " is one entry of a JSON object of free keys.", fields: []genField{
			{name: "Name", typ: "string", doc: "The entry's key."},
			{name: "Value", typ: elem, doc: "The entry's value."},
		}})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n\npackage main\n", cfg.Header)
	for _, t := range g.out {
		fmt.Fprintf(&b, "\n// %s\ntype %s struct {\n", t.doc, t.name)
		for _, f := range t.fields {
			fmt.Fprintf(&b, "\t// %s\n\t%s %s %s\n", f.doc, f.name, f.typ, f.tag)
		}
		b.WriteString("}\n")
	}
	return format.Source(b.Bytes())
}

// fields are the object fields of struct type rt, as encoding/json writes it.
func (g *generator) fields(rt reflect.Type, at string) ([]genField, error) {
	_, docs := g.cfg.Docs(rt)
	var out []genField
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() && !f.Anonymous || f.Tag.Get("typedjson") == OmitTag {
			continue
		}
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				inner, err := g.fields(et, at)
				if err != nil {
					return nil, err
				}
				out = append(out, inner...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		typ, err := g.goType(f.Type, at+"."+name)
		if err != nil {
			return nil, err
		}
		field := FieldName(name)
		if slices.ContainsFunc(out, func(o genField) bool { return o.name == field }) {
			return nil, fmt.Errorf("typedjson: %s has two keys named %s", at, field)
		}
		out = append(out, genField{name: field, typ: typ, doc: sentence(docs[f.Name], fmt.Sprintf("The answer's %s.", name))})
	}
	return out, nil
}

// goType is the module's Go type of a field of Go type t.
func (g *generator) goType(t reflect.Type, at string) (string, error) {
	if t == timeType || t.Kind() == reflect.Pointer && t.Elem() == timeType {
		return "string", nil
	}
	if t.Implements(marshalerType) || t.Implements(textMarshaler) ||
		t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshaler)) {
		return "", fmt.Errorf("typedjson: %s (%s) writes its own JSON: give the module a type of its own", at, t)
	}
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "bool", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int", nil
	case reflect.Float32, reflect.Float64:
		return "float64", nil
	case reflect.Pointer:
		e := t.Elem()
		if e.Kind() == reflect.Slice || e.Kind() == reflect.Struct || e.Kind() == reflect.Map {
			return g.goType(e, at)
		}
		inner, err := g.goType(e, at)
		return "*" + inner, err
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "", fmt.Errorf("typedjson: %s is bytes", at)
		}
		inner, err := g.goType(t.Elem(), at+"[]")
		if err != nil {
			return "", err
		}
		if inner[0] == '[' {
			return "", fmt.Errorf("typedjson: %s is a list of lists, which Dagger cannot hold", at)
		}
		return "[]" + inner, nil
	case reflect.Map:
		elem, err := g.goType(t.Elem(), at+"{}")
		if err != nil {
			return "", err
		}
		name, ok := entryTypes[elem]
		if t.Key().Kind() != reflect.String || !ok {
			return "", fmt.Errorf("typedjson: %s is a %s; only a map of strings to strings, ints, floats or bools becomes name/value entries", at, t)
		}
		if !slices.Contains(g.entries, elem) {
			g.entries = append(g.entries, elem)
		}
		return "[]*" + name, nil
	case reflect.Struct:
		name, err := g.object(t)
		return "*" + name, err
	}
	return "", fmt.Errorf("typedjson: %s is a %s, which has no Dagger type", at, t)
}

// object names the object type that mirrors struct t, queueing it once.
func (g *generator) object(t reflect.Type) (string, error) {
	if n, ok := g.types[t]; ok {
		return n, nil
	}
	name := t.Name()
	if n, ok := g.cfg.Names[t]; ok {
		name = n
	}
	if name == "" {
		return "", fmt.Errorf("typedjson: an unnamed struct %s", t)
	}
	if other, taken := g.names[name]; taken {
		what := "the module's own type"
		if other != nil {
			what = other.String()
		}
		return "", fmt.Errorf("typedjson: %s would be named %s, as %s is: give it a name in Config.Names", t, name, what)
	}
	g.names[name], g.types[t] = t, name
	g.queue = append(g.queue, t)
	return name, nil
}

// sentence is a description on one line, ending in a full stop (or, when
// doc is empty, fallback).
func sentence(doc, fallback string) string {
	s := strings.Join(strings.Fields(doc), " ")
	if s == "" {
		return fallback
	}
	if strings.HasPrefix(s, "+") {
		s = "It is " + s
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// SourceDocs reads Go types' descriptions from the source of the module
// at dir (module path mod): each type's doc comment and its fields'.
func SourceDocs(dir, mod string) func(reflect.Type) (string, map[string]string) {
	parsed := map[string][]*ast.File{}
	return func(t reflect.Type) (string, map[string]string) {
		pkg := t.PkgPath()
		rel, ok := strings.CutPrefix(pkg, mod)
		if !ok {
			return "", nil
		}
		files, ok := parsed[pkg]
		if !ok {
			names, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(rel), "*.go"))
			fset := token.NewFileSet()
			for _, n := range names {
				if strings.HasSuffix(n, "_test.go") {
					continue
				}
				if f, err := parser.ParseFile(fset, n, nil, parser.ParseComments); err == nil {
					files = append(files, f)
				}
			}
			parsed[pkg] = files
		}
		for _, f := range files {
			for _, decl := range f.Decls {
				d, ok := decl.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || ts.Name.Name != t.Name() {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					fields := map[string]string{}
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							text := fl.Doc.Text()
							if text == "" {
								text = fl.Comment.Text()
							}
							for _, n := range fl.Names {
								fields[n.Name] = text
							}
						}
					}
					return doc.Text(), fields
				}
			}
		}
		return "", nil
	}
}
